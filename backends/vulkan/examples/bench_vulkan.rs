//! Vulkan kernels beside our CPU path (and PyTorch on CUDA when `--torch PYTHON` is given and
//! works): matmul f32/f16 n×n, softmax and rms_norm over rows×rows, add of `elems` floats, a
//! 4-bit quantized GEMV (1×n @ n×n, group 64) and GEMM (32×n @ n×n), GGUF Q4_0 / Q8_0 GEMVs
//! (`ggml_matmul`, 1×n @ n×n) and one decode step of attention (32 query heads, 8 KV heads,
//! head dim 128, `rows` cached positions) (defaults 1024, 4096, 2^24). GB/s counts the bytes
//! an op must read and write once (weights, activations, output), against the add's.
//! GPU times include recording, submission and waiting for completion; inputs are already
//! device-resident (uploaded before timing), as weights and activations are in a model.
//! "vulkan ms" is one op then a wait; "queued ms" is `--queue Q` (default 8) ops recorded
//! back to back and one wait, divided by Q (the fixed cost of a wait spread over them); "wait
//! ms" is the host's time blocked in the wait of a single op (queue statistics).
//! `--only TEXT` keeps the cases whose name holds TEXT. Float16 matmuls take the tensor-core
//! shader where the device has it (`MLX_ARM_VULKAN_COOPMAT=off`: the portable one).
//!
//! `cargo run --release --manifest-path backends/vulkan/Cargo.toml --example bench_vulkan -- [--n N] [--rows R] [--elems E] [--queue Q] [--only TEXT] [--torch PYTHON [--torch-script PATH]] [--no-cpu]`

use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{device, ops, Array, DType, Device, Result};

// The timing rule every figure in docs/BENCHMARKS.md uses (median after warm-ups).
#[path = "../../../core/examples/common/mod.rs"]
mod common;
use common::median_seconds as median;

fn random(shape: &[usize], seed: u32, dt: DType) -> Result<Array> {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2000) as f32 / 1000.0 - 1.0).collect();
    ops::astype(&Array::from_slice(&v, shape)?, dt)
}

type Op = fn(&[Array]) -> Result<Array>;

/// `x[0] @ dequantize(x[1], x[2], x[3])ᵀ`, 4-bit, group 64 (the quantized cases).
fn qmm_q4(x: &[Array]) -> Result<Array> {
    ops::quantized::quantized_matmul(&x[0], &x[1], &x[2], Some(&x[3]), true, Some(64), Some(4), "affine")
}

/// `x[0] @ Wᵀ` with `W` GGUF Q4_0 / Q8_0 blocks (`x[1]`).
fn ggml_q4_0(x: &[Array]) -> Result<Array> {
    ops::ggml_matmul(&x[0], &x[1], GgmlType::Q4_0, x[0].shape()[1])
}
fn ggml_q8_0(x: &[Array]) -> Result<Array> {
    ops::ggml_matmul(&x[0], &x[1], GgmlType::Q8_0, x[0].shape()[1])
}

