//! x86-64 kernels for the GGUF dot products (weight row · activation row) and the activation
//! quantizers, at two levels: AVX2 (+FMA, F16C) and AVX-512 VNNI (`vpdpbusd` on 256-bit
//! registers; Zen 4 runs 512-bit integer ops as two 256-bit halves, so the gain of that level is
//! the fused u8·i8 dot, not the width).
//!
//! Integer parts are exact: unsigned nibbles (0..15, 0..31, 0..63) times i8 activations through
//! `vpmaddubsw` (pairs stay far below i16 saturation) or `vpdpbusd`, offsets (`q − 8`, `q − 16`,
//! `q − 32`) subtracted as a second dot with the constant, Q8_0·Q8_0 widened to i16 — so even
//! an activation byte of −128 (which our quantizers never write) gives the portable sum. Only the
//! float accumulation order differs from the portable kernels: per-block lane sums are scaled
//! and accumulated in eight f32 lanes, summed at the end (see docs/QUANT.md for the bound).
//!
//! The quantizers write the same bytes as the portable ones: rounding is done with the same
//! float operations (`roundf` as trunc + half-away adjustment, `nearest_int` as
//! round-to-nearest-even conversion), and blocks holding NaN/Inf go to the portable code.
//!
//! Every function here is `unsafe` because it needs its target features; the safe wrappers at
//! the bottom are handed out only by [`dot_for`] / [`quantize_for`], which check the CPU first.

use core::arch::asm;
use core::arch::x86_64::*;

use crate::cpu::isa::{self, Isa};
use crate::quant::ggml::k_quants::{self, scale_min_k4};
use crate::quant::ggml::legacy;
use crate::quant::GgmlType;

type DotFn = fn(&[u8], &[u8]) -> f32;
type QuantizeFn = fn(&[f32], &mut [u8]);
type GemmFn = super::super::QuantGemmFn;

// ------------------------------------------------------------------ shared helpers

#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
pub(super) unsafe fn f16_at(p: *const u8) -> f32 {
    // A broadcast load, not a scalar insert: see `f16x8`.
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_set1_epi16((p as *const i16).read_unaligned())))
}

#[inline]
pub(super) unsafe fn f32_at(p: *const u8) -> f32 {
    f32::from_le_bytes([*p, *p.add(1), *p.add(2), *p.add(3)])
}

#[inline]
unsafe fn i16_at(p: *const u8) -> i32 {
    i16::from_le_bytes([*p, *p.add(1)]) as i32
}

#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
pub(super) unsafe fn load(p: *const u8) -> __m256i {
    _mm256_loadu_si256(p as *const __m256i)
}

/// Horizontal sum of 8 lanes, (a0+a4 + a2+a6) + (a1+a5 + a3+a7): the one every x86 kernel uses.
#[target_feature(enable = "avx")]
#[inline]
pub(crate) unsafe fn hsum_ps(v: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
}

/// 16 bytes of packed nibbles → 32 bytes: low nibbles (elements 0..16) in the low lane, high
/// nibbles (elements 16..32) in the high lane — the legacy formats' element order.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
pub(super) unsafe fn nibbles(p: *const u8) -> __m256i {
    let t = _mm_loadu_si128(p as *const __m128i);
    let v = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
    _mm256_and_si256(v, _mm256_set1_epi8(0x0F))
}

/// `0x10` in byte j where bit j of `qh` is set (the fifth bit of Q5_0/Q5_1).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
pub(super) unsafe fn fifth_bits(qh: u32) -> __m256i {
    let v = _mm256_set1_epi32(qh as i32);
    let idx = _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
    );
    let bits = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
    let m = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(v, idx), bits), bits);
    _mm256_and_si256(m, _mm256_set1_epi8(0x10))
}

/// An f16 at `p` converted and broadcast to 8 lanes. `vpbroadcastw` + `vcvtph2ps` writes whole
/// registers: a scalar `vpinsrw` would merge into (and wait on) whatever register LLVM picks —
/// it picked the accumulator, which chained every block to the previous FMA and made the
/// legacy GEMVs ~5× slower (docs/BENCHMARKS.md).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
pub(super) unsafe fn f16x8(p: *const u8) -> __m256 {
    _mm256_cvtph_ps(_mm_set1_epi16((p as *const i16).read_unaligned()))
}

