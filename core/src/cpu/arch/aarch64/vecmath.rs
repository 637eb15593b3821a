//! aarch64 NEON vector math kernels on 4 lanes: the `kernels!` bodies of `cpu/vecmath.rs` over
//! the primitives below. NEON has no masked loads, so a tail goes through a 4-float stack
//! buffer: the same vector arithmetic as the body, and nothing past the row is touched.
//! NEON is part of the aarch64 baseline, so these need no run-time feature check.

use super::VecKernels;

/// The NEON kernel set.
pub(crate) static NEON: VecKernels = super::kernel_table!(neon);

mod neon {
    use crate::cpu::vecmath::consts::*;
    use core::arch::aarch64::*;

    pub(super) type V = float32x4_t;
    pub(super) const L: usize = 4;

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn splat(v: f32) -> V {
        vdupq_n_f32(v)
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn ld(p: *const f32) -> V {
        vld1q_f32(p)
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn st(p: *mut f32, v: V) {
        vst1q_f32(p, v)
    }
    /// The first `n` (< L) floats at `p`, zeros after; nothing past them is read.
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn ld_n(p: *const f32, n: usize) -> V {
        let mut b = [0f32; L];
        core::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), n);
        vld1q_f32(b.as_ptr())
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn st_n(p: *mut f32, v: V, n: usize) {
        let mut b = [0f32; L];
        vst1q_f32(b.as_mut_ptr(), v);
        core::ptr::copy_nonoverlapping(b.as_ptr(), p, n);
    }
    /// `v` with lanes `≥ n` zeroed.
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn keep_n(v: V, n: usize) -> V {
        let idx: [u32; 4] = [0, 1, 2, 3];
        let m = vcltq_u32(vld1q_u32(idx.as_ptr()), vdupq_n_u32(n as u32));
        vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), m))
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn add(a: V, b: V) -> V {
        vaddq_f32(a, b)
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn sub(a: V, b: V) -> V {
        vsubq_f32(a, b)
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn mul(a: V, b: V) -> V {
        vmulq_f32(a, b)
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn div(a: V, b: V) -> V {
        vdivq_f32(a, b)
    }
    /// Lane-wise max (`fmax`: NaN wins).
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn max(a: V, b: V) -> V {
        vmaxq_f32(a, b)
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn hsum(v: V) -> f32 {
        vaddvq_f32(v)
    }
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn hmax(v: V) -> f32 {
        vmaxvq_f32(v)
    }
    /// `e^x`, the method of `cpu/vecmath.rs` (as the x86 kernels).
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn exp_v(x: V) -> V {
        // fmax/fmin return NaN for a NaN x, and clamp ±inf.
        let x = vminq_f32(splat(EXP_HI), vmaxq_f32(splat(EXP_LO), x));
        let t = vrndnq_f32(vmulq_f32(x, splat(LOG2_E)));
        // vfmsq(a, b, c) = a − b·c.
        let r = vfmsq_f32(x, t, splat(LN2_HI));
        let r = vfmsq_f32(r, t, splat(LN2_LO));
        let mut p = splat(EXP_POLY[0]);
        for &c in &EXP_POLY[1..] {
            p = vfmaq_f32(splat(c), p, r);
        }
        let n = vcvtq_s32_f32(t);
        let n1 = vshrq_n_s32::<1>(n);
        let n2 = vsubq_s32(n, n1);
        let bias = vdupq_n_s32(127);
        let s1 = vreinterpretq_f32_s32(vshlq_n_s32::<23>(vaddq_s32(n1, bias)));
        let s2 = vreinterpretq_f32_s32(vshlq_n_s32::<23>(vaddq_s32(n2, bias)));
        vmulq_f32(vmulq_f32(p, s1), s2)
    }

    crate::cpu::vecmath::kernels!("neon");
}