/// Runs `op` and waits for it; the timed loops call this after one checked run.
fn run_once(op: Op, inputs: &[Array]) -> Result<()> {
    op(inputs)?.eval()
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
    let n: usize = arg("--n").and_then(|v| v.parse().ok()).unwrap_or(1024);
    let rows: usize = arg("--rows").and_then(|v| v.parse().ok()).unwrap_or(4096);
    let elems: usize = arg("--elems").and_then(|v| v.parse().ok()).unwrap_or(1 << 24);
    let no_cpu = args.iter().any(|a| a == "--no-cpu");
    let queue: usize = arg("--queue").and_then(|v| v.parse().ok()).filter(|&q| q > 0).unwrap_or(8);
    let only = arg("--only");
    let info = mlx_arm_vulkan::init()?;
    println!("device: {} ({}), shared memory: {}, f16: {}", info.name, info.kind, info.shared_memory, info.f16);
    match info.coopmat {
        Some(s) => println!("float16 matmul: tensor cores (VK_NV_cooperative_matrix, fragment {}x{}x{})", s[0], s[1], s[2]),
        None => println!("float16 matmul: portable shader"),
    }
    let gpu_stream = device::default_stream(Device::GPU)?;

    // (name, inputs, op, flops, bytes moved at least once)
    let mut cases: Vec<(String, Vec<Array>, Op, f64, f64)> = Vec::new();
    let flops = 2.0 * (n * n * n) as f64;
    cases.push((format!("matmul_f32_{n}"), vec![random(&[n, n], 1, DType::Float32)?, random(&[n, n], 2, DType::Float32)?], |x| ops::matmul(&x[0], &x[1]), flops, 0.0));
    if info.f16 {
        cases.push((format!("matmul_f16_{n}"), vec![random(&[n, n], 1, DType::Float16)?, random(&[n, n], 2, DType::Float16)?], |x| ops::matmul(&x[0], &x[1]), flops, 0.0));
    }
    let dim = rows;
    cases.push((format!("softmax_f32_{rows}x{dim}"), vec![random(&[rows, dim], 3, DType::Float32)?], |x| ops::softmax(&x[0], Some(&[-1]), false), 0.0, 0.0));
    cases.push((
        format!("rms_norm_f32_{rows}x{dim}"),
        vec![random(&[rows, dim], 4, DType::Float32)?, random(&[dim], 5, DType::Float32)?],
        |x| ops::fast::rms_norm(&x[0], Some(&x[1]), 1e-5),
        0.0,
        0.0,
    ));
    {
        let w = random(&[n, n], 7, DType::Float32)?;
        let q = ops::quantized::quantize(&w, Some(64), Some(4), "affine", None)?;
        cases.push((
            format!("qmv_q4_f32_{n}"),
            vec![random(&[1, n], 8, DType::Float32)?, q[0].clone(), q[1].clone(), q[2].clone()],
            qmm_q4,
            2.0 * (n * n) as f64,
            (n * n / 2 + n * n / 64 * 8 + 8 * n) as f64,
        ));
        // A prefill-sized product: 32 rows of x against the same weight.
        cases.push((
            format!("qmm_q4_f32_32x{n}"),
            vec![random(&[32, n], 12, DType::Float32)?, q[0].clone(), q[1].clone(), q[2].clone()],
            qmm_q4,
            2.0 * (32 * n * n) as f64,
            0.0,
        ));
    }
    for (name, ty, op) in [("q4_0", GgmlType::Q4_0, ggml_q4_0 as Op), ("q8_0", GgmlType::Q8_0, ggml_q8_0 as Op)] {
        let blocks = ops::ggml_quantize(&random(&[n, n], 13, DType::Float32)?, ty)?;
        let bytes = blocks.nbytes() + 8 * n;
        cases.push((format!("ggml_mv_{name}_f32_{n}"), vec![random(&[1, n], 14, DType::Float32)?, blocks], op, 2.0 * (n * n) as f64, bytes as f64));
    }
    let (hq, hkv, hd) = (32, 8, 128);
    cases.push((
        format!("sdpa_decode_f32_{rows}"),
        vec![random(&[1, hq, 1, hd], 9, DType::Float32)?, random(&[1, hkv, rows, hd], 10, DType::Float32)?, random(&[1, hkv, rows, hd], 11, DType::Float32)?],
        |x| ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.088, ops::SdpaMask::None),
        4.0 * (hq * hd) as f64 * rows as f64,
        0.0,
    ));
    // Reads one buffer (twice, as one stream) and writes one: the copy-bandwidth anchor.
    cases.push((format!("add_f32_{elems}"), vec![random(&[elems], 6, DType::Float32)?], |x| ops::add(&x[0], &x[0]), 0.0, (8 * elems) as f64));

    if let Some(only) = &only {
        cases.retain(|c| c.0.contains(only.as_str()));
    }
    let torch: Option<serde_like::Map> = arg("--torch").and_then(|py| {
        let script = arg("--torch-script").unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../benchmarks/torch_gpu_ref.py").into());
        let out = std::process::Command::new(py).arg(script).args([n, rows, elems].map(|v| v.to_string())).output().ok()?;
        if !out.status.success() {
            eprintln!("PyTorch reference not measured: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
            return None;
        }
        serde_like::parse(&String::from_utf8_lossy(&out.stdout))
    });

    println!(
        "{:<26} {:>11} {:>11} {:>9} {:>11} {:>9} {:>10} {:>8} {:>10} {:>9} {:>10}",
        "case", "cpu ms", "vulkan ms", "vs cpu", "torch ms", "vs torch", "GFLOP/s", "GB/s", "queued ms", "vs torch", "wait ms"
    );
    for (name, inputs, op, fl, bytes) in &cases {
        mlx_arm_core::eval(inputs)?;
        // One checked run per path; the timed repetitions of the same op then ignore errors.
        if !no_cpu {
            run_once(*op, inputs)?;
        }
        let cpu = (!no_cpu).then(|| median(1, 3, || drop(run_once(*op, inputs))));
        // Device-resident inputs: one GPU copy each, done before timing.
        device::set_default_device(Device::GPU)?;
        let dev_inputs = inputs
            .iter()
            .map(|a| ops::multiply(a, &Array::from_value(mlx_arm_core::Value::F(1.0), a.dtype())?))
            .collect::<Result<Vec<Array>>>()?;
        mlx_arm_core::eval(&dev_inputs)?;
        run_once(*op, &dev_inputs)?;
        device::synchronize(gpu_stream)?;
        let waits = mlx_arm_vulkan::queue_stats();
        let gpu = median(2, 7, || {
            drop(run_once(*op, &dev_inputs));
            drop(device::synchronize(gpu_stream));
        });
        let wait_s = (mlx_arm_vulkan::queue_stats().wait_ns - waits.wait_ns) as f64 * 1e-9 / 9.0;
        let queued = median(1, 5, || {
            let outs: Vec<Array> = (0..queue).filter_map(|_| op(&dev_inputs).ok()).collect();
            drop(mlx_arm_core::eval(&outs));
            drop(device::synchronize(gpu_stream));
        }) / queue as f64;
        device::set_default_device(Device::CPU)?;
        let t = torch.as_ref().and_then(|m| m.get(name));
        let ms = |s: f64| format!("{:.3}", s * 1e3);
        println!(
            "{:<26} {:>11} {:>11} {:>9} {:>11} {:>9} {:>10} {:>8} {:>10} {:>9} {:>10}",
            name,
            cpu.map(ms).unwrap_or("-".into()),
            ms(gpu),
            cpu.map(|c| format!("{:.2}x", c / gpu)).unwrap_or("-".into()),
            t.map(|&t| ms(t)).unwrap_or("-".into()),
            t.map(|t| format!("{:.3}x", t / gpu)).unwrap_or("-".into()),
            if *fl > 0.0 { format!("{:.1}", fl / gpu / 1e9) } else { "-".into() },
            if *bytes > 0.0 { format!("{:.0}", bytes / gpu / 1e9) } else { "-".into() },
            ms(queued),
            t.map(|t| format!("{:.3}x", t / queued)).unwrap_or("-".into()),
            ms(wait_s),
        );
    }
    let q = mlx_arm_vulkan::queue_stats();
    println!("queue: {} dispatches, {} barriers, {} submits, {} waits", q.dispatches, q.barriers, q.submits, q.waits);
    Ok(())
}

/// A tiny reader for the flat {"name": number} JSON the reference script prints.
mod serde_like {
    pub type Map = std::collections::HashMap<String, f64>;
    pub fn parse(s: &str) -> Option<Map> {
        let body = s.trim().strip_prefix('{')?.strip_suffix('}')?;
        body.split(',')
            .map(|kv| {
                let (k, v) = kv.split_once(':')?;
                Some((k.trim().trim_matches('"').to_string(), v.trim().parse().ok()?))
            })
            .collect()
    }
}