/// An f16 at `p` in lane 0, zeros elsewhere (a scalar term folded into a lane accumulator).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn f16_lane0(p: *const u8) -> __m256 {
    _mm256_cvtph_ps(_mm_cvtsi32_si128((p as *const u16).read_unaligned() as i32))
}

/// One register tile of a quantized GEMM: weight rows `w + j·wrb` (j < RN) times activation
/// rows `a + i·arb` (i < RM), `nb` blocks each, written to `out[i·ldo + j]`.
pub(super) struct Tile {
    w: *const u8,
    wrb: usize,
    a: *const u8,
    arb: usize,
    nb: usize,
    out: *mut f32,
    ldo: usize,
}

#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn store_tile<const RM: usize, const RN: usize>(t: &Tile, acc: &[[__m256; RN]; RM]) {
    for (i, row) in acc.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            *t.out.add(i * t.ldo + j) = hsum_ps(v);
        }
    }
}

/// Activation rows per register tile and weight rows per register tile (4 × 2: 8 ymm
/// accumulators, leaving room for the unpacked weights and one activation block).
const RM: usize = 4;
const RN: usize = 2;

/// For one tile kernel: the GEMM driver (`nw` weight rows × `nx` activation rows, register
/// tiles of RM × RN, edge tiles through smaller instances) and the GEMV dot (a 1×1 tile).
macro_rules! tiles {
    ($feat:literal, $tile:ident, $gemm:ident, $dot1:ident, $wb:expr, $ab:expr) => {
        tiles!($feat, $tile, $gemm, $dot1, $wb, $ab, RN);
    };
    ($feat:literal, $tile:ident, $gemm:ident, $dot1:ident, $wb:expr, $ab:expr, $rn:expr) => {
        /// # Safety
        /// `w` holds `nw` rows of `wrb` bytes, `a` `nx` rows of `arb` bytes, both at least
        /// `nb` blocks; `out[i·ldo + j]` is writable for i < nx, j < nw.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $gemm(g: &super::Gemm) {
            let nb = (g.wrb / $wb).min(g.arb / $ab);
            let w_all = core::slice::from_raw_parts(g.w, g.nw * g.wrb);
            let mut j0 = 0;
            while j0 < g.nw {
                let rn = (g.nw - j0).min($rn);
                crate::cpu::arch::prefetch_rows_ahead(w_all, g.wrb, j0, $rn);
                let mut i0 = 0;
                while i0 < g.nx {
                    let rm = (g.nx - i0).min(RM);
                    let t = Tile {
                        w: g.w.add(j0 * g.wrb),
                        wrb: g.wrb,
                        a: g.a.add(i0 * g.arb),
                        arb: g.arb,
                        nb,
                        out: g.out.add(i0 * g.ldo + j0),
                        ldo: g.ldo,
                    };
                    match (rm, rn) {
                        (4, 2) => $tile::<4, 2>(&t),
                        (4, _) => $tile::<4, 1>(&t),
                        (3, 2) => $tile::<3, 2>(&t),
                        (3, _) => $tile::<3, 1>(&t),
                        (2, 2) => $tile::<2, 2>(&t),
                        (2, _) => $tile::<2, 1>(&t),
                        (_, 2) => $tile::<1, 2>(&t),
                        _ => $tile::<1, 1>(&t),
                    }
                    i0 += rm;
                }
                j0 += rn;
            }
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $dot1(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / $wb).min(a.len() / $ab);
            let mut out = 0.0f32;
            let t = Tile { w: w.as_ptr(), wrb: 0, a: a.as_ptr(), arb: 0, nb, out: &mut out, ldo: 1 };
            $tile::<1, 1>(&t);
            out
        }
    };
}

// ------------------------------------------------------------------ the two u8·i8 dots

