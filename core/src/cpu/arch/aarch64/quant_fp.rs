//! aarch64 dot kernel of GGUF MXFP4 · Q8_0 at the NEON and dotprod levels: `tbl` turns 16
//! nibble indices into the doubled E2M1 levels of [`KVALUES`] (−12..12, one register), then the
//! level's exact i8·i8 dot (`smull` + pairwise adds, or `sdot`). The block's scale
//! `f16(d_y) · 2^(e−128)` is one float multiply as in the portable kernel; only the float
//! summation order differs (docs/QUANT.md).

use core::arch::aarch64::*;

use crate::cpu::isa::Isa;
use crate::quant::ggml::mxfp4::KVALUES;
use crate::quant::ggml::util::e8m0_to_f32_half;
use crate::quant::GgmlType;

/// Bytes of an MXFP4 block and of a Q8_0 block.
const W_BYTES: usize = GgmlType::MXFP4.block_bytes();
const A_BYTES: usize = GgmlType::Q8_0.block_bytes();

#[inline]
unsafe fn f16_ptr(p: *const u8) -> f32 {
    half::f16::from_bits((p as *const u16).read_unaligned()).to_f32()
}

macro_rules! mxfp4_kernel {
    ($feat:literal, $dot:path) => {
        /// MXFP4 · Q8_0.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::aarch64) unsafe fn mxfp4_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / W_BYTES).min(a.len() / A_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let t = vld1q_s8(KVALUES.as_ptr());
            let mut acc = vdupq_n_f32(0.0);
            for i in 0..nb {
                let (x, y) = (wp.add(i * W_BYTES), ap.add(i * A_BYTES));
                let q = vld1q_u8(x.add(1));
                let lo = vqtbl1q_s8(t, vandq_u8(q, vdupq_n_u8(0x0F)));
                let hi = vqtbl1q_s8(t, vshrq_n_u8(q, 4));
                let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y.add(2) as *const i8));
                let s = $dot(s, hi, vld1q_s8(y.add(18) as *const i8));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), f16_ptr(y) * e8m0_to_f32_half(*x));
            }
            vaddvq_f32(acc)
        }
    };
}

pub(super) mod neon {
    use super::*;
    mxfp4_kernel!("neon", crate::cpu::arch::aarch64::quant::neon::dot);
}

pub(super) mod dotprod {
    use super::*;
    mxfp4_kernel!("neon,dotprod", crate::cpu::arch::aarch64::quant::dotprod::dot);
}

fn mxfp4_neon(w: &[u8], a: &[u8]) -> f32 {
    // SAFETY: handed out only by `dot_for`, after checking NEON; reads whole blocks only.
    unsafe { neon::mxfp4_q8_0(w, a) }
}

fn mxfp4_sdot(w: &[u8], a: &[u8]) -> f32 {
    // SAFETY: handed out only by `dot_for`, after checking the dot-product extension.
    unsafe { dotprod::mxfp4_q8_0(w, a) }
}

/// Whether `level` runs an MXFP4 kernel of this file on this CPU: None if not, else whether
/// the `sdot` one (same level rules as `quant::dot_for`).
fn sdot_at(ty: GgmlType, level: Isa) -> Option<bool> {
    if ty != GgmlType::MXFP4 || level == Isa::Portable || !level.allows(Isa::Neon) || !Isa::Neon.is_available() {
        return None;
    }
    Some(level.allows(Isa::Dotprod) && Isa::Dotprod.is_available())
}

/// The MXFP4 dot kernel for `level`, if the CPU runs it.
pub(crate) fn dot_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantDotFn> {
    Some(if sdot_at(ty, level)? { mxfp4_sdot } else { mxfp4_neon })
}

/// The MXFP4 matmul for `level` (the dot kernel per pair, the panel added by `arch::quant_gemv`;
/// see `arch/dot_gemv.rs`), if the CPU runs it.
pub(crate) fn gemv_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantGemv> {
    use crate::cpu::arch::dot_gemv::{dot_gemv, prepare_q8_0_raw};
    Some(if sdot_at(ty, level)? { dot_gemv!(prepare_q8_0_raw, mxfp4_sdot) } else { dot_gemv!(prepare_q8_0_raw, mxfp4_neon) })
}
