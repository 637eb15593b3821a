//! The SIMD affine quantized matmul (`cpu::affine::qmm_at`) at every level this machine runs
//! (`isa::available()`: portable, AVX2, AVX-512 here; NEON/dotprod/SVE under qemu in
//! scripts/test.sh "aarch64") against the portable reference `quant::mlx::qmm`, which is
//! bit-identical with MLX for f32 (tests/mlx_quant.rs):
//! - every width 1–6, 8 and group size 32/64/128, `x @ Ŵᵀ` and `x @ Ŵ`, m = 1, 2, 7 (decode
//!   kernels) and 33 (dequantized-panel GEMM), an odd number of groups and an odd other axis
//!   (tails of the decoders' loads, of the panels and of the column tiles); larger shapes split
//!   over threads (several GEMV tasks, row slices, panels and row blocks);
//! - f16/bf16 activations, scales and biases;
//! - random packed words (every code, the largest included) and scales/biases of both signs;
//! - the fused 2-, 3-, 4-, 5-, 6- and 8-bit `x @ Ŵᵀ` kernels (AVX2, AVX-512, NEON) over
//!   m = 1–8 activation rows (each row-count variant and a second pass of rows), row lengths
//!   that leave a partial block of packed words at the row's end, one and an odd number of
//!   weight rows, threaded shapes.
//!
//! Bound: the reference rounds `ŵ` to the activation dtype T and sums in MLX's order; the
//! fast path sums in SIMD order and applies scale and bias per group (or `s·q + b` in f32 in
//! the GEMM panels), so per output
//! `|ours − ref| ≤ (K + 2·gs)·2⁻²⁴·A + 2·u_T·A + 2·u_T·|ref|`, with
//! `A = Σ_i |x_i|·(|ŵ_i| + |b_g(i)|)` (the magnitude of every product either side rounds,
//! |s·q| ≤ |ŵ| + |b| included) and u_T the unit roundoff of T (2⁻²⁴ for f32).

use half::{bf16, f16};
use mlx_arm_core::cpu::affine::qmm_at;
use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::quant::mlx::{affine_dequantize, qmm, QFloat, QScales, QuantMode, QuantParams};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;
#[path = "common/levels.rs"]
mod levels;

fn unit<T: QFloat>() -> f64 {
    match T::DTYPE.name() {
        "float16" => 2f64.powi(-11),
        "bfloat16" => 2f64.powi(-8),
        _ => 2f64.powi(-24),
    }
}

