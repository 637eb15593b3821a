//! The float GEMM (f32, f16 and bf16 inputs, f32 accumulation) gives the same bits at 1, 2 and
//! 3 threads at every ISA level this machine runs: the work split decides only which thread
//! runs a register tile or a GEMV row, never how a value is summed. Each result is also checked
//! against an f64 product of the (rounded) inputs, so a split that dropped or repeated work
//! fails even if it did so at every thread count.
//!
//! One test function: it switches the global ISA level and thread count, which other tests in
//! the same process must not see change under them.

use mlx_arm_core::cpu::isa;
use mlx_arm_core::parallel::set_num_threads;
use mlx_arm_core::{ops, Array, DType};
#[path = "common/levels.rs"]
mod levels;

/// Deterministic values in [-1, 1).
fn fill(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed.wrapping_mul(40503)) % 2000) as f32 / 1000.0 - 1.0).collect()
}

fn bits(a: &Array) -> Vec<u32> {
    ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn float_gemm_is_bit_identical_across_thread_counts_and_matches_f64() {
    // (m, n, k, B given as Wᵀ of a row-major W): blocked products crossing the 256-deep slice
    // and the task blocks, a short wide one, GEMVs in both layouts.
    let shapes = [(300usize, 530usize, 600usize, false), (97, 1100, 300, true), (64, 700, 513, true), (1, 4100, 700, true), (1, 1030, 300, false), (300, 1, 257, false)];
    for level in levels::levels() {
        isa::set_isa(level).unwrap();
        for dtype in [DType::Float32, DType::Float16, DType::Bfloat16] {
            for &(m, n, k, linear) in &shapes {
                let a = ops::astype(&Array::from_slice(&fill(m * k, 1), &[m, k]).unwrap(), dtype).unwrap();
                let b = if linear {
                    let w = ops::astype(&Array::from_slice(&fill(n * k, 2), &[n, k]).unwrap(), dtype).unwrap();
                    ops::transpose(&w, None).unwrap()
                } else {
                    ops::astype(&Array::from_slice(&fill(k * n, 2), &[k, n]).unwrap(), dtype).unwrap()
                };
                let mut first: Option<Vec<u32>> = None;
                for threads in [1usize, 2, 3] {
                    set_num_threads(threads);
                    let c = ops::matmul(&a, &b).unwrap();
                    let got = bits(&c);
                    match &first {
                        None => first = Some(got),
                        Some(want) => assert!(got == *want, "{} {dtype:?} {m}x{n}x{k}: {threads} threads differ from 1", level.name()),
                    }
                }
                set_num_threads(0);
                // The f64 oracle over the rounded inputs.
                let av = ops::astype(&a, DType::Float32).unwrap().to_vec::<f32>().unwrap();
                let bv = ops::astype(&ops::contiguous(&b).unwrap(), DType::Float32).unwrap().to_vec::<f32>().unwrap();
                let got = first.unwrap();
                let out_rounding = match dtype {
                    DType::Float16 => f64::powi(2.0, -11),
                    DType::Bfloat16 => f64::powi(2.0, -8),
                    _ => 0.0,
                };
                for i in (0..m).step_by(7) {
                    for j in (0..n).step_by(5) {
                        let (mut s, mut mag) = (0f64, 0f64);
                        for p in 0..k {
                            let t = av[i * k + p] as f64 * bv[p * n + j] as f64;
                            s += t;
                            mag += t.abs();
                        }
                        let g = f32::from_bits(got[i * n + j]) as f64;
                        let bound = (k as f64 + 2.0) * f64::powi(2.0, -23) * mag + out_rounding * s.abs() * 1.01 + 1e-30;
                        assert!((g - s).abs() <= bound, "{} {dtype:?} {m}x{n}x{k} at ({i},{j}): {g} vs {s}", level.name());
                    }
                }
            }
        }
    }
    isa::set_isa(isa::best()).unwrap();
}
