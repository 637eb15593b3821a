//! The linalg family (matmul, addmm, inner, outer, tensordot, einsum, trace, kron, convolution,
//! linalg.norm) against real MLX 0.32 goldens (core/tests/data/linalg/gen_linalg.py). Every
//! case runs; failures are collected and reported together.

mod common;

use common::{array, load, values};
use mlx_arm_core::error::ErrorKind;
use mlx_arm_core::ops::linalg::NormOrd;
use mlx_arm_core::{ops, Array, DType, Result};
use serde_json::Value as J;

fn view(a: &Array, v: &J) -> Array {
    match v.as_str() {
        None => a.clone(),
        Some("T") => ops::transpose(a, None).unwrap(),
        Some("swap") => ops::swapaxes(a, -1, -2).unwrap(),
        Some(o) => panic!("unknown view {o}"),
    }
}

fn ints(v: &J) -> Vec<isize> {
    v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap() as isize).collect()
}

fn pair(v: &J, d: isize) -> (isize, isize) {
    match v.as_array() {
        Some(a) => (a[0].as_i64().unwrap() as isize, a[1].as_i64().unwrap() as isize),
        None => (d, d),
    }
}

fn run_case(op: &str, x: &[Array], args: &J) -> Result<Array> {
    let f32_arg = |k: &str| args[k].as_f64().unwrap() as f32;
    match op {
        "matmul" => ops::matmul(&x[0], &x[1]),
        "addmm" => ops::addmm(&x[0], &x[1], &x[2], f32_arg("alpha"), f32_arg("beta")),
        "inner" => ops::inner(&x[0], &x[1]),
        "outer" => ops::outer(&x[0], &x[1]),
        "tensordot" => match args["axes"].as_i64() {
            Some(n) => ops::tensordot(&x[0], &x[1], n as isize),
            None => ops::tensordot_axes(&x[0], &x[1], &ints(&args["axes_a"]), &ints(&args["axes_b"])),
        },
        "einsum" => ops::einsum(args["subscripts"].as_str().unwrap(), x),
        "trace" => ops::trace(
            &x[0],
            args["offset"].as_i64().unwrap_or(0) as isize,
            args["axis1"].as_i64().unwrap_or(0) as isize,
            args["axis2"].as_i64().unwrap_or(1) as isize,
            args["dtype"].as_str().map(|d| DType::from_name(d).unwrap()),
        ),
        "kron" => ops::kron(&x[0], &x[1]),
        "conv1d" => ops::conv1d(
            &x[0],
            &x[1],
            args["stride"].as_i64().unwrap_or(1) as isize,
            args["padding"].as_i64().unwrap_or(0) as isize,
            args["dilation"].as_i64().unwrap_or(1) as isize,
            args["groups"].as_i64().unwrap_or(1) as isize,
        ),
        "conv2d" => ops::conv2d(
            &x[0],
            &x[1],
            pair(&args["stride"], 1),
            pair(&args["padding"], 0),
            pair(&args["dilation"], 1),
            args["groups"].as_i64().unwrap_or(1) as isize,
        ),
        "conv_general" => ops::conv_general(
            &x[0],
            &x[1],
            &ints(&args["stride"]),
            &ints(&args["pad_lo"]),
            &ints(&args["pad_hi"]),
            &ints(&args["kdil"]),
            &ints(&args["idil"]),
            args["groups"].as_i64().unwrap() as isize,
            args["flip"].as_bool().unwrap(),
        ),
        "norm" => {
            let ord = match &args["ord"] {
                J::Null => None,
                J::String(s) if s == "fro" => Some(NormOrd::Fro),
                J::String(s) if s == "nuc" => Some(NormOrd::Nuc),
                J::String(s) if s == "inf" => Some(NormOrd::Num(f64::INFINITY)),
                J::String(s) if s == "-inf" => Some(NormOrd::Num(f64::NEG_INFINITY)),
                v => Some(NormOrd::Num(v.as_f64().unwrap())),
            };
            let axes = args.get("axis").map(ints);
            ops::linalg::norm(&x[0], ord, axes.as_deref(), args["keepdims"].as_bool().unwrap_or(false))
        }
        o => panic!("unknown op {o}"),
    }
}

/// Tolerances for products: summation order differs from MLX's BLAS, so scale with the dtype's
/// precision (half types round the output once more).
fn tolerance(dtype: &str) -> (f64, f64) {
    match dtype {
        "float16" => (4e-3, 4e-3),
        "bfloat16" => (2e-2, 2e-2),
        "float64" => (1e-12, 1e-12),
        "float32" | "complex64" => (2e-5, 2e-5),
        _ => (0.0, 0.0),
    }
}