/// One product at `level`: `m` rows, quantized axis `qlen`, other axis `other`.
#[allow(clippy::too_many_arguments)]
fn case<T: QFloat + Sync>(level: Isa, bits: u32, gs: usize, transpose: bool, m: usize, qlen: usize, other: usize, seed: u64) -> Result<(), String> {
    let p = QuantParams::new("quantize", QuantMode::Affine, gs as i64, bits as i64).unwrap();
    let mut rng = Rng(seed);
    let wpr = qlen * bits as usize / 32;
    let wq: Vec<u32> = (0..other * wpr).map(|_| rng.next() as u32).collect();
    let groups = other * qlen / gs;
    let s: Vec<T> = (0..groups).map(|_| T::from_f32(rng.f32() * 0.1)).collect();
    let b: Vec<T> = (0..groups).map(|_| T::from_f32(rng.f32())).collect();
    let (k, n) = if transpose { (qlen, other) } else { (other, qlen) };
    let x: Vec<T> = rng.row(m * k, 1.0).into_iter().map(T::from_f32).collect();
    let mut want = vec![T::from_f32(0.0); m * n];
    qmm(&x, m, k, &wq, QScales::Affine { scales: &s, biases: &b }, n, &p, transpose, &mut want, 0..m).unwrap();
    let mut got = vec![T::from_f32(f32::NAN); m * n];
    qmm_at(level, &x, m, k, &wq, &s, &b, n, &p, transpose, &mut got).map_err(|e| e.to_string())?;
    // ŵ as stored (rows of qlen) and each element's bias.
    let mut wd = vec![0f32; other * qlen];
    affine_dequantize(&wq, &s, &b, qlen, &p, &mut wd).unwrap();
    let (u, ut) = (2f64.powi(-24), unit::<T>());
    for mi in 0..m {
        for ni in 0..n {
            let mut a = 0f64;
            for kk in 0..k {
                let idx = if transpose { ni * qlen + kk } else { kk * qlen + ni };
                a += (x[mi * k + kk].to_f32() as f64).abs() * (wd[idx].abs() as f64 + b[idx / gs].to_f32().abs() as f64);
            }
            let (g, r) = (got[mi * n + ni].to_f32() as f64, want[mi * n + ni].to_f32() as f64);
            let tol = (k + 2 * gs) as f64 * u * a + 2.0 * ut * a + 2.0 * ut * r.abs() + 1e-30;
            if !((g - r).abs() <= tol) {
                return Err(format!(
                    "{level:?} {} bits={bits} gs={gs} transpose={transpose} m={m} qlen={qlen} other={other}: y[{mi},{ni}] = {g} vs ref {r} (tol {tol:e})",
                    T::DTYPE.name()
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_width_group_and_path_matches_the_reference_at_every_level() {
    let mut fails = Vec::new();
    let mut seed = 1u64;
    for level in levels::levels() {
        for bits in [1u32, 2, 3, 4, 5, 6, 8] {
            for gs in [32usize, 64, 128] {
                for transpose in [true, false] {
                    for (m, other) in [(1, 13), (2, 13), (7, 13), (33, 37)] {
                        seed += 1;
                        if let Err(e) = case::<f32>(level, bits, gs, transpose, m, 3 * gs, other, seed) {
                            fails.push(e);
                        }
                    }
                }
            }
        }
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

/// The fused `x @ Ŵᵀ` path at each width it takes (2, 3, 4, 5, 6, 8 bits): K = gs·{1, 3, 5}
/// (and 4128 for g32) leave a partial last block of periods — a block is `lanes` periods
/// (4-bit: 4, 8 or 12 of AVX-512's 16 words; 3-bit: 1, 3 or 5 of AVX2's 8 three-word periods;
/// 6-bit g32: 2 of NEON's 4; 5-bit K = 4128: 129 periods, 1 past AVX2's blocks) —; every
/// activation row count the kernels specialize (and two passes for 5–8 rows), f32 and half
/// activations.
#[test]
fn fused_gemv_matches_the_reference_at_every_level() {
    let mut fails = Vec::new();
    let mut seed = 500u64;
    for (level, bits) in levels::levels().into_iter().flat_map(|l| [2u32, 3, 4, 5, 6, 8].map(|b| (l, b))) {
        for gs in [32usize, 64, 128] {
            let mut ks = vec![gs, 3 * gs, 5 * gs];
            if gs == 32 {
                ks.push(4128);
            }
            for k in ks {
                for m in 1usize..=8 {
                    for other in [1usize, 13] {
                        seed += 1;
                        fails.extend(case::<f32>(level, bits, gs, true, m, k, other, seed).err());
                    }
                }
                seed += 1;
                fails.extend(case::<f16>(level, bits, gs, true, 3, k, 7, seed).err());
                fails.extend(case::<bf16>(level, bits, gs, true, 4, k, 7, seed).err());
            }
        }
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

#[test]
fn half_activations_match_the_reference_at_every_level() {
    let mut fails = Vec::new();
    let mut seed = 1000u64;
    for level in levels::levels() {
        for bits in [3u32, 4, 8] {
            for transpose in [true, false] {
                for m in [1usize, 9] {
                    seed += 1;
                    fails.extend(case::<f16>(level, bits, 64, transpose, m, 192, 21, seed).err());
                    fails.extend(case::<bf16>(level, bits, 64, transpose, m, 192, 21, seed).err());
                }
            }
        }
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

/// Shapes large enough to split over threads: several GEMV tasks, row slices and column tiles of `x @ Ŵ`,
/// several panels and row blocks of the GEMM.
#[test]
fn threaded_shapes_match_the_reference() {
    let mut fails = Vec::new();
    for level in levels::levels() {
        for transpose in [true, false] {
            fails.extend(case::<f32>(level, 4, 64, transpose, 1, 640, 300, 7).err());
            fails.extend(case::<f32>(level, 4, 64, transpose, 3, 640, 300, 8).err());
            fails.extend(case::<f32>(level, 8, 64, transpose, 2, 640, 300, 11).err());
            fails.extend(case::<f32>(level, 2, 32, transpose, 5, 640, 300, 12).err());
            fails.extend(case::<f32>(level, 3, 64, transpose, 1, 640, 300, 13).err());
            fails.extend(case::<f32>(level, 5, 128, transpose, 2, 640, 300, 14).err());
            fails.extend(case::<f32>(level, 6, 32, transpose, 7, 640, 300, 15).err());
            fails.extend(case::<bf16>(level, 3, 32, transpose, 3, 640, 300, 16).err());
            fails.extend(case::<f32>(level, 5, 32, transpose, 40, 320, 300, 9).err());
            // More than one 4096-column tile of `x @ Ŵ`.
            fails.extend(case::<f32>(level, 4, 64, transpose, 2, 4160, 5, 10).err());
        }
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

#[test]
fn bad_shapes_are_errors_and_empty_products_are_fine() {
    let p = QuantParams::new("quantize", QuantMode::Affine, 32, 4).unwrap();
    let (wq, s, b) = (vec![0u32; 2 * 4], vec![1f32; 2], vec![0f32; 2]);
    let x = vec![1f32; 3 * 32];
    let mut y = vec![0f32; 3 * 2];
    let lv = isa::isa();
    assert!(qmm_at(lv, &x, 3, 32, &wq, &s, &b, 2, &p, true, &mut y).is_ok());
    assert!(qmm_at(lv, &x, 3, 32, &wq, &s, &b, 3, &p, true, &mut y).is_err());
    assert!(qmm_at(lv, &x, 3, 32, &wq, &s[..1], &b, 2, &p, true, &mut y).is_err());
    assert!(qmm_at(lv, &x[..95], 3, 32, &wq, &s, &b, 2, &p, true, &mut y).is_err());
    assert!(qmm_at(lv, &x, 3, 32, &wq, &s, &b, 2, &p, true, &mut y[..5]).is_err());
    let mx = QuantParams::new("quantize", QuantMode::Mxfp4, 32, 4).unwrap();
    assert!(qmm_at(lv, &x, 3, 32, &wq, &s, &b, 2, &mx, true, &mut y).is_err());
    assert!(qmm_at::<f32>(lv, &[], 0, 32, &wq, &s, &b, 2, &p, true, &mut []).is_ok());
}
