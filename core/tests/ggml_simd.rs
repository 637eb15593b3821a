//! Every SIMD variant of the GGUF kernels this machine can run (`isa::available()`) against the
//! portable reference, without touching the global ISA setting (`vec_dot_at` /
//! `quantize_row_at` take the level):
//! - activation quantizers (Q8_0, Q8_1, Q8_K) write the same bytes, NaN/Inf blocks included;
//! - dot products agree within `4·(blocks + 16)·ε·Σ|terms|`, where Σ|terms| bounds every float
//!   product either kernel rounds (only the float summation order differs; integer parts are
//!   exact), on 1, 2 and 7 blocks, random quant bytes (every bit pattern, −128 activations
//!   included), and NaN/Inf scales (a non-finite portable result is non-finite in every
//!   variant, NaN and ±Inf may trade places).
//!
//! - the ternary kernels (TQ1_0, TQ2_0) equal the portable ones bit for bit.
//!
//! Under qemu-user (scripts/test.sh "aarch64") the same file checks the NEON/dotprod kernels.

use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::quant::ggml::{quantize_row_at, vec_dot_at, vec_dot_type};
use mlx_arm_core::quant::GgmlType as T;

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;
#[path = "common/ggml_blocks.rs"]
mod blocks;
use blocks::{d_offset, magnitude, map_quants, set_f16};
#[path = "common/levels.rs"]
mod levels;

const WEIGHTS: [T; 15] = [
    T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_NL, T::IQ4_XS,
    T::MXFP4, T::TQ1_0, T::TQ2_0,
];

#[test]
fn quantizers_write_the_portable_bytes_at_every_level() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for level in levels::levels() {
        for ty in [T::Q8_0, T::Q8_1, T::Q8_K] {
            for blocks in [1usize, 2, 7] {
                let n = blocks * ty.block_len();
                for case in 0..6 {
                    let mut x = rng.row(n, [1.0, 1e-3, 300.0, 1.0, 1.0, 1.0][case]);
                    match case {
                        3 => x[n / 2] = f32::NAN,
                        4 => x[0] = f32::INFINITY,
                        5 => x.iter_mut().take(ty.block_len()).for_each(|v| *v = 0.0),
                        _ => {}
                    }
                    if case == 0 {
                        // Ties between v and −v: the first one decides Q8_K's sign.
                        x[1] = 0.75;
                        x[2] = -0.75;
                        x[3] = 1.5;
                        x[4] = -1.5;
                    }
                    let bytes = ty.row_bytes(n).unwrap();
                    let (mut want, mut got) = (vec![0u8; bytes], vec![0u8; bytes]);
                    quantize_row_at(Isa::Portable, ty, &x, &mut want).unwrap();
                    quantize_row_at(level, ty, &x, &mut got).unwrap();
                    assert_eq!(got, want, "{} {ty:?} {blocks} blocks case {case}", level.name());
                }
            }
        }
    }
}

#[test]
fn dot_products_match_portable_at_every_level() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for level in levels::levels() {
        for ty in WEIGHTS {
            let bt = vec_dot_type(ty).unwrap();
            for blocks in [1usize, 2, 7] {
                let n = blocks * ty.block_len();
                for case in 0..8 {
                    let mut w = vec![0u8; ty.row_bytes(n).unwrap()];
                    let mut y = vec![0u8; bt.row_bytes(n).unwrap()];
                    quantize_row_at(Isa::Portable, ty, &rng.row(n, 2.0), &mut w).unwrap();
                    quantize_row_at(Isa::Portable, bt, &rng.row(n, 1.0), &mut y).unwrap();
                    if case >= 2 {
                        // Every bit pattern in the quants (keeping finite scales).
                        map_quants(ty, &mut w, |b| *b = rng.next() as u8);
                    }
                    if case >= 4 {
                        map_quants(bt, &mut y, |b| *b = rng.next() as u8);
                    }
                    if case == 5 {
                        map_quants(bt, &mut y, |b| *b = 0x80);
                        map_quants(ty, &mut w, |b| *b = 0x80 | (*b & 1));
                    }
                    if case == 6 {
                        set_f16(&mut w, ty, blocks - 1, d_offset(ty), 0x7C00); // +Inf
                    }
                    if case == 7 {
                        set_f16(&mut w, ty, blocks / 2, d_offset(ty), 0x7E00); // NaN
                    }
                    let want = vec_dot_at(Isa::Portable, ty, &w, &y, n).unwrap();
                    let got = vec_dot_at(level, ty, &w, &y, n).unwrap();
                    let what = format!("{} {ty:?} {blocks} blocks case {case}: {got} vs {want}", level.name());
                    if matches!(ty, T::TQ1_0 | T::TQ2_0) {
                        // The ternary kernels reduce each block to one exact i32 and scale it in
                        // the portable order: bit for bit, non-finite results included.
                        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{what}");
                    }
                    if !want.is_finite() {
                        // NaN vs ±Inf may differ: a kernel that multiplies a zero lane partial by
                        // an Inf scale gets NaN where one that sums the block first gets ±Inf.
                        assert!(!got.is_finite(), "{what}");
                        continue;
                    }
                    let mag = magnitude(ty, &w, bt, &y, n);
                    let tol = 4.0 * (blocks as f64 + 16.0) * f32::EPSILON as f64 * mag + 1e-30;
                    assert!(
                        ((got as f64) - (want as f64)).abs() <= tol,
                        "{what} (tolerance {tol:e}, Σ|terms| {mag:e})"
                    );
                }
            }
        }
    }
}

#[test]
fn every_level_reports_and_odd_lengths_are_errors() {
    assert!(isa::available().contains(&Isa::Portable));
    for level in levels::levels() {
        // 33 elements is not a whole Q4_0 block: an error at every level, never a panic.
        assert!(vec_dot_at(level, T::Q4_0, &[0; 18], &[0; 34], 33).is_err());
        assert!(vec_dot_at(level, T::Q4_0, &[0; 17], &[0; 34], 32).is_err());
    }
    let foreign = if cfg!(target_arch = "aarch64") { Isa::Avx2 } else { Isa::Neon };
    assert!(vec_dot_at(foreign, T::Q4_0, &[0; 18], &[0; 34], 32).is_err());
}
