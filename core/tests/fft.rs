//! The FFT family against oracles (core/tests/data/fft/gen_fft.py): semantics — shapes,
//! dtypes, n/s cropping and padding, axes, norm, views, errors and their messages — against
//! real MLX 0.32; accuracy at long and prime lengths (up to 65537) against numpy.fft computed
//! in complex128 on the same float32 input.

mod common;

use common::{array, values, view};
use mlx_arm_core::error::ErrorKind;
use mlx_arm_core::ops::fft::{self, FftNorm};
use mlx_arm_core::{Array, Complex64, Result};
use serde_json::Value as J;

fn opt_isize(v: &J) -> Option<isize> {
    v.as_i64().map(|x| x as isize)
}

fn list(v: &J) -> Option<Vec<isize>> {
    v.as_array().map(|a| a.iter().map(|x| x.as_i64().unwrap() as isize).collect())
}

/// Calls the named op with the case's arguments (absent keys take MLX's defaults).
fn call(op: &str, x: Option<&Array>, args: &J) -> Result<Array> {
    let norm = match args.get("norm").and_then(|n| n.as_str()) {
        Some(s) => FftNorm::parse(s, Box::leak(op.to_string().into_boxed_str()))?,
        None => FftNorm::Backward,
    };
    let n = args.get("n").and_then(opt_isize);
    let axis = args.get("axis").and_then(opt_isize).unwrap_or(-1);
    let s = args.get("s").and_then(list);
    // `axes` absent: the op's default ([-2, -1] for *2, None for *n); present but null: None.
    let axes_default: Option<Vec<isize>> = if op.ends_with('2') { Some(vec![-2, -1]) } else { None };
    let axes = match args.get("axes") {
        None => axes_default,
        Some(v) => list(v),
    };
    let (s, axes) = (s.as_deref(), axes.as_deref());
    let x = || x.expect("input");
    match op {
        "fft" => fft::fft(x(), n, axis, norm),
        "ifft" => fft::ifft(x(), n, axis, norm),
        "rfft" => fft::rfft(x(), n, axis, norm),
        "irfft" => fft::irfft(x(), n, axis, norm),
        "fft2" => fft::fft2(x(), s, axes, norm),
        "ifft2" => fft::ifft2(x(), s, axes, norm),
        "rfft2" => fft::rfft2(x(), s, axes, norm),
        "irfft2" => fft::irfft2(x(), s, axes, norm),
        "fftn" => fft::fftn(x(), s, axes, norm),
        "ifftn" => fft::ifftn(x(), s, axes, norm),
        "rfftn" => fft::rfftn(x(), s, axes, norm),
        "irfftn" => fft::irfftn(x(), s, axes, norm),
        "fftshift" => fft::fftshift(x(), axes),
        "ifftshift" => fft::ifftshift(x(), axes),
        "fftfreq" => fft::fftfreq(n.unwrap(), args["d"].as_f64().unwrap()),
        "rfftfreq" => fft::rfftfreq(n.unwrap(), args["d"].as_f64().unwrap()),
        o => panic!("unknown op {o}"),
    }
}

fn kind_name(k: ErrorKind) -> &'static str {
    match k {
        ErrorKind::InvalidArgument => "ValueError",
        ErrorKind::Index => "IndexError",
        ErrorKind::Type => "TypeError",
        _ => "other",
    }
}

/// max |got − want| ≤ 2e-6 · max |want| + 1e-6: a transform's rounding scales with the whole
/// spectrum, not with each (possibly tiny) bin.
fn assert_close(what: &str, got: &Array, want: &J) {
    assert_eq!(got.dtype().name(), want["dtype"].as_str().unwrap(), "{what}: dtype");
    let shape: Vec<usize> = want["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    assert_eq!(got.shape(), &shape[..], "{what}: shape");
    let g = values(got);
    let w = values(&array(want));
    let peak = w.iter().map(|v| v.0.hypot(v.1)).fold(0.0, f64::max);
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let d = (a.0 - b.0).hypot(a.1 - b.1);
        assert!(d <= 2e-6 * peak + 1e-6, "{what}: element {i}: got {a:?}, want {b:?}");
    }
}

