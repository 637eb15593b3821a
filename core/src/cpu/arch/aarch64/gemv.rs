//! NEON and dotprod matmul over prepared activations ([`super::super::prepared`]) for the
//! 32-element GGUF formats a decode step streams: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL
//! weights in file layout (Q5_0/Q5_1: the fifth bits ORed into the nibble registers; IQ4_NL:
//! the indices looked up as the signed levels by one `tbl` per 16, an exact i8·i8 dot with no
//! offset term, so the prepared `s` that removes the 128 of x86's unsigned levels is unused).
//!
//! Against the older per-block tile kernels of [`super::quant`], per weight block and
//! (activation, weight) row pair:
//! - the block scales of 4 blocks are converted with one `fcvtl` per weight row and multiplied
//!   by the activation scales (prepared once as f32) in one instruction;
//! - the integer dots of 4 blocks are folded by a `addp` tree into one vector of 4 block
//!   totals, converted and scaled with one `fmla`, instead of a convert and a scale per block;
//! - Q4_0 nibbles stay unsigned (0..15 are valid signed bytes): the offset of 8 is the
//!   activation's prepared `−8·d·Σa`, so nothing is subtracted per block.
//!
//! Every block's integer dot is exact (as in the dot kernels); only the float summation
//! order differs, so a result equals the dot kernel's within the bound of docs/QUANT.md.

use core::arch::aarch64::*;
use core::arch::asm;

use crate::cpu::isa::Isa;
use crate::quant::GgmlType;

use super::super::prepared::{self, quant_gemv, Order};
use super::super::QuantGemv;

/// Four f16 values (as bits) widened to f32 with `fcvtl` (base ARMv8 NEON; exact).
#[target_feature(enable = "neon")]
#[inline]
pub(super) unsafe fn f16x4(bits: [u16; 4]) -> float32x4_t {
    let h = vcreate_u16(u64::from(bits[0]) | u64::from(bits[1]) << 16 | u64::from(bits[2]) << 32 | u64::from(bits[3]) << 48);
    let out: float32x4_t;
    // SAFETY: register-only instruction of the aarch64 baseline (the intrinsic takes the
    // unstable `float16x4_t`).
    asm!("fcvtl {o:v}.4s, {h:v}.4h", o = out(vreg) out, h = in(vreg) h, options(pure, nomem, nostack, preserves_flags));
    out
}

/// The f16 bits at `p`.
#[inline]
pub(super) unsafe fn f16_bits(p: *const u8) -> u16 {
    (p as *const u16).read_unaligned()
}

/// `[Σd[0], Σd[1], Σd[2], Σd[3]]`: the lane totals of four dot vectors (exact integer adds).
#[target_feature(enable = "neon")]
#[inline]
pub(super) unsafe fn totals(d: [int32x4_t; 4]) -> int32x4_t {
    vpaddq_s32(vpaddq_s32(d[0], d[1]), vpaddq_s32(d[2], d[3]))
}

