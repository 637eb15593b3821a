//! aarch64 dot kernels of the GGUF ternary formats (TQ1_0 · Q8_K, TQ2_0 · Q8_K) at the NEON and
//! dotprod levels. 16 weights at a time are decoded to `t ∈ {−1, 0, 1}` as signed bytes (TQ2_0:
//! the 2-bit code minus one, the unused code 3 giving 2 as in the portable kernel) and dotted
//! exactly with the i8 activations (`smull` + pairwise adds, or `sdot`).
//!
//! TQ1_0's base-3 fraction bytes give trit `n` as `((q·3ⁿ mod 256)·3) >> 8`: `q·3ⁿ` by the
//! wrapping byte multiply `mul`, and `(q·3) >> 8` is `[q ≥ 86] + [q ≥ 171]`, so with the
//! compare masks (−1/0) `t = ¬(m₁ + m₂)`. Each block's integer sum is reduced to one i32 and
//! scaled and accumulated in the portable kernel's order: the result equals the portable one
//! bit for bit.

use core::arch::aarch64::*;

use crate::cpu::isa::Isa;
use crate::quant::GgmlType;

const TQ1_BYTES: usize = GgmlType::TQ1_0.block_bytes();
const TQ2_BYTES: usize = GgmlType::TQ2_0.block_bytes();
const Q8_K_BYTES: usize = GgmlType::Q8_K.block_bytes();

/// 3ⁿ for byte 4·n + j of TQ1_0's `qh` broadcast (trit n of `qh[j]`).
const QH_POW3: [u8; 16] = [1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27];

#[inline]
unsafe fn f16_ptr(p: *const u8) -> f32 {
    half::f16::from_bits((p as *const u16).read_unaligned()).to_f32()
}

#[inline]
unsafe fn f32_ptr(p: *const u8) -> f32 {
    f32::from_le_bytes([*p, *p.add(1), *p.add(2), *p.add(3)])
}

/// The trit minus one (−1/0/1) of each fraction byte `q` (already multiplied by 3ⁿ).
#[target_feature(enable = "neon")]
#[inline]
unsafe fn trit(q: uint8x16_t) -> int8x16_t {
    let m = vaddq_u8(vcgeq_u8(q, vdupq_n_u8(86)), vcgeq_u8(q, vdupq_n_u8(171)));
    vreinterpretq_s8_u8(vmvnq_u8(m))
}

macro_rules! tq_kernels {
    ($feat:literal, $dot:path) => {
        /// TQ2_0 · Q8_K.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::aarch64) unsafe fn tq2_0_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / TQ2_BYTES).min(a.len() / Q8_K_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let (three, one) = (vdupq_n_u8(3), vdupq_n_s8(1));
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (wp.add(i * TQ2_BYTES), ap.add(i * Q8_K_BYTES));
                let mut s = vdupq_n_s32(0);
                // Bytes 16·k..16·k+16; bits 2l..2l+2 of byte m of half h = k/2 are element
                // 128·h + 32·l + m.
                for k in 0..4 {
                    let q = vld1q_u8(x.add(16 * k));
                    let yk = y.add(4 + 128 * (k / 2) + 16 * (k % 2));
                    let c = [q, vshrq_n_u8(q, 2), vshrq_n_u8(q, 4), vshrq_n_u8(q, 6)];
                    for (l, c) in c.into_iter().enumerate() {
                        let t = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(c, three)), one);
                        s = $dot(s, t, vld1q_s8(yk.add(32 * l) as *const i8));
                    }
                }
                sumf += vaddvq_s32(s) as f32 * (f16_ptr(x.add(64)) * f32_ptr(y));
            }
            sumf
        }

        /// TQ1_0 · Q8_K.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::aarch64) unsafe fn tq1_0_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / TQ1_BYTES).min(a.len() / Q8_K_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let pow_h = vld1q_u8(QH_POW3.as_ptr());
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (wp.add(i * TQ1_BYTES), ap.add(i * Q8_K_BYTES));
                let yq = y.add(4);
                let mut s = vdupq_n_s32(0);
                // Bytes 0..32, trit n: elements 32·n + m; bytes 32..48: 160 + 16·n + m.
                let (mut q0, mut q1, mut q2) = (vld1q_u8(x), vld1q_u8(x.add(16)), vld1q_u8(x.add(32)));
                for n in 0..5 {
                    s = $dot(s, trit(q0), vld1q_s8(yq.add(32 * n) as *const i8));
                    s = $dot(s, trit(q1), vld1q_s8(yq.add(32 * n + 16) as *const i8));
                    s = $dot(s, trit(q2), vld1q_s8(yq.add(160 + 16 * n) as *const i8));
                    q0 = vmulq_u8(q0, vdupq_n_u8(3));
                    q1 = vmulq_u8(q1, vdupq_n_u8(3));
                    q2 = vmulq_u8(q2, vdupq_n_u8(3));
                }
                // qh: trit n of byte j is element 240 + 4·n + j.
                let h = vreinterpretq_u8_u32(vdupq_n_u32((x.add(48) as *const u32).read_unaligned()));
                s = $dot(s, trit(vmulq_u8(h, pow_h)), vld1q_s8(yq.add(240) as *const i8));
                sumf += vaddvq_s32(s) as f32 * (f16_ptr(x.add(52)) * f32_ptr(y));
            }
            sumf
        }
    };
}

