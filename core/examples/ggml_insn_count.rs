//! The quantized matmul a decode / prefill step runs, repeated `--iters` times on one thread,
//! for counting instructions under an emulator (scripts/qemu-insn/run.sh: there is no aarch64
//! hardware here, so qemu-user's retired guest instructions are the proxy for the aarch64
//! kernels). Run once with `--iters 0` and once with `--iters N`: the difference divided by N
//! is one matmul (activation quantization and preparation included), free of the setup.
//!
//! `ggml_insn_count --type q4_0 --level dotprod --path prepared|dot --m 1 --n 1024 --k 4096 --iters 4`
//! `--path prepared`: `qmatmul_rows_quantized`, i.e. what the matmul op runs at that level
//! (the kernels over prepared activations where the level has them);
//! `--path dot`: the level's per-pair dot kernel for every output (the matmul's path before
//! those kernels, and the portable level's path).

use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::quant::ggml::{qmatmul_rows_quantized, quantize_activations, quantize_row_at, vec_dot_at};
use mlx_arm_core::quant::GgmlType as T;

fn fill(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2001) as f32 / 1000.0 - 1.0).collect()
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let num = |k: &str, d: usize| arg(k).and_then(|s| s.parse().ok()).unwrap_or(d);
    let ty = match arg("--type").as_deref().unwrap_or("q4_0") {
        "q4_0" => T::Q4_0,
        "q4_1" => T::Q4_1,
        "q8_0" => T::Q8_0,
        "q2_k" => T::Q2_K,
        "q3_k" => T::Q3_K,
        "q4_k" => T::Q4_K,
        "q5_k" => T::Q5_K,
        "q6_k" => T::Q6_K,
        other => return Err(format!("unknown --type {other}")),
    };
    let level = Isa::from_name(&arg("--level").unwrap_or_else(|| isa::best().name().into())).ok_or("unknown --level")?;
    isa::set_isa(level).map_err(|e| e.to_string())?;
    let dot_path = arg("--path").as_deref() == Some("dot");
    let (m, n, k, iters) = (num("--m", 1), num("--n", 1024), num("--k", 4096), num("--iters", 1));
    // 16 distinct rows repeated (the portable K-quant search is slow under emulation).
    let rb = ty.row_bytes(k).ok_or("k is not a whole number of blocks")?;
    let mut distinct = vec![0u8; 16 * rb];
    for (r, dst) in distinct.chunks_exact_mut(rb).enumerate() {
        quantize_row_at(Isa::Portable, ty, &fill(k, 11 + r as u32), dst).map_err(|e| e.to_string())?;
    }
    let w: Vec<u8> = (0..n).flat_map(|r| distinct[(r % 16) * rb..][..rb].iter().copied()).collect();
    let x = fill(m * k, 7);
    let mut out = vec![0f32; m * n];
    let mut check = 0f64;
    for _ in 0..iters {
        let xq = quantize_activations(ty, &x, m, k).map_err(|e| e.to_string())?;
        if dot_path {
            let xrb = xq.data.len() / m;
            for i in 0..m {
                for j in 0..n {
                    out[i * n + j] = vec_dot_at(level, ty, &w[j * rb..][..rb], &xq.data[i * xrb..][..xrb], k).map_err(|e| e.to_string())?;
                }
            }
        } else {
            qmatmul_rows_quantized(ty, &w, n, &xq, &mut out, 0..n).map_err(|e| e.to_string())?;
        }
        check += out.iter().map(|&v| v as f64).sum::<f64>();
    }
    println!(
        "{} {} {} m={m} n={n} k={k} iters={iters} weight_bytes={} flops={} checksum={check:.4}",
        ty.name(),
        level.name(),
        if dot_path { "dot" } else { "prepared" },
        n * rb,
        2 * m * n * k
    );
    Ok(())
}