/// The dot kernels, written once over a `dot(u8 × i8 → i32 lanes)` primitive.
macro_rules! kernels {
    ($feat:literal, $dot:ident) => {
        /// Q4_0 · Q8_0 on an `RM × RN` tile: each weight block is unpacked once for `RM`
        /// activation rows and each activation block loaded once for `RN` weight rows. A 1×1
        /// tile is the GEMV dot, so every output is bit-identical whatever the tiling.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_0_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let eight = _mm256_set1_epi8(8);
            let mut acc = [[_mm256_setzero_ps(); RN]; RM];
            for b in 0..t.nb {
                let mut u = [_mm256_setzero_si256(); RN];
                let mut dw = [_mm256_setzero_ps(); RN];
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 18);
                    u[j] = nibbles(x.add(2));
                    dw[j] = f16x8(x);
                }
                for i in 0..RM {
                    let y = t.a.add(i * t.arb + b * 34);
                    let q = load(y.add(2));
                    let da = f16x8(y);
                    let c = $dot(eight, q);
                    for j in 0..RN {
                        let p = _mm256_sub_epi32($dot(u[j], q), c);
                        acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dw[j], da), acc[i][j]);
                    }
                }
            }
            store_tile(t, &acc);
        }

        /// Q4_1 · Q8_1 tile: `m·s` (weight min × activation `d·Σq`) rides in lane 0 of the
        /// same accumulator, so one horizontal sum finishes each output.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_1_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let mut acc = [[_mm256_setzero_ps(); RN]; RM];
            for b in 0..t.nb {
                let mut u = [_mm256_setzero_si256(); RN];
                let mut dw = [_mm256_setzero_ps(); RN];
                let mut mw = [_mm256_setzero_ps(); RN];
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 20);
                    u[j] = nibbles(x.add(4));
                    dw[j] = f16x8(x);
                    mw[j] = f16_lane0(x.add(2));
                }
                for i in 0..RM {
                    let y = t.a.add(i * t.arb + b * 36);
                    let q = load(y.add(4));
                    let da = f16x8(y);
                    let sa = f16_lane0(y.add(2));
                    for j in 0..RN {
                        let p = _mm256_cvtepi32_ps($dot(u[j], q));
                        let s = _mm256_fmadd_ps(p, _mm256_mul_ps(dw[j], da), acc[i][j]);
                        acc[i][j] = _mm256_fmadd_ps(mw[j], sa, s);
                    }
                }
            }
            store_tile(t, &acc);
        }

        /// Q8_0 · Q8_0 tile, both sides widened to i16 (exact for every byte, −128 included).
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q8_0_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let w16 = |p: *const u8| _mm256_cvtepi8_epi16(_mm_loadu_si128(p as *const __m128i));
            let mut acc = [[_mm256_setzero_ps(); RN]; RM];
            for b in 0..t.nb {
                let mut lo = [_mm256_setzero_si256(); RN];
                let mut hi = [_mm256_setzero_si256(); RN];
                let mut dw = [_mm256_setzero_ps(); RN];
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 34);
                    lo[j] = w16(x.add(2));
                    hi[j] = w16(x.add(18));
                    dw[j] = f16x8(x);
                }
                for i in 0..RM {
                    let y = t.a.add(i * t.arb + b * 34);
                    let (alo, ahi) = (w16(y.add(2)), w16(y.add(18)));
                    let da = f16x8(y);
                    for j in 0..RN {
                        let p = _mm256_add_epi32(_mm256_madd_epi16(lo[j], alo), _mm256_madd_epi16(hi[j], ahi));
                        acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dw[j], da), acc[i][j]);
                    }
                }
            }
            store_tile(t, &acc);
        }

        tiles!($feat, q4_0_tile, q4_0_gemm, q4_0_q8_0, 18, 34);
        tiles!($feat, q4_1_tile, q4_1_gemm, q4_1_q8_1, 20, 36);
        tiles!($feat, q8_0_tile, q8_0_gemm, q8_0_q8_0, 34, 34);

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q5_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 22).min(a.len() / 34);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let sixteen = _mm256_set1_epi8(16);
            let mut acc = _mm256_setzero_ps();
            for i in 0..nb {
                let (x, y) = (wp.add(i * 22), ap.add(i * 34));
                let d = _mm256_mul_ps(f16x8(x), f16x8(y));
                let qh = u32::from_le_bytes([*x.add(2), *x.add(3), *x.add(4), *x.add(5)]);
                let u = _mm256_or_si256(nibbles(x.add(6)), fifth_bits(qh));
                let q = load(y.add(2));
                let p = _mm256_sub_epi32($dot(u, q), $dot(sixteen, q));
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), d, acc);
            }
            hsum_ps(acc)
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q5_1_q8_1(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 24).min(a.len() / 36);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let mut acc = _mm256_setzero_ps();
            for i in 0..nb {
                let (x, y) = (wp.add(i * 24), ap.add(i * 36));
                let d = _mm256_mul_ps(f16x8(x), f16x8(y));
                let qh = u32::from_le_bytes([*x.add(4), *x.add(5), *x.add(6), *x.add(7)]);
                let u = _mm256_or_si256(nibbles(x.add(8)), fifth_bits(qh));
                let p = $dot(u, load(y.add(4)));
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), d, acc);
                acc = _mm256_fmadd_ps(f16_lane0(x.add(2)), f16_lane0(y.add(2)), acc);
            }
            hsum_ps(acc)
        }

        /// Q4_K · Q8_K on an `RM × RN` tile (RN = 1 here: the 8 unpacked quant vectors and
        /// the decoded scales of one weight super-block serve `RM` activation rows).
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_k_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let m4 = _mm256_set1_epi8(0x0F);
            let mut acc = [[_mm256_setzero_ps(); RN]; RM];
            let mut summ = [[0f32; RN]; RM];
            for b in 0..t.nb {
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 144);
                    let mut sc = [0u8; 12];
                    core::ptr::copy_nonoverlapping(x.add(4), sc.as_mut_ptr(), 12);
                    let mut scales = [_mm256_setzero_si256(); 8];
                    let mut mins = [0i32; 8];
                    for (k, s) in scales.iter_mut().enumerate() {
                        let (scale, min) = scale_min_k4(k, &sc);
                        *s = _mm256_set1_epi32(scale as i32);
                        mins[k] = min as i32;
                    }
                    let mut u = [_mm256_setzero_si256(); 8];
                    for h in 0..4 {
                        let q = load(x.add(16 + 32 * h));
                        u[2 * h] = _mm256_and_si256(q, m4);
                        u[2 * h + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                    }
                    let (dw, dmin) = (f16x8(x), f16_at(x.add(2)));
                    for i in 0..RM {
                        let y = t.a.add(i * t.arb + b * 292);
                        let yd = f32_at(y);
                        let mut m = 0i32;
                        for (k, &mn) in mins.iter().enumerate() {
                            m += mn * (i16_at(y.add(260 + 4 * k)) + i16_at(y.add(262 + 4 * k)));
                        }
                        let mut sumi = _mm256_setzero_si256();
                        for (k, &uk) in u.iter().enumerate() {
                            let p = $dot(uk, load(y.add(4 + 32 * k)));
                            sumi = _mm256_add_epi32(sumi, _mm256_mullo_epi32(p, scales[k]));
                        }
                        acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_mul_ps(dw, _mm256_set1_ps(yd)), acc[i][j]);
                        summ[i][j] += dmin * yd * m as f32;
                    }
                }
            }
            for i in 0..RM {
                for j in 0..RN {
                    *t.out.add(i * t.ldo + j) = hsum_ps(acc[i][j]) - summ[i][j];
                }
            }
        }

        /// Q6_K · Q8_K tile (RN = 1: one unpacked weight super-block for `RM` activation rows).
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q6_k_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let m4 = _mm256_set1_epi8(0x0F);
            let m2 = _mm256_set1_epi8(0x03);
            let off = _mm256_set1_epi8(32);
            let mut acc = [[_mm256_setzero_ps(); RN]; RM];
            for b in 0..t.nb {
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 210);
                    let sc = x.add(192) as *const i8;
                    // u[4h + k]: elements 128h + 32k .. +32 (sub-blocks 8h + 2k and 8h + 2k + 1).
                    let mut u = [_mm256_setzero_si256(); 8];
                    let mut scv = [_mm256_setzero_si256(); 8];
                    for h in 0..2 {
                        let qa = load(x.add(64 * h));
                        let qb = load(x.add(64 * h + 32));
                        let qh = load(x.add(128 + 32 * h));
                        for k in 0..4 {
                            let l4 = match k {
                                0 => _mm256_and_si256(qa, m4),
                                1 => _mm256_and_si256(qb, m4),
                                2 => _mm256_and_si256(_mm256_srli_epi16(qa, 4), m4),
                                _ => _mm256_and_si256(_mm256_srli_epi16(qb, 4), m4),
                            };
                            let h2 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * k as i32)), m2);
                            u[4 * h + k] = _mm256_or_si256(l4, _mm256_slli_epi16(h2, 4));
                            let s = 8 * h + 2 * k;
                            let (a0, a1) = (*sc.add(s) as i32, *sc.add(s + 1) as i32);
                            scv[4 * h + k] = _mm256_setr_epi32(a0, a0, a0, a0, a1, a1, a1, a1);
                        }
                    }
                    let dw = f16x8(x.add(208));
                    for i in 0..RM {
                        let y = t.a.add(i * t.arb + b * 292);
                        let mut sumi = _mm256_setzero_si256();
                        for k in 0..8 {
                            let q = load(y.add(4 + 32 * k));
                            let p = _mm256_sub_epi32($dot(u[k], q), $dot(off, q));
                            sumi = _mm256_add_epi32(sumi, _mm256_mullo_epi32(p, scv[k]));
                        }
                        let d = _mm256_mul_ps(dw, _mm256_set1_ps(f32_at(y)));
                        acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), d, acc[i][j]);
                    }
                }
            }
            store_tile(t, &acc);
        }

        tiles!($feat, q4_k_tile, q4_k_gemm, q4_k_q8_k, 144, 292, 1);
        tiles!($feat, q6_k_tile, q6_k_gemm, q6_k_q8_k, 210, 292, 1);
    };
}


