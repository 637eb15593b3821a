//! Q2_K and Q3_K weights in the NEON / dotprod matmul over prepared activations of
//! [`super::gemv`] (Q8_K rows in natural order, 16-element sums prepared once).
//!
//! Both formats scale 16 sub-blocks of 16 and share their 2-bit low quants ([`Low2`]): a
//! 16-element chunk is one shift (right by `2j`) and mask of 16 quant bytes; Q3_K's high bit
//! moves to bit 2 by one shift and mask of its high-bit bytes. The integer dots of four chunks
//! fold into one vector of four totals (`addp` tree), scaled with one `fmla`. Quants stay
//! unsigned (0..3, 0..7): Q2_K's mins (`dmin·min_k·Σa_k`) and Q3_K's offset of 4
//! (`4·d·scale_k·Σa_k`) go through the activation's 16-element sums.

use core::arch::aarch64::*;

use super::super::prepared::{self, quant_gemv, Low2};
use super::super::{GemvActivations as Act, QuantGemv};
use super::gemv::{f16_bits, f16x4, totals};

/// The 16 bytes of `v` as four f32 vectors.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn u8x16_f32(v: uint8x16_t) -> [float32x4_t; 4] {
    let (lo, hi) = (vmovl_u8(vget_low_u8(v)), vmovl_high_u8(v));
    [vmovl_u16(vget_low_u16(lo)), vmovl_high_u16(lo), vmovl_u16(vget_low_u16(hi)), vmovl_high_u16(hi)].map(|w| vcvtq_f32_u32(w))
}

/// Per sub-block k (four vectors of four), the scale of its integer dot (`d·scale_k`) and the
/// factor of its activation sum that is subtracted (`4·d·scale_k` for Q3_K, `dmin·min_k` for
/// Q2_K).
#[target_feature(enable = "neon")]
#[inline]
unsafe fn scales<const HIGH: bool>(xb: *const u8) -> ([float32x4_t; 4], [float32x4_t; 4]) {
    let at = Low2::<HIGH>::D;
    if HIGH {
        let d = vgetq_lane_f32::<0>(f16x4([f16_bits(xb.add(at)), 0, 0, 0]));
        let w = prepared::q3k_scales((xb.add(96) as *const [u8; 12]).read_unaligned());
        let sc = u8x16_f32(vreinterpretq_u8_u32(vld1q_u32(w.as_ptr()))).map(|v| vmulq_n_f32(vsubq_f32(v, vdupq_n_f32(32.0)), d));
        (sc, sc.map(|v| vmulq_n_f32(v, 4.0)))
    } else {
        let dd = f16x4([f16_bits(xb.add(at)), f16_bits(xb.add(at + 2)), 0, 0]);
        let raw = vld1q_u8(xb);
        let sc = u8x16_f32(vandq_u8(raw, vdupq_n_u8(0x0F))).map(|v| vmulq_laneq_f32::<0>(v, dd));
        (sc, u8x16_f32(vshrq_n_u8(raw, 4)).map(|v| vmulq_laneq_f32::<1>(v, dd)))
    }
}

