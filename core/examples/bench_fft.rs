//! FFT benchmark: `mx.fft.fft` of complex64 vectors of 2^10..2^20 points, ours beside
//! numpy.fft (and real MLX's mx.fft.fft, when the given Python has it) measured in the same
//! run by `benchmarks/fft_ref.py` on the same input.
//!
//! `cargo run --release -p mlx-arm-core --example bench_fft [-- --python PATH]`
//! PATH is a Python with numpy (default `python3`); without it only our figures print.

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::ops::fft::{fft, FftNorm};
use mlx_arm_core::{Array, Complex64};

/// The input rule of benchmarks/fft_ref.py (exact float32 values from integer hashes).
fn signal(n: usize) -> Array {
    let v: Vec<Complex64> = (0..n as i64)
        .map(|j| {
            let re = ((j * 7919) % 10007) as f64 / 10007.0 - 0.5;
            let im = ((j * 104729) % 10009) as f64 / 10009.0 - 0.5;
            Complex64::new(re as f32, im as f32)
        })
        .collect();
    Array::from_slice(&v, &[n]).unwrap()
}

fn reference(python: &str) -> Option<serde_json::Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks/fft_ref.py");
    let out = std::process::Command::new(python).arg(script).output().ok()?;
    if !out.status.success() {
        eprintln!("reference not measured: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let python = args.iter().position(|a| a == "--python").and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| "python3".into());
    let sizes: Vec<usize> = (10..=20).map(|k| 1usize << k).collect();
    let ours: Vec<f64> = sizes
        .iter()
        .map(|&n| {
            let x = signal(n);
            x.eval().unwrap();
            let runs = ((1usize << 22) / n).clamp(5, 51);
            common::median_seconds(3, runs, || fft(&x, None, -1, FftNorm::Backward).unwrap().eval().unwrap())
        })
        .collect();
    let r = reference(&python);
    println!("{:>8} {:>12} {:>12} {:>12} {:>14} {:>12} {:>14}", "n", "mlx-arm", "GFLOP/s", "numpy", "numpy/ours", "real MLX", "MLX/ours");
    for (&n, &t) in sizes.iter().zip(&ours) {
        let gflops = 5.0 * n as f64 * (n as f64).log2() / t / 1e9;
        let get = |k: &str| r.as_ref().and_then(|r| r[k][n.to_string()].as_f64());
        let cell = |v: Option<f64>| v.map(|v| format!("{:.1} µs", v * 1e6)).unwrap_or_else(|| "-".into());
        let ratio = |v: Option<f64>| v.map(|v| format!("{:.2}x", v / t)).unwrap_or_else(|| "-".into());
        let (np, mx) = (get("numpy"), get("mlx"));
        println!("{n:>8} {:>12} {gflops:>12.2} {:>12} {:>14} {:>12} {:>14}", format!("{:.1} µs", t * 1e6), cell(np), ratio(np), cell(mx), ratio(mx));
    }
    println!("(ratio > 1: mlx-arm is faster; 5·n·log2(n) flops per transform)");
}
