//! MLX quantization kernels against goldens from real MLX 0.32.4
//! (`data/mlxquant/gen_mlxquant.py`, run with /opt/oracle/bin/python).

use half::{bf16, f16};
use mlx_arm_core::quant::mlx::{
    affine_dequantize, affine_quantize, fp_dequantize, fp_quantize, from_fp8_slice, qmm,
    to_fp8_slice, validate_quantize, QFloat, QScales, QuantMode, QuantParams,
};
use mlx_arm_core::DType;
use serde_json::Value;

fn golden() -> Value {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mlxquant/mlxquant.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn unhex(v: &Value) -> Vec<u8> {
    let s = v.as_str().unwrap();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}
fn u32s(v: &Value) -> Vec<u32> {
    unhex(v).chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Test-side view of an element type: raw bits in/out and its rounding unit.
trait Elem: QFloat {
    const NAME: &'static str;
    const U: f64; // unit roundoff
    const TINY: f64; // smallest subnormal
    const MAX: f64; // largest finite
    fn parse(b: &[u8]) -> Vec<Self>;
    fn bits(self) -> u32;
}
impl Elem for f32 {
    const NAME: &'static str = "float32";
    const U: f64 = 5.960464477539063e-8;
    const TINY: f64 = 1.401298464324817e-45;
    const MAX: f64 = 3.4028234663852886e38;
    fn parse(b: &[u8]) -> Vec<Self> {
        b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}
impl Elem for f16 {
    const NAME: &'static str = "float16";
    const U: f64 = 4.8828125e-4;
    const TINY: f64 = 5.960464477539063e-8;
    const MAX: f64 = 65504.0;
    fn parse(b: &[u8]) -> Vec<Self> {
        b.chunks_exact(2).map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]]))).collect()
    }
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}
impl Elem for bf16 {
    const NAME: &'static str = "bfloat16";
    const U: f64 = 3.90625e-3;
    const TINY: f64 = 9.183549615799121e-41;
    const MAX: f64 = 3.3895313892515355e38;
    fn parse(b: &[u8]) -> Vec<Self> {
        b.chunks_exact(2).map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]]))).collect()
    }
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}

/// Bit equality, with every NaN equal to every NaN.
fn same<T: Elem>(a: T, b: T) -> bool {
    (a.to_f32().is_nan() && b.to_f32().is_nan()) || a.bits() == b.bits()
}

fn params(c: &Value) -> QuantParams {
    let mode = QuantMode::parse(c["mode"].as_str().unwrap(), "quantize").unwrap();
    QuantParams::new("quantize", mode, c["group_size"].as_i64().unwrap(), c["bits"].as_i64().unwrap()).unwrap()
}
fn gscale(c: &Value) -> Option<f32> {
    c["global_scale"].as_f64().map(|g| g as f32)
}
fn label(c: &Value) -> String {
    format!("{} bits={} gs={} {} gscale={:?}", c["mode"], c["bits"], c["group_size"], c["dtype"], c["global_scale"])
}

fn count_diff<T: Elem>(a: &[T], b: &[T]) -> usize {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).filter(|(x, y)| !same(**x, **y)).count()
}

