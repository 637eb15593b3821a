//! Reductions, arg-reductions, scans and composed statistics against real MLX 0.32 goldens
//! (core/tests/data/reduce/gen_reduce.py). Every case runs; failures are collected and
//! reported together.

mod common;

use common::{array, load, tol, view};
use mlx_arm_core::error::ErrorKind;
use mlx_arm_core::{ops, Array, DType, Result};
use serde_json::Value as J;

/// Rebuilds a large input described by the generator instead of stored.
fn input(v: &J) -> Array {
    match v["gen"].as_str() {
        Some("arange_mod17") => {
            let shape: Vec<usize> = v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
            let n: usize = shape.iter().product();
            let data: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 8.0).collect();
            Array::from_slice(&data, &shape).unwrap()
        }
        Some(other) => panic!("unknown generator {other}"),
        None => array(v),
    }
}

/// The `axis` argument: absent → None, an int → [int], a list → list.
fn axes(args: &J) -> Option<Vec<isize>> {
    match &args["axis"] {
        J::Null => None,
        J::Number(n) => Some(vec![n.as_i64().unwrap() as isize]),
        J::Array(v) => Some(v.iter().map(|x| x.as_i64().unwrap() as isize).collect()),
        o => panic!("bad axis {o}"),
    }
}

fn one_axis(args: &J) -> Option<isize> {
    args["axis"].as_i64().map(|x| x as isize)
}

fn flag(args: &J, k: &str, default: bool) -> bool {
    args[k].as_bool().unwrap_or(default)
}

fn run_case(op: &str, x: &Array, args: &J) -> Result<Vec<Array>> {
    let ax = axes(args);
    let ax = ax.as_deref();
    let kd = flag(args, "keepdims", false);
    let ddof = args["ddof"].as_i64().unwrap_or(0);
    let (rev, inc) = (flag(args, "reverse", false), flag(args, "inclusive", true));
    let dt = args["dtype"].as_str().map(|d| DType::from_name(d).unwrap());
    let one = |r: Result<Array>| r.map(|a| vec![a]);
    match op {
        "sum" => one(ops::sum(x, ax, kd)),
        "prod" => one(ops::prod(x, ax, kd)),
        "max" => one(ops::max(x, ax, kd)),
        "min" => one(ops::min(x, ax, kd)),
        "all" => one(ops::all(x, ax, kd)),
        "any" => one(ops::any(x, ax, kd)),
        "mean" => one(ops::mean(x, ax, kd)),
        "var" => one(ops::var(x, ax, kd, ddof)),
        "std" => one(ops::std(x, ax, kd, ddof)),
        "logsumexp" => one(ops::logsumexp(x, ax, kd)),
        "median" => one(ops::median(x, ax, kd)),
        "count_nonzero" => one(ops::count_nonzero(x, ax, kd)),
        "minmax" => ops::minmax(x, ax, kd).map(|(a, b)| vec![a, b]),
        "argmax" => one(ops::argmax(x, one_axis(args), kd)),
        "argmin" => one(ops::argmin(x, one_axis(args), kd)),
        "softmax" => one(ops::softmax(x, ax, flag(args, "precise", false))),
        "cumsum" => one(ops::cumsum(x, one_axis(args), rev, inc, dt)),
        "cumprod" => one(ops::cumprod(x, one_axis(args), rev, inc, dt)),
        "cummax" => one(ops::cummax(x, one_axis(args), rev, inc)),
        "cummin" => one(ops::cummin(x, one_axis(args), rev, inc)),
        "logcumsumexp" => one(ops::logcumsumexp(x, one_axis(args), rev, inc)),
        o => panic!("unknown op {o}"),
    }
}

fn post_slice(a: Array, args: &J) -> Array {
    let Some(ps) = args["post_slice"].as_array() else { return a };
    let get = |k: usize| ps.iter().map(|s| s[k].as_i64().unwrap() as isize).collect::<Vec<_>>();
    ops::slice(&a, &get(0), &get(1), &get(2)).unwrap()
}

fn error_kind(name: &str) -> ErrorKind {
    match name {
        "ValueError" => ErrorKind::InvalidArgument,
        "IndexError" => ErrorKind::Index,
        "TypeError" => ErrorKind::Type,
        other => panic!("unmapped MLX error {other}"),
    }
}

/// Compares one array to its golden; returns a description of the first mismatch.
pub fn check(got: &Array, want: &J, extra_rtol: f64) -> std::result::Result<(), String> {
    let wd = want["dtype"].as_str().unwrap();
    if got.dtype().name() != wd {
        return Err(format!("dtype {} != {wd}", got.dtype()));
    }
    let shape: Vec<usize> = want["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    if got.shape() != &shape[..] {
        return Err(format!("shape {:?} != {shape:?}", got.shape()));
    }
    let (rtol, atol) = tol(wd);
    let (rtol, atol) = (rtol.max(extra_rtol), atol.max(extra_rtol));
    let g = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| common::values(got))).map_err(|_| "eval failed".to_string())?;
    let w: Vec<(f64, f64)> = want["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| if wd == "complex64" { (num(&x[0]), num(&x[1])) } else { (num(x), 0.0) })
        .collect();
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        if !(close(x.0, y.0, rtol, atol) && close(x.1, y.1, rtol, atol)) {
            return Err(format!("element {i}: got {x:?}, want {y:?}"));
        }
    }
    Ok(())
}

