//! One MLX fp-mode `x @ Ŵᵀ` (`cpu::mlx_fp::qmm_fp_at`), repeated `--iters` times on one
//! thread, for counting guest instructions under qemu-user (no aarch64 hardware here: a
//! proxy, not a timing). Run once with `--iters 0` and once with `--iters N`: the difference
//! divided by N is one matmul, free of the setup (scripts/qemu-insn/insn.c counts).
//!
//! `mlx_fp_insn_count --mode mxfp4|nvfp4|mxfp8 --level portable|neon --m 1 --n 256 --k 4096 --iters 2`

use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::cpu::mlx_fp::qmm_fp_at;
use mlx_arm_core::quant::mlx::{fp_quantize, QuantMode, QuantParams};

fn fill(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2001) as f32 / 1000.0 - 1.0).collect()
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let num = |k: &str, d: usize| arg(k).and_then(|s| s.parse().ok()).unwrap_or(d);
    let mode = QuantMode::parse(&arg("--mode").unwrap_or_else(|| "mxfp4".into()), "quantize").map_err(|e| e.to_string())?;
    let level = Isa::from_name(&arg("--level").unwrap_or_else(|| isa::best().name().into())).ok_or("unknown --level")?;
    isa::set_isa(level).map_err(|e| e.to_string())?;
    mlx_arm_core::parallel::set_num_threads(1);
    let (m, n, k, iters) = (num("--m", 1), num("--n", 256), num("--k", 4096), num("--iters", 1));
    let p = QuantParams::new("quantize", mode, mode.default_group_size(), mode.default_bits()).map_err(|e| e.to_string())?;
    let (wq, s) = fp_quantize(&fill(n * k, 3), k, &p, None).map_err(|e| e.to_string())?;
    let x = fill(m * k, 5);
    let mut y = vec![0f32; m * n];
    for _ in 0..iters {
        qmm_fp_at(level, &x, m, k, &wq, &s, n, &p, true, &mut y).map_err(|e| e.to_string())?;
    }
    println!("{}", y.iter().sum::<f32>());
    Ok(())
}
