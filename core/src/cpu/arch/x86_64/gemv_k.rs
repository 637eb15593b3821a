//! Q4_K and Q6_K weights in the AVX-512 VNNI matmul of [`super::gemv`] (prepared activation
//! rows, register tiles of activation × weight rows).
//!
//! A Q4_K super-block (256 elements, 144 bytes) is `d`, `dmin` (f16), 12 bytes holding eight
//! 6-bit sub-block scales and mins, and 128 bytes of nibbles: bytes `32j..32j + 32` hold
//! sub-block `2j` in their low nibbles and `2j + 1` in their high ones. One 512-bit register
//! takes both (`[low 32, high 32]`), which is the activations' natural order, so a Q8_K row
//! needs no rearranging. The sub-block scales are unpacked with a few 32-bit word operations
//! and converted to floats once per super-block; each register's dot product is scaled in
//! float (exact integer dots, then `d·d_a·scale` per lane), and the mins go through the
//! activation's per-sub-block sums: `dmin·d_a·Σ min_k·Σa_k`. Q5_K is the same with a fifth
//! bit per element (32 bytes before the nibbles), added to the nibble register with one
//! byte-mask test and one masked add: its quants are 0..31, still unsigned bytes for `vpdpbusd`.
//!
//! IQ4_XS (also here: 8 sub-blocks of 32 with 6-bit scales under an f16 `d`, Q8_K partner)
//! takes a sub-block pair per register too, its 32 index bytes `[2j: 16, 2j + 1: 16]` widened
//! to `[lo₂ⱼ, lo₂ⱼ₊₁, hi₂ⱼ, hi₂ⱼ₊₁]` and looked up as `level + 128` by one `vpshufb`; the
//! activations are prepared in that order ([`prepare_q8k_pairs`]) and the 128 goes through
//! their 32-element sums, `128·d·(ls − 32)·d_a·Σa_k`, as Q4_K's mins do.

use core::arch::x86_64::*;

use super::super::prepared::{
    holds_q8k, iq4xs_scales, prepare_q8k, prepare_q8k_pairs, q4k_scales_mins, quant_gemv, Kernel, IQ4XS_BYTES, Q6K_BYTES as WB6, K4,
};
use super::gemv::{level_table, Act, QuantGemv};
use super::super::{prefetch_distance, prefetch_lines_ahead};
use super::quant::hsum_ps;

/// The eight 6-bit scales and mins of a super-block's 12 scale bytes (ggml's `scale_min_k4`
/// order), as f32 vectors.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn scales_mins(p: *const u8) -> (__m256, __m256) {
    let (scales, mins) = q4k_scales_mins((p as *const [u8; 12]).read_unaligned());
    let to_f32 = |v: u64| _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(v as i64)));
    (to_f32(scales), to_f32(mins))
}

impl<const FIFTH: bool> Kernel for K4<FIFTH> {
    const PREFETCHES: bool = true;
    fn block_bytes(self) -> usize {
        Self::BYTES
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 8)
    }
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let mut acc = [[_mm512_setzero_ps(); R]; M];
        let mut acc_min = [[_mm256_setzero_ps(); R]; M];
        // Register of 64 elements `[sub-block 2j: 8 lanes, 2j + 1: 8 lanes]`.
        let lanes = [0, 1, 2, 3].map(|j: i32| {
            let (a, b) = (2 * j, 2 * j + 1);
            _mm512_setr_epi32(a, a, a, a, a, a, a, a, b, b, b, b, b, b, b, b)
        });
        let m4 = _mm512_set1_epi8(0x0F);
        // Q5_K: the fifth-bit selector of register j (bit 2j for its low 32 bytes, 2j + 1 for
        // its high 32) and the value it adds.
        let fifth = [0, 1, 2, 3].map(|j| {
            let (lo, hi) = ((1u8 << (2 * j)) as i8, (1u8 << (2 * j + 1)) as i8);
            _mm512_inserti64x4(_mm512_set1_epi8(lo), _mm256_set1_epi8(hi), 1)
        });
        let sixteen = _mm512_set1_epi8(16);
        let wb = Self::BYTES;
        let ahead = prefetch_distance(R * wrb);
        for b in 0..nb {
            let mut sc = [_mm256_setzero_ps(); R];
            let mut mn = [_mm256_setzero_ps(); R];
            let mut dw = [_mm256_setzero_ps(); R];
            let mut dmin = [_mm256_setzero_ps(); R];
            for r in 0..R {
                let xb = x.add(r * wrb + b * wb);
                if M == 1 {
                    prefetch_lines_ahead(xb, ahead, wb.div_ceil(64));
                }
                let dd = _mm_cvtph_ps(_mm_cvtsi32_si128((xb as *const i32).read_unaligned()));
                dw[r] = _mm256_broadcastss_ps(dd);
                dmin[r] = _mm256_broadcastss_ps(_mm_movehdup_ps(dd));
                (sc[r], mn[r]) = scales_mins(xb.add(4));
            }
            // Per (activation, weight) row: lane k = d_w·d_a·scale_k; the mins' term.
            let mut scale = [[_mm512_setzero_ps(); R]; M];
            for i in 0..M {
                let da = _mm256_set1_ps(*acts[i].d.as_ptr().add(b));
                let sa = _mm256_loadu_ps(acts[i].s.as_ptr().add(8 * b));
                for r in 0..R {
                    scale[i][r] = _mm512_castps256_ps512(_mm256_mul_ps(sc[r], _mm256_mul_ps(dw[r], da)));
                    acc_min[i][r] = _mm256_fmadd_ps(_mm256_mul_ps(mn[r], dmin[r]), sa, acc_min[i][r]);
                }
            }
            // Q5_K: each row's fifth bits, twice (`[qh, qh]`), for the byte-mask tests.
            let qh = core::array::from_fn::<_, R, _>(|r| {
                if FIFTH {
                    let v = _mm256_loadu_si256(x.add(r * wrb + b * wb + Self::QH) as *const __m256i);
                    _mm512_inserti64x4(_mm512_castsi256_si512(v), v, 1)
                } else {
                    _mm512_setzero_si512()
                }
            });
            for (j, lane) in lanes.iter().enumerate() {
                let a = acts.map(|act| _mm512_loadu_si512(act.q.as_ptr().add(b * 256 + 64 * j) as *const _));
                for r in 0..R {
                    let raw = _mm256_loadu_si256(x.add(r * wrb + b * wb + Self::QS + 32 * j) as *const __m256i);
                    let mut w = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(raw), _mm256_srli_epi16(raw, 4), 1), m4);
                    if FIFTH {
                        w = _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(qh[r], fifth[j]), w, sixteen);
                    }
                    for i in 0..M {
                        let dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w, a[i]));
                        acc[i][r] = _mm512_fmadd_ps(dot, _mm512_permutexvar_ps(*lane, scale[i][r]), acc[i][r]);
                    }
                }
            }
        }
        let mut out = [[0f32; R]; M];
        for i in 0..M {
            for r in 0..R {
                out[i][r] = _mm512_reduce_add_ps(acc[i][r]) - hsum_ps(acc_min[i][r]);
            }
        }
        out
    }
}

