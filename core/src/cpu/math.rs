//! Scalar math for the CPU kernels: the platform libm with `std` (glibc on Linux, which is
//! what real MLX's CPU backend calls), the `libm` crate without it.

use crate::element::Element;
use half::{bf16, f16};

macro_rules! float_fns {
    ($t:ty, $( $name:ident => $std:ident / $module:ident :: $libm:ident ),* $(,)?) => {
        $(
            #[inline]
            fn $name(self) -> Self {
                #[cfg(feature = "std")]
                { <$t>::$std(self) }
                #[cfg(not(feature = "std"))]
                { $module::$libm(self) }
            }
        )*
    };
}

/// Math on f32 and f64 (half types compute through f32).
pub trait Float: Copy + PartialOrd + core::ops::Add<Output = Self> + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self> + core::ops::Div<Output = Self> + core::ops::Neg<Output = Self>
{
    /// 0
    const ZERO: Self;
    /// 1
    const ONE: Self;
    /// From f64 (rounding).
    fn of(v: f64) -> Self;
    /// exp
    fn exp(self) -> Self;
    /// exp(x)-1
    fn exp_m1(self) -> Self;
    /// ln
    fn ln(self) -> Self;
    /// ln(1+x)
    fn ln_1p(self) -> Self;
    /// log2
    fn log2(self) -> Self;
    /// log10
    fn log10(self) -> Self;
    /// sqrt
    fn sqrt(self) -> Self;
    /// sin
    fn sin(self) -> Self;
    /// cos
    fn cos(self) -> Self;
    /// tan
    fn tan(self) -> Self;
    /// asin
    fn asin(self) -> Self;
    /// acos
    fn acos(self) -> Self;
    /// atan
    fn atan(self) -> Self;
    /// sinh
    fn sinh(self) -> Self;
    /// cosh
    fn cosh(self) -> Self;
    /// tanh
    fn tanh(self) -> Self;
    /// asinh
    fn asinh(self) -> Self;
    /// acosh
    fn acosh(self) -> Self;
    /// atanh
    fn atanh(self) -> Self;
    /// floor
    fn floor(self) -> Self;
    /// ceil
    fn ceil(self) -> Self;
    /// trunc
    fn trunc(self) -> Self;
    /// |x|
    fn abs(self) -> Self;
    /// Round half to even (C `rint`).
    fn rint(self) -> Self;
    /// erf
    fn erf(self) -> Self;
    /// atan2(self, x)
    fn atan2(self, x: Self) -> Self;
    /// self^e
    fn powf(self, e: Self) -> Self;
    /// IEEE remainder-free fmod (C `fmod`).
    fn fmod(self, d: Self) -> Self;
    /// Fused multiply-add.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// NaN test.
    fn is_nan(self) -> bool;
    /// Infinity test.
    fn is_infinite(self) -> bool;
}

macro_rules! impl_float {
    ($t:ty, $libsuffix:ident, $erf:ident, $atan2:ident, $pow:ident, $fmod:ident, $fma:ident, $rint:ident) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn of(v: f64) -> Self { v as $t }
            float_fns!($t,
                exp => exp / $libsuffix::exp, exp_m1 => exp_m1 / $libsuffix::expm1,
                ln => ln / $libsuffix::log, ln_1p => ln_1p / $libsuffix::log1p,
                log2 => log2 / $libsuffix::log2, log10 => log10 / $libsuffix::log10,
                sqrt => sqrt / $libsuffix::sqrt, sin => sin / $libsuffix::sin, cos => cos / $libsuffix::cos,
                tan => tan / $libsuffix::tan, asin => asin / $libsuffix::asin, acos => acos / $libsuffix::acos,
                atan => atan / $libsuffix::atan, sinh => sinh / $libsuffix::sinh, cosh => cosh / $libsuffix::cosh,
                tanh => tanh / $libsuffix::tanh, asinh => asinh / $libsuffix::asinh,
                acosh => acosh / $libsuffix::acosh, atanh => atanh / $libsuffix::atanh,
                floor => floor / $libsuffix::floor, ceil => ceil / $libsuffix::ceil,
                trunc => trunc / $libsuffix::trunc, abs => abs / $libsuffix::fabs,
            );
            #[inline]
            fn rint(self) -> Self { libm::$rint(self) }
            #[inline]
            fn erf(self) -> Self { libm::$erf(self) }
            #[inline]
            fn atan2(self, x: Self) -> Self { libm::$atan2(self, x) }
            #[inline]
            fn powf(self, e: Self) -> Self {
                #[cfg(feature = "std")]
                { <$t>::powf(self, e) }
                #[cfg(not(feature = "std"))]
                { libm::$pow(self, e) }
            }
            #[inline]
            fn fmod(self, d: Self) -> Self { self % d }
            #[inline]
            fn mul_add(self, a: Self, b: Self) -> Self { libm::$fma(self, a, b) }
            #[inline]
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            #[inline]
            fn is_infinite(self) -> bool { <$t>::is_infinite(self) }
        }
    };
}

/// Names of the `libm` functions for f32 (suffix `f`) and f64, so one macro serves both.
#[allow(non_snake_case, unused_imports)]
mod f32fns {
    pub use libm::{
        acosf as acos, acoshf as acosh, asinf as asin, asinhf as asinh, atanf as atan, atanhf as atanh,
        ceilf as ceil, cosf as cos, coshf as cosh, expf as exp, expm1f as expm1, fabsf as fabs, floorf as floor,
        log10f as log10, log1pf as log1p, log2f as log2, logf as log, sinf as sin, sinhf as sinh, sqrtf as sqrt,
        tanf as tan, tanhf as tanh, truncf as trunc,
    };
}
#[allow(non_snake_case, unused_imports)]
mod f64fns {
    pub use libm::{
        acos, acosh, asin, asinh, atan, atanh, ceil, cos, cosh, exp, expm1, fabs, floor, log, log10, log1p, log2,
        sin, sinh, sqrt, tan, tanh, trunc,
    };
}

impl_float!(f32, f32fns, erff, atan2f, powf, fmodf, fmaf, rintf);
impl_float!(f64, f64fns, erf, atan2, pow, fmod, fma, rint);

/// A real float element: computes in f32 (f16, bf16, f32) or f64.
pub trait Real: Element + PartialOrd {
    /// The type arithmetic runs in.
    type Acc: Float;
    /// Widen.
    fn acc(self) -> Self::Acc;
    /// Narrow (round to nearest even).
    fn from_acc(v: Self::Acc) -> Self;
}

impl Real for f32 {
    type Acc = f32;
    #[inline]
    fn acc(self) -> f32 { self }
    #[inline]
    fn from_acc(v: f32) -> Self { v }
}
impl Real for f64 {
    type Acc = f64;
    #[inline]
    fn acc(self) -> f64 { self }
    #[inline]
    fn from_acc(v: f64) -> Self { v }
}
impl Real for f16 {
    type Acc = f32;
    #[inline]
    fn acc(self) -> f32 { self.to_f32() }
    #[inline]
    fn from_acc(v: f32) -> Self { f16::from_f32(v) }
}
impl Real for bf16 {
    type Acc = f32;
    #[inline]
    fn acc(self) -> f32 { self.to_f32() }
    #[inline]
    fn from_acc(v: f32) -> Self { bf16::from_f32(v) }
}
