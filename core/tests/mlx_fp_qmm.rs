//! The SIMD fp-mode quantized matmul (`cpu::mlx_fp::qmm_fp_at`: `mxfp4`, `mxfp8`, `nvfp4`) at
//! every level this machine runs (`isa::available()`: portable, AVX2, AVX-512 here;
//! NEON/dotprod/SVE under qemu in scripts/test.sh "aarch64"; `MLX_ARM_TEST_ISA_FROM` narrows)
//! against the portable reference `quant::mlx::qmm`, which is bit-identical with MLX for f32
//! (tests/mlx_quant.rs):
//! - each mode, `x @ Ŵᵀ` and `x @ Ŵ`, m = 1–5 and 8 (each row-count variant of the fused dot
//!   and a second pass of rows), 17 and 33 (dequantized-panel GEMM); K a whole number of groups
//!   but not of 64/128/256 (1, 3, 5 groups, and 4128 = 129 groups of 32 / 258 of 16), an odd
//!   other axis (13, 37), threaded shapes;
//! - f16/bf16 activations (scales decoded in that dtype, as MLX does);
//! - random packed words (every E2M1 code; every E4M3 code but NaN, which has its own test)
//!   and random scale codes (E8M0 around 2⁰, E4M3 of both signs, subnormals included).
//!
//! Bound: both sides multiply exactly the same element values and scales and sum in f32, in
//! different orders, so per output `|ours − ref| ≤ (K + 2·gs)·2⁻²⁴·A + 2·u_T·A + 2·u_T·|ref|`
//! with `A = Σ_i |x_i·ŵ_i|` and u_T the unit roundoff of the activation dtype T.

use half::{bf16, f16};
use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::cpu::mlx_fp::qmm_fp_at;
use mlx_arm_core::quant::mlx::{fp_dequantize, qmm, QFloat, QScales, QuantMode, QuantParams};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;
#[path = "common/levels.rs"]
mod levels;

const MODES: [QuantMode; 3] = [QuantMode::Mxfp4, QuantMode::Nvfp4, QuantMode::Mxfp8];

fn unit<T: QFloat>() -> f64 {
    match T::DTYPE.name() {
        "float16" => 2f64.powi(-11),
        "bfloat16" => 2f64.powi(-8),
        _ => 2f64.powi(-24),
    }
}

fn params(mode: QuantMode) -> QuantParams {
    QuantParams::new("quantize", mode, mode.default_group_size(), mode.default_bits()).unwrap()
}

/// Random packed words of `n` codes; E4M3 codes never the NaN code (0x7F / 0xFF) when `no_nan`.
fn words(rng: &mut Rng, n_words: usize, bits: u32, no_nan: bool) -> Vec<u32> {
    (0..n_words)
        .map(|_| {
            let w = rng.next() as u32;
            if bits == 8 && no_nan {
                u32::from_le_bytes(w.to_le_bytes().map(|b| if b & 0x7F == 0x7F { b ^ 0x01 } else { b }))
            } else {
                w
            }
        })
        .collect()
}

/// Random scale codes: E8M0 within 2^±12 of 1; E4M3 any non-NaN code (both signs, subnormals).
fn scale_codes(rng: &mut Rng, n: usize, mode: QuantMode) -> Vec<u8> {
    (0..n)
        .map(|_| {
            let r = rng.next() as u8;
            if mode == QuantMode::Nvfp4 {
                if r & 0x7F == 0x7F { r ^ 0x01 } else { r }
            } else {
                115 + r % 25
            }
        })
        .collect()
}

