//! K-quant weights (Q2_K, Q3_K, Q4_K, Q5_K) in the AVX2 matmul over prepared
//! activations of [`super::gemv_avx2`] (Q8_K rows in natural order, per-group sums prepared
//! once); Q6_K has its own file ([`super::gemv_avx2_q6k`]).
//!
//! A 256-bit register takes 32 consecutive elements of a super-block: one Q4_K/Q5_K sub-block,
//! or two Q2_K/Q3_K sub-blocks of 16. The quants are unpacked as unsigned bytes (Q4_K's
//! nibbles, Q5_K's with the fifth bit, Q2_K/Q3_K's 2-bit low quants with Q3_K's
//! high bit as +4) for `vpmaddubsw`; its pair sums are multiplied by the sub-block scales
//! (small integers: 6-bit, 4-bit, signed 6-bit) in `vpmaddwd`, so a super-block's dot is
//! one exact i32 vector per (activation, weight) row, converted and scaled by `d_w·d_a` once.
//! What is not a product of quants goes through the activation's prepared sums per
//! sub-block, as in the AVX-512 kernels: Q4_K/Q5_K/Q2_K mins (`dmin·min_k·d_a·Σa_k`), Q3_K's
//! offset of 4 (`4·d·scale_k·d_a·Σa_k`).
//!
//! IQ4_XS: one sub-block per register, its indices looked up as the signed levels by one
//! `vpshufb`; `vpmaddubsw` takes |level| and the activation with the level's sign (exact: the
//! Q8_K activations are never −128, and |level| ≤ 127), and the signed scales `ls − 32` go in
//! through `vpmaddwd` as above, so there is no offset term.

use core::arch::x86_64::*;

use super::super::prepared::{
    holds_q8k, iq4xs_scales, prepare_q8k, q3k_scales, q4k_scales_mins, quant_gemv, Kernel, Low2, IQ4XS_BYTES, K4,
};
use super::super::{prefetch_distance, prefetch_lines_ahead, GemvActivations as Act, QuantGemv};
use super::quant::{f16_at, hsum_ps, nibbles};

/// `vpmaddwd` factors for the register of sub-blocks `2t`, `2t + 1`: `[s₂ₜ ×8, s₂ₜ₊₁ ×8]` from
/// 16 i16 scales `s16` (lane k = scale k).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn pair_scales(s16: __m256i, t: usize) -> __m256i {
    let pick = _mm256_setr_epi8(
        0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
    );
    _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(s16, _mm256_set1_epi32(t as i32)), pick)
}

/// The 8 sub-block scales (bytes of `scales`) of a Q4_K super-block as `vpmaddwd` factor
/// pairs `s_k | s_k << 16`, stored to `dst`. The caller hides `dst` from the optimizer
/// ([`core::hint::black_box`]) before reading it back with [`bcast`], so each sub-block's
/// factors are one `vpbroadcastd` from memory — a load, no shuffle. Broadcasting i16 lane k of
/// a register instead (`vpshufb` with a constant mask) was lowered by the compiler to a lane
/// extract and a `vpbroadcastw`: two shuffle-port µops per sub-block, 16 per super-block row,
/// with the 16 `vpmaddubsw`/`vpmaddwd` on the other ports — the tile was shuffle-bound on Intel
/// (docs/BENCHMARKS.md, "gq27").
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn scale_pairs(scales: u64, dst: &mut [u32; 8]) {
    let s32 = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(scales as i64));
    _mm256_storeu_si256(dst.as_mut_ptr() as *mut __m256i, _mm256_or_si256(s32, _mm256_slli_epi32::<16>(s32)));
}

/// Factor pair `k` of [`scale_pairs`] in every 32-bit lane.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn bcast(pairs: &[u32; 8], k: usize) -> __m256i {
    _mm256_set1_epi32(pairs[k] as i32)
}

/// The low 8 signed bytes of `s8` times `factor`, as f32.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn f32x8(s8: __m128i, factor: f32) -> __m256 {
    _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s8)), _mm256_set1_ps(factor))
}

