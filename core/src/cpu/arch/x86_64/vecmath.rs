//! x86-64 vector math kernels (AVX2 + FMA on 8 lanes, AVX-512 on 16): exp, sigmoid and the
//! row passes of softmax and the norms. The kernel bodies are written once (`kernels!` in
//! `cpu/vecmath.rs`) over a handful of primitives that each module below defines for its
//! register width; tails go through masked loads and stores, so an element's result does not
//! depend on where it sits in the row.
//!
//! Every function is `#[target_feature]`: the family table only hands a module's kernels out
//! when `isa()` allows that level, which is what makes calling them sound.

use super::VecKernels;

/// The AVX2 + FMA kernel set.
pub(crate) static AVX2: VecKernels = super::kernel_table!(avx2);
/// The AVX-512 kernel set.
pub(crate) static AVX512: VecKernels = super::kernel_table!(avx512);

mod avx2 {
    use crate::cpu::vecmath::consts::*;
    use core::arch::x86_64::*;

    pub(super) type V = __m256;
    pub(super) const L: usize = 8;

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn splat(v: f32) -> V {
        _mm256_set1_ps(v)
    }
    /// Lanes `< n` all ones, the rest zero (as the sign bits `maskload` reads).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn first(n: usize) -> __m256i {
        _mm256_cmpgt_epi32(_mm256_set1_epi32(n as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn ld(p: *const f32) -> V {
        _mm256_loadu_ps(p)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn st(p: *mut f32, v: V) {
        _mm256_storeu_ps(p, v)
    }
    /// The first `n` (< L) floats at `p`, zeros after; nothing past them is read.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn ld_n(p: *const f32, n: usize) -> V {
        _mm256_maskload_ps(p, first(n))
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn st_n(p: *mut f32, v: V, n: usize) {
        _mm256_maskstore_ps(p, first(n), v)
    }
    /// `v` with lanes `≥ n` zeroed.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn keep_n(v: V, n: usize) -> V {
        _mm256_and_ps(v, _mm256_castsi256_ps(first(n)))
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn add(a: V, b: V) -> V {
        _mm256_add_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn sub(a: V, b: V) -> V {
        _mm256_sub_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mul(a: V, b: V) -> V {
        _mm256_mul_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn div(a: V, b: V) -> V {
        _mm256_div_ps(a, b)
    }
    /// Lane-wise max; a NaN in `b` is kept (`maxps` returns its second operand on NaN).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn max(a: V, b: V) -> V {
        _mm256_max_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn hsum(v: V) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn hmax(v: V) -> f32 {
        let s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_max_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)))
    }
    /// `e^x`: see `cpu/vecmath.rs` for the method and its error bound.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn exp_v(x: V) -> V {
        // max(LO, x) then min(HI, ·) keep a NaN x (second operand) and clamp ±inf.
        let x = _mm256_min_ps(splat(EXP_HI), _mm256_max_ps(splat(EXP_LO), x));
        let t = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(x, splat(LOG2_E)));
        let r = _mm256_fnmadd_ps(t, splat(LN2_HI), x);
        let r = _mm256_fnmadd_ps(t, splat(LN2_LO), r);
        let mut p = splat(EXP_POLY[0]);
        for &c in &EXP_POLY[1..] {
            p = _mm256_fmadd_ps(p, r, splat(c));
        }
        // 2^n as two factors 2^(n/2)·2^(n-n/2), each a normal float over the whole clamp range.
        let n = _mm256_cvtps_epi32(t);
        let n1 = _mm256_srai_epi32::<1>(n);
        let n2 = _mm256_sub_epi32(n, n1);
        let bias = _mm256_set1_epi32(127);
        let s1 = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(n1, bias)));
        let s2 = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(n2, bias)));
        _mm256_mul_ps(_mm256_mul_ps(p, s1), s2)
    }

    crate::cpu::vecmath::kernels!("avx2,fma");
}

mod avx512 {
    use crate::cpu::vecmath::consts::*;
    use core::arch::x86_64::*;

    pub(super) type V = __m512;
    pub(super) const L: usize = 16;

    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn splat(v: f32) -> V {
        _mm512_set1_ps(v)
    }
    #[inline(always)]
    fn first(n: usize) -> __mmask16 {
        ((1u32 << n) - 1) as __mmask16
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn ld(p: *const f32) -> V {
        _mm512_loadu_ps(p)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn st(p: *mut f32, v: V) {
        _mm512_storeu_ps(p, v)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn ld_n(p: *const f32, n: usize) -> V {
        _mm512_maskz_loadu_ps(first(n), p)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn st_n(p: *mut f32, v: V, n: usize) {
        _mm512_mask_storeu_ps(p, first(n), v)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn keep_n(v: V, n: usize) -> V {
        _mm512_maskz_mov_ps(first(n), v)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn add(a: V, b: V) -> V {
        _mm512_add_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn sub(a: V, b: V) -> V {
        _mm512_sub_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn mul(a: V, b: V) -> V {
        _mm512_mul_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn div(a: V, b: V) -> V {
        _mm512_div_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn max(a: V, b: V) -> V {
        _mm512_max_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn hsum(v: V) -> f32 {
        let h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v))));
        let s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps::<1>(h));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn hmax(v: V) -> f32 {
        let h = _mm256_max_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v))));
        let s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps::<1>(h));
        let s = _mm_max_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)))
    }
    /// `e^x`, the same steps as the AVX2 `exp_v` on 16 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn exp_v(x: V) -> V {
        let x = _mm512_min_ps(splat(EXP_HI), _mm512_max_ps(splat(EXP_LO), x));
        let t = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm512_mul_ps(x, splat(LOG2_E)));
        let r = _mm512_fnmadd_ps(t, splat(LN2_HI), x);
        let r = _mm512_fnmadd_ps(t, splat(LN2_LO), r);
        let mut p = splat(EXP_POLY[0]);
        for &c in &EXP_POLY[1..] {
            p = _mm512_fmadd_ps(p, r, splat(c));
        }
        let n = _mm512_cvtps_epi32(t);
        let n1 = _mm512_srai_epi32::<1>(n);
        let n2 = _mm512_sub_epi32(n, n1);
        let bias = _mm512_set1_epi32(127);
        let s1 = _mm512_castsi512_ps(_mm512_slli_epi32::<23>(_mm512_add_epi32(n1, bias)));
        let s2 = _mm512_castsi512_ps(_mm512_slli_epi32::<23>(_mm512_add_epi32(n2, bias)));
        _mm512_mul_ps(_mm512_mul_ps(p, s1), s2)
    }

    crate::cpu::vecmath::kernels!("avx512f,avx2,fma");
}
