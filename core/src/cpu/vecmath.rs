//! Vectorised f32 math for the memory-bound kernels: `exp`, `sigmoid`, and the row passes of
//! softmax, `rms_norm` and `layer_norm`. Per-ISA code sits in `arch/{x86_64,aarch64}/vecmath.rs`
//! (AVX2 + FMA, AVX-512, NEON); each kernel body is written once here ([`kernels!`]) over a
//! few register primitives each arch module defines. The functions below pick the active
//! level's kernels and return `false` where it has none: the caller then runs its own
//! portable code, which stays the reference the SIMD kernels are tested against.
//!
//! # exp
//! `x` is clamped to [−104, 89] (NaN passes through; beyond the clamp the result is already 0
//! or +inf), split as `x = n·ln2 + r` with `n = round(x·log2 e)` and `|r| ≤ ln2/2` (Cody–Waite:
//! ln2 in a short high part, exact times `n`, plus a low part, both through FMA), `e^r` is the
//! degree-7 Taylor polynomial (truncation < 0.07 ulp) in Horner form, and `2^n` is applied as
//! two exact power-of-two factors so subnormal results round once. Measured against
//! `libm::expf` over every 61st f32 bit pattern and the edges (tests below): at most
//! [`EXP_MAX_ULP`] ulps apart, identical at ±inf, NaN, overflow and underflow.

// Targets with no SIMD arch module (thumbv7em firmware) use none of the kernel builders:
// every entry point returns `false` there and the portable code runs.
#![cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(unused_macros, unused_imports, dead_code))]

use super::isa::Isa;

/// The largest difference, in ulps, between the SIMD `exp` and `libm::expf` that the tests
/// accept: 1, the maximum measured on the sweeps below (see docs/CPU-KERNELS.md).
pub const EXP_MAX_ULP: u32 = 1;

/// Constants the per-ISA `exp` shares.
pub(crate) mod consts {
    /// Below this `e^x` rounds to 0 (2⁻¹⁵⁰·e^0.03 < half the smallest subnormal).
    pub const EXP_LO: f32 = -104.0;
    /// Above ln(f32::MAX) ≈ 88.72: the result overflows to +inf either way.
    pub const EXP_HI: f32 = 89.0;
    pub const LOG2_E: f32 = core::f32::consts::LOG2_E;
    /// ln 2 with its low 12 mantissa bits zero, so `n·LN2_HI` is exact for |n| < 2¹².
    pub const LN2_HI: f32 = 0.693_145_751_953_125;
    /// ln 2 − LN2_HI.
    pub const LN2_LO: f32 = 1.428_606_820_309_417_2e-6;
    /// 1/k! for k = 7 down to 0 (Horner order).
    pub const EXP_POLY: [f32; 8] = [1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0];
}

/// One level's kernels. Pointers: `x`/`w`/`b` readable and `y` writable for `n` floats;
/// `y` may equal `x` (in place) but not partly overlap it.
pub(crate) struct VecKernels {
    /// `y = e^x`.
    pub exp: unsafe fn(x: *const f32, y: *mut f32, n: usize),
    /// `y = 1 / (1 + e^−x)`.
    pub sigmoid: unsafe fn(x: *const f32, y: *mut f32, n: usize),
    /// `max x` (−inf for n = 0; a NaN may or may not win).
    pub max: unsafe fn(x: *const f32, n: usize) -> f32,
    /// `y = e^(x − m)`, returning `Σ y`.
    pub exp_sub_sum: unsafe fn(x: *const f32, y: *mut f32, n: usize, m: f32) -> f32,
    /// `y *= s`.
    pub scale: unsafe fn(y: *mut f32, n: usize, s: f32),
    /// `y = (x·s)·w` (two roundings, as rms_norm's definition).
    pub mul2: unsafe fn(x: *const f32, s: f32, w: *const f32, y: *mut f32, n: usize),
    /// `y = ((x − mu)·s)·w + b` (layer_norm's definition, no FMA).
    pub norm_affine: unsafe fn(x: *const f32, mu: f32, s: f32, w: *const f32, b: *const f32, y: *mut f32, n: usize),
    /// Rope's rotation of `n` pairs `(x1, x2)` by `(c, s)`: `y1 = x1·c − x2·s`,
    /// `y2 = x1·s + x2·c`, each product rounded (no FMA, as the scalar definition).
    pub rotate: unsafe fn(x1: *const f32, x2: *const f32, c: *const f32, s: *const f32, y1: *mut f32, y2: *mut f32, n: usize),
}