/// 16 signed byte values `s8` times `factor`, as two f32 vectors (lanes 0..8, 8..16).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn f32x16(s8: __m128i, factor: f32) -> [__m256; 2] {
    [f32x8(s8, factor), f32x8(_mm_srli_si128::<8>(s8), factor)]
}

/// `vpmaddwd(vpmaddubsw(w, a), s)`: Σ of 4 adjacent `w·a` products per i32 lane, each pair
/// scaled by its i16 lane of `s`. Exact: pair sums of unsigned quants ≤ 63 stay within i16.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn scaled_dot(w: __m256i, a: __m256i, s: __m256i) -> __m256i {
    _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), s)
}

/// `0x10`-style `value` in each byte of `bits` that has `bit` set, else 0.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn where_set(bits: __m256i, bit: u8, value: __m256i) -> __m256i {
    let b = _mm256_set1_epi8(bit as i8);
    _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bits, b), b), value)
}

/// The integer dots of one super-block `b` for every (activation, weight) row pair, and the
/// scaling that closes it: `acc += d_w·d_a·isum + Σ_k off_k·s_k` (the prepared sums `s`, 8 or 16
/// per super-block, times per-row f32 factors `off`).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn close<const M: usize, const R: usize, const G: usize>(
    acc: &mut [[__m256; R]; M],
    isum: &[[__m256i; R]; M],
    dw: &[f32; R],
    off: &[[__m256; G]; R],
    acts: &[&Act; M],
    b: usize,
) {
    for i in 0..M {
        let da = *acts[i].d.as_ptr().add(b);
        let s = acts[i].s.as_ptr().add(8 * G * b);
        for r in 0..R {
            acc[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i][r]), _mm256_set1_ps(dw[r] * da), acc[i][r]);
            for (g, o) in off[r].iter().enumerate() {
                acc[i][r] = _mm256_fmadd_ps(*o, _mm256_loadu_ps(s.add(8 * g)), acc[i][r]);
            }
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn totals<const M: usize, const R: usize>(acc: &[[__m256; R]; M]) -> [[f32; R]; M] {
    let mut out = [[0f32; R]; M];
    for i in 0..M {
        for r in 0..R {
            out[i][r] = hsum_ps(acc[i][r]);
        }
    }
    out
}

/// Q4_K: chunk j (32 bytes) holds sub-block 2j in its low nibbles and 2j + 1 in its high
/// ones. All R rows' scales first, then the chunks across rows (each activation register
/// loaded once per chunk): at one thread, L2-resident (96×4096), this order took 0.95× the
/// time of [`Q5K`]'s row-at-a-time order for Q4_K, and a `vpshufd` scale layout (Q6_K's) 1.17×.
#[derive(Clone, Copy)]
struct Q4K;

impl Kernel for Q4K {
    const PREFETCHES: bool = true;
    fn block_bytes(self) -> usize {
        K4::<false>::BYTES
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 8)
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let wb = K4::<false>::BYTES;
        let m4 = _mm256_set1_epi8(0x0F);
        let mut acc = [[_mm256_setzero_ps(); R]; M];
        let ahead = prefetch_distance(R * wrb);
        let mut pairs = [[0u32; 8]; R];
        for b in 0..nb {
            let mut dw = [0f32; R];
            let mut off = [[_mm256_setzero_ps(); 1]; R];
            for r in 0..R {
                let xb = x.add(r * wrb + b * wb);
                if M == 1 {
                    prefetch_lines_ahead(xb, ahead, wb.div_ceil(64));
                }
                let (scales, mins) = q4k_scales_mins((xb.add(4) as *const [u8; 12]).read_unaligned());
                scale_pairs(scales, &mut pairs[r]);
                dw[r] = f16_at(xb);
                off[r] = [f32x8(_mm_cvtsi64_si128(mins as i64), -f16_at(xb.add(2)))];
            }
            let pairs = core::hint::black_box(&mut pairs);
            let mut isum = [[_mm256_setzero_si256(); R]; M];
            for j in 0..4 {
                let a = acts.map(|act| {
                    let p = act.q.as_ptr().add(b * 256 + 64 * j) as *const __m256i;
                    [_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))]
                });
                for r in 0..R {
                    let raw = _mm256_loadu_si256(x.add(r * wrb + b * wb + K4::<false>::QS + 32 * j) as *const __m256i);
                    let w = [_mm256_and_si256(raw, m4), _mm256_and_si256(_mm256_srli_epi16::<4>(raw), m4)];
                    let s = [bcast(&pairs[r], 2 * j), bcast(&pairs[r], 2 * j + 1)];
                    for i in 0..M {
                        let d = _mm256_add_epi32(scaled_dot(w[0], a[i][0], s[0]), scaled_dot(w[1], a[i][1], s[1]));
                        isum[i][r] = _mm256_add_epi32(isum[i][r], d);
                    }
                }
            }
            close(&mut acc, &isum, &dw, &off, &acts, b);
        }
        totals(&acc)
    }
}