pub(super) mod avx2 {
    use super::*;

    /// Σ of 4 adjacent `u[i]·s[i]` per i32 lane (u unsigned ≤ 63, so no i16 saturation).
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    pub(in crate::cpu::arch::x86_64) unsafe fn dot(u: __m256i, s: __m256i) -> __m256i {
        _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))
    }

    kernels!("avx2,fma,f16c", dot);
}

pub(super) mod vnni {
    use super::*;

    /// `vpdpbusd` with a zero accumulator: Σ of 4 adjacent `u[i]·s[i]` per i32 lane, exact.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    pub(in crate::cpu::arch::x86_64) unsafe fn dot(u: __m256i, s: __m256i) -> __m256i {
        let mut acc = _mm256_setzero_si256();
        // SAFETY: callers run only where AVX-512 VNNI + VL exist (checked by `dot_for`);
        // register-only instruction. Inline asm keeps the crate's minimum Rust version
        // (the AVX-512 intrinsics and target features are newer than it).
        asm!(
            "vpdpbusd {acc}, {u}, {s}",
            acc = inout(ymm_reg) acc,
            u = in(ymm_reg) u,
            s = in(ymm_reg) s,
            options(pure, nomem, nostack, preserves_flags),
        );
        acc
    }

    kernels!("avx2,fma,f16c", dot);
}