pub(super) mod neon {
    use super::*;
    tq_kernels!("neon", crate::cpu::arch::aarch64::quant::neon::dot);
}

pub(super) mod dotprod {
    use super::*;
    tq_kernels!("neon,dotprod", crate::cpu::arch::aarch64::quant::dotprod::dot);
}

macro_rules! safe {
    ($name:ident, $inner:path) => {
        fn $name(w: &[u8], a: &[u8]) -> f32 {
            // SAFETY: handed out only by `dot_for`, which checks the CPU for the features
            // `$inner` is compiled for; it reads only the whole blocks both slices hold.
            unsafe { $inner(w, a) }
        }
    };
}
safe!(tq1_0_neon, neon::tq1_0_q8_k);
safe!(tq2_0_neon, neon::tq2_0_q8_k);
safe!(tq1_0_sdot, dotprod::tq1_0_q8_k);
safe!(tq2_0_sdot, dotprod::tq2_0_q8_k);

/// Whether `level` runs a ternary kernel on this CPU: None if not, else whether the `sdot`
/// one (same level rules as `quant::dot_for`).
fn sdot_at(level: Isa) -> Option<bool> {
    if level == Isa::Portable || !level.allows(Isa::Neon) || !Isa::Neon.is_available() {
        return None;
    }
    Some(level.allows(Isa::Dotprod) && Isa::Dotprod.is_available())
}

/// The ternary dot kernel of `ty` for `level`, if the CPU runs it.
pub(crate) fn dot_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantDotFn> {
    match (ty, sdot_at(level)?) {
        (GgmlType::TQ1_0, false) => Some(tq1_0_neon),
        (GgmlType::TQ2_0, false) => Some(tq2_0_neon),
        (GgmlType::TQ1_0, true) => Some(tq1_0_sdot),
        (GgmlType::TQ2_0, true) => Some(tq2_0_sdot),
        _ => None,
    }
}

/// The ternary matmul of `ty` for `level` (the dot kernel per pair, the panel added by
/// `arch::quant_gemv`; see `arch/dot_gemv.rs`), if the CPU runs it.
pub(crate) fn gemv_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantGemv> {
    use crate::cpu::arch::dot_gemv::{dot_gemv, prepare_q8_k_raw as prep};
    match (ty, sdot_at(level)?) {
        (GgmlType::TQ1_0, false) => Some(dot_gemv!(prep, tq1_0_neon)),
        (GgmlType::TQ2_0, false) => Some(dot_gemv!(prep, tq2_0_neon)),
        (GgmlType::TQ1_0, true) => Some(dot_gemv!(prep, tq1_0_sdot)),
        (GgmlType::TQ2_0, true) => Some(dot_gemv!(prep, tq2_0_sdot)),
        _ => None,
    }
}
