//! Where a decode GEMV's time goes (issue 17, helper "gv22"): for one weight type and shape,
//! the median time of the whole op (`ops::ggml_matmul`, f32 activations, 1 thread), of
//! quantizing and preparing the activation row alone (`quantize_activations`), and of the
//! kernel pass over every weight row alone (`qmatmul_rows_quantized`); the rest is the op's
//! fixed cost (graph, allocation, dispatch).
//!
//! `cargo run --release -p mlx-arm-core --example bench_gemv_parts -- [--isa avx2] [TYPE NxK ...]`
//! (default: the default model's decode shapes, q4_1 and q8_0).

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::cpu::isa;
use mlx_arm_core::parallel::set_num_threads;
use mlx_arm_core::quant::ggml::{qmatmul_rows_quantized, quantize_activations, quantize_row};
use mlx_arm_core::quant::GgmlType as T;
use mlx_arm_core::{ops, Array, DType};

type Res<V> = Result<V, Box<dyn std::error::Error>>;

fn ty_of(s: &str) -> Res<T> {
    let types = [T::Q4_0, T::Q4_1, T::Q8_0, T::Q4_K, T::Q5_K, T::Q6_K];
    types.into_iter().find(|t| t.name().eq_ignore_ascii_case(s)).ok_or_else(|| format!("unknown type {s:?} (one of q4_0 q4_1 q8_0 q4_k q5_k q6_k)").into())
}

/// `NxK` (weight rows × row length).
fn shape_of(s: &str) -> Res<(usize, usize)> {
    let bad = || format!("shape {s:?}: expected NxK, e.g. 576x576");
    let (n, k) = s.split_once('x').ok_or_else(bad)?;
    Ok((n.parse().map_err(|_| bad())?, k.parse().map_err(|_| bad())?))
}

fn main() -> Res<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--isa") {
        let name = args.get(i + 1).cloned().ok_or("--isa needs a level name")?;
        args.drain(i..i + 2);
        let level = isa::available().into_iter().find(|l| l.name() == name).ok_or_else(|| format!("this CPU has no ISA level {name:?}"))?;
        isa::set_isa(level)?;
    }
    if args.is_empty() {
        args = ["q4_1", "576x576", "q4_1", "1536x576", "q4_1", "576x1536", "q8_0", "49152x576"].map(String::from).to_vec();
    }
    if args.len() % 2 != 0 {
        return Err("arguments come in pairs: TYPE NxK ...".into());
    }
    set_num_threads(1);
    println!("isa {} (1 thread); µs: whole op | quantize+prepare | kernel | rest", isa::isa().name());
    for pair in args.chunks(2) {
        let ty = ty_of(&pair[0])?;
        let (n, k) = shape_of(&pair[1])?;
        let rb = ty.row_bytes(k).ok_or_else(|| format!("{}: K = {k} is not a whole number of blocks", ty.name()))?;
        let mut w = vec![0u8; n * rb];
        for (r, dst) in w.chunks_exact_mut(rb).enumerate().take(16) {
            quantize_row(ty, &common::fill(k, 11 + r as u32), dst)?;
        }
        for r in 16..n {
            w.copy_within((r % 16) * rb..(r % 16 + 1) * rb, r * rb);
        }
        let x = common::fill(k, 5);
        let wa = Array::from_bytes(&w, &[n, rb], DType::Uint8)?;
        let xa = Array::from_slice(&x, &[1, k])?;
        wa.eval()?;
        xa.eval()?;
        // Each timed call runs once here first, so its errors surface before the loops below
        // (which then time the same successful calls).
        ops::ggml_matmul(&xa, &wa, ty, k)?.eval()?;
        let xq = quantize_activations(ty, &x, 1, k)?;
        let mut out = vec![0f32; n];
        qmatmul_rows_quantized(ty, &w, n, &xq, &mut out, 0..n)?;
        let runs = (20_000_000 / (n * rb)).clamp(11, 2001);
        let whole = common::median_seconds(3, runs, || drop(ops::ggml_matmul(&xa, &wa, ty, k).and_then(|y| y.eval())));
        let quant = common::median_seconds(3, runs, || drop(quantize_activations(ty, &x, 1, k)));
        let kern = common::median_seconds(3, runs, || drop(qmatmul_rows_quantized(ty, &w, n, &xq, &mut out, 0..n)));
        let us = |s: f64| s * 1e6;
        println!(
            "{:<5} {:>10} | {:8.2} | {:8.2} | {:8.2} | {:8.2}   kernel {:.1} GB/s",
            ty.name(),
            format!("{n}x{k}"),
            us(whole),
            us(quant),
            us(kern),
            us(whole - quant - kern),
            (n * rb) as f64 / kern / 1e9
        );
    }
    Ok(())
}
