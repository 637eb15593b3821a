//! Q4_K and Q6_K weights in the NEON / dotprod matmul over prepared activations of
//! [`super::gemv`] (Q8_K activation rows in natural order, per-group sums prepared once).
//!
//! Both formats scale 16- or 32-element sub-blocks: the integer dots of four sub-blocks are
//! folded by an `addp` tree into one vector of four totals, converted and scaled with one
//! `fmla` against the four sub-block scales (already f32 for the super-block). Q4_K's mins go
//! through the activation's 32-element sums (`dmin·Σ min_k·(d_a·Σa_k)`), Q6_K's offset of 32
//! through its 16-element sums; the 6-bit quants (0..63) and nibbles are valid signed bytes,
//! so the weights are never re-centred per element. Q5_K is Q4_K with a fifth bit per element
//! moved into bit 4 of each nibble byte by one shift and mask (its quants 0..31 are still
//! valid signed bytes).
//!
//! IQ4_XS (8 sub-blocks of 32, signed 6-bit scales `ls − 32` under an f16 `d`) is Q4_K's
//! layout without mins: each sub-block's 16 index bytes give its elements 0..16 (low
//! nibbles) and 16..32 (high), looked up as the signed levels by one `tbl` each; the
//! level·activation dot is exact i8·i8, so there is no offset term.

use core::arch::aarch64::*;

use super::super::prepared::{self, quant_gemv, IQ4XS_BYTES, Q6K_BYTES as WB6, K4};
use super::super::{GemvActivations as Act, QuantGemv};
use super::gemv::{f16_bits, f16x4, totals};

/// The eight bytes of `v` (low first) as two f32 vectors.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn u8x8_f32(v: u64) -> [float32x4_t; 2] {
    let w = vmovl_u8(vcreate_u8(v));
    [vcvtq_f32_u32(vmovl_u16(vget_low_u16(w))), vcvtq_f32_u32(vmovl_high_u16(w))]
}

