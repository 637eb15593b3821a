//! aarch64 dot kernels of the 4-bit non-linear formats (IQ4_NL · Q8_0, IQ4_XS · Q8_K) at the
//! NEON and dotprod levels: `tbl` turns 16 nibble indices into their signed levels
//! ([`KVALUES`] fits one register), then the level's exact i8·i8 dot (`smull` + pairwise adds,
//! or `sdot`). IQ4_XS's 6-bit sub-block scales multiply the sub-block sums in i32; only the
//! float summation order differs from the portable kernels (docs/QUANT.md).

use core::arch::aarch64::*;

use crate::quant::ggml::iq4::{xs_sub_scale, KVALUES};
use crate::quant::GgmlType;

/// Bytes of an IQ4_NL block, a Q8_0 block, an IQ4_XS super-block and a Q8_K block.
const NL_BYTES: usize = GgmlType::IQ4_NL.block_bytes();
const Q8_0_BYTES: usize = GgmlType::Q8_0.block_bytes();
const XS_BYTES: usize = GgmlType::IQ4_XS.block_bytes();
const Q8_K_BYTES: usize = GgmlType::Q8_K.block_bytes();

#[inline]
unsafe fn f16_ptr(p: *const u8) -> f32 {
    half::f16::from_bits((p as *const u16).read_unaligned()).to_f32()
}

/// The two kernels over one level's `dot(acc, x, y)` (exact i8·i8, 4 products per lane).
macro_rules! iq4_kernels {
    ($feat:literal, $dot:path) => {
        /// Σ level(q)·a over the 32 elements of one block: `qs` 16 index bytes, `y` 32 i8.
        #[target_feature(enable = $feat)]
        #[inline]
        unsafe fn block(t: int8x16_t, qs: *const u8, y: *const u8) -> int32x4_t {
            let q = vld1q_u8(qs);
            let lo = vqtbl1q_s8(t, vandq_u8(q, vdupq_n_u8(0x0F)));
            let hi = vqtbl1q_s8(t, vshrq_n_u8(q, 4));
            let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y as *const i8));
            $dot(s, hi, vld1q_s8(y.add(16) as *const i8))
        }

        /// IQ4_NL · Q8_0.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::aarch64) unsafe fn iq4_nl_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / NL_BYTES).min(a.len() / Q8_0_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let t = vld1q_s8(KVALUES.as_ptr());
            let mut acc = vdupq_n_f32(0.0);
            for i in 0..nb {
                let (x, y) = (wp.add(i * NL_BYTES), ap.add(i * Q8_0_BYTES));
                let s = block(t, x.add(2), y.add(2));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), f16_ptr(x) * f16_ptr(y));
            }
            vaddvq_f32(acc)
        }

        /// IQ4_XS · Q8_K.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::aarch64) unsafe fn iq4_xs_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / XS_BYTES).min(a.len() / Q8_K_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let t = vld1q_s8(KVALUES.as_ptr());
            let mut acc = vdupq_n_f32(0.0);
            for i in 0..nb {
                let (x, y) = (wp.add(i * XS_BYTES), ap.add(i * Q8_K_BYTES));
                let h = u16::from_le_bytes([*x.add(2), *x.add(3)]);
                let mut sumi = vdupq_n_s32(0);
                for s in 0..8 {
                    let ls = xs_sub_scale(h, *x.add(4 + s / 2), s) - 32;
                    sumi = vmlaq_n_s32(sumi, block(t, x.add(8 + 16 * s), y.add(4 + 32 * s)), ls);
                }
                let dy = f32::from_le_bytes([*y, *y.add(1), *y.add(2), *y.add(3)]);
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(sumi), f16_ptr(x) * dy);
            }
            vaddvq_f32(acc)
        }
    };
}

pub(super) mod neon {
    use super::*;
    iq4_kernels!("neon", crate::cpu::arch::aarch64::quant::neon::dot);
}

pub(super) mod dotprod {
    use super::*;
    iq4_kernels!("neon,dotprod", crate::cpu::arch::aarch64::quant::dotprod::dot);
}