/// Checks quantize + dequantize of one case; returns failure descriptions.
fn check_case<T: Elem>(c: &Value, fails: &mut Vec<String>) {
    let p = params(c);
    let k = c["k"].as_u64().unwrap() as usize;
    let w = T::parse(&unhex(&c["w"]));
    let wq_ref = u32s(&c["wq"]);
    let n = w.len();
    if p.mode == QuantMode::Affine {
        let (wq, s, b) = affine_quantize(&w, k, &p).unwrap();
        let (s_ref, b_ref) = (T::parse(&unhex(&c["scales"])), T::parse(&unhex(&c["biases"])));
        if wq != wq_ref {
            fails.push(format!("{}: wq differs in {} words", label(c), wq.iter().zip(&wq_ref).filter(|(a, b)| a != b).count()));
        }
        if count_diff(&s, &s_ref) + count_diff(&b, &b_ref) != 0 {
            fails.push(format!("{}: scales/biases differ", label(c)));
        }
        // dequantize from MLX's own quantized data, in T (MLX's default dtype)
        assert_eq!(c["dq_dtype"].as_str().unwrap(), T::NAME);
        let mut out = vec![T::from_f32(0.0); n];
        affine_dequantize(&wq_ref, &s_ref, &b_ref, k, &p, &mut out).unwrap();
        let d = count_diff(&out, &T::parse(&unhex(&c["dq"])));
        if d != 0 {
            fails.push(format!("{}: dequantize differs in {d}/{n}", label(c)));
        }
    } else {
        let (wq, s) = fp_quantize(&w, k, &p, gscale(c)).unwrap();
        let s_ref = unhex(&c["scales"]);
        if wq != wq_ref {
            fails.push(format!("{}: wq differs in {} words", label(c), wq.iter().zip(&wq_ref).filter(|(a, b)| a != b).count()));
        }
        if s != s_ref {
            fails.push(format!("{}: scales differ {:?} vs {:?}", label(c), s, s_ref));
        }
        let dq_dtype = c["dq_dtype"].as_str().unwrap();
        let d = if dq_dtype == "bfloat16" {
            let mut out = vec![bf16::ZERO; n];
            fp_dequantize(&wq_ref, &s_ref, k, &p, gscale(c), &mut out).unwrap();
            count_diff(&out, &bf16::parse(&unhex(&c["dq"])))
        } else {
            // MLX returns float32 when a global scale is given
            assert_eq!(dq_dtype, "float32");
            assert!(gscale(c).is_some());
            let mut out = vec![0f32; n];
            fp_dequantize(&wq_ref, &s_ref, k, &p, gscale(c), &mut out).unwrap();
            count_diff(&out, &f32::parse(&unhex(&c["dq"])))
        };
        let mut out32 = vec![0f32; n];
        fp_dequantize(&wq_ref, &s_ref, k, &p, gscale(c), &mut out32).unwrap();
        let d32 = count_diff(&out32, &f32::parse(&unhex(&c["dq32"])));
        if d + d32 != 0 {
            fails.push(format!("{}: dequantize differs ({dq_dtype}: {d}, float32: {d32})", label(c)));
        }
    }
}

fn for_dtype(c: &Value, f32f: fn(&Value, &mut Vec<String>), f16f: fn(&Value, &mut Vec<String>), bf16f: fn(&Value, &mut Vec<String>), fails: &mut Vec<String>) {
    match c["dtype"].as_str().unwrap() {
        "float32" => f32f(c, fails),
        "float16" => f16f(c, fails),
        "bfloat16" => bf16f(c, fails),
        d => panic!("dtype {d}"),
    }
}