fn check(name: &str, got: &Array, want: &J) -> std::result::Result<(), String> {
    let wd = want["dtype"].as_str().unwrap();
    if got.dtype().name() != wd {
        return Err(format!("{name}: dtype {} != {wd}", got.dtype().name()));
    }
    let shape: Vec<usize> = want["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    if got.shape() != shape.as_slice() {
        return Err(format!("{name}: shape {:?} != {shape:?}", got.shape()));
    }
    let (rtol, atol) = tolerance(wd);
    let w = array(want);
    let (g, e) = (values(got), values(&w));
    for (i, (x, y)) in g.iter().zip(&e).enumerate() {
        let ok = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs();
        if !(ok(x.0, y.0) && ok(x.1, y.1)) {
            return Err(format!("{name}: element {i}: got {x:?}, want {y:?}"));
        }
    }
    Ok(())
}

#[test]
fn linalg_matches_mlx() {
    let golden = load("linalg/linalg.json");
    let mut failures = Vec::new();
    let cases = golden["cases"].as_array().unwrap();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let inputs: Vec<Array> = c["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .zip(c["views"].as_array().unwrap())
            .map(|(a, v)| view(&array(a), v))
            .collect();
        let got = run_case(c["op"].as_str().unwrap(), &inputs, &c["args"]).and_then(|a| a.eval().map(|_| a));
        match (got, c.get("error")) {
            (Ok(a), None) => {
                if let Err(e) = check(name, &a, &c["output"]) {
                    failures.push(e);
                }
            }
            (Ok(a), Some(e)) => failures.push(format!("{name}: expected {e}, got {:?}", a.shape())),
            (Err(e), None) => failures.push(format!("{name}: unexpected error {e}")),
            (Err(e), Some(want)) => {
                let kind = match want.as_str().unwrap() {
                    "IndexError" => ErrorKind::Index,
                    "TypeError" => ErrorKind::Type,
                    _ => ErrorKind::InvalidArgument,
                };
                if e.kind != kind {
                    failures.push(format!("{name}: error kind {:?} ({e}), want {want}", e.kind));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// Singular-value norms against hand-computed values: [[3, 0], [4, 5]] has σ = √45, √5.
#[test]
fn singular_value_norms_by_hand() {
    let a = Array::from_slice(&[3.0f64, 0.0, 4.0, 5.0], &[2, 2]).unwrap();
    let n = |ord| ops::linalg::norm(&a, Some(ord), None, false).unwrap().item().unwrap().as_f64();
    assert!((n(NormOrd::Num(2.0)) - 45f64.sqrt()).abs() < 1e-12);
    assert!((n(NormOrd::Num(-2.0)) - 5f64.sqrt()).abs() < 1e-12);
    assert!((n(NormOrd::Nuc) - (45f64.sqrt() + 5f64.sqrt())).abs() < 1e-12);
    let half = ops::astype(&a, mlx_arm_core::DType::Float16).unwrap();
    assert_eq!(ops::linalg::norm(&half, Some(NormOrd::Nuc), None, false).unwrap_err().kind, ErrorKind::InvalidArgument);
}

/// Prints the GEMM's throughput on a 512³ f32 product (a measurement, not an assertion beyond
/// correctness of one element against an f64 dot product). Run with `--release --nocapture`.
#[test]
fn gemm_512_throughput() {
    let n = 512usize;
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.125).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5 % 11) as f32 - 5.0) * 0.25).collect();
    let x = Array::from_slice(&a, &[n, n]).unwrap();
    let y = Array::from_slice(&b, &[n, n]).unwrap();
    ops::matmul(&x, &y).unwrap().eval().unwrap(); // warm-up
    let reps = 5;
    let t = std::time::Instant::now();
    let mut last = None;
    for _ in 0..reps {
        let z = ops::matmul(&x, &y).unwrap();
        z.eval().unwrap();
        last = Some(z);
    }
    let secs = t.elapsed().as_secs_f64() / reps as f64;
    let gflops = 2.0 * (n * n * n) as f64 / secs / 1e9;
    println!("gemm 512x512x512 f32: {:.3} ms, {gflops:.2} GFLOP/s", secs * 1e3);
    let z = last.unwrap().to_vec::<f32>().unwrap();
    let (i, j) = (17, 301);
    let want: f64 = (0..n).map(|p| a[i * n + p] as f64 * b[p * n + j] as f64).sum();
    assert!((z[i * n + j] as f64 - want).abs() < 1e-3);
}