// ------------------------------------------------------------------ activation quantizers

/// Whether all 32·`n` floats at `x` are finite (NaN/Inf blocks take the portable path, whose
/// C-cast emulation decides their bytes).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn all_finite(x: *const f32, n: usize) -> bool {
    let inf = _mm256_set1_ps(f32::INFINITY);
    let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    let mut ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for i in 0..n {
        let v = _mm256_and_ps(_mm256_loadu_ps(x.add(8 * i)), abs);
        ok = _mm256_and_ps(ok, _mm256_cmp_ps(v, inf, _CMP_LT_OQ));
    }
    _mm256_movemask_ps(ok) == 0xFF
}

/// C's `roundf` (half away from zero), exactly: trunc, then ±1 where |frac| ≥ 0.5.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn round_away(t: __m256) -> __m256 {
    let sign = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN));
    let tr = _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    let frac = _mm256_andnot_ps(sign, _mm256_sub_ps(t, tr));
    let ge = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5), _CMP_GE_OQ);
    let one = _mm256_or_ps(_mm256_and_ps(t, sign), _mm256_set1_ps(1.0));
    _mm256_add_ps(tr, _mm256_and_ps(ge, one))
}

/// Four vectors of i32 (each in i8 range) → 32 bytes in element order.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn pack_i8(i: [__m256i; 4], out: *mut u8) {
    let a = _mm256_packs_epi32(i[0], i[1]);
    let b = _mm256_packs_epi32(i[2], i[3]);
    let p = _mm256_packs_epi16(a, b);
    // packs works per 128-bit lane: dwords come out as 0,2,4,6,1,3,5,7 of the wanted order.
    let p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(out as *mut __m256i, p);
}