/// Q5_K: Q4_K's layout with fifth bits, bits 2j and 2j + 1 of its 32 fifth-bit bytes for
/// chunk j. One weight row at a time, start to end (one stream of weights, as ggml reads it;
/// a super-block's scales, mins and fifth bits live only while it is worked on): with all R
/// rows' state first, as [`Q4K`] has it, the kernel kept that state on the stack and tested the
/// fifth bits with per-chunk masks built at run time. The fifth bits are moved into place by constant shifts of a register that is
/// shifted right by 2 per chunk (bit 2j of a byte reaches bit 0; the bits that cross in from
/// the byte above land in bits 6, 7, never read). 1.18× faster than that kernel (96×4096, one
/// thread, L2-resident).
#[derive(Clone, Copy)]
struct Q5K;

impl Kernel for Q5K {
    const PREFETCHES: bool = true;
    fn block_bytes(self) -> usize {
        K4::<true>::BYTES
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 8)
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let wb = K4::<true>::BYTES;
        let (m4, sixteen) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi8(0x10));
        // Shuffle controls broadcasting i16 lane k. (Q4_K's `scale_pairs` here, once per
        // super-block of one row rather than of four, measured 0.92–0.96× at one thread on the
        // Xeon and +7 % instructions: docs/BENCHMARKS.md, "gq27".)
        let pick: [__m256i; 8] = core::array::from_fn(|k| _mm256_set1_epi16(((2 * k) | ((2 * k + 1) << 8)) as i16));
        let mut acc = [[_mm256_setzero_ps(); R]; M];
        let ahead = prefetch_distance(R * wrb);
        for r in 0..R {
            for b in 0..nb {
                let xb = x.add(r * wrb + b * wb);
                if M == 1 {
                    prefetch_lines_ahead(xb, ahead, wb.div_ceil(64));
                }
                let (scales, mins) = q4k_scales_mins((xb.add(4) as *const [u8; 12]).read_unaligned());
                // The 8 scales as i16, in both 128-bit lanes.
                let s16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(scales as i64)));
                let mut qh = _mm256_loadu_si256(xb.add(K4::<true>::QH) as *const __m256i);
                let mut isum = [_mm256_setzero_si256(); M];
                for j in 0..4 {
                    let raw = _mm256_loadu_si256(xb.add(K4::<true>::QS + 32 * j) as *const __m256i);
                    // qh holds bits 2j, 2j + 1 of each byte in bits 0, 1 now.
                    let w = [
                        _mm256_or_si256(_mm256_and_si256(raw, m4), _mm256_and_si256(_mm256_slli_epi16::<4>(qh), sixteen)),
                        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16::<4>(raw), m4), _mm256_and_si256(_mm256_slli_epi16::<3>(qh), sixteen)),
                    ];
                    qh = _mm256_srli_epi16::<2>(qh);
                    let s = [_mm256_shuffle_epi8(s16, pick[2 * j]), _mm256_shuffle_epi8(s16, pick[2 * j + 1])];
                    for i in 0..M {
                        let p = acts[i].q.as_ptr().add(b * 256 + 64 * j) as *const __m256i;
                        let d = _mm256_add_epi32(scaled_dot(w[0], _mm256_loadu_si256(p), s[0]), scaled_dot(w[1], _mm256_loadu_si256(p.add(1)), s[1]));
                        isum[i] = _mm256_add_epi32(isum[i], d);
                    }
                }
                let dw = f16_at(xb);
                let off = f32x8(_mm_cvtsi64_si128(mins as i64), -f16_at(xb.add(2)));
                for i in 0..M {
                    let da = *acts[i].d.as_ptr().add(b);
                    acc[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i]), _mm256_set1_ps(dw * da), acc[i][r]);
                    acc[i][r] = _mm256_fmadd_ps(off, _mm256_loadu_ps(acts[i].s.as_ptr().add(8 * b)), acc[i][r]);
                }
            }
        }
        totals(&acc)
    }
}