macro_rules! low2_kernels {
    ($feat:literal, $dot:path) => {
        use super::*;

        /// Q2_K, or Q3_K where `HIGH` ([`Low2`]).
        #[derive(Clone, Copy)]
        pub(super) struct K23<const HIGH: bool>;

        impl<const HIGH: bool> prepared::Kernel for K23<HIGH> {
            fn block_bytes(self) -> usize {
                Low2::<HIGH>::BYTES
            }
            fn holds(self, act: &Act, nb: usize) -> bool {
                prepared::holds_q8k(act, nb, 16)
            }
            #[target_feature(enable = $feat)]
            unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
                let (m3, m4) = (vdupq_n_u8(0x03), vdupq_n_u8(0x04));
                let zero = vdupq_n_s32(0);
                let wb = Low2::<HIGH>::BYTES;
                let mut acc = [[vdupq_n_f32(0.0); R]; M];
                let mut acc_off = [[vdupq_n_f32(0.0); R]; M];
                for b in 0..nb {
                    let mut sc = [[vdupq_n_f32(0.0); 4]; R];
                    for (r, v) in sc.iter_mut().enumerate() {
                        let xb = x.add(r * wrb + b * wb);
                        let (s, off) = scales::<HIGH>(xb);
                        *v = s;
                        for i in 0..M {
                            let sums = acts[i].s.as_ptr().add(16 * b);
                            for k in 0..4 {
                                acc_off[i][r] = vfmaq_f32(acc_off[i][r], off[k], vld1q_f32(sums.add(4 * k)));
                            }
                        }
                    }
                    for h in 0..2 {
                        // Quarter t: chunks 4t..4t + 4 of the half (elements 128h + 16c), sub-blocks
                        // 8h + 4t.., scale vector 2h + t. Chunk c is run j = c / 2, bytes 16·(c mod 2)..
                        for t in 0..2 {
                            let mut w = [[vdupq_n_s8(0); 4]; R];
                            for (r, v) in w.iter_mut().enumerate() {
                                let xb = x.add(r * wrb + b * wb);
                                let qs = xb.add(Low2::<HIGH>::QS + 32 * h);
                                let q = [vld1q_u8(qs), vld1q_u8(qs.add(16))];
                                let hm = if HIGH { [vld1q_u8(xb), vld1q_u8(xb.add(16))] } else { [vdupq_n_u8(0); 2] };
                                for (c, wv) in v.iter_mut().enumerate() {
                                    let j = 2 * t + c / 2;
                                    let mut u = vandq_u8(vshlq_u8(q[c % 2], vdupq_n_s8(-2 * j as i8)), m3);
                                    if HIGH {
                                        // Bit 4h + j of the high-bit byte, moved to bit 2.
                                        let shift = vdupq_n_s8(2 - (4 * h + j) as i8);
                                        u = vorrq_u8(u, vandq_u8(vshlq_u8(hm[c % 2], shift), m4));
                                    }
                                    *wv = vreinterpretq_s8_u8(u);
                                }
                            }
                            let mut dots = [[[zero; 4]; R]; M];
                            for i in 0..M {
                                let a = acts[i].q.as_ptr().add(b * 256 + 128 * h + 64 * t) as *const i8;
                                let av = [vld1q_s8(a), vld1q_s8(a.add(16)), vld1q_s8(a.add(32)), vld1q_s8(a.add(48))];
                                for r in 0..R {
                                    for c in 0..4 {
                                        dots[i][r][c] = $dot(zero, w[r][c], av[c]);
                                    }
                                }
                            }
                            for i in 0..M {
                                let da = *acts[i].d.as_ptr().add(b);
                                for r in 0..R {
                                    let scale = vmulq_n_f32(sc[r][2 * h + t], da);
                                    acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(totals(dots[i][r])), scale);
                                }
                            }
                        }
                    }
                }
                let mut out = [[0f32; R]; M];
                for i in 0..M {
                    for r in 0..R {
                        out[i][r] = vaddvq_f32(acc[i][r]) - vaddvq_f32(acc_off[i][r]);
                    }
                }
                out
            }
        }
    };
}

mod neon {
    low2_kernels!("neon", super::super::quant::neon::dot);
}

mod dotprod {
    low2_kernels!("neon,dotprod", super::super::quant::dotprod::dot);
}

/// `[Q2_K, Q3_K]` at each level.
pub(super) const NEON: [QuantGemv; 2] =
    [quant_gemv!(|x| prepared::prepare_q8k(x, 16), neon::K23::<false>), quant_gemv!(|x| prepared::prepare_q8k(x, 16), neon::K23::<true>)];
pub(super) const DOTPROD: [QuantGemv; 2] =
    [quant_gemv!(|x| prepared::prepare_q8k(x, 16), dotprod::K23::<false>), quant_gemv!(|x| prepared::prepare_q8k(x, 16), dotprod::K23::<true>)];