/// One finite Q8_0/Q8_1 block: writes the 32 quants, returns (d, Σq).
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q8_block(x: *const f32, qs: *mut u8) -> (f32, i32) {
    let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    let v = [0, 1, 2, 3].map(|i| _mm256_loadu_ps(x.add(8 * i)));
    let m = v.iter().fold(_mm256_setzero_ps(), |m, &vi| _mm256_max_ps(m, _mm256_and_ps(vi, abs)));
    let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    let amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let idv = _mm256_set1_ps(id);
    let q = v.map(|vi| _mm256_cvttps_epi32(round_away(_mm256_mul_ps(vi, idv))));
    pack_i8(q, qs);
    let s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    let s = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
    (d, _mm_cvtsi128_si32(s))
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn quantize_q8_0_avx2(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(32).zip(dst.chunks_exact_mut(34)) {
        if !all_finite(x.as_ptr(), 4) {
            legacy::quantize_q8_0(x, y);
            continue;
        }
        let (d, _) = q8_block(x.as_ptr(), y.as_mut_ptr().add(2));
        y[..2].copy_from_slice(&crate::quant::ggml::util::f32_to_f16(d));
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn quantize_q8_1_avx2(src: &[f32], dst: &mut [u8]) {
    use crate::quant::ggml::util::f32_to_f16;
    for (x, y) in src.chunks_exact(32).zip(dst.chunks_exact_mut(36)) {
        if !all_finite(x.as_ptr(), 4) {
            legacy::quantize_q8_1(x, y);
            continue;
        }
        let (d, sum) = q8_block(x.as_ptr(), y.as_mut_ptr().add(4));
        y[..2].copy_from_slice(&f32_to_f16(d));
        y[2..4].copy_from_slice(&f32_to_f16(sum as f32 * d));
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn quantize_q8_k_avx2(src: &[f32], dst: &mut [u8]) {
    let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    for (x, y) in src.chunks_exact(256).zip(dst.chunks_exact_mut(292)) {
        let xp = x.as_ptr();
        if !all_finite(xp, 32) {
            k_quants::quantize_q8_k(x, y);
            continue;
        }
        let mut m = _mm256_setzero_ps();
        for i in 0..32 {
            m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(xp.add(8 * i)), abs));
        }
        let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        let amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
        if amax == 0.0 {
            y.iter_mut().for_each(|b| *b = 0);
            continue;
        }
        // The signed value: the first element of largest magnitude, as the portable scan finds.
        let max = x.iter().copied().find(|v| v.abs() == amax).unwrap_or(amax);
        let iscale = -127.0 / max;
        let is = _mm256_set1_ps(iscale);
        let qs = y.as_mut_ptr().add(4);
        for c in 0..8 {
            // Round-to-nearest-even conversion = ggml's `nearest_int` in this range (|·| ≤ 127).
            let q = [0, 1, 2, 3].map(|i| _mm256_cvtps_epi32(_mm256_mul_ps(is, _mm256_loadu_ps(xp.add(32 * c + 8 * i)))));
            pack_i8(q, qs.add(32 * c));
        }
        for g in 0..16 {
            let s: i32 = y[4 + 16 * g..4 + 16 * g + 16].iter().map(|&q| (q as i8) as i32).sum();
            y[260 + 2 * g..262 + 2 * g].copy_from_slice(&(s as i16).to_le_bytes());
        }
        y[..4].copy_from_slice(&(1.0 / iscale).to_le_bytes());
    }
}

// ------------------------------------------------------------------ safe table entries

macro_rules! safe {
    ($name:ident, $inner:path) => {
        fn $name(w: &[u8], a: &[u8]) -> f32 {
            // SAFETY: reachable only through `dot_for`, which hands this out only when the
            // CPU has the features `$inner` is compiled for; bounds are checked inside.
            unsafe { $inner(w, a) }
        }
    };
}
/// A GEMM block in raw form for the tile drivers (built by the `safe_gemm!` wrappers, which
/// check every size first).
pub(super) struct Gemm {
    w: *const u8,
    nw: usize,
    wrb: usize,
    a: *const u8,
    nx: usize,
    arb: usize,
    out: *mut f32,
    ldo: usize,
}

macro_rules! safe_gemm {
    ($name:ident, $inner:path) => {
        fn $name(w: &[u8], nw: usize, a: &[u8], nx: usize, out: &mut [f32], ldo: usize) {
            let ok = nw > 0
                && nx > 0
                && w.len() % nw == 0
                && a.len() % nx == 0
                && ldo >= nw
                && (nx - 1).checked_mul(ldo).and_then(|v| v.checked_add(nw)).is_some_and(|need| out.len() >= need);
            debug_assert!(ok || nw == 0 || nx == 0, "quantized GEMM block sizes");
            if !ok {
                return;
            }
            let g = Gemm {
                w: w.as_ptr(),
                nw,
                wrb: w.len() / nw,
                a: a.as_ptr(),
                nx,
                arb: a.len() / nx,
                out: out.as_mut_ptr(),
                ldo,
            };
            // SAFETY: handed out only by `gemm_for`, which checks the CPU features; the rows,
            // blocks (at most wrb/18 etc. per row) and outputs are within the slices above.
            unsafe { $inner(&g) }
        }
    };
}
safe_gemm!(q4_0_gemm_avx2, avx2::q4_0_gemm);
safe_gemm!(q4_1_gemm_avx2, avx2::q4_1_gemm);
safe_gemm!(q8_0_gemm_avx2, avx2::q8_0_gemm);
safe_gemm!(q4_k_gemm_avx2, avx2::q4_k_gemm);
safe_gemm!(q6_k_gemm_avx2, avx2::q6_k_gemm);
safe_gemm!(q4_0_gemm_vnni, vnni::q4_0_gemm);
safe_gemm!(q4_1_gemm_vnni, vnni::q4_1_gemm);
safe_gemm!(q8_0_gemm_vnni, vnni::q8_0_gemm);
safe_gemm!(q4_k_gemm_vnni, vnni::q4_k_gemm);
safe_gemm!(q6_k_gemm_vnni, vnni::q6_k_gemm);

/// The register-tiled GEMM of weight type `ty` for `level`, if this file has one.
pub(crate) fn gemm_for(ty: GgmlType, level: Isa) -> Option<GemmFn> {
    use GgmlType as T;
    if !level.allows(Isa::Avx2) || level == Isa::Portable || !Isa::Avx2.is_available() {
        return None;
    }
    let vnni = level.allows(Isa::Avx512) && Isa::Avx512.is_available() && isa::has_avx512_vnni();
    Some(match (ty, vnni) {
        (T::Q4_0, false) => q4_0_gemm_avx2,
        (T::Q4_1, false) => q4_1_gemm_avx2,
        (T::Q8_0, false) => q8_0_gemm_avx2,
        (T::Q4_K, false) => q4_k_gemm_avx2,
        (T::Q6_K, false) => q6_k_gemm_avx2,
        (T::Q4_0, true) => q4_0_gemm_vnni,
        (T::Q4_1, true) => q4_1_gemm_vnni,
        (T::Q8_0, true) => q8_0_gemm_vnni,
        (T::Q4_K, true) => q4_k_gemm_vnni,
        (T::Q6_K, true) => q6_k_gemm_vnni,
        _ => return None,
    })
}

safe!(q4_0_avx2, avx2::q4_0_q8_0);
safe!(q4_1_avx2, avx2::q4_1_q8_1);
safe!(q5_0_avx2, avx2::q5_0_q8_0);
safe!(q5_1_avx2, avx2::q5_1_q8_1);
safe!(q8_0_avx2, avx2::q8_0_q8_0);
safe!(q4_k_avx2, avx2::q4_k_q8_k);
safe!(q6_k_avx2, avx2::q6_k_q8_k);
safe!(q4_0_vnni, vnni::q4_0_q8_0);
safe!(q4_1_vnni, vnni::q4_1_q8_1);
safe!(q5_0_vnni, vnni::q5_0_q8_0);
safe!(q5_1_vnni, vnni::q5_1_q8_1);
safe!(q8_0_vnni, vnni::q8_0_q8_0);
safe!(q4_k_vnni, vnni::q4_k_q8_k);
safe!(q6_k_vnni, vnni::q6_k_q8_k);
safe!(iq4_nl_avx2, super::quant_iq4::avx2::iq4_nl_q8_0);
safe!(iq4_xs_avx2, super::quant_iq4::avx2::iq4_xs_q8_k);
safe!(iq4_nl_vnni, super::quant_iq4::vnni::iq4_nl_q8_0);
safe!(iq4_xs_vnni, super::quant_iq4::vnni::iq4_xs_q8_k);

macro_rules! safe_q {
    ($name:ident, $inner:ident) => {
        fn $name(src: &[f32], dst: &mut [u8]) {
            // SAFETY: reachable only through `quantize_for`, which checks AVX2/FMA/F16C first.
            unsafe { $inner(src, dst) }
        }
    };
}
safe_q!(q8_0_quant, quantize_q8_0_avx2);
safe_q!(q8_1_quant, quantize_q8_1_avx2);
safe_q!(q8_k_quant, quantize_q8_k_avx2);

/// The dot kernel of weight type `ty` for `level`, if this file has one and the CPU runs it.
pub(crate) fn dot_for(ty: GgmlType, level: Isa) -> Option<DotFn> {
    use GgmlType as T;
    if !level.allows(Isa::Avx2) || level == Isa::Portable || !Isa::Avx2.is_available() {
        return None;
    }
    let vnni = level.allows(Isa::Avx512) && Isa::Avx512.is_available() && isa::has_avx512_vnni();
    Some(match (ty, vnni) {
        (T::Q4_0, false) => q4_0_avx2,
        (T::Q4_1, false) => q4_1_avx2,
        (T::Q5_0, false) => q5_0_avx2,
        (T::Q5_1, false) => q5_1_avx2,
        (T::Q8_0, false) => q8_0_avx2,
        (T::Q4_K, false) => q4_k_avx2,
        (T::Q6_K, false) => q6_k_avx2,
        (T::IQ4_NL, false) => iq4_nl_avx2,
        (T::IQ4_XS, false) => iq4_xs_avx2,
        (T::IQ4_NL, true) => iq4_nl_vnni,
        (T::IQ4_XS, true) => iq4_xs_vnni,
        (T::Q4_0, true) => q4_0_vnni,
        (T::Q4_1, true) => q4_1_vnni,
        (T::Q5_0, true) => q5_0_vnni,
        (T::Q5_1, true) => q5_1_vnni,
        (T::Q8_0, true) => q8_0_vnni,
        (T::Q4_K, true) => q4_k_vnni,
        (T::Q6_K, true) => q6_k_vnni,
        _ => return None,
    })
}

/// The quantizer of (activation) type `ty` for `level`, if this file has one.
pub(crate) fn quantize_for(ty: GgmlType, level: Isa) -> Option<QuantizeFn> {
    use GgmlType as T;
    if !level.allows(Isa::Avx2) || level == Isa::Portable || !Isa::Avx2.is_available() {
        return None;
    }
    match ty {
        T::Q8_0 => Some(q8_0_quant),
        T::Q8_1 => Some(q8_1_quant),
        T::Q8_K => Some(q8_k_quant),
        _ => None,
    }
}
