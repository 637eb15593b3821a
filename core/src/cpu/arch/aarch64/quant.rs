//! aarch64 kernels for the GGUF dot products at two levels: NEON (`smull` + pairwise
//! accumulate) and dotprod (`sdot`, through inline asm so the crate's minimum Rust version is
//! kept). SVE machines run the dotprod kernels (SVE includes them; a vector-length-agnostic
//! version is future work).
//!
//! Both levels multiply signed bytes exactly (i8·i8 fits i16, sums go to i32), so the integer
//! part of every block equals the portable one; only the float accumulation order differs
//! (docs/QUANT.md). The activation quantizers stay portable on aarch64 for now.

use core::arch::aarch64::*;
use core::arch::asm;

use crate::cpu::isa::Isa;
use crate::quant::ggml::k_quants::scale_min_k4;
use crate::quant::GgmlType;

type DotFn = fn(&[u8], &[u8]) -> f32;
type QuantizeFn = fn(&[f32], &mut [u8]);

#[inline]
fn f16_at(b: &[u8], at: usize) -> f32 {
    match b.get(at..at + 2) {
        Some(&[x, y]) => half::f16::from_bits(u16::from_le_bytes([x, y])).to_f32(),
        _ => 0.0,
    }
}

#[inline]
fn f32_at(b: &[u8], at: usize) -> f32 {
    match b.get(at..at + 4) {
        Some(&[p, q, r, s]) => f32::from_le_bytes([p, q, r, s]),
        _ => 0.0,
    }
}

#[inline]
fn i16_at(b: &[u8], at: usize) -> i32 {
    match b.get(at..at + 2) {
        Some(&[x, y]) => i16::from_le_bytes([x, y]) as i32,
        _ => 0,
    }
}

/// Byte j of entry b is 0x10 when bit j of b is set (the fifth bits of Q5_0/Q5_1).
const FIFTH: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if b & (1 << j) != 0 {
                t[b] |= 0x10u64 << (8 * j);
            }
            j += 1;
        }
        b += 1;
    }
    t
};

#[target_feature(enable = "neon")]
#[inline]
unsafe fn fifth_bits(qh: u32) -> (uint8x16_t, uint8x16_t) {
    let byte = |k: u32| FIFTH[((qh >> (8 * k)) & 0xFF) as usize];
    (
        vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(byte(0)), vcreate_u64(byte(1)))),
        vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(byte(2)), vcreate_u64(byte(3)))),
    )
}