macro_rules! k_kernels {
    ($feat:literal, $dot:path) => {
        use super::*;

        /// Q4_K, or Q5_K where `FIFTH` ([`K4`]).
        #[derive(Clone, Copy)]
        pub(super) struct Q4K<const FIFTH: bool>;

        impl<const FIFTH: bool> prepared::Kernel for Q4K<FIFTH> {
            fn block_bytes(self) -> usize {
                K4::<FIFTH>::BYTES
            }
            fn holds(self, act: &Act, nb: usize) -> bool {
                prepared::holds_q8k(act, nb, 8)
            }
            #[target_feature(enable = $feat)]
            unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
                let (m4, m10) = (vdupq_n_u8(0x0F), vdupq_n_u8(0x10));
                let zero = vdupq_n_s32(0);
                let mut acc = [[vdupq_n_f32(0.0); R]; M];
                let mut acc_min = [[vdupq_n_f32(0.0); R]; M];
                let wb4 = K4::<FIFTH>::BYTES;
                for b in 0..nb {
                    // Per weight row: d, and the 8 scales and the 8 mins·dmin as f32.
                    let mut dw = [0f32; R];
                    let mut sc = [[vdupq_n_f32(0.0); 2]; R];
                    let mut mn = [[vdupq_n_f32(0.0); 2]; R];
                    for r in 0..R {
                        let xb = x.add(r * wrb + b * wb4);
                        let dd = f16x4([f16_bits(xb), f16_bits(xb.add(2)), 0, 0]);
                        dw[r] = vgetq_lane_f32::<0>(dd);
                        let (s, m) = prepared::q4k_scales_mins((xb.add(4) as *const [u8; 12]).read_unaligned());
                        sc[r] = u8x8_f32(s);
                        mn[r] = u8x8_f32(m).map(|v| vmulq_laneq_f32::<1>(v, dd));
                    }
                    for i in 0..M {
                        let s = acts[i].s.as_ptr().add(8 * b);
                        let sa = [vld1q_f32(s), vld1q_f32(s.add(4))];
                        for r in 0..R {
                            for h in 0..2 {
                                acc_min[i][r] = vfmaq_f32(acc_min[i][r], mn[r][h], sa[h]);
                            }
                        }
                    }
                    // Sub-blocks 4h..4h + 4: 32-byte chunks j = 2h, 2h + 1, each holding
                    // sub-block 2j in its low nibbles and 2j + 1 in its high ones.
                    for h in 0..2 {
                        let mut dots = [[[zero; 4]; R]; M];
                        for c in 0..2 {
                            let j = 2 * h + c;
                            let mut w = [[vdupq_n_s8(0); 4]; R];
                            for (r, v) in w.iter_mut().enumerate() {
                                let xb = x.add(r * wrb + b * wb4);
                                let xq = xb.add(K4::<FIFTH>::QS + 32 * j);
                                let (q0, q1) = (vld1q_u8(xq), vld1q_u8(xq.add(16)));
                                let mut q = [vandq_u8(q0, m4), vandq_u8(q1, m4), vshrq_n_u8(q0, 4), vshrq_n_u8(q1, 4)];
                                if FIFTH {
                                    // Bit 2j (low nibbles) and 2j + 1 (high) of the fifth-bit
                                    // bytes, moved to bit 4 by one shift (left or right) and a mask.
                                    let qh = [vld1q_u8(xb.add(K4::<FIFTH>::QH)), vld1q_u8(xb.add(K4::<FIFTH>::QH + 16))];
                                    for (e, v) in q.iter_mut().enumerate() {
                                        let bit = (2 * j + e / 2) as i8;
                                        *v = vorrq_u8(*v, vandq_u8(vshlq_u8(qh[e % 2], vdupq_n_s8(4 - bit)), m10));
                                    }
                                }
                                *v = q.map(|v| vreinterpretq_s8_u8(v));
                            }
                            for i in 0..M {
                                let a = acts[i].q.as_ptr().add(b * 256 + 64 * j) as *const i8;
                                let av = [vld1q_s8(a), vld1q_s8(a.add(16)), vld1q_s8(a.add(32)), vld1q_s8(a.add(48))];
                                for r in 0..R {
                                    dots[i][r][2 * c] = $dot($dot(zero, w[r][0], av[0]), w[r][1], av[1]);
                                    dots[i][r][2 * c + 1] = $dot($dot(zero, w[r][2], av[2]), w[r][3], av[3]);
                                }
                            }
                        }
                        for i in 0..M {
                            let da = *acts[i].d.as_ptr().add(b);
                            for r in 0..R {
                                let scale = vmulq_n_f32(sc[r][h], dw[r] * da);
                                acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(totals(dots[i][r])), scale);
                            }
                        }
                    }
                }
                let mut out = [[0f32; R]; M];
                for i in 0..M {
                    for r in 0..R {
                        out[i][r] = vaddvq_f32(acc[i][r]) - vaddvq_f32(acc_min[i][r]);
                    }
                }
                out
            }
        }

        /// Q6_K: in each 128-element half, 16-element chunk c (sub-block 8h + c) takes the
        /// low (c < 4) or high nibbles of `ql` bytes 16·(c mod 4).. and the bit pair of `qh`
        /// bytes 16·(c mod 2).. shifted by 2·(c / 2).
        #[derive(Clone, Copy)]
        pub(super) struct Q6K;

        impl prepared::Kernel for Q6K {
            fn block_bytes(self) -> usize {
                WB6
            }
            fn holds(self, act: &Act, nb: usize) -> bool {
                prepared::holds_q8k(act, nb, 16)
            }
            #[target_feature(enable = $feat)]
            unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
                let (m4, m30) = (vdupq_n_u8(0x0F), vdupq_n_u8(0x30));
                let zero = vdupq_n_s32(0);
                let mut acc = [[vdupq_n_f32(0.0); R]; M];
                let mut acc_off = [[vdupq_n_f32(0.0); R]; M];
                for b in 0..nb {
                    // Per weight row: the 16 scales times d_w, as f32.
                    let mut sc = [[vdupq_n_f32(0.0); 4]; R];
                    for (r, v) in sc.iter_mut().enumerate() {
                        let xb = x.add(r * wrb + b * WB6);
                        let d = vgetq_lane_f32::<0>(f16x4([f16_bits(xb.add(208)), 0, 0, 0]));
                        let s8 = vld1q_s8(xb.add(192) as *const i8);
                        let (lo, hi) = (vmovl_s8(vget_low_s8(s8)), vmovl_high_s8(s8));
                        let s32 = [vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo), vmovl_s16(vget_low_s16(hi)), vmovl_high_s16(hi)];
                        *v = s32.map(|s| vmulq_n_f32(vcvtq_f32_s32(s), d));
                    }
                    for i in 0..M {
                        let s = acts[i].s.as_ptr().add(16 * b);
                        for r in 0..R {
                            // −32 per element: 32·d_w·scale_k·(d_a·Σa_k), subtracted at the end.
                            for k in 0..4 {
                                acc_off[i][r] = vfmaq_f32(acc_off[i][r], sc[r][k], vld1q_f32(s.add(4 * k)));
                            }
                        }
                    }
                    for h in 0..2 {
                        // Quarter t: chunks 4t..4t + 4 of the half, scales 8h + 4t.., vector 2h + t.
                        for t in 0..2 {
                            let mut w = [[vdupq_n_s8(0); 4]; R];
                            for (r, v) in w.iter_mut().enumerate() {
                                let xb = x.add(r * wrb + b * WB6);
                                let ql = xb.add(64 * h);
                                let qh = [vld1q_u8(xb.add(128 + 32 * h)), vld1q_u8(xb.add(144 + 32 * h))];
                                for (c, wv) in v.iter_mut().enumerate() {
                                    let l = vld1q_u8(ql.add(16 * c));
                                    let nib = if t == 0 { vandq_u8(l, m4) } else { vshrq_n_u8(l, 4) };
                                    // Bit pair at s = 2·(chunk / 2) = 4t + 2·(c / 2), moved to
                                    // bits 4..6 by one shift of 4 − s (left or right) and a mask.
                                    let shift = vdupq_n_s8(4 - (4 * t + 2 * (c / 2)) as i8);
                                    let bits = vandq_u8(vshlq_u8(qh[c % 2], shift), m30);
                                    *wv = vreinterpretq_s8_u8(vorrq_u8(nib, bits));
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
                        out[i][r] = vaddvq_f32(acc[i][r]) - 32.0 * vaddvq_f32(acc_off[i][r]);
                    }
                }
                out
            }
        }

        /// IQ4_XS (see the module comment): sub-blocks 4h..4h + 4 per `addp` tree.
        #[derive(Clone, Copy)]
        pub(super) struct Iq4Xs;

        impl prepared::Kernel for Iq4Xs {
            fn block_bytes(self) -> usize {
                IQ4XS_BYTES
            }
            fn holds(self, act: &Act, nb: usize) -> bool {
                prepared::holds_q8k(act, nb, 8)
            }
            #[target_feature(enable = $feat)]
            unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
                let levels = vld1q_s8(crate::quant::ggml::iq4::KVALUES.as_ptr());
                let m4 = vdupq_n_u8(0x0F);
                let zero = vdupq_n_s32(0);
                let mut acc = [[vdupq_n_f32(0.0); R]; M];
                for b in 0..nb {
                    // Per weight row: d·(ls − 32) of the 8 sub-blocks as f32 (exact).
                    let mut sc = [[vdupq_n_f32(0.0); 2]; R];
                    for (r, v) in sc.iter_mut().enumerate() {
                        let xb = x.add(r * wrb + b * IQ4XS_BYTES);
                        let d = vgetq_lane_f32::<0>(f16x4([f16_bits(xb), 0, 0, 0]));
                        let ls = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vcreate_u8(prepared::iq4xs_scales(&*(xb as *const [u8; 8]))))), vdupq_n_s16(32));
                        *v = [vmovl_s16(vget_low_s16(ls)), vmovl_high_s16(ls)].map(|s| vmulq_n_f32(vcvtq_f32_s32(s), d));
                    }
                    for h in 0..2 {
                        let mut dots = [[[zero; 4]; R]; M];
                        let mut w = [[(vdupq_n_s8(0), vdupq_n_s8(0)); 4]; R];
                        for (r, v) in w.iter_mut().enumerate() {
                            let qs = x.add(r * wrb + b * IQ4XS_BYTES + 8 + 64 * h);
                            for (c, wv) in v.iter_mut().enumerate() {
                                let q = vld1q_u8(qs.add(16 * c));
                                *wv = (vqtbl1q_s8(levels, vandq_u8(q, m4)), vqtbl1q_s8(levels, vshrq_n_u8(q, 4)));
                            }
                        }
                        for i in 0..M {
                            let a = acts[i].q.as_ptr().add(b * 256 + 128 * h) as *const i8;
                            for c in 0..4 {
                                let (a0, a1) = (vld1q_s8(a.add(32 * c)), vld1q_s8(a.add(32 * c + 16)));
                                for r in 0..R {
                                    dots[i][r][c] = $dot($dot(zero, w[r][c].0, a0), w[r][c].1, a1);
                                }
                            }
                        }
                        for i in 0..M {
                            let da = *acts[i].d.as_ptr().add(b);
                            for r in 0..R {
                                acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(totals(dots[i][r])), vmulq_n_f32(sc[r][h], da));
                            }
                        }
                    }
                }
                let mut out = [[0f32; R]; M];
                for i in 0..M {
                    for r in 0..R {
                        out[i][r] = vaddvq_f32(acc[i][r]);
                    }
                }
                out
            }
        }
    };
}

mod neon {
    k_kernels!("neon", super::super::quant::neon::dot);
}

mod dotprod {
    k_kernels!("neon,dotprod", super::super::quant::dotprod::dot);
}

/// `[Q4_K, Q5_K, Q6_K, IQ4_XS]` at each level.
pub(super) const NEON: [QuantGemv; 4] = [
    quant_gemv!(|x| prepared::prepare_q8k(x, 32), neon::Q4K::<false>),
    quant_gemv!(|x| prepared::prepare_q8k(x, 32), neon::Q4K::<true>),
    quant_gemv!(|x| prepared::prepare_q8k(x, 16), neon::Q6K),
    quant_gemv!(|x| prepared::prepare_q8k(x, 32), neon::Iq4Xs),
];
pub(super) const DOTPROD: [QuantGemv; 4] = [
    quant_gemv!(|x| prepared::prepare_q8k(x, 32), dotprod::Q4K::<false>),
    quant_gemv!(|x| prepared::prepare_q8k(x, 32), dotprod::Q4K::<true>),
    quant_gemv!(|x| prepared::prepare_q8k(x, 16), dotprod::Q6K),
    quant_gemv!(|x| prepared::prepare_q8k(x, 32), dotprod::Iq4Xs),
];