/// A K-quant with 16 sub-blocks of 16 (Q2_K, Q3_K): register t (0..8) of a super-block
/// takes its elements 32t.., sub-blocks 2t and 2t + 1.
trait Sub16: Copy {
    /// Bytes of one weight block.
    const BYTES: usize;
    /// The super-block at `xb`: its 16 scales as i16 factors, `d`, and the factors of the
    /// activation's 16 sums (what is not a product of quants, negated).
    unsafe fn scales(xb: *const u8) -> (__m256i, f32, [__m256; 2]);
    /// Register t's 32 quants as unsigned bytes.
    unsafe fn quants(xb: *const u8, t: usize) -> __m256i;
}

/// The AVX2 kernel of a [`Sub16`] format.
#[derive(Clone, Copy)]
struct Sub16Kernel<S>(S);

impl<S: Sub16> Kernel for Sub16Kernel<S> {
    fn block_bytes(self) -> usize {
        S::BYTES
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 16)
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let mut acc = [[_mm256_setzero_ps(); R]; M];
        for b in 0..nb {
            let mut s16 = [_mm256_setzero_si256(); R];
            let mut dw = [0f32; R];
            let mut off = [[_mm256_setzero_ps(); 2]; R];
            for r in 0..R {
                (s16[r], dw[r], off[r]) = S::scales(x.add(r * wrb + b * S::BYTES));
            }
            let mut isum = [[_mm256_setzero_si256(); R]; M];
            for t in 0..8 {
                let a = acts.map(|act| _mm256_loadu_si256(act.q.as_ptr().add(b * 256 + 32 * t) as *const __m256i));
                for r in 0..R {
                    let w = S::quants(x.add(r * wrb + b * S::BYTES), t);
                    let s = pair_scales(s16[r], t);
                    for i in 0..M {
                        isum[i][r] = _mm256_add_epi32(isum[i][r], scaled_dot(w, a[i], s));
                    }
                }
            }
            close(&mut acc, &isum, &dw, &off, &acts, b);
        }
        totals(&acc)
    }
}

