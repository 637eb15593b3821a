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
use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::parallel::set_num_threads;
use mlx_arm_core::quant::ggml::{qmatmul_rows_quantized, quantize_activations, quantize_row};
use mlx_arm_core::quant::GgmlType as T;
use mlx_arm_core::{ops, Array, DType};

fn ty_of(s: &str) -> T {
    [T::Q4_0, T::Q4_1, T::Q8_0, T::Q4_K, T::Q5_K, T::Q6_K].into_iter().find(|t| t.name().eq_ignore_ascii_case(s)).expect("type")
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--isa") {
        let name = args.remove(i + 1);
        args.remove(i);
        let level = isa::available().into_iter().find(|l| l.name() == name).expect("level");
        isa::set_isa(level).unwrap();
    }
    if args.is_empty() {
        args = ["q4_1", "576x576", "q4_1", "1536x576", "q4_1", "576x1536", "q8_0", "49152x576"].map(String::from).to_vec();
    }
    set_num_threads(1);
    println!("isa {} (1 thread); µs: whole op | quantize+prepare | kernel | rest", isa::isa().name());
    for pair in args.chunks(2) {
        let ty = ty_of(&pair[0]);
        let (n, k) = pair[1].split_once('x').map(|(n, k)| (n.parse::<usize>().unwrap(), k.parse::<usize>().unwrap())).unwrap();
        let rb = ty.row_bytes(k).unwrap();
        let mut w = vec![0u8; n * rb];
        for (r, dst) in w.chunks_exact_mut(rb).enumerate().take(16) {
            quantize_row(ty, &common::fill(k, 11 + r as u32), dst).unwrap();
        }
        for r in 16..n {
            w.copy_within((r % 16) * rb..(r % 16 + 1) * rb, r * rb);
        }
        let x = common::fill(k, 5);
        let wa = Array::from_bytes(&w, &[n, rb], DType::Uint8).unwrap();
        let xa = Array::from_slice(&x, &[1, k]).unwrap();
        wa.eval().unwrap();
        xa.eval().unwrap();
        let runs = (20_000_000 / (n * rb)).clamp(11, 2001);
        let whole = common::median_seconds(3, runs, || ops::ggml_matmul(&xa, &wa, ty, k).unwrap().eval().unwrap());
        let quant = common::median_seconds(3, runs, || drop(quantize_activations(ty, &x, 1, k).unwrap()));
        let xq = quantize_activations(ty, &x, 1, k).unwrap();
        let mut out = vec![0f32; n];
        let kern = common::median_seconds(3, runs, || qmatmul_rows_quantized(ty, &w, n, &xq, &mut out, 0..n).unwrap());
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
    let _ = Isa::Portable;
}
