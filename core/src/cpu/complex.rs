//! complex64 arithmetic and elementary functions (principal branches, as `std::complex`).

use super::math::Float;
use crate::element::Complex64 as C;

/// a + b
#[inline]
pub fn add(a: C, b: C) -> C {
    C::new(a.re + b.re, a.im + b.im)
}
/// a - b
#[inline]
pub fn sub(a: C, b: C) -> C {
    C::new(a.re - b.re, a.im - b.im)
}
/// a · b
#[inline]
pub fn mul(a: C, b: C) -> C {
    C::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}
/// a / b (a real divisor divides each part, so x/0 gives ±inf or NaN as std::complex does)
#[inline]
pub fn div(a: C, b: C) -> C {
    if b.im == 0.0 {
        return C::new(a.re / b.re, a.im / b.re);
    }
    let d = b.re * b.re + b.im * b.im;
    C::new((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d)
}
/// |z|
#[inline]
pub fn abs(z: C) -> f32 {
    libm::hypotf(z.re, z.im)
}
/// e^z
pub fn exp(z: C) -> C {
    let m = Float::exp(z.re);
    C::new(m * Float::cos(z.im), m * Float::sin(z.im))
}
/// ln z
pub fn log(z: C) -> C {
    C::new(Float::ln(abs(z)), libm::atan2f(z.im, z.re))
}
/// √z
pub fn sqrt(z: C) -> C {
    if z.im.is_infinite() {
        return C::new(f32::INFINITY, z.im);
    }
    if z.re == 0.0 && z.im == 0.0 {
        return C::new(0.0, z.im);
    }
    // The larger part is √((|z| + |re|)/2); the smaller one is im/(2·that). Taking it as
    // √((|z| - |re|)/2) instead subtracts two nearly equal numbers and loses every digit when
    // |im| ≪ |re| (√(30005.373+0.0638i) has imaginary part 1.84e-4, not 0).
    let t = Float::sqrt((abs(z) + libm::fabsf(z.re)) * 0.5);
    let small = libm::fabsf(z.im) / (2.0 * t);
    // The sign of a zero imaginary part picks the side of the branch cut (C99 csqrt).
    let sign = |v: f32| if z.im.is_sign_negative() { -v } else { v };
    if z.re >= 0.0 {
        C::new(t, sign(small))
    } else {
        C::new(small, sign(t))
    }
}
/// sin z
pub fn sin(z: C) -> C {
    C::new(Float::sin(z.re) * Float::cosh(z.im), Float::cos(z.re) * Float::sinh(z.im))
}
/// cos z
pub fn cos(z: C) -> C {
    C::new(Float::cos(z.re) * Float::cosh(z.im), -Float::sin(z.re) * Float::sinh(z.im))
}
/// sinh z
pub fn sinh(z: C) -> C {
    C::new(Float::sinh(z.re) * Float::cos(z.im), Float::cosh(z.re) * Float::sin(z.im))
}
/// cosh z
pub fn cosh(z: C) -> C {
    C::new(Float::cosh(z.re) * Float::cos(z.im), Float::sinh(z.re) * Float::sin(z.im))
}
const I: C = C::new(0.0, 1.0);
const ONE: C = C::new(1.0, 0.0);
/// arcsin z = -i ln(iz + √(1 - z²))
pub fn asin(z: C) -> C {
    mul(C::new(0.0, -1.0), log(add(mul(I, z), sqrt(sub(ONE, mul(z, z))))))
}
/// arccos z = π/2 - arcsin z
pub fn acos(z: C) -> C {
    sub(C::new(core::f32::consts::FRAC_PI_2, 0.0), asin(z))
}
/// arctan z = -i · arctanh(iz) (C99 `catan`). Going through arctanh's difference of two logs
/// keeps the branch cuts on the imaginary axis where numpy and MLX put them (arctan(9i) has
/// real part +π/2); the logarithm of one quotient lands on the wrong side.
pub fn atan(z: C) -> C {
    let w = atanh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}
/// arcsinh z = ln(z + √(z² + 1))
pub fn asinh(z: C) -> C {
    let mut w = add(mul(z, z), ONE);
    if w.im == 0.0 {
        // Signed zeros are lost in z² + 1; restore the side of the cut that 2·re·im points to.
        w.im = if z.re.is_sign_negative() != z.im.is_sign_negative() { -0.0 } else { 0.0 };
    }
    log(add(z, sqrt(w)))
}
/// arccosh z = ln(z + √(z + 1)·√(z - 1))
pub fn acosh(z: C) -> C {
    log(add(z, mul(sqrt(add(z, ONE)), sqrt(sub(z, ONE)))))
}
/// arctanh z = ½ (ln(1 + z) − ln(1 − z)): two logarithms, so each side of the real-axis cuts
/// keeps its own branch (one log of the quotient would fold them together).
/// The imaginary parts are carried (not computed as `0 ± im`) so a signed zero keeps the side
/// of the cut: arctanh(2 + 0i) = 0.549 + iπ/2, arctanh(2 − 0i) = 0.549 − iπ/2.
pub fn atanh(z: C) -> C {
    let p = C::new(1.0 + z.re, z.im);
    let m = C::new(1.0 - z.re, -z.im);
    scale(sub(log(p), log(m)), 0.5)
}
/// z scaled by a real factor.
pub fn scale(z: C, k: f32) -> C {
    C::new(z.re * k, z.im * k)
}
/// x^y = e^(y ln x)
pub fn pow(x: C, y: C) -> C {
    if x.re == 0.0 && x.im == 0.0 {
        // 0^y as real MLX reports it: 0 for y > 0, inf+nan·i for y < 0, NaN for y = 0.
        return if y.re > 0.0 {
            C::new(0.0, 0.0)
        } else if y.re < 0.0 {
            C::new(f32::INFINITY, f32::NAN)
        } else {
            C::new(f32::NAN, f32::NAN)
        };
    }
    exp(mul(y, log(x)))
}
