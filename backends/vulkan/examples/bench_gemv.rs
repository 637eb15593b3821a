//! One GGUF GEMV (`ggml_matmul` of one row of x, what a decode step runs 121 times on the
//! default model) per weight shape, timed on the GPU, beside the GPU's floor for a dispatch and
//! its copy bandwidth. Run it with `MLX_ARM_VULKAN_PROFILE=1` (the per-kernel GPU times) and
//! compare shaders through the backend's variables (`MLX_ARM_VULKAN_GGML_MV=split|subgroup`,
//! `MLX_ARM_VULKAN_GGML_LANES`, `MLX_ARM_VULKAN_GGML_OUTS`), one process each.
//!
//! Per shape `N×K` (weight rows × row length) it prints:
//! - `alone µs`: GPU time of one GEMV recorded alone and waited on (profile; launch included),
//!   mean of `--reps`;
//! - `chained µs`: GPU time per GEMV in a chain of `--chain` GEMVs each reading the last one's
//!   output (a barrier between each, as in a decode step; profile), for `N ≥ K` (the next input
//!   is the first K outputs, a view); for `N < K` the chain alternates with the `K×N` weight and
//!   the figure is per pair;
//! - `chained wall µs`: the same chain's host wall time (record, submit, wait) per GEMV;
//! - `GB/s`: the weight's bytes over the chained time.
//!
//! Then, for each `N×K` with N < K (a down projection), `swiglu+down`: a chain of MLP tails (up
//! GEMV, SwiGLU, down GEMV) with the SwiGLU folded into the down GEMV and unfolded, GPU µs a step.
//!
//! The floor is a chain of float32 adds of 576 elements; the bandwidth a multiply by one of 256 MiB.
//!
//! `cargo run --release -p mlx-arm-vulkan --example bench_gemv -- [--type q4_1] [--shapes NxK,...] [--reps R] [--chain C]`
//! (default shapes: the default model's 576x576, 960x576 (Q/K/V joined), 192x576, 1536x576,
//! 3072x576 (gate/up joined), 576x1536, 49152x576; then TinyLlama 1.1B's 2048x2048, 256x2048,
//! 5632x2048, 2048x5632, 32000x2048).

use mlx_arm_core::ops::binary::BinaryOp;
use mlx_arm_core::ops::fused::{FusedOp, Step};
use mlx_arm_core::ops::unary::UnaryOp;
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{device, ops, Array, DType, Device, Result, Value};
use std::sync::Arc;
use std::time::Instant;

const DEFAULT_SHAPES: &str = "576x576,960x576,192x576,1536x576,3072x576,576x1536,49152x576,2048x2048,256x2048,5632x2048,2048x5632,32000x2048";

fn random(shape: &[usize], seed: u32) -> Result<Array> {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2000) as f32 / 1000.0 - 1.0).collect();
    Array::from_slice(&v, shape)
}

/// GPU ns and dispatches of kernel `name` so far (profile totals).
fn gpu_ns(name: &str) -> (f64, u64) {
    mlx_arm_vulkan::kernel_times().iter().filter(|k| k.name == name).fold((0.0, 0), |a, k| (a.0 + k.gpu_ns, a.1 + k.count))
}

/// GPU ns of every GEMV kernel so far.
fn gemv_ns() -> (f64, u64) {
    ["ggml_mv", "ggml_mv_sg", "ggml_mv_sub", "ggml_mv_cpu"].iter().fold((0.0, 0), |a, n| {
        let (t, c) = gpu_ns(n);
        (a.0 + t, a.1 + c)
    })
}