#[test]
fn quantize_and_dequantize_bit_exact() {
    let g = golden();
    let mut fails = Vec::new();
    let cases = g["cases"].as_array().unwrap();
    for c in cases {
        for_dtype(c, check_case::<f32>, check_case::<f16>, check_case::<bf16>, &mut fails);
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
    assert_eq!(cases.len(), 75);
}

/// qmm against MLX: f32 must be bit-identical (same summation order as MLX's scalar kernel);
/// every dtype must be within the recursive-summation bound (K+2)·u_T·Σ|x·ŵ| of MLX's result
/// (MLX accumulates in T, we in f32), plus (K+2) subnormal steps for underflow.
fn check_qmm<T: Elem>(c: &Value, fails: &mut Vec<String>) {
    let p = params(c);
    let (rows, k, m) = (c["rows"].as_u64().unwrap() as usize, c["k"].as_u64().unwrap() as usize, c["m"].as_u64().unwrap() as usize);
    let wq = u32s(&c["wq"]);
    let s_aff;
    let b_aff;
    let s_u8;
    let sc = if p.mode == QuantMode::Affine {
        s_aff = T::parse(&unhex(&c["scales"]));
        b_aff = T::parse(&unhex(&c["biases"]));
        QScales::Affine { scales: &s_aff, biases: &b_aff }
    } else {
        s_u8 = unhex(&c["scales"]);
        QScales::Fp(&s_u8)
    };
    // The dequantized weight (rows × k) in f32, as qmm decodes it (no global scale).
    let mut wd = vec![0f32; rows * k];
    match sc {
        QScales::Affine { scales, biases } => affine_dequantize(&wq, scales, biases, k, &p, &mut wd).unwrap(),
        QScales::Fp(s) => {
            let mut tmp = vec![T::from_f32(0.0); rows * k];
            fp_dequantize(&wq, s, k, &p, None, &mut tmp).unwrap();
            wd.iter_mut().zip(&tmp).for_each(|(a, b)| *a = b.to_f32());
        }
    }
    for transpose in [true, false] {
        let (xk, n, xs, ys) = if transpose { (k, rows, "xt", "yt") } else { (rows, k, "xn", "yn") };
        let x = T::parse(&unhex(&c[xs]));
        let y_ref = T::parse(&unhex(&c[ys]));
        let mut y = vec![T::from_f32(0.0); m * n];
        qmm(&x, m, xk, &wq, sc, n, &p, transpose, &mut y, 0..m).unwrap();
        // Row ranges compute the same rows.
        let mut y2 = vec![T::from_f32(0.0); 2 * n];
        qmm(&x, m, xk, &wq, sc, n, &p, transpose, &mut y2, 1..3).unwrap();
        if count_diff(&y2, &y[n..3 * n]) != 0 {
            fails.push(format!("{} transpose={transpose}: row range differs", label(c)));
        }
        let mut worst = 0f64;
        for mi in 0..m {
            for ni in 0..n {
                let mut abs_sum = 0f64;
                for kk in 0..xk {
                    let wv = if transpose { wd[ni * k + kk] } else { wd[kk * k + ni] };
                    abs_sum += (x[mi * xk + kk].to_f32() as f64 * wv as f64).abs();
                }
                let tol = (xk as f64 + 2.0) * (T::U * abs_sum + T::TINY);
                let (a, b) = (y[mi * n + ni].to_f32() as f64, y_ref[mi * n + ni].to_f32() as f64);
                // MLX's T-typed running sum can overflow to ±inf where our f32 sum does not:
                // allowed only when the partial sums could exceed T's range.
                let mlx_overflow = b.is_infinite() && abs_sum > T::MAX && a.abs() <= T::MAX;
                let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol || mlx_overflow;
                if !ok {
                    fails.push(format!("{} transpose={transpose}: y[{mi},{ni}] = {a} vs MLX {b} (tol {tol})", label(c)));
                }
                if tol > 0.0 && b.is_finite() {
                    worst = worst.max((a - b).abs() / tol);
                }
            }
        }
        let nd = count_diff(&y, &y_ref);
        if T::NAME == "float32" && nd != 0 {
            fails.push(format!("{} transpose={transpose}: f32 not bit-identical in {nd}/{}", label(c), y.len()));
        }
        eprintln!("{} transpose={transpose}: {nd}/{} outputs differ in bits, worst |diff|/tol = {worst:.3e}", label(c), y.len());
    }
}

#[test]
fn quantized_matmul_matches_mlx() {
    let g = golden();
    let mut fails = Vec::new();
    for c in g["cases"].as_array().unwrap() {
        for_dtype(c, check_qmm::<f32>, check_qmm::<f16>, check_qmm::<bf16>, &mut fails);
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

fn fp8_roundtrip<T: Elem>(f: &Value) {
    let x = T::parse(&unhex(&f[format!("x_{}", T::NAME).as_str()]));
    let want = unhex(&f[format!("to_{}", T::NAME).as_str()]);
    let mut got = vec![0u8; x.len()];
    to_fp8_slice(&x, &mut got).unwrap();
    let bad: Vec<_> = (0..x.len()).filter(|&i| got[i] != want[i]).map(|i| (x[i], got[i], want[i])).collect();
    assert!(bad.is_empty(), "to_fp8 {}: {bad:?}", T::NAME);
    let codes: Vec<u8> = (0..=255).collect();
    let mut dec = vec![T::from_f32(0.0); 256];
    from_fp8_slice(&codes, &mut dec).unwrap();
    let want = T::parse(&unhex(&f[format!("from_{}", T::NAME).as_str()]));
    assert_eq!(count_diff(&dec, &want), 0, "from_fp8 {}", T::NAME);
}

#[test]
fn fp8_conversions_bit_exact() {
    let g = golden();
    fp8_roundtrip::<f32>(&g["fp8"]);
    fp8_roundtrip::<f16>(&g["fp8"]);
    fp8_roundtrip::<bf16>(&g["fp8"]);
    assert!(to_fp8_slice(&[1.0f32], &mut [0u8; 2]).is_err());
}

#[test]
fn validation_messages_match_mlx() {
    let g = golden();
    for e in g["errors"].as_array().unwrap() {
        let shape: Vec<usize> = e["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        let dtype = DType::from_name(e["dtype"].as_str().unwrap()).unwrap();
        let gs_shape: [usize; 0] = [];
        let gsc = if e["global_scale"].as_bool().unwrap() { Some((DType::Float32, &gs_shape[..])) } else { None };
        let r = validate_quantize(e["mode"].as_str().unwrap(), dtype, &shape, e["group_size"].as_i64(), e["bits"].as_i64(), gsc);
        match e["msg"].as_str() {
            Some(msg) => assert_eq!(r.map_err(|x| x.to_string()).unwrap_err(), msg),
            None => assert!(r.is_ok(), "{e}: {r:?}"),
        }
    }
}

#[test]
fn bad_buffers_are_errors() {
    let p = QuantParams::new("quantize", QuantMode::Affine, 32, 4).unwrap();
    let w = vec![0f32; 96];
    assert!(affine_quantize(&w, 48, &p).is_err()); // K not a multiple of the group
    assert!(affine_quantize(&w[..95], 32, &p).is_err()); // ragged rows
    assert!(affine_quantize(&w, 0, &p).is_err());
    let (wq, s, b) = affine_quantize(&w, 32, &p).unwrap();
    assert_eq!((wq.len(), s.len(), b.len()), (12, 3, 3));
    let mut out = vec![0f32; 96];
    assert!(affine_dequantize(&wq[..11], &s, &b, 32, &p, &mut out).is_err());
    assert!(affine_dequantize(&wq, &s, &b[..2], 32, &p, &mut out).is_err());
    let mx = QuantParams::new("quantize", QuantMode::Mxfp4, 32, 4).unwrap();
    assert!(affine_quantize(&w, 32, &mx).is_err()); // wrong mode for the kernel
    assert!(fp_quantize(&w, 32, &p, None).is_err());
    assert!(fp_quantize(&w, 32, &mx, Some(1.0)).is_err()); // global scale is nvfp4-only
    // qmm shape mismatches
    let x = vec![0f32; 2 * 32];
    let sc = QScales::Affine { scales: &s, biases: &b };
    let mut y = vec![0f32; 2 * 3];
    assert!(qmm(&x, 2, 32, &wq, sc, 3, &p, true, &mut y, 0..2).is_ok());
    assert!(qmm(&x, 2, 32, &wq, sc, 4, &p, true, &mut y, 0..2).is_err());
    assert!(qmm(&x, 2, 32, &wq, sc, 3, &p, true, &mut y, 0..3).is_err());
    assert!(qmm(&x, 2, 32, &wq, sc, 3, &p, true, &mut y[..3], 0..2).is_err());
    assert!(qmm(&x[..63], 2, 32, &wq, sc, 3, &p, true, &mut y, 0..2).is_err());
    assert!(qmm(&x, 2, 32, &wq, QScales::Fp(&[0u8; 3]), 3, &p, true, &mut y, 0..2).is_err());
    assert!(qmm(&x, 2, 32, &wq, sc, 3, &p, true, &mut [], 1..1).is_ok());
    // parameter checks
    assert!(QuantParams::new("quantize", QuantMode::Affine, 16, 4).is_err());
    assert!(QuantParams::new("quantize", QuantMode::Affine, 64, 7).is_err());
    assert!(QuantParams::new("quantize", QuantMode::Nvfp4, 16, 8).is_err());
    assert!(QuantParams::new("quantize", QuantMode::Affine, -64, 4).is_err());
    assert!(validate_quantize("affine", DType::Float32, &[4, 64], Some(0), None, None).is_err());
    assert!(validate_quantize("affine", DType::Float64, &[4, 64], None, None, None).is_ok());
}
