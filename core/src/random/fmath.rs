//! The scalar f32 math MLX's Linux CPU backend uses inside its samplers, op for op.
//!
//! * `fmaf`: a true fused multiply-add (`std::fma`). With `std`, [`f32::mul_add`]; without,
//!   `libm::fmaf`. Both are correctly rounded, so they agree bit for bit.
//! * `logf` / `log1pf`: MLX calls the C library's (`std::log` on a float). With `std`, Rust's
//!   [`f32::ln`] / [`f32::ln_1p`] call the same glibc `logf` / `log1pf` on `*-linux-gnu`, so the
//!   results are bit-identical to MLX on Linux. **Without `std`** they fall back to the `libm`
//!   crate, a different algorithm (FreeBSD's), which is not always the same float: measured on
//!   1,048,576 `normal(key(0))` samples, see `docs/RANDOM.md` for the figure.
//! * `exp` and `erf`: MLX's own polynomial versions (`backend/cpu/simd/math.h`), not libm's.

#![allow(clippy::excessive_precision, clippy::approx_constant)] // constants spelled as in MLX's source (same f32s)

/// Fused multiply-add `a * b + c` with one rounding.
#[inline]
pub fn fmaf(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(feature = "std")]
    {
        a.mul_add(b, c)
    }
    #[cfg(not(feature = "std"))]
    {
        libm::fmaf(a, b, c)
    }
}

/// Natural log: glibc `logf` with `std`, `libm::logf` (may differ by an ulp) without.
#[inline]
pub fn logf(x: f32) -> f32 {
    #[cfg(feature = "std")]
    {
        x.ln()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::logf(x)
    }
}

/// `log(1 + x)`: glibc `log1pf` with `std`, `libm::log1pf` (may differ by an ulp) without.
#[inline]
pub fn log1pf(x: f32) -> f32 {
    #[cfg(feature = "std")]
    {
        x.ln_1p()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::log1pf(x)
    }
}

/// Floor (exact in every implementation).
#[inline]
pub fn floorf(x: f32) -> f32 {
    libm::floorf(x)
}

/// MLX's `simd::erfinv` (Giles' single-precision approximation, fused Horner steps).
pub fn erfinv(a: f32) -> f32 {
    erfinv_with_log(a, logf)
}

/// [`erfinv`] with the natural log supplied, to measure how much the choice of `logf` matters.
pub fn erfinv_with_log(a: f32, log: impl Fn(f32) -> f32) -> f32 {
    const L: [f32; 9] = [
        3.036_975_67e-10, 2.932_431_01e-8, 1.221_503_34e-6, 2.841_089_55e-5, 3.935_529_68e-4,
        3.026_988_12e-3, 4.831_857_98e-3, -2.646_461_43e-1, 8.400_164_84e-1,
    ];
    const R: [f32; 10] = [
        5.438_778_32e-9, 1.432_854_48e-7, 1.227_747_93e-6, 1.129_636_26e-7, -5.615_307_60e-5,
        -1.476_976_32e-4, 2.314_686_78e-3, 1.153_925_81e-2, -2.320_154_76e-1, 8.862_268_92e-1,
    ];
    let t = log(fmaf(a, 0.0 - a, 1.0));
    let cs: &[f32] = if t.abs() > 6.125 { &L } else { &R };
    let mut p = cs[0];
    for &c in &cs[1..] {
        p = fmaf(p, t, c);
    }
    a * p
}

/// MLX's `simd::exp`: Cephes-style `2^ipart * poly(fpart)`, flushing below -88 to zero.
pub fn exp(x_init: f32) -> f32 {
    let x = x_init * 1.442_695;
    // `x + 0.5` is a double in MLX (a float Simd plus a double literal), then floored.
    let ipart = libm::floor(f64::from(x) + 0.5) as f32;
    let fpart = x - ipart;
    let mut p = 1.535_336_188_319_500e-4f32;
    p = fmaf(p, fpart, 1.339_887_440_266_574e-3);
    p = fmaf(p, fpart, 9.618_437_357_674_640e-3);
    p = fmaf(p, fpart, 5.550_332_471_162_809e-2);
    p = fmaf(p, fpart, 2.402_264_791_363_012e-1);
    p = fmaf(p, fpart, 6.931_472_028_550_421e-1);
    p = fmaf(p, fpart, 1.0);
    if x_init.is_nan() {
        return x_init;
    }
    if x_init > 88.0 {
        return f32::INFINITY;
    }
    if x_init < -88.0 {
        return 0.0;
    }
    // In range here: ipart is in [-127, 128], so the shift stays inside 32 bits.
    let epart = ((ipart as i32).wrapping_add(127) as u32).wrapping_shl(23);
    f32::from_bits(epart) * p
}

/// MLX's `simd::erf` core in f32 (Abramowitz–Stegun 7.1.26 as in PyTorch), before the sign
/// select: returns `r` such that `erf(x) = x > 0 ? r : -r` (the caller rounds `r` to its dtype
/// first, as MLX does).
pub fn erf_abs(v: f32) -> f32 {
    let t = 1.0 / fmaf(0.327_591_1, v.abs(), 1.0);
    let mut r = fmaf(1.061_405_429, t, -1.453_152_027);
    r = fmaf(r, t, 1.421_413_741);
    r = fmaf(r, t, -0.284_496_736);
    r = fmaf(r, t, 0.254_829_592);
    let e = -exp(-v * v);
    fmaf(e * t, r, 1.0)
}

/// MLX's `erf` on f32.
pub fn erf(v: f32) -> f32 {
    let r = erf_abs(v);
    if v > 0.0 {
        r
    } else {
        -r
    }
}