fn gemv(x: &Array, w: &Array, ty: GgmlType, k: usize) -> Result<Array> {
    ops::ggml_matmul(x, w, ty, k)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let reps: usize = arg("--reps").and_then(|v| v.parse().ok()).unwrap_or(50);
    let chain: usize = arg("--chain").and_then(|v| v.parse().ok()).filter(|&c| c >= 2).unwrap_or(64);
    let ty = match arg("--type").as_deref().unwrap_or("q4_1") {
        "q4_0" => GgmlType::Q4_0,
        "q4_1" => GgmlType::Q4_1,
        "q8_0" => GgmlType::Q8_0,
        "q4_k" => GgmlType::Q4_K,
        "q6_k" => GgmlType::Q6_K,
        t => return Err(mlx_arm_core::Error::invalid("bench_gemv", format!("--type {t}: expected q4_0, q4_1, q8_0, q4_k or q6_k."))),
    };
    let shapes: Vec<(usize, usize)> = arg("--shapes")
        .unwrap_or_else(|| DEFAULT_SHAPES.into())
        .split(',')
        .filter_map(|s| s.split_once('x').and_then(|(n, k)| Some((n.parse().ok()?, k.parse().ok()?))))
        .collect();
    let info = mlx_arm_vulkan::init()?;
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| "default".into());
    println!(
        "device: {}; GEMV {} = {}, {} = {}, {} = {}, type {ty:?}",
        info.name,
        mlx_arm_vulkan::GGML_MV_ENV,
        var(mlx_arm_vulkan::GGML_MV_ENV),
        mlx_arm_vulkan::GGML_LANES_ENV,
        var(mlx_arm_vulkan::GGML_LANES_ENV),
        mlx_arm_vulkan::GGML_OUTS_ENV,
        var(mlx_arm_vulkan::GGML_OUTS_ENV)
    );
    if mlx_arm_vulkan::kernel_times().is_empty() && std::env::var(mlx_arm_vulkan::PROFILE_ENV).as_deref() != Ok("1") {
        println!("(set {}=1 for GPU times; wall times only)", mlx_arm_vulkan::PROFILE_ENV);
    }
    let gpu = device::default_stream(Device::GPU)?;
    // eval records and submits; the host waits only here (and the profile is read here).
    let done = |a: &Array| -> Result<()> {
        a.eval()?;
        device::synchronize(gpu)
    };
    device::set_default_device(Device::GPU)?;

    // The floor: a chain of tiny adds.
    let a = random(&[1, 576], 3)?;
    done(&a)?;
    let (t0, c0) = gpu_ns("binary");
    let t = Instant::now();
    let mut y = a.clone();
    for _ in 0..chain {
        y = ops::add(&y, &a)?;
    }
    done(&y)?;
    let wall = t.elapsed().as_secs_f64() * 1e6 / chain as f64;
    let (t1, c1) = gpu_ns("binary");
    let per = if c1 > c0 { (t1 - t0) / (c1 - c0) as f64 / 1e3 } else { f64::NAN };
    println!("floor: chained add of 576 floats: {per:.2} µs GPU, {wall:.2} µs wall per dispatch");

    // Copy bandwidth: 256 MiB read and written (a multiply by one).
    let big = random(&[64 << 20], 5)?;
    done(&big)?;
    let one = Array::from_value(Value::F(1.0), DType::Float32)?;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        done(&ops::multiply(&big, &one)?)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("copy of 256 MiB: {:.0} GB/s (read + write over the best wall time of 5)", 2.0 * (256u64 << 20) as f64 / best / 1e9);
    drop(big);

    println!("{:>12} {:>10} {:>10} {:>10} {:>16} {:>8}", "N×K", "MB", "alone µs", "chained µs", "chained wall µs", "GB/s");
    for &(n, k) in &shapes {
        let w = ops::ggml_quantize(&random(&[n, k], 7)?, ty)?;
        let w2 = if n < k { Some(ops::ggml_quantize(&random(&[k, n], 9)?, ty)?) } else { None };
        done(&w)?;
        if let Some(w2) = &w2 {
            done(w2)?;
        }
        let mb = (w.shape()[0] * w.shape()[1]) as f64 / 1e6;
        let x = random(&[1, k], 11)?;
        done(&x)?;
        // Warm-up: pipelines and the weights' device copies.
        for _ in 0..3 {
            done(&gemv(&x, &w, ty, k)?)?;
        }
        let (a0, ac0) = gemv_ns();
        for _ in 0..reps {
            done(&gemv(&x, &w, ty, k)?)?;
        }
        let (a1, ac1) = gemv_ns();
        let alone = if ac1 > ac0 { (a1 - a0) / (ac1 - ac0) as f64 / 1e3 } else { f64::NAN };
        let mut best_wall = f64::MAX;
        let mut chained = f64::NAN;
        for _ in 0..3 {
            let (c0, cc0) = gemv_ns();
            let t = Instant::now();
            let mut y = x.clone();
            for _ in 0..chain {
                y = match &w2 {
                    None => ops::slice(&gemv(&y, &w, ty, k)?, &[0, 0], &[1, k as isize], &[1, 1])?,
                    Some(w2) => gemv(&gemv(&y, &w, ty, k)?, w2, ty, n)?,
                };
            }
            done(&y)?;
            best_wall = best_wall.min(t.elapsed().as_secs_f64() * 1e6 / chain as f64);
            let (c1, cc1) = gemv_ns();
            if cc1 > cc0 {
                let per = (c1 - c0) / (cc1 - cc0) as f64 / 1e3 * if w2.is_some() { 2.0 } else { 1.0 };
                chained = if chained.is_nan() { per } else { chained.min(per) };
            }
        }
        let label = if w2.is_some() { format!("{n}x{k}+{k}x{n}") } else { format!("{n}x{k}") };
        let bytes = mb * if w2.is_some() { 2.0 } else { 1.0 };
        println!("{label:>12} {bytes:>10.3} {alone:>10.2} {chained:>10.2} {best_wall:>16.2} {:>8.0}", bytes * 1e6 / (chained * 1e-6) / 1e9);
    }
    for &(n, k) in shapes.iter().filter(|s| s.0 < s.1) {
        swiglu_down(n, k, ty, chain, &done)?;
    }
    Ok(())
}