/// Q6_K: element `e` of a super-block is `d·scale[e/16]·(q − 32)` with the 6-bit `q` made of a
/// nibble of `ql` and a bit pair of `qh`. Per 128-element half, the 64 `ql` bytes' low nibbles
/// are elements 0..64 in order and their high nibbles 64..128, so two 512-bit registers take
/// the half in the activations' natural order; the bit pairs come from the 32 `qh` bytes
/// shifted by 0/2 (first register) and 4/6 (second). `q` is unsigned (0..63): the −32 goes
/// through the activation's 16-element sums, `32·d·d_a·Σ scale_k·Σa_k`.
#[derive(Clone, Copy)]
struct Q6K;

impl Kernel for Q6K {
    const PREFETCHES: bool = true;
    fn block_bytes(self) -> usize {
        WB6
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 16)
    }
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let mut acc = [[_mm512_setzero_ps(); R]; M];
        let mut acc_off = [[_mm512_setzero_ps(); R]; M];
        // Register t (0..4) of a super-block covers sub-blocks 4t..4t + 4, 4 lanes each.
        let lanes = [0, 1, 2, 3].map(|t: i32| {
            let k = 4 * t;
            _mm512_setr_epi32(k, k, k, k, k + 1, k + 1, k + 1, k + 1, k + 2, k + 2, k + 2, k + 2, k + 3, k + 3, k + 3, k + 3)
        });
        let (m4, m3) = (_mm512_set1_epi8(0x0F), _mm512_set1_epi8(0x03));
        let ahead = prefetch_distance(R * wrb);
        for b in 0..nb {
            // Per weight row: the 16 scales times d_w, as f32.
            let mut sc = [_mm512_setzero_ps(); R];
            for (r, v) in sc.iter_mut().enumerate() {
                let xb = x.add(r * wrb + b * WB6);
                if M == 1 {
                    prefetch_lines_ahead(xb, ahead, WB6.div_ceil(64));
                }
                let d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128((xb.add(208) as *const u16).read_unaligned() as i32)));
                let s8 = _mm_loadu_si128(xb.add(192) as *const __m128i);
                *v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(s8)), _mm512_set1_ps(d));
            }
            let mut scale = [[_mm512_setzero_ps(); R]; M];
            for i in 0..M {
                let da = _mm512_set1_ps(*acts[i].d.as_ptr().add(b));
                let sums = _mm512_loadu_ps(acts[i].s.as_ptr().add(16 * b));
                for r in 0..R {
                    scale[i][r] = _mm512_mul_ps(sc[r], da);
                    // −32 per element: 32·d_w·scale_k·(d_a·Σa_k), subtracted at the end.
                    acc_off[i][r] = _mm512_fmadd_ps(sc[r], sums, acc_off[i][r]);
                }
            }
            for h in 0..2 {
                let a = acts.map(|act| {
                    let p = act.q.as_ptr().add(b * 256 + 128 * h);
                    [_mm512_loadu_si512(p as *const _), _mm512_loadu_si512(p.add(64) as *const _)]
                });
                for r in 0..R {
                    let xb = x.add(r * wrb + b * WB6);
                    let ql = _mm512_loadu_si512(xb.add(64 * h) as *const _);
                    let qh = _mm256_loadu_si256(xb.add(128 + 32 * h) as *const __m256i);
                    let hi_bits = |s0: u32, s1: u32| {
                        let lo = _mm256_srl_epi16(qh, _mm_cvtsi32_si128(s0 as i32));
                        let hi = _mm256_srl_epi16(qh, _mm_cvtsi32_si128(s1 as i32));
                        _mm512_slli_epi16::<4>(_mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), m3))
                    };
                    let w = [
                        _mm512_or_si512(_mm512_and_si512(ql, m4), hi_bits(0, 2)),
                        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16::<4>(ql), m4), hi_bits(4, 6)),
                    ];
                    for (half, &wq) in w.iter().enumerate() {
                        let lane = lanes[2 * h + half];
                        for i in 0..M {
                            let dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), wq, a[i][half]));
                            acc[i][r] = _mm512_fmadd_ps(dot, _mm512_permutexvar_ps(lane, scale[i][r]), acc[i][r]);
                        }
                    }
                }
            }
        }
        let mut out = [[0f32; R]; M];
        for i in 0..M {
            for r in 0..R {
                out[i][r] = _mm512_reduce_add_ps(acc[i][r]) - 32.0 * _mm512_reduce_add_ps(acc_off[i][r]);
            }
        }
        out
    }
}