#[test]
fn semantics_match_mlx() {
    let doc = common::load("fft/fft.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 150);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let input = (!c["input"].is_null()).then(|| view(&array(&c["input"]), &c["view"]));
        let got = call(c["op"].as_str().unwrap(), input.as_ref(), &c["args"]);
        match (&got, c.get("error")) {
            (Ok(a), None) => assert_close(name, a, &c["output"]),
            (Err(e), Some(kind)) => {
                assert_eq!(kind_name(e.kind), kind.as_str().unwrap(), "{name}: {e}");
                let msg = c["message"].as_str().unwrap();
                // MLX's own text where it is ours to match (not its "SmallVector out of range.").
                if !msg.contains("SmallVector") {
                    assert_eq!(e.to_string(), msg, "{name}");
                }
            }
            (Ok(_), Some(k)) => panic!("{name}: expected {k}, got a result"),
            (Err(e), None) => panic!("{name}: unexpected error {e}"),
        }
    }
}

/// The float32 test signal of gen_fft.py (exact: integer hashes, rounded once).
fn signal(m: usize, complex: bool) -> Array {
    let re = |j: i64| ((j * 7919) % 10007) as f64 / 10007.0 - 0.5;
    let im = |j: i64| ((j * 104729) % 10009) as f64 / 10009.0 - 0.5;
    if complex {
        let v: Vec<Complex64> = (0..m as i64).map(|j| Complex64::new(re(j) as f32, im(j) as f32)).collect();
        Array::from_slice(&v, &[m]).unwrap()
    } else {
        let v: Vec<f32> = (0..m as i64).map(|j| re(j) as f32).collect();
        Array::from_slice(&v, &[m]).unwrap()
    }
}

/// Relative rms error over the sampled bins, vs numpy.fft in complex128: ≤ 1e-6 at every
/// length, 1 and primes (Bluestein) included.
#[test]
fn accuracy_vs_numpy_complex128() {
    let doc = common::load("fft/fft.json");
    for c in doc["accuracy"].as_array().unwrap() {
        let (op, n) = (c["op"].as_str().unwrap(), c["n"].as_u64().unwrap() as usize);
        let x = signal(c["input_len"].as_u64().unwrap() as usize, c["complex_input"].as_bool().unwrap());
        let y = match op {
            "fft" => fft::fft(&x, None, -1, FftNorm::Backward),
            "ifft" => fft::ifft(&x, None, -1, FftNorm::Backward),
            "rfft" => fft::rfft(&x, None, -1, FftNorm::Backward),
            "irfft" => fft::irfft(&x, Some(n as isize), -1, FftNorm::Backward),
            o => panic!("{o}"),
        }
        .unwrap();
        let got = values(&y);
        let mut num = 0.0f64;
        for (i, r) in c["idx"].as_array().unwrap().iter().zip(c["ref"].as_array().unwrap()) {
            let g = got[i.as_u64().unwrap() as usize];
            let (re, im) = (r[0].as_f64().unwrap(), r[1].as_f64().unwrap());
            num += (g.0 - re).powi(2) + (g.1 - im).powi(2);
        }
        let rms = c["rms"].as_f64().unwrap();
        let count = c["idx"].as_array().unwrap().len() as f64;
        // Normalize by the whole spectrum's rms (bins sampled evenly).
        let err = (num / count).sqrt() / rms.max(f64::MIN_POSITIVE);
        println!("{op} n={n}: relative error {err:.2e} (numpy complex64: {:.2e})", c["numpy_c64_err"].as_f64().unwrap());
        assert!(err <= 1e-6, "{op} n={n}: relative error {err:e}");
    }
}

/// Round trips on a batch, through non-default axes: ifft(fft(x)) = x, irfftn(rfftn(x)) = x.
#[test]
fn round_trips() {
    let v: Vec<f32> = (0..7 * 11 * 6).map(|i| ((i * 37 % 101) as f32) / 50.0 - 1.0).collect();
    let x = Array::from_slice(&v, &[7, 11, 6]).unwrap();
    let y = fft::irfftn(&fft::rfftn(&x, None, Some(&[0, 1, 2]), FftNorm::Ortho).unwrap(), Some(&[7, 11, 6]), Some(&[0, 1, 2]), FftNorm::Ortho).unwrap();
    for (a, b) in values(&y).iter().zip(&v) {
        assert!((a.0 - *b as f64).abs() < 1e-5, "{a:?} vs {b}");
    }
    let c = fft::ifft(&fft::fft(&x, None, 1, FftNorm::Forward).unwrap(), None, 1, FftNorm::Forward).unwrap();
    for (a, b) in values(&c).iter().zip(&v) {
        assert!((a.0 - *b as f64).abs() < 1e-5 && a.1.abs() < 1e-5);
    }
}