/// Q2_K and Q3_K ([`Low2`]): register t = 4h + j takes the 2-bit low quants of bytes 32h..
/// shifted by 2j; Q3_K adds bit 4h + j of its high-bit bytes as +4. Q2_K's mins and Q3_K's
/// offset of 4 are the sums' factors (`−dmin·min_k`, `−4·d·scale_k`).
impl<const HIGH: bool> Sub16 for Low2<HIGH> {
    const BYTES: usize = Low2::<HIGH>::BYTES;
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn scales(xb: *const u8) -> (__m256i, f32, [__m256; 2]) {
        let d = f16_at(xb.add(Self::D));
        if HIGH {
            let w = q3k_scales((xb.add(96) as *const [u8; 12]).read_unaligned());
            let s8 = _mm_sub_epi8(_mm_setr_epi32(w[0] as i32, w[1] as i32, w[2] as i32, w[3] as i32), _mm_set1_epi8(32));
            (_mm256_cvtepi8_epi16(s8), d, f32x16(s8, -4.0 * d))
        } else {
            let raw = _mm_loadu_si128(xb as *const __m128i);
            let m4 = _mm_set1_epi8(0x0F);
            let mins = _mm_and_si128(_mm_srli_epi16::<4>(raw), m4);
            (_mm256_cvtepu8_epi16(_mm_and_si128(raw, m4)), d, f32x16(mins, -f16_at(xb.add(Self::D + 2))))
        }
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn quants(xb: *const u8, t: usize) -> __m256i {
        let (h, j) = (t / 4, t % 4);
        let qs = _mm256_loadu_si256(xb.add(Self::QS + 32 * h) as *const __m256i);
        let w = _mm256_and_si256(_mm256_srl_epi16(qs, _mm_cvtsi32_si128(2 * j as i32)), _mm256_set1_epi8(0x03));
        if HIGH {
            _mm256_add_epi8(w, where_set(_mm256_loadu_si256(xb as *const __m256i), 1 << (4 * h + j), _mm256_set1_epi8(4)))
        } else {
            w
        }
    }
}

pub(super) const Q2_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 16), Sub16Kernel(Low2::<false>));
pub(super) const Q3_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 16), Sub16Kernel(Low2::<true>));
pub(super) const Q4_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 32), Q4K);
pub(super) const Q5_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 32), Q5K);

/// IQ4_XS at AVX2 (see the module comment): sub-block s is register s, in the activations'
/// natural order.
#[derive(Clone, Copy)]
struct Iq4Xs;

impl Kernel for Iq4Xs {
    fn block_bytes(self) -> usize {
        IQ4XS_BYTES
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 8)
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let table = _mm256_broadcastsi128_si256(_mm_loadu_si128(crate::quant::ggml::iq4::KVALUES.as_ptr() as *const __m128i));
        // Shuffle controls broadcasting i16 lane k.
        let pick: [__m256i; 8] = core::array::from_fn(|k| _mm256_set1_epi16(((2 * k) | ((2 * k + 1) << 8)) as i16));
        let mut acc = [[_mm256_setzero_ps(); R]; M];
        for b in 0..nb {
            let mut s16 = [_mm256_setzero_si256(); R];
            let mut dw = [0f32; R];
            for r in 0..R {
                let xb = x.add(r * wrb + b * IQ4XS_BYTES);
                let ls = _mm_sub_epi8(_mm_cvtsi64_si128(iq4xs_scales(&*(xb as *const [u8; 8])) as i64), _mm_set1_epi8(32));
                // The 8 signed scales as i16, in both 128-bit lanes.
                s16[r] = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(ls));
                dw[r] = f16_at(xb);
            }
            let mut isum = [[_mm256_setzero_si256(); R]; M];
            for (sub, pk) in pick.iter().enumerate() {
                let a = acts.map(|act| _mm256_loadu_si256(act.q.as_ptr().add(b * 256 + 32 * sub) as *const __m256i));
                for r in 0..R {
                    let w = _mm256_shuffle_epi8(table, nibbles(x.add(r * wrb + b * IQ4XS_BYTES + 8 + 16 * sub)));
                    let (aw, sc) = (_mm256_abs_epi8(w), _mm256_shuffle_epi8(s16[r], *pk));
                    for i in 0..M {
                        isum[i][r] = _mm256_add_epi32(isum[i][r], scaled_dot(aw, _mm256_sign_epi8(a[i], w), sc));
                    }
                }
            }
            close::<M, R, 0>(&mut acc, &isum, &dw, &[[]; R], &acts, b);
        }
        totals(&acc)
    }
}

pub(super) const IQ4_XS: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 32), Iq4Xs);
