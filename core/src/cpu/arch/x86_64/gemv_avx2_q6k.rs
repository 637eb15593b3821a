//! Q6_K weights in the AVX2 matmul over prepared activations (Q8_K rows in natural order,
//! 16-element sums prepared once; [`super::gemv_avx2_k`] has the other K-quants).
//!
//! Written out per half super-block rather than through the shared 16-sub-block kernel: there,
//! register t's shifts of the high-bit bytes depended on `t mod 4` inside a loop the compiler
//! did not unroll, and with no variable 16-bit shift in AVX2 it widened every such shift to
//! 32-bit lanes and packed back (`vpsllvd` + `vpackusdw`): 1.5× the time of Q4_K per weight byte.
//!
//! The tile's weight rows are read one at a time, start to end (one stream, as ggml reads
//! them; with the rows interleaved per super-block the best of 3 runs was 1.03–1.13× slower).
//! A half h (128 elements) is 64 bytes of low nibbles `ql` and 32 bytes of high bit pairs `qh`;
//! its four registers of 32 quants are `ql[0..32]` and `ql[32..64]` low nibbles, then high
//! nibbles, each or-ed with one bit pair of `qh` moved to bits 4, 5 by a constant shift. The
//! quants stay unsigned (0..63) for `vpmaddubsw`; the pair sums are multiplied by the signed
//! sub-block scales in `vpmaddwd`, so a super-block's dot is one exact i32 vector per
//! (activation, weight) row. Register t (sub-blocks 2t, 2t + 1 in its two 128-bit lanes) takes
//! its factors with one `vpshufd`: the scales are laid out once per super-block as i16 pairs,
//! `[s0 s0 s2 s2 s4 s4 s6 s6 | s1 s1 s3 s3 ..]` for t < 4 and the same from s8 for t ≥ 4 (a
//! `vpshufb` broadcasting an i16 lane was split by the compiler into two shuffles). The offset
//! of 32 is removed in the same integers: `32·Σ_k scale_k·Σa_k` from the activation's 16-element
//! sums, prepared once per matmul as i16 ([`prepare`]), in one `vpmaddwd`; the super-block's
//! dot is then one convert and one FMA by `d·d_a`. Exact: |Σ q·a·scale| over a super-block is
//! below 256·63·128·128 < 2³¹, the offset term below 32·16·128·2048.

use core::arch::x86_64::*;

use super::super::prepared::{holds_q8k, prepare_q8k, quant_gemv, Kernel, Q6K_BYTES as WB, Q8K_BYTES};
use super::super::{prefetch_distance, prefetch_lines_ahead, GemvActivations as Act, QuantGemv};
use super::quant::hsum_ps;

/// Offsets in a Q6_K block: low nibbles, high bit pairs, the 16 i8 scales, the f16 `d`.
const QH: usize = 128;
const SCALES: usize = 192;
const D: usize = 208;

/// A Q8_K row prepared with 16-element sums ([`prepare_q8k`]) and those sums as i16 in
/// [`Act::sums`].
fn prepare(x: &[u8]) -> Act {
    let mut act = prepare_q8k(x, 16);
    let mut sums = alloc::vec![0i16; 16 * act.nb];
    for (blk, dst) in x.chunks_exact(Q8K_BYTES).zip(sums.chunks_exact_mut(16)) {
        for (k, v) in dst.iter_mut().enumerate() {
            *v = i16::from_le_bytes([blk[260 + 2 * k], blk[261 + 2 * k]]);
        }
    }
    act.sums = sums;
    act
}

#[derive(Clone, Copy)]
struct Q6K;

impl Kernel for Q6K {
    const PREFETCHES: bool = true;
    fn block_bytes(self) -> usize {
        WB
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 16) && act.sums.len() >= 16 * nb
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let (m4, m30) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi8(0x30));
        // Bytes of the 16 scales to i16 pairs (see the module comment): t < 4, t ≥ 4.
        let pairs = [
            _mm_setr_epi8(0, 0, 2, 2, 4, 4, 6, 6, 1, 1, 3, 3, 5, 5, 7, 7),
            _mm_setr_epi8(8, 8, 10, 10, 12, 12, 14, 14, 9, 9, 11, 11, 13, 13, 15, 15),
        ];
        let mut acc = [[_mm256_setzero_ps(); R]; M];
        let ahead = prefetch_distance(R * wrb);
        for r in 0..R {
            for b in 0..nb {
                let xb = x.add(r * wrb + b * WB);
                if M == 1 {
                    prefetch_lines_ahead(xb, ahead, WB.div_ceil(64));
                }
                let sc8 = _mm_loadu_si128(xb.add(SCALES) as *const __m128i);
                let mut isum = [_mm256_setzero_si256(); M];
                // The offset first: 32·Σ_k scale_k·Σa_k (natural order on both sides).
                let sc16 = _mm256_cvtepi8_epi16(sc8);
                for i in 0..M {
                    let sums = _mm256_loadu_si256(acts[i].sums.as_ptr().add(16 * b) as *const __m256i);
                    isum[i] = _mm256_sub_epi32(isum[i], _mm256_slli_epi32::<5>(_mm256_madd_epi16(sc16, sums)));
                }
                for (h, pair) in pairs.iter().enumerate() {
                    let sh = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, *pair));
                    let ql0 = _mm256_loadu_si256(xb.add(64 * h) as *const __m256i);
                    let ql1 = _mm256_loadu_si256(xb.add(64 * h + 32) as *const __m256i);
                    let qh = _mm256_loadu_si256(xb.add(QH + 32 * h) as *const __m256i);
                    // Register c of the half: its quants (bit pair c of each qh byte to bits 4, 5;
                    // 16-bit shifts, the mask drops what crosses from the neighbouring byte)
                    // and its scale factors.
                    macro_rules! reg {
                        ($c:literal, $lo:expr, $hi:expr, $imm:literal) => {{
                            let w = _mm256_or_si256(_mm256_and_si256($lo, m4), _mm256_and_si256($hi, m30));
                            let s = _mm256_shuffle_epi32::<$imm>(sh);
                            for i in 0..M {
                                let a = _mm256_loadu_si256(acts[i].q.as_ptr().add(b * 256 + 128 * h + 32 * $c) as *const __m256i);
                                isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), s));
                            }
                        }};
                    }
                    reg!(0, ql0, _mm256_slli_epi16::<4>(qh), 0x00);
                    reg!(1, ql1, _mm256_slli_epi16::<2>(qh), 0x55);
                    reg!(2, _mm256_srli_epi16::<4>(ql0), qh, 0xAA);
                    reg!(3, _mm256_srli_epi16::<4>(ql1), _mm256_srli_epi16::<2>(qh), 0xFF);
                }
                let d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128((xb.add(D) as *const u16).read_unaligned() as i32)));
                for i in 0..M {
                    let da = *acts[i].d.as_ptr().add(b);
                    acc[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i]), _mm256_set1_ps(d * da), acc[i][r]);
                }
            }
        }
        let mut out = [[0f32; R]; M];
        for i in 0..M {
            for r in 0..R {
                out[i][r] = hsum_ps(acc[i][r]);
            }
        }
        out
    }
}

pub(super) const Q6_K: QuantGemv = quant_gemv!(prepare, Q6K);