/// One product at `level`: `m` rows, quantized axis `qlen`, other axis `other`.
#[allow(clippy::too_many_arguments)]
fn case<T: QFloat + Sync>(level: Isa, mode: QuantMode, transpose: bool, m: usize, qlen: usize, other: usize, seed: u64) -> Result<(), String> {
    let p = params(mode);
    let (gs, bits) = (p.group_size, p.bits);
    let mut rng = Rng(seed);
    let wq = words(&mut rng, other * qlen * bits as usize / 32, bits, true);
    let s = scale_codes(&mut rng, other * qlen / gs, mode);
    let (k, n) = if transpose { (qlen, other) } else { (other, qlen) };
    let x: Vec<T> = rng.row(m * k, 1.0).into_iter().map(T::from_f32).collect();
    let mut want = vec![T::from_f32(0.0); m * n];
    qmm(&x, m, k, &wq, QScales::Fp(&s), n, &p, transpose, &mut want, 0..m).unwrap();
    let mut got = vec![T::from_f32(f32::NAN); m * n];
    qmm_fp_at(level, &x, m, k, &wq, &s, n, &p, transpose, &mut got).map_err(|e| e.to_string())?;
    let mut wd = vec![0f32; other * qlen];
    fp_dequantize(&wq, &s, qlen, &p, None, &mut wd).unwrap();
    let (u, ut) = (2f64.powi(-24), unit::<T>());
    for mi in 0..m {
        for ni in 0..n {
            let mut a = 0f64;
            for kk in 0..k {
                let idx = if transpose { ni * qlen + kk } else { kk * qlen + ni };
                a += (x[mi * k + kk].to_f32() as f64 * wd[idx] as f64).abs();
            }
            let (g, r) = (got[mi * n + ni].to_f32() as f64, want[mi * n + ni].to_f32() as f64);
            let tol = (k + 2 * gs) as f64 * u * a + 2.0 * ut * a + 2.0 * ut * r.abs() + 1e-38;
            // Equal covers outputs both sides overflow alike (f16 holds 448·2¹² as inf).
            if !(g == r || (g - r).abs() <= tol) {
                return Err(format!(
                    "{level:?} {} {} transpose={transpose} m={m} qlen={qlen} other={other}: y[{mi},{ni}] = {g} vs ref {r} (tol {tol:e})",
                    mode.name(),
                    T::DTYPE.name()
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_mode_path_and_tail_matches_the_reference_at_every_level() {
    let mut fails = Vec::new();
    let mut seed = 1u64;
    for level in levels::levels() {
        for mode in MODES {
            let gs = mode.default_group_size() as usize;
            for transpose in [true, false] {
                for qlen in [gs, 3 * gs, 5 * gs] {
                    for (m, other) in [(1, 13), (2, 13), (3, 13), (4, 1), (5, 13), (8, 13), (17, 37), (33, 37)] {
                        seed += 1;
                        if let Err(e) = case::<f32>(level, mode, transpose, m, qlen, other, seed) {
                            fails.push(e);
                        }
                    }
                }
            }
        }
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

/// Shapes large enough to split over threads: many GEMV tasks, `x @ Ŵ` row slices and
/// column tiles, GEMM panels and row blocks; K = 4128 (129 groups of 32, 258 of 16).
#[test]
fn threaded_shapes_match_the_reference_at_every_level() {
    let mut fails = Vec::new();
    let mut seed = 900u64;
    for level in levels::levels() {
        for mode in MODES {
            for (transpose, m, qlen, other) in [(true, 1, 4128, 301), (true, 3, 4128, 67), (false, 1, 4128, 600), (false, 2, 480, 517), (true, 40, 512, 300), (false, 40, 4128, 64)] {
                seed += 1;
                if let Err(e) = case::<f32>(level, mode, transpose, m, qlen, other, seed) {
                    fails.push(e);
                }
            }
        }
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

#[test]
fn half_activations_match_the_reference_at_every_level() {
    let mut fails = Vec::new();
    let mut seed = 2000u64;
    for level in levels::levels() {
        for mode in MODES {
            let gs = mode.default_group_size() as usize;
            for transpose in [true, false] {
                for (m, other) in [(1, 13), (3, 5), (17, 9)] {
                    seed += 1;
                    for r in [case::<f16>(level, mode, transpose, m, 3 * gs, other, seed), case::<bf16>(level, mode, transpose, m, 3 * gs, other, seed)] {
                        if let Err(e) = r {
                            fails.push(e);
                        }
                    }
                }
            }
        }
    }
    assert!(fails.is_empty(), "{} failures:\n{}", fails.len(), fails.join("\n"));
}

/// E4M3 code 0x7F / 0xFF is NaN (elements of mxfp8, scales of nvfp4): each SIMD level gives a
/// NaN exactly where the reference does, and the reference's value elsewhere.
#[test]
fn nan_codes_give_nan_where_the_reference_does() {
    for level in levels::levels() {
        for mode in [QuantMode::Mxfp8, QuantMode::Nvfp4] {
            let p = params(mode);
            let (gs, k, n) = (p.group_size, 4 * p.group_size, 6);
            let mut rng = Rng(77);
            let mut wq = words(&mut rng, n * k * p.bits as usize / 32, p.bits, true);
            let mut s = scale_codes(&mut rng, n * k / gs, mode);
            if mode == QuantMode::Mxfp8 {
                // Row 1: one NaN element (low byte of its second word); row 4: a negative one.
                wq[k / 4 + 1] = (wq[k / 4 + 1] & !0xFF) | 0x7F;
                wq[4 * k / 4 + 3] = (wq[4 * k / 4 + 3] & !0xFF00) | 0xFF00;
            } else {
                s[k / gs + 2] = 0x7F;
                s[4 * k / gs] = 0xFF;
            }
            let x: Vec<f32> = rng.row(2 * k, 1.0);
            let mut want = vec![0f32; 2 * n];
            qmm(&x, 2, k, &wq, QScales::Fp(&s), n, &p, true, &mut want, 0..2).unwrap();
            let mut got = vec![0f32; 2 * n];
            qmm_fp_at(level, &x, 2, k, &wq, &s, n, &p, true, &mut got).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.is_nan(), w.is_nan(), "{level:?} {} y[{i}] = {g} vs ref {w}", mode.name());
                if !w.is_nan() {
                    assert!((g - w).abs() <= 1e-3 * (1.0 + w.abs()), "{level:?} {} y[{i}] = {g} vs ref {w}", mode.name());
                }
            }
            assert!(want.iter().filter(|v| v.is_nan()).count() == 4, "{}: the NaN codes reach 2 rows × 2 columns", mode.name());
        }
    }
}

#[test]
fn bad_shapes_and_levels_are_errors() {
    let p = params(QuantMode::Mxfp4);
    let lv = isa::isa();
    let x = vec![0f32; 3 * 32];
    let wq = vec![0u32; 2 * 4];
    let s = vec![127u8; 2];
    let mut y = vec![0f32; 3 * 2];
    assert!(qmm_fp_at(lv, &x, 3, 32, &wq, &s, 2, &p, true, &mut y).is_ok());
    assert!(qmm_fp_at(lv, &x, 3, 32, &wq, &s, 3, &p, true, &mut y).is_err());
    assert!(qmm_fp_at(lv, &x, 3, 32, &wq, &s[..1], 2, &p, true, &mut y).is_err());
    assert!(qmm_fp_at(lv, &x[..95], 3, 32, &wq, &s, 2, &p, true, &mut y).is_err());
    assert!(qmm_fp_at(lv, &x, 3, 32, &wq, &s, 2, &p, true, &mut y[..5]).is_err());
    let affine = QuantParams::new("quantize", QuantMode::Affine, 32, 4).unwrap();
    assert!(qmm_fp_at(lv, &x, 3, 32, &wq, &s, 2, &affine, true, &mut y).is_err());
    let foreign = if cfg!(target_arch = "aarch64") { Isa::Avx2 } else { Isa::Neon };
    assert!(qmm_fp_at(foreign, &x, 3, 32, &wq, &s, 2, &p, true, &mut y).is_err());
    assert!(qmm_fp_at::<f32>(lv, &[], 0, 32, &wq, &s, 2, &p, true, &mut []).is_ok());
}