/// The kernels, written once over `dot`. Bounds: `nb` whole blocks of both rows; every
/// pointer read stays inside them.
macro_rules! kernels {
    ($feat:literal, $dot:ident) => {
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 18).min(a.len() / 34);
            let m4 = vdupq_n_u8(0x0F);
            let eight = vdupq_n_s8(8);
            let mut acc = vdupq_n_f32(0.0);
            for i in 0..nb {
                let (x, y) = (&w[i * 18..], &a[i * 34..]);
                let d = f16_at(x, 0) * f16_at(y, 0);
                let q = vld1q_u8(x.as_ptr().add(2));
                let lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, m4)), eight);
                let hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
                let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y.as_ptr().add(2) as *const i8));
                let s = $dot(s, hi, vld1q_s8(y.as_ptr().add(18) as *const i8));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), d);
            }
            vaddvq_f32(acc)
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_1_q8_1(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 20).min(a.len() / 36);
            let m4 = vdupq_n_u8(0x0F);
            let mut acc = vdupq_n_f32(0.0);
            let mut mins = 0.0f32;
            for i in 0..nb {
                let (x, y) = (&w[i * 20..], &a[i * 36..]);
                let d = f16_at(x, 0) * f16_at(y, 0);
                mins += f16_at(x, 2) * f16_at(y, 2);
                let q = vld1q_u8(x.as_ptr().add(4));
                let lo = vreinterpretq_s8_u8(vandq_u8(q, m4));
                let hi = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
                let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y.as_ptr().add(4) as *const i8));
                let s = $dot(s, hi, vld1q_s8(y.as_ptr().add(20) as *const i8));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), d);
            }
            vaddvq_f32(acc) + mins
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q5_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 22).min(a.len() / 34);
            let m4 = vdupq_n_u8(0x0F);
            let sixteen = vdupq_n_s8(16);
            let mut acc = vdupq_n_f32(0.0);
            for i in 0..nb {
                let (x, y) = (&w[i * 22..], &a[i * 34..]);
                let d = f16_at(x, 0) * f16_at(y, 0);
                let (h0, h1) = fifth_bits(u32::from_le_bytes([x[2], x[3], x[4], x[5]]));
                let q = vld1q_u8(x.as_ptr().add(6));
                let lo = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, m4), h0)), sixteen);
                let hi = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), h1)), sixteen);
                let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y.as_ptr().add(2) as *const i8));
                let s = $dot(s, hi, vld1q_s8(y.as_ptr().add(18) as *const i8));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), d);
            }
            vaddvq_f32(acc)
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q5_1_q8_1(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 24).min(a.len() / 36);
            let m4 = vdupq_n_u8(0x0F);
            let mut acc = vdupq_n_f32(0.0);
            let mut mins = 0.0f32;
            for i in 0..nb {
                let (x, y) = (&w[i * 24..], &a[i * 36..]);
                let d = f16_at(x, 0) * f16_at(y, 0);
                mins += f16_at(x, 2) * f16_at(y, 2);
                let (h0, h1) = fifth_bits(u32::from_le_bytes([x[4], x[5], x[6], x[7]]));
                let q = vld1q_u8(x.as_ptr().add(8));
                let lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, m4), h0));
                let hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), h1));
                let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y.as_ptr().add(4) as *const i8));
                let s = $dot(s, hi, vld1q_s8(y.as_ptr().add(20) as *const i8));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), d);
            }
            vaddvq_f32(acc) + mins
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q8_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 34).min(a.len() / 34);
            let mut acc = vdupq_n_f32(0.0);
            for i in 0..nb {
                let (x, y) = (&w[i * 34..], &a[i * 34..]);
                let d = f16_at(x, 0) * f16_at(y, 0);
                let ld = |p: &[u8], at: usize| vld1q_s8(p.as_ptr().add(at) as *const i8);
                let s = $dot(vdupq_n_s32(0), ld(x, 2), ld(y, 2));
                let s = $dot(s, ld(x, 18), ld(y, 18));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), d);
            }
            vaddvq_f32(acc)
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 144).min(a.len() / 292);
            let m4 = vdupq_n_u8(0x0F);
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (&w[i * 144..], &a[i * 292..]);
                let yd = f32_at(y, 0);
                let mut sc = [0u8; 12];
                sc.copy_from_slice(&x[4..16]);
                let mut isum = 0i32;
                let mut mins = 0i32;
                for h in 0..4 {
                    let q0 = vld1q_u8(x.as_ptr().add(16 + 32 * h));
                    let q1 = vld1q_u8(x.as_ptr().add(32 + 32 * h));
                    let ya = |o: usize| vld1q_s8(y.as_ptr().add(4 + 64 * h + o) as *const i8);
                    let lo = $dot(
                        $dot(vdupq_n_s32(0), vreinterpretq_s8_u8(vandq_u8(q0, m4)), ya(0)),
                        vreinterpretq_s8_u8(vandq_u8(q1, m4)),
                        ya(16),
                    );
                    let hi = $dot(
                        $dot(vdupq_n_s32(0), vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), ya(32)),
                        vreinterpretq_s8_u8(vshrq_n_u8(q1, 4)),
                        ya(48),
                    );
                    let (s0, m0) = scale_min_k4(2 * h, &sc);
                    let (s1, m1) = scale_min_k4(2 * h + 1, &sc);
                    isum += s0 as i32 * vaddvq_s32(lo) + s1 as i32 * vaddvq_s32(hi);
                    let bs = |j: usize| i16_at(y, 260 + 4 * j) + i16_at(y, 262 + 4 * j);
                    mins += m0 as i32 * bs(2 * h) + m1 as i32 * bs(2 * h + 1);
                }
                sumf += f16_at(x, 0) * yd * isum as f32 - f16_at(x, 2) * yd * mins as f32;
            }
            sumf
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q6_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 210).min(a.len() / 292);
            let m4 = vdupq_n_u8(0x0F);
            let m2 = vdupq_n_u8(0x03);
            let off = vdupq_n_s8(32);
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (&w[i * 210..], &a[i * 292..]);
                let d = f16_at(x, 208) * f32_at(y, 0);
                let mut isum = 0i32;
                for h in 0..2 {
                    for half in 0..2 {
                        // 16 columns l = 16·half.. of this 128-element half.
                        let c = 16 * half;
                        let qa = vld1q_u8(x.as_ptr().add(64 * h + c));
                        let qb = vld1q_u8(x.as_ptr().add(64 * h + 32 + c));
                        let qh = vld1q_u8(x.as_ptr().add(128 + 32 * h + c));
                        let parts = [
                            vorrq_u8(vandq_u8(qa, m4), vshlq_n_u8(vandq_u8(qh, m2), 4)),
                            vorrq_u8(vandq_u8(qb, m4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 2), m2), 4)),
                            vorrq_u8(vshrq_n_u8(qa, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 4), m2), 4)),
                            vorrq_u8(vshrq_n_u8(qb, 4), vshlq_n_u8(vshrq_n_u8(qh, 6), 4)),
                        ];
                        for (k, u) in parts.into_iter().enumerate() {
                            let v = vsubq_s8(vreinterpretq_s8_u8(u), off);
                            let yv = vld1q_s8(y.as_ptr().add(4 + 128 * h + 32 * k + c) as *const i8);
                            let s = vaddvq_s32($dot(vdupq_n_s32(0), v, yv));
                            let scale = x[192 + 8 * h + 2 * k + half] as i8 as i32;
                            isum += scale * s;
                        }
                    }
                }
                sumf += d * isum as f32;
            }
            sumf
        }
    };
}