pub(super) const GEMV_Q6_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 16), Q6K);

pub(super) const GEMV_Q4_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 32), K4::<false>);

pub(super) const GEMV_Q5_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 32), K4::<true>);

/// IQ4_XS at AVX-512 VNNI (see the module comment).
#[derive(Clone, Copy)]
struct Iq4Xs;

impl Kernel for Iq4Xs {
    fn block_bytes(self) -> usize {
        IQ4XS_BYTES
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 8)
    }
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let mut acc = [[_mm512_setzero_ps(); R]; M];
        let mut acc_off = [[_mm256_setzero_ps(); R]; M];
        // Register j: lanes 0..4 and 8..12 belong to sub-block 2j, 4..8 and 12..16 to 2j + 1.
        let lanes = [0, 1, 2, 3].map(|j: i32| {
            let (a, b) = (2 * j, 2 * j + 1);
            _mm512_setr_epi32(a, a, a, a, b, b, b, b, a, a, a, a, b, b, b, b)
        });
        let table = _mm512_broadcast_i32x4(level_table());
        let m4 = _mm512_set1_epi8(0x0F);
        for b in 0..nb {
            // Per weight row: d·(ls − 32) per sub-block (exact in f32: 11 × 6 bits).
            let mut sc = [_mm256_setzero_ps(); R];
            for (r, v) in sc.iter_mut().enumerate() {
                let xb = x.add(r * wrb + b * IQ4XS_BYTES);
                let d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128((xb as *const u16).read_unaligned() as i32)));
                let ls = _mm_sub_epi8(_mm_cvtsi64_si128(iq4xs_scales(&*(xb as *const [u8; 8])) as i64), _mm_set1_epi8(32));
                *v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(ls)), _mm256_set1_ps(d));
            }
            let mut scale = [[_mm512_setzero_ps(); R]; M];
            for i in 0..M {
                let da = _mm256_set1_ps(*acts[i].d.as_ptr().add(b));
                let sa = _mm256_loadu_ps(acts[i].s.as_ptr().add(8 * b));
                for r in 0..R {
                    scale[i][r] = _mm512_castps256_ps512(_mm256_mul_ps(sc[r], da));
                    acc_off[i][r] = _mm256_fmadd_ps(sc[r], sa, acc_off[i][r]);
                }
            }
            for (j, lane) in lanes.iter().enumerate() {
                let a = acts.map(|act| _mm512_loadu_si512(act.q.as_ptr().add(b * 256 + 64 * j) as *const _));
                for r in 0..R {
                    let raw = _mm256_loadu_si256(x.add(r * wrb + b * IQ4XS_BYTES + 8 + 32 * j) as *const __m256i);
                    let idx = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(raw), _mm256_srli_epi16(raw, 4), 1), m4);
                    let w = _mm512_shuffle_epi8(table, idx);
                    for i in 0..M {
                        let dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w, a[i]));
                        acc[i][r] = _mm512_fmadd_ps(dot, _mm512_permutexvar_ps(*lane, scale[i][r]), acc[i][r]);
                    }
                }
            }
        }
        let mut out = [[0f32; R]; M];
        for i in 0..M {
            for r in 0..R {
                out[i][r] = _mm512_reduce_add_ps(acc[i][r]) - 128.0 * hsum_ps(acc_off[i][r]);
            }
        }
        out
    }
}

pub(super) const GEMV_IQ4_XS: QuantGemv = quant_gemv!(prepare_q8k_pairs, Iq4Xs);