fn num(v: &J) -> f64 {
    match v {
        J::Number(n) => n.as_f64().unwrap(),
        J::String(s) if s == "nan" => f64::NAN,
        J::String(s) if s == "inf" => f64::INFINITY,
        J::String(s) if s == "-inf" => f64::NEG_INFINITY,
        J::Bool(b) => *b as u8 as f64,
        o => panic!("not a number {o}"),
    }
}

fn close(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= atol + rtol * b.abs())
}

#[test]
fn reduce_family_matches_mlx() {
    let g = load("reduce/reduce.json");
    let cases = g["cases"].as_array().unwrap();
    let mut failures = vec![];
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let op = c["op"].as_str().unwrap();
        let x = view(&input(&c["inputs"][0]), &c["view"]);
        let args = &c["args"];
        // Reductions of many elements: summation order differs from MLX's SIMD lanes.
        let mut extra = if name.contains("f16_many") || name.contains("big") { 2e-3 } else { 0.0 };
        // MLX's float64 exp/log are float32-accurate approximations; ours are exact.
        if name.contains("float64") && ["logsumexp", "softmax", "logcumsumexp"].contains(&op) {
            extra = 1e-7;
        }
        let got = run_case(op, &x, args).and_then(|outs| {
            for o in &outs {
                o.eval()?;
            }
            Ok(outs)
        });
        match (got, c.get("error")) {
            (Err(e), Some(want)) => {
                if e.kind != error_kind(want.as_str().unwrap()) {
                    failures.push(format!("{name}: error kind {:?}, MLX {want}: {}", e.kind, c["message"]));
                }
            }
            (Err(e), None) => failures.push(format!("{name}: unexpected error {e}")),
            (Ok(_), Some(want)) => failures.push(format!("{name}: succeeded, MLX raised {want}: {}", c["message"])),
            (Ok(outs), None) => {
                let wants: Vec<&J> = match c.get("outputs") {
                    Some(v) => v.as_array().unwrap().iter().collect(),
                    None => vec![&c["output"]],
                };
                for (o, w) in outs.into_iter().zip(wants) {
                    if let Err(m) = check(&post_slice(o, args), w, extra) {
                        failures.push(format!("{name}: {m}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn long_runs_reduce_on_all_threads_with_one_result() {
    use mlx_arm_core::parallel::set_num_threads;
    // Runs longer than one piece (64 Ki elements) are folded piece by piece in parallel: the
    // result must not depend on the thread count, and must be the sum / extreme of the data
    // (oracle: an f64 sum, and the planted extreme).
    let n = 1_000_003usize;
    let v: Vec<f32> = (0..n as u32).map(|i| ((i.wrapping_mul(2_654_435_761) >> 8) % 2001) as f32 / 1000.0 - 1.0).collect();
    let exact: f64 = v.iter().map(|&x| x as f64).sum();
    let mut planted = v.clone();
    planted[n - 5] = 7.5; // the maximum, in the last piece
    planted[70_000] = -9.25; // the minimum, in the second piece
    let a = Array::from_slice(&planted, &[n]).unwrap();
    let rows = Array::from_slice(&v[..3 * 300_000], &[3, 300_000]).unwrap();
    let mut seen = Vec::new();
    for threads in [1, 2, 5, 8] {
        set_num_threads(threads);
        let s = ops::sum(&Array::from_slice(&v, &[n]).unwrap(), None, false).unwrap().to_vec::<f32>().unwrap()[0];
        let mx = ops::max(&a, None, false).unwrap().to_vec::<f32>().unwrap()[0];
        let mn = ops::min(&a, None, false).unwrap().to_vec::<f32>().unwrap()[0];
        let per_row = ops::sum(&rows, Some(&[1]), false).unwrap().to_vec::<f32>().unwrap();
        assert!(((s as f64) - exact).abs() <= 1e-6 * v.iter().map(|&x| x.abs() as f64).sum::<f64>(), "sum {s} vs {exact}");
        assert_eq!((mx, mn), (7.5, -9.25));
        for (r, &got) in per_row.iter().enumerate() {
            let want: f64 = v[r * 300_000..(r + 1) * 300_000].iter().map(|&x| x as f64).sum();
            assert!(((got as f64) - want).abs() < 1e-2, "row {r}: {got} vs {want}");
        }
        seen.push((s.to_bits(), per_row.iter().map(|x| x.to_bits()).collect::<Vec<_>>()));
    }
    set_num_threads(0);
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "results differ between thread counts");
    // A NaN anywhere in a long run is the max and the min.
    planted[200_000] = f32::NAN;
    let a = Array::from_slice(&planted, &[n]).unwrap();
    assert!(ops::max(&a, None, false).unwrap().to_vec::<f32>().unwrap()[0].is_nan());
    assert!(ops::min(&a, None, false).unwrap().to_vec::<f32>().unwrap()[0].is_nan());
}
