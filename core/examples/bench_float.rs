//! Float CPU kernels (issue 17): GEMV, GEMM (f32, f16), softmax, rms_norm, sum and sdpa
//! decode, run through the public array API at 1 and 2 threads, beside anchors measured in
//! the same run: numpy/OpenBLAS on the same shapes (same thread count through
//! OPENBLAS_NUM_THREADS) and this machine's memcpy and read bandwidth.
//!
//! `cargo run --release -p mlx-arm-core --example bench_float [-- --python PATH] [--quick]`
//! PATH is a Python with numpy (default: the repo's .venv, else `python3`). `--quick` skips
//! the 4096³ GEMM. `MLX_ARM_ISA=avx2|portable|…` forces a kernel level.

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::ops::fast::SdpaMask;
use mlx_arm_core::{ops, Array, DType};
use std::collections::HashMap;

fn arr(shape: &[usize], seed: u32) -> Array {
    let a = Array::from_slice(&common::fill(shape.iter().product(), seed), shape).unwrap();
    a.eval().unwrap();
    a
}

/// One case: name, our closure, work (flops or bytes), unit, and the numpy statement timed
/// as the anchor (variables set up by `NP_SETUP`).
struct Case {
    name: &'static str,
    run: Box<dyn Fn()>,
    work: f64,
    unit: &'static str,
    numpy: &'static str,
}

const NP_SETUP: &str = r#"
import numpy as np, time, json, sys
r = np.random.default_rng(0)
f = lambda *s: r.standard_normal(s, dtype=np.float32)
x1 = f(1, 4096); W = f(4096, 4096); A64 = f(64, 4096); A1k = f(1024, 1024); B1k = f(1024, 1024)
big = len(sys.argv) > 1 and sys.argv[1] == "big"
A4k = f(4096, 4096) if big else None
S = f(32, 32000); X = f(64, 4096); w = f(4096); V = f(16 * 1024 * 1024)
q = f(1, 32, 1, 128); K = f(1, 32, 2048, 128); Vv = f(1, 32, 2048, 128)
def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
def sdpa():
    return softmax((q @ K.transpose(0, 1, 3, 2)) * 0.0884) @ Vv
def rms():
    return X * (1.0 / np.sqrt((X * X).mean(-1, keepdims=True) + 1e-5)) * w
def med(stmt, n):
    g = {**globals()}
    fn = eval("lambda: " + stmt, g)
    fn(); ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts) // 2]
"#;