/// lm's SwiGLU program (lm/src/model.rs): g·sigmoid(g)·u, registers g = 0, u = 1.
fn swiglu(dtype: DType) -> Arc<FusedOp> {
    let step = |prim, args: &[usize]| Step { prim, args: args.to_vec(), dtype };
    Arc::new(FusedOp {
        n_inputs: 2,
        steps: vec![
            step(Primitive::Unary(UnaryOp::Sigmoid), &[0]),
            step(Primitive::Binary(BinaryOp::Multiply), &[0, 2]),
            step(Primitive::Binary(BinaryOp::Multiply), &[3, 1]),
        ],
    })
}

/// A decode step's MLP tail for a down weight `N×K` (N < K): a chain of `chain` steps, each the
/// up GEMV (`K×N`, from the last step's output), the SwiGLU of it and a fixed u, and the down
/// GEMV, with the SwiGLU folded into the down GEMV (ggml_mv_sub_fx.comp) and unfolded
/// (`set_fusion(false)`: fused.comp, then ggml_mv_sub.comp). Prints GPU µs a step (all three
/// kernels) and the folded GEMV's and the SwiGLU's µs a dispatch.
fn swiglu_down(n: usize, k: usize, ty: GgmlType, chain: usize, done: &dyn Fn(&Array) -> Result<()>) -> Result<()> {
    let down = ops::ggml_quantize(&random(&[n, k], 7)?, ty)?;
    let up = ops::ggml_quantize(&random(&[k, n], 9)?, ty)?;
    let u = random(&[1, k], 13)?;
    let x = random(&[1, n], 11)?;
    for a in [&down, &up, &u, &x] {
        done(a)?;
    }
    let prog = swiglu(DType::Float32);
    let kernels = ["ggml_mv_sub", "ggml_mv_sub_fx", "fused"];
    let total = || kernels.iter().fold(0.0, |a, name| a + gpu_ns(name).0);
    for fold in [true, false, true, false] {
        mlx_arm_vulkan::set_fusion(fold);
        let (t0, (f0, fc0), (s0, sc0)) = (total(), gpu_ns("ggml_mv_sub_fx"), gpu_ns("fused"));
        let mut y = x.clone();
        for _ in 0..chain {
            let g = gemv(&y, &up, ty, n)?;
            let act = FusedOp::record(&prog, vec![g, u.clone()])?;
            y = gemv(&act, &down, ty, k)?;
        }
        done(&y)?;
        let ((f1, fc1), (s1, sc1)) = (gpu_ns("ggml_mv_sub_fx"), gpu_ns("fused"));
        let per = |a: f64, b: f64, c0: u64, c1: u64| if c1 > c0 { format!("{:.2}", (b - a) / (c1 - c0) as f64 / 1e3) } else { "-".into() };
        println!(
            "swiglu+down {n}x{k} {}: {:.2} µs GPU a step (up GEMV + SwiGLU + down GEMV); ggml_mv_sub_fx {} µs, fused {} µs a dispatch",
            if fold { "folded" } else { "unfolded" },
            (total() - t0) / chain as f64 / 1e3,
            per(f0, f1, fc0, fc1),
            per(s0, s1, sc0, sc1)
        );
    }
    mlx_arm_vulkan::set_fusion(true);
    Ok(())
}