/// The kernel bodies, expanded inside each ISA module after its primitives (`V`, `L`, `ld`,
/// `st`, `ld_n`, `st_n`, `keep_n`, `splat`, `add`, `sub`, `mul`, `div`, `max`, `hsum`,
/// `hmax`, `exp_v`), with that module's target features.
macro_rules! kernels {
    ($feat:literal) => {
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn exp(x: *const f32, y: *mut f32, n: usize) {
            let mut i = 0;
            while i + L <= n {
                st(y.add(i), exp_v(ld(x.add(i))));
                i += L;
            }
            if i < n {
                st_n(y.add(i), exp_v(ld_n(x.add(i), n - i)), n - i);
            }
        }

        #[target_feature(enable = $feat)]
        unsafe fn sigmoid_v(v: V) -> V {
            let one = splat(1.0);
            div(one, add(one, exp_v(sub(splat(0.0), v))))
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn sigmoid(x: *const f32, y: *mut f32, n: usize) {
            let mut i = 0;
            while i + L <= n {
                st(y.add(i), sigmoid_v(ld(x.add(i))));
                i += L;
            }
            if i < n {
                st_n(y.add(i), sigmoid_v(ld_n(x.add(i), n - i)), n - i);
            }
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn max_of(x: *const f32, n: usize) -> f32 {
            let mut m = splat(f32::NEG_INFINITY);
            let mut i = 0;
            while i + L <= n {
                m = max(m, ld(x.add(i)));
                i += L;
            }
            let mut r = hmax(m);
            while i < n {
                let v = *x.add(i);
                if v > r || v.is_nan() {
                    r = v;
                }
                i += 1;
            }
            r
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn exp_sub_sum(x: *const f32, y: *mut f32, n: usize, m: f32) -> f32 {
            let mv = splat(m);
            let mut acc = splat(0.0);
            let mut i = 0;
            while i + L <= n {
                let e = exp_v(sub(ld(x.add(i)), mv));
                st(y.add(i), e);
                acc = add(acc, e);
                i += L;
            }
            if i < n {
                let e = exp_v(sub(ld_n(x.add(i), n - i), mv));
                st_n(y.add(i), e, n - i);
                acc = add(acc, keep_n(e, n - i));
            }
            hsum(acc)
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn scale(y: *mut f32, n: usize, s: f32) {
            let sv = splat(s);
            let mut i = 0;
            while i + L <= n {
                st(y.add(i), mul(ld(y.add(i)), sv));
                i += L;
            }
            if i < n {
                st_n(y.add(i), mul(ld_n(y.add(i), n - i), sv), n - i);
            }
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn mul2(x: *const f32, s: f32, w: *const f32, y: *mut f32, n: usize) {
            let sv = splat(s);
            let mut i = 0;
            while i + L <= n {
                st(y.add(i), mul(mul(ld(x.add(i)), sv), ld(w.add(i))));
                i += L;
            }
            if i < n {
                let k = n - i;
                st_n(y.add(i), mul(mul(ld_n(x.add(i), k), sv), ld_n(w.add(i), k)), k);
            }
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn rotate(x1: *const f32, x2: *const f32, c: *const f32, s: *const f32, y1: *mut f32, y2: *mut f32, n: usize) {
            let mut i = 0;
            while i + L <= n {
                let (a, b, cv, sv) = (ld(x1.add(i)), ld(x2.add(i)), ld(c.add(i)), ld(s.add(i)));
                st(y1.add(i), sub(mul(a, cv), mul(b, sv)));
                st(y2.add(i), add(mul(a, sv), mul(b, cv)));
                i += L;
            }
            if i < n {
                let k = n - i;
                let (a, b) = (ld_n(x1.add(i), k), ld_n(x2.add(i), k));
                let (cv, sv) = (ld_n(c.add(i), k), ld_n(s.add(i), k));
                st_n(y1.add(i), sub(mul(a, cv), mul(b, sv)), k);
                st_n(y2.add(i), add(mul(a, sv), mul(b, cv)), k);
            }
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn norm_affine(x: *const f32, mu: f32, s: f32, w: *const f32, b: *const f32, y: *mut f32, n: usize) {
            let (mv, sv) = (splat(mu), splat(s));
            let mut i = 0;
            while i + L <= n {
                let t = mul(mul(sub(ld(x.add(i)), mv), sv), ld(w.add(i)));
                st(y.add(i), add(t, ld(b.add(i))));
                i += L;
            }
            if i < n {
                let k = n - i;
                let t = mul(mul(sub(ld_n(x.add(i), k), mv), sv), ld_n(w.add(i), k));
                st_n(y.add(i), add(t, ld_n(b.add(i), k)), k);
            }
        }
    };
}
pub(crate) use kernels;

/// A [`VecKernels`] table of the module `$m`'s kernels.
macro_rules! kernel_table {
    ($m:ident) => {
        VecKernels {
            exp: $m::exp,
            sigmoid: $m::sigmoid,
            max: $m::max_of,
            exp_sub_sum: $m::exp_sub_sum,
            scale: $m::scale,
            mul2: $m::mul2,
            norm_affine: $m::norm_affine,
            rotate: $m::rotate,
        }
    };
}
pub(crate) use kernel_table;

#[cfg(target_arch = "x86_64")]
#[path = "arch/x86_64/vecmath.rs"]
mod x86;

#[cfg(target_arch = "aarch64")]
#[path = "arch/aarch64/vecmath.rs"]
mod arm;

/// The kernels `level` runs, if it has SIMD ones.
pub(crate) fn simd(level: Isa) -> Option<&'static VecKernels> {
    super::arch::float_table!(level, x86::AVX512, x86::AVX2, arm::NEON)
}

/// Runs an elementwise kernel on `y` in place (`x` = None) or from `x` (same length).
fn map(k: unsafe fn(*const f32, *mut f32, usize), y: &mut [f32], x: Option<&[f32]>) {
    let n = x.map_or(y.len(), |x| x.len().min(y.len()));
    let src = x.map_or(y.as_ptr(), |x| x.as_ptr());
    // SAFETY: both hold n floats; in place, src is y itself (the kernels allow exact aliasing);
    // `simd` only returns kernels this CPU runs.
    unsafe { k(src, y.as_mut_ptr(), n) }
}

/// `y = e^x` (in place when `x` is None) at `level`; false if it has no SIMD kernel.
pub(crate) fn exp(level: Isa, y: &mut [f32], x: Option<&[f32]>) -> bool {
    simd(level).map(|k| map(k.exp, y, x)).is_some()
}

/// `y = 1 / (1 + e^−x)` at `level`; false if it has no SIMD kernel.
pub(crate) fn sigmoid(level: Isa, y: &mut [f32], x: Option<&[f32]>) -> bool {
    simd(level).map(|k| map(k.sigmoid, y, x)).is_some()
}

/// Softmax of the row `y` in place: `e^(y − max) / Σ`. False if `level` has no SIMD kernel.
/// A NaN anywhere makes the whole row NaN, as the portable fold does.
pub(crate) fn softmax_in_place(level: Isa, y: &mut [f32]) -> bool {
    let Some(k) = simd(level) else { return false };
    let (p, n) = (y.as_mut_ptr(), y.len());
    // SAFETY: y holds n floats; exp_sub_sum runs in place.
    unsafe {
        let m = (k.max)(p, n);
        let total = (k.exp_sub_sum)(p, p, n, m);
        (k.scale)(p, n, 1.0 / total);
    }
    true
}

/// `y = softmax(x)` for one row (the shorter length of the two), reading `x` twice and writing
/// `y` twice: no copy first. False if `level` has no SIMD kernel.
pub(crate) fn softmax_row(level: Isa, x: &[f32], y: &mut [f32]) -> bool {
    let Some(k) = simd(level) else { return false };
    let n = x.len().min(y.len());
    // SAFETY: x and y hold n floats each and do not overlap (distinct slices).
    unsafe {
        let m = (k.max)(x.as_ptr(), n);
        let total = (k.exp_sub_sum)(x.as_ptr(), y.as_mut_ptr(), n, m);
        (k.scale)(y.as_mut_ptr(), n, 1.0 / total);
    }
    true
}

/// Rope's rotation of the pairs `(x1[j], x2[j])` by `(c[j], s[j])` into `(y1[j], y2[j])`
/// (the shortest length of the six). False if `level` has no SIMD kernel.
pub(crate) fn rotate(level: Isa, x1: &[f32], x2: &[f32], c: &[f32], s: &[f32], y1: &mut [f32], y2: &mut [f32]) -> bool {
    let Some(k) = simd(level) else { return false };
    let n = x1.len().min(x2.len()).min(c.len()).min(s.len()).min(y1.len()).min(y2.len());
    // SAFETY: every slice holds n floats; y1 and y2 are distinct output slices.
    unsafe { (k.rotate)(x1.as_ptr(), x2.as_ptr(), c.as_ptr(), s.as_ptr(), y1.as_mut_ptr(), y2.as_mut_ptr(), n) };
    true
}

/// One row of `rms_norm`: `y = (x · 1/√(Σx²·inv_d + eps)) · w`. False if `level` has no SIMD
/// kernel. Panics-free: lengths are the shortest of `x`, `w`, `y`.
pub(crate) fn rms_norm_row(level: Isa, x: &[f32], w: &[f32], eps: f32, inv_d: f32, y: &mut [f32]) -> bool {
    let Some(k) = simd(level) else { return false };
    let n = x.len().min(w.len()).min(y.len());
    // SAFETY: every pointer covers n floats.
    unsafe {
        // The sums in `mx.sum`'s order (MLX computes fast norms as their composite definitions,
        // bit for bit): only the elementwise passes are SIMD here.
        let ss = super::reduce::lanes_sum_map(&x[..n], 0.0f32, |v| v * v);
        let inv = 1.0 / libm::sqrtf(ss * inv_d + eps);
        (k.mul2)(x.as_ptr(), inv, w.as_ptr(), y.as_mut_ptr(), n);
    }
    true
}

/// One row of `layer_norm`: `y = ((x − μ) · 1/√(σ² + eps)) · w + b` with μ and σ² as means
/// (`Σ · inv_d`). False if `level` has no SIMD kernel.
pub(crate) fn layer_norm_row(level: Isa, x: &[f32], w: &[f32], b: &[f32], eps: f32, inv_d: f32, y: &mut [f32]) -> bool {
    let Some(k) = simd(level) else { return false };
    let n = x.len().min(w.len()).min(b.len()).min(y.len());
    // SAFETY: every pointer covers n floats.
    unsafe {
        // Sums in `mx.sum`'s order, as in `rms_norm_row`.
        let mu = super::reduce::lanes_sum_map(&x[..n], 0.0f32, |v| v) * inv_d;
        let var = super::reduce::lanes_sum_map(&x[..n], 0.0f32, |v| (v - mu) * (v - mu)) * inv_d;
        let inv = 1.0 / libm::sqrtf(var + eps);
        (k.norm_affine)(x.as_ptr(), mu, inv, w.as_ptr(), b.as_ptr(), y.as_mut_ptr(), n);
    }
    true
}

#[cfg(test)]
mod tests;