mod neon {
    use super::*;

    /// `acc + Σ of 4 adjacent x[i]·y[i]` per i32 lane, exact for all i8 values.
    #[target_feature(enable = "neon")]
    #[inline]
    pub(super) unsafe fn dot(acc: int32x4_t, x: int8x16_t, y: int8x16_t) -> int32x4_t {
        let lo = vmull_s8(vget_low_s8(x), vget_low_s8(y));
        let hi = vmull_high_s8(x, y);
        // Pairwise adds land the 16 products in 4 lanes (grouping differs from sdot, the
        // lane total is the same integer).
        vaddq_s32(acc, vpaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi)))
    }

    kernels!("neon", dot);
}

mod dotprod {
    use super::*;

    /// `sdot`: `acc + Σ of 4 adjacent x[i]·y[i]` per i32 lane, exact.
    #[target_feature(enable = "neon,dotprod")]
    #[inline]
    pub(super) unsafe fn dot(mut acc: int32x4_t, x: int8x16_t, y: int8x16_t) -> int32x4_t {
        // SAFETY: reached only where the dot-product extension exists (checked by `dot_for`);
        // register-only instruction.
        asm!(
            "sdot {acc:v}.4s, {x:v}.16b, {y:v}.16b",
            acc = inout(vreg) acc,
            x = in(vreg) x,
            y = in(vreg) y,
            options(pure, nomem, nostack, preserves_flags),
        );
        acc
    }

    kernels!("neon,dotprod", dot);
}


macro_rules! safe {
    ($name:ident, $inner:path) => {
        fn $name(w: &[u8], a: &[u8]) -> f32 {
            // SAFETY: reachable only through `dot_for`, which hands this out only when the
            // CPU has the features `$inner` is compiled for; slices are indexed in bounds.
            unsafe { $inner(w, a) }
        }
    };
}
safe!(q4_0_neon, neon::q4_0_q8_0);
safe!(q4_1_neon, neon::q4_1_q8_1);
safe!(q5_0_neon, neon::q5_0_q8_0);
safe!(q5_1_neon, neon::q5_1_q8_1);
safe!(q8_0_neon, neon::q8_0_q8_0);
safe!(q4_k_neon, neon::q4_k_q8_k);
safe!(q6_k_neon, neon::q6_k_q8_k);
safe!(q4_0_sdot, dotprod::q4_0_q8_0);
safe!(q4_1_sdot, dotprod::q4_1_q8_1);
safe!(q5_0_sdot, dotprod::q5_0_q8_0);
safe!(q5_1_sdot, dotprod::q5_1_q8_1);
safe!(q8_0_sdot, dotprod::q8_0_q8_0);
safe!(q4_k_sdot, dotprod::q4_k_q8_k);
safe!(q6_k_sdot, dotprod::q6_k_q8_k);

/// The dot kernel of weight type `ty` for `level`, if this file has one and the CPU runs it.
pub(crate) fn dot_for(ty: GgmlType, level: Isa) -> Option<DotFn> {
    use GgmlType as T;
    if level == Isa::Portable || !level.allows(Isa::Neon) || !Isa::Neon.is_available() {
        return None;
    }
    let sdot = level.allows(Isa::Dotprod) && Isa::Dotprod.is_available();
    Some(match (ty, sdot) {
        (T::Q4_0, false) => q4_0_neon,
        (T::Q4_1, false) => q4_1_neon,
        (T::Q5_0, false) => q5_0_neon,
        (T::Q5_1, false) => q5_1_neon,
        (T::Q8_0, false) => q8_0_neon,
        (T::Q4_K, false) => q4_k_neon,
        (T::Q6_K, false) => q6_k_neon,
        (T::Q4_0, true) => q4_0_sdot,
        (T::Q4_1, true) => q4_1_sdot,
        (T::Q5_0, true) => q5_0_sdot,
        (T::Q5_1, true) => q5_1_sdot,
        (T::Q8_0, true) => q8_0_sdot,
        (T::Q4_K, true) => q4_k_sdot,
        (T::Q6_K, true) => q6_k_sdot,
        _ => return None,
    })
}

/// No aarch64 quantizers yet: the portable ones run.
pub(crate) fn quantize_for(_ty: GgmlType, _level: Isa) -> Option<QuantizeFn> {
    None
}