fn numpy_times(python: &str, threads: usize, cases: &[(&str, &str)], big: bool) -> HashMap<String, f64> {
    let mut script = String::from(NP_SETUP);
    script.push_str("out = {}\n");
    for (name, stmt) in cases {
        if stmt.is_empty() || (!big && stmt.contains("A4k")) {
            continue;
        }
        let n = if stmt.contains("A4k") { 3 } else { 7 };
        script.push_str(&format!("out[{name:?}] = med({stmt:?}, {n})\n"));
    }
    script.push_str("print(json.dumps(out))\n");
    let t = threads.to_string();
    let out = std::process::Command::new(python)
        .args(["-c", &script, if big { "big" } else { "small" }])
        .env("OPENBLAS_NUM_THREADS", &t)
        .env("OMP_NUM_THREADS", &t)
        .output();
    match out {
        Ok(o) if o.status.success() => serde_json::from_slice::<HashMap<String, f64>>(&o.stdout).unwrap_or_default(),
        Ok(o) => {
            eprintln!("numpy anchor failed: {}", String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or(""));
            HashMap::new()
        }
        Err(e) => {
            eprintln!("numpy anchor not run ({python}): {e}");
            HashMap::new()
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv/bin/python");
    let default_py = if std::path::Path::new(venv).exists() { venv.to_string() } else { "python3".into() };
    let python = args.iter().position(|a| a == "--python").and_then(|i| args.get(i + 1)).cloned().unwrap_or(default_py);
    let big = !args.iter().any(|a| a == "--quick");

    let x1 = arr(&[1, 4096], 1);
    let w = arr(&[4096, 4096], 2);
    let wt = ops::transpose(&w, None).unwrap();
    let a64 = arr(&[64, 4096], 3);
    let (a1k, b1k) = (arr(&[1024, 1024], 4), arr(&[1024, 1024], 5));
    let (a1k16, b1k16) = (ops::astype(&a1k, DType::Float16).unwrap(), ops::astype(&b1k, DType::Float16).unwrap());
    a1k16.eval().unwrap();
    b1k16.eval().unwrap();
    let a4k = if big { Some((arr(&[4096, 4096], 6), arr(&[4096, 4096], 7))) } else { None };
    let s = arr(&[32, 32000], 8);
    let x = arr(&[64, 4096], 9);
    let wn = arr(&[4096], 10);
    let v16m = arr(&[16 * 1024 * 1024], 11);
    let q = arr(&[1, 32, 1, 128], 12);
    let (kk, vv) = (arr(&[1, 32, 2048, 128], 13), arr(&[1, 32, 2048, 128], 14));

    let ev = |a: Array| a.eval().unwrap();
    let gf = |m: f64, n: f64, k: f64| 2.0 * m * n * k;
    let mut cases = vec![
        Case { name: "gemv_f32_1x4096x4096", run: Box::new({ let (x1, w) = (x1.clone(), w.clone()); move || ev(ops::matmul(&x1, &w).unwrap()) }), work: 4.0 * 4096.0 * 4096.0, unit: "GB/s", numpy: "x1 @ W" },
        Case { name: "gemv_f32_1x4096x4096_T", run: Box::new({ let (x1, wt) = (x1.clone(), wt.clone()); move || ev(ops::matmul(&x1, &wt).unwrap()) }), work: 4.0 * 4096.0 * 4096.0, unit: "GB/s", numpy: "x1 @ W.T" },
        Case { name: "gemm_f32_64x4096x4096", run: Box::new({ let (a, w) = (a64.clone(), w.clone()); move || ev(ops::matmul(&a, &w).unwrap()) }), work: gf(64.0, 4096.0, 4096.0), unit: "GFLOP/s", numpy: "A64 @ W" },
        Case { name: "gemm_f32_1024^3", run: Box::new({ let (a, b) = (a1k.clone(), b1k.clone()); move || ev(ops::matmul(&a, &b).unwrap()) }), work: gf(1024.0, 1024.0, 1024.0), unit: "GFLOP/s", numpy: "A1k @ B1k" },
        Case { name: "gemm_f16_1024^3", run: Box::new({ let (a, b) = (a1k16.clone(), b1k16.clone()); move || ev(ops::matmul(&a, &b).unwrap()) }), work: gf(1024.0, 1024.0, 1024.0), unit: "GFLOP/s", numpy: "A1k @ B1k" },
        Case { name: "softmax_f32_32x32000", run: Box::new({ let s = s.clone(); move || ev(ops::softmax(&s, Some(&[-1]), false).unwrap()) }), work: 8.0 * 32.0 * 32000.0, unit: "GB/s", numpy: "softmax(S)" },
        Case { name: "rms_norm_f32_64x4096", run: Box::new({ let (x, wn) = (x.clone(), wn.clone()); move || ev(ops::fast::rms_norm(&x, Some(&wn), 1e-5).unwrap()) }), work: 8.0 * 64.0 * 4096.0, unit: "GB/s", numpy: "rms()" },
        Case { name: "sum_f32_16M", run: Box::new({ let v = v16m.clone(); move || ev(ops::sum(&v, None, false).unwrap()) }), work: 4.0 * 16.0 * 1024.0 * 1024.0, unit: "GB/s", numpy: "V.sum()" },
        Case { name: "sdpa_decode_32h_2048k", run: Box::new({ let (q, kk, vv) = (q.clone(), kk.clone(), vv.clone()); move || ev(ops::fast::scaled_dot_product_attention(&q, &kk, &vv, 0.0884, SdpaMask::None).unwrap()) }), work: 2.0 * 4.0 * 32.0 * 2048.0 * 128.0, unit: "GB/s", numpy: "sdpa()" },
    ];
    if let Some((a, b)) = &a4k {
        let (a, b) = (a.clone(), b.clone());
        cases.push(Case { name: "gemm_f32_4096^3", run: Box::new(move || ev(ops::matmul(&a, &b).unwrap())), work: gf(4096.0, 4096.0, 4096.0), unit: "GFLOP/s", numpy: "A4k @ A4k" });
    }

    let (copy_bw, read_bw) = common::bandwidth();
    println!("machine: {} cores, kernels: {:?}", std::thread::available_parallelism().map_or(1, |c| c.get()), mlx_arm_core::cpu::isa::isa());
    println!("memcpy {copy_bw:.1} GB/s (read+write), read {read_bw:.1} GB/s (1 thread)");
    println!("{:<26} {:>3} {:>16} {:>16} {:>8} {:>10}", "case", "thr", "mlx-arm", "numpy/OpenBLAS", "ratio", "of read bw");
    let anchors: Vec<(&str, &str)> = cases.iter().map(|c| (c.name, c.numpy)).collect();
    for threads in [1usize, 2] {
        mlx_arm_core::parallel::set_parallel_for(if threads == 1 { Some(common::serial) } else { None });
        // The pool at the anchor's thread count (left at the default, it used every core of a
        // 16-core machine against numpy's 2).
        mlx_arm_core::parallel::set_num_threads(threads);
        let np = numpy_times(&python, threads, &anchors, big);
        for c in &cases {
            let runs = if c.name.contains("4096^3") { 3 } else { 7 };
            let secs = common::median_seconds(1, runs, &c.run);
            let rate = |t: f64| c.work / t / 1e9;
            let theirs = np.get(c.name).copied();
            let (t, ratio) = match theirs {
                Some(t) => (format!("{:.1} {}", rate(t), c.unit), format!("{:.2}x", t / secs)),
                None => ("n/a".into(), "n/a".into()),
            };
            let bw = if c.unit == "GB/s" { format!("{:.0}%", 100.0 * rate(secs) / read_bw) } else { String::new() };
            println!("{:<26} {:>3} {:>16} {:>16} {:>8} {:>10}", c.name, threads, format!("{:.1} {}", rate(secs), c.unit), t, ratio, bw);
        }
    }
}
