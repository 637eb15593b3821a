//! Core benchmark: per-op overhead (a 10 000-op graph on 16-element arrays, build + eval) and
//! elementwise add/exp throughput on 16M float32, beside real MLX measured in the same run.
//!
//! `cargo run --release -p mlx-arm-core --example bench_core [-- --python PATH]`
//! PATH is a Python with `mlx` installed (default `python3`); without it only our figures print.

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::{ops, Array};

const N16M: usize = 16 * 1024 * 1024;


fn graph_10k() {
    let x = Array::from_slice(&[1.0f32; 16], &[16]).unwrap();
    let a = Array::from_slice(&[1.0001f32; 16], &[16]).unwrap();
    let b = Array::from_slice(&[0.5f32; 16], &[16]).unwrap();
    let mut y = x;
    for i in 0..5000 {
        y = ops::multiply(&y, &a).unwrap();
        y = if i % 2 == 1 { ops::subtract(&y, &b).unwrap() } else { ops::add(&y, &b).unwrap() };
    }
    y.eval().unwrap();
}

fn random_f32(n: usize, seed: u32) -> Array {
    // A cheap deterministic fill; the values only need to be ordinary floats.
    let v: Vec<f32> = (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2000) as f32 / 1000.0 - 1.0).collect();
    Array::from_slice(&v, &[n]).unwrap()
}

fn mlx_reference(python: &str) -> Option<serde_json::Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks/mlx_core_ref.py");
    let out = std::process::Command::new(python).arg(script).output().ok()?;
    if !out.status.success() {
        eprintln!("real MLX reference not measured: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let python = args.iter().position(|a| a == "--python").and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| "python3".into());

    let (a, b) = (random_f32(N16M, 1), random_f32(N16M, 7));
    a.eval().unwrap();
    b.eval().unwrap();
    let ours = [
        ("graph_10k_small_ops", common::median_seconds(2, 7, graph_10k), 10_000.0, "µs/op"),
        ("add_f32_16M", common::median_seconds(2, 7, || ops::add(&a, &b).unwrap().eval().unwrap()), (3 * 4 * N16M) as f64, "GB/s"),
        ("exp_f32_16M", common::median_seconds(2, 7, || ops::exp(&a).unwrap().eval().unwrap()), (2 * 4 * N16M) as f64, "GB/s"),
    ];
    let reference = mlx_reference(&python);
    println!("{:<22} {:>14} {:>14} {:>10}", "case", "mlx-arm", "real MLX", "speedup");
    for (name, secs, per, unit) in ours {
        let fmt = |s: f64| if unit == "µs/op" { format!("{:.2} {unit}", s * 1e6 / per) } else { format!("{:.2} {unit}", per / s / 1e9) };
        let theirs = reference.as_ref().and_then(|r| r[name].as_f64());
        let (t, ratio) = match theirs {
            Some(t) => (fmt(t), format!("{:.1}x", t / secs)),
            None => ("n/a".into(), "n/a".into()),
        };
        println!("{:<22} {:>14} {:>14} {:>10}", name, fmt(secs), t, ratio);
    }
}