/// The kernels, written once over `$dot` (acc + Σ of 4 adjacent i8 products per i32 lane).
macro_rules! legacy {
    ($feat:literal, $dot:path) => {
        use super::*;

        /// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 or IQ4_NL weights.
        #[derive(Clone, Copy)]
        pub(super) struct Legacy(pub(super) prepared::Format);

        impl prepared::Kernel for Legacy {
            fn block_bytes(self) -> usize {
                self.0.wb
            }
            fn holds(self, act: &Act, nb: usize) -> bool {
                prepared::holds_32(act, nb)
            }
            #[target_feature(enable = $feat)]
            unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
                let f = self.0;
                let second = f.second != prepared::Second::None && !f.levels;
                let levels = vld1q_s8(crate::quant::ggml::iq4::KVALUES.as_ptr());
                let m4 = vdupq_n_u8(0x0F);
                let zero = vdupq_n_s32(0);
                let mut acc = [[vdupq_n_f32(0.0); R]; M];
                // The second terms (Q4_0 offsets, Q4_1 mins), summed apart.
                let mut acc2 = [[vdupq_n_f32(0.0); R]; M];
                // One group of `count` ≤ 4 blocks from `g`; past the row's end scales and dots
                // are zero. Expanded with a literal 4 for whole groups, so the arrays indexed
                // by block stay in registers.
                macro_rules! group {
                    ($g:expr, $count:expr) => {{
                        let (g, count) = ($g, $count);
                        let mut dw = [vdupq_n_f32(0.0); R];
                        let mut mw = [vdupq_n_f32(0.0); R];
                        for r in 0..R {
                            let xg = x.add(r * wrb + g * f.wb);
                            let (mut d, mut m) = ([0u16; 4], [0u16; 4]);
                            for p in 0..count {
                                d[p] = f16_bits(xg.add(p * f.wb));
                                if f.second == prepared::Second::Min {
                                    m[p] = f16_bits(xg.add(p * f.wb + 2));
                                }
                            }
                            dw[r] = f16x4(d);
                            mw[r] = if f.second == prepared::Second::Min { f16x4(m) } else { dw[r] };
                        }
                        let mut dots = [[[zero; 4]; R]; M];
                        for p in 0..count {
                            let mut w = [(vdupq_n_s8(0), vdupq_n_s8(0)); R];
                            for (r, v) in w.iter_mut().enumerate() {
                                let xb = x.add(r * wrb + (g + p) * f.wb + f.wq);
                                *v = if f.nibbles {
                                    let q = vld1q_u8(xb);
                                    let (mut lo, mut hi) = (vandq_u8(q, m4), vshrq_n_u8(q, 4));
                                    if f.fifth {
                                        // Q5_0/Q5_1: bit 4 of each quant (0..31, still a valid signed byte).
                                        let (h0, h1) = super::super::quant::fifth_bits(f.fifth_bits(xb.sub(f.wq)));
                                        (lo, hi) = (vorrq_u8(lo, h0), vorrq_u8(hi, h1));
                                    }
                                    if f.levels {
                                        (vqtbl1q_s8(levels, lo), vqtbl1q_s8(levels, hi))
                                    } else {
                                        (vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi))
                                    }
                                } else {
                                    (vld1q_s8(xb as *const i8), vld1q_s8(xb.add(16) as *const i8))
                                };
                            }
                            for i in 0..M {
                                let a = acts[i].q.as_ptr().add((g + p) * 32) as *const i8;
                                let (a0, a1) = (vld1q_s8(a), vld1q_s8(a.add(16)));
                                for r in 0..R {
                                    dots[i][r][p] = $dot($dot(zero, w[r].0, a0), w[r].1, a1);
                                }
                            }
                        }
                        for i in 0..M {
                            let da = vld1q_f32(acts[i].d.as_ptr().add(g));
                            let sa = vld1q_f32(acts[i].s.as_ptr().add(g));
                            for r in 0..R {
                                let scale = vmulq_f32(dw[r], da);
                                acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(totals(dots[i][r])), scale);
                                if second {
                                    acc2[i][r] = vfmaq_f32(acc2[i][r], mw[r], sa);
                                }
                            }
                        }
                    }};
                }
                let mut g = 0;
                while g + 4 <= nb {
                    group!(g, 4);
                    g += 4;
                }
                if g < nb {
                    group!(g, nb - g);
                }
                let mut out = [[0f32; R]; M];
                for i in 0..M {
                    for r in 0..R {
                        out[i][r] = vaddvq_f32(acc[i][r]) + vaddvq_f32(acc2[i][r]);
                    }
                }
                out
            }
        }
    };
}

type Act = super::super::GemvActivations;

mod neon {
    legacy!("neon", super::super::quant::neon::dot);
}

mod dotprod {
    legacy!("neon,dotprod", super::super::quant::dotprod::dot);
}

macro_rules! legacy_gemvs {
    ($module:ident) => {{
        use prepared::{IQ4_NL, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0};
        [
            quant_gemv!(|x| prepared::prepare(Q4_0, Order::Natural, x), $module::Legacy(Q4_0)),
            quant_gemv!(|x| prepared::prepare(Q4_1, Order::Natural, x), $module::Legacy(Q4_1)),
            quant_gemv!(|x| prepared::prepare(Q8_0, Order::Natural, x), $module::Legacy(Q8_0)),
            quant_gemv!(|x| prepared::prepare(Q5_0, Order::Natural, x), $module::Legacy(Q5_0)),
            quant_gemv!(|x| prepared::prepare(Q5_1, Order::Natural, x), $module::Legacy(Q5_1)),
            quant_gemv!(|x| prepared::prepare(IQ4_NL, Order::Natural, x), $module::Legacy(IQ4_NL)),
        ]
    }};
}
const NEON: [QuantGemv; 6] = legacy_gemvs!(neon);
const DOTPROD: [QuantGemv; 6] = legacy_gemvs!(dotprod);

/// The matmul over prepared activations of weight type `ty` at `level`: the dotprod kernels
/// where `level` allows them and the CPU has them, else the plain-NEON ones (`smull` + pairwise
/// adds for the dots, e.g. cortex-a72).
pub(crate) fn gemv_for(ty: GgmlType, level: Isa) -> Option<QuantGemv> {
    use GgmlType as T;
    if level == Isa::Portable || !level.allows(Isa::Neon) || !Isa::Neon.is_available() {
        return None;
    }
    let sdot = level.allows(Isa::Dotprod) && Isa::Dotprod.is_available();
    let (legacy, k, k23) = if sdot {
        (&DOTPROD, &super::gemv_k::DOTPROD, &super::gemv_k23::DOTPROD)
    } else {
        (&NEON, &super::gemv_k::NEON, &super::gemv_k23::NEON)
    };
    Some(match ty {
        T::Q4_0 => legacy[0],
        T::Q4_1 => legacy[1],
        T::Q8_0 => legacy[2],
        T::Q5_0 => legacy[3],
        T::Q5_1 => legacy[4],
        T::IQ4_NL => legacy[5],
        T::Q2_K => k23[0],
        T::Q3_K => k23[1],
        T::Q4_K => k[0],
        T::Q5_K => k[1],
        T::Q6_K => k[2],
        T::IQ4_XS => k[3],
        _ => return None,
    })
}
