//! Unary kernels. Floats compute in f32 (f16/bf16/f32) or f64; integers and bool directly.
//! Each kernel is a slice kernel ([`Slice1`]) that the whole-array driver and the fused
//! kernel both run.

use super::elementwise::{apply1, fn1, map1_slices, typed, typed_mut};
use super::math::{Float, Real};
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::element::{Complex64, Element, Value};
use crate::random::fmath::erfinv;
use crate::error::{Error, Result};
use crate::ops::unary::UnaryOp;
use alloc::vec::Vec;

/// A unary slice kernel: `y = op(x)` elementwise over byte slices holding elements of the
/// dtype it was chosen for (by [`kernel`]) and of `op`'s output dtype; `x = None` computes in
/// place (`y` holds the input; only where input and output elements have one size). Returns
/// false where `op` is not defined on that dtype (checked on empty slices before running).
///
/// # Safety
/// The slices hold valid, aligned elements of their dtypes; `x` has `y`'s element count.
pub type Slice1 = unsafe fn(UnaryOp, &mut [u8], Option<&[u8]>) -> bool;

/// The slice kernel for inputs of dtype `dt`.
pub fn kernel(dt: DType) -> Slice1 {
    match dt {
        DType::Complex64 => complex,
        DType::Bool => boolean,
        d if d.is_float() => crate::dispatch_float!(d, T => float::<T> as Slice1, else undefined),
        d => crate::dispatch_int!(d, T => integer::<T> as Slice1, else undefined),
    }
}

/// The kernel of a dtype no arm above covers: defines no op.
unsafe fn undefined(_: UnaryOp, _: &mut [u8], _: Option<&[u8]>) -> bool {
    false
}

/// Whether `k` defines `op` (a call on empty slices), as an error naming the dtype if not.
pub fn check(k: Slice1, op: UnaryOp, dt: DType) -> Result<()> {
    // SAFETY: empty slices.
    if unsafe { k(op, &mut [], Some(&[])) } {
        Ok(())
    } else {
        Err(unreachable_dtype(op.name(), dt))
    }
}

/// Evaluates `op` on the single input.
pub fn eval(op: UnaryOp, mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    let name = op.name();
    let (shape, out_dtype) = super::out0(outputs, name)?.clone();
    let a = inputs.pop().ok_or_else(|| Error::runtime(name, "Missing input."))?;
    let k = kernel(a.dtype());
    check(k, op, a.dtype())?;
    // SAFETY: the driver hands the kernel slices of the input's and the output's dtypes.
    map1_slices(a, &shape, out_dtype, name, &|y, x| {
        unsafe { k(op, y, x) };
    })
}

fn unreachable_dtype(op: &'static str, d: DType) -> Error {
    Error::unsupported(op, alloc::format!("{op} does not support {d}."))
}

unsafe fn float<T: Real>(op: UnaryOp, y: &mut [u8], x: Option<&[u8]>) -> bool {
    use UnaryOp::*;
    macro_rules! map {
        ($f:expr) => {{
            let f = fn1::<T::Acc, T::Acc, _>($f);
            apply1::<T, T>(y, x, move |x| T::from_acc(f(x.acc())))
        }};
    }
    // float32 exp and sigmoid on the SIMD kernels of the active level, where it has them.
    if T::DTYPE == DType::Float32 && matches!(op, Exp | Sigmoid) {
        let level = super::isa::isa();
        if super::vecmath::simd(level).is_some() {
            let kernel = if op == Exp { super::vecmath::exp } else { super::vecmath::sigmoid };
            kernel(level, typed_mut::<f32>(y), x.map(|x| typed::<f32>(x)));
            return true;
        }
    }
    match op {
        Abs => map!(|x| x.abs()),
        Negative => map!(|x| -x),
        // MLX: (x > 0) - (x < 0), so sign(NaN) = 0 and sign(-0) = 0.
        Sign => map!(|x| {
            if x > T::Acc::ZERO {
                T::Acc::ONE
            } else if x < T::Acc::ZERO {
                -T::Acc::ONE
            } else {
                T::Acc::ZERO
            }
        }),
        Square => map!(|x| x * x),
        Floor => map!(|x| x.floor()),
        Ceil => map!(|x| x.ceil()),
        Round => map!(|x| x.rint()),
        Trunc => map!(|x| x.trunc()),
        Conjugate | Real => map!(|x| x),
        Imag => map!(|_| T::Acc::ZERO),
        Sqrt => map!(|x| x.sqrt()),
        Rsqrt => map!(|x| T::Acc::ONE / x.sqrt()),
        Reciprocal => map!(|x| T::Acc::ONE / x),
        Exp => map!(|x| x.exp()),
        Expm1 => map!(|x| x.exp_m1()),
        Log => map!(|x| x.ln()),
        Log1p => map!(|x| x.ln_1p()),
        Log2 => map!(|x| x.log2()),
        Log10 => map!(|x| x.log10()),
        Sin => map!(|x| x.sin()),
        Cos => map!(|x| x.cos()),
        Tan => map!(|x| x.tan()),
        Arcsin => map!(|x| x.asin()),
        Arccos => map!(|x| x.acos()),
        Arctan => map!(|x| x.atan()),
        Sinh => map!(|x| x.sinh()),
        Cosh => map!(|x| x.cosh()),
        Tanh => map!(|x| x.tanh()),
        Arcsinh => map!(|x| x.asinh()),
        Arccosh => map!(|x| x.acosh()),
        Arctanh => map!(|x| x.atanh()),
        // MLX's erf (Abramowitz–Stegun 7.1.26 with fused steps) for f32/f16/bf16: computed in
        // f32, rounded to the dtype, then the sign select — bit-exact with MLX, which the
        // composed array-bound `truncated_normal` needs. float64 keeps the exact erf.
        Erf if T::DTYPE == DType::Float64 => map!(|x| x.erf()),
        Erf => apply1::<T, T>(y, x, |x| {
            let v = x.to_value().as_f64() as f32;
            let r = T::from_value(Value::F(f64::from(crate::random::fmath::erf_abs(v))));
            if v > 0.0 {
                r
            } else {
                T::from_value(Value::F(-r.to_value().as_f64()))
            }
        }),
        // MLX's erfinv (Giles, single precision) for every float dtype, f64 included: MLX
        // computes it in f32 too.
        Erfinv => apply1::<T, T>(y, x, |x| {
            T::from_value(Value::F(f64::from(erfinv(x.to_value().as_f64() as f32))))
        }),
        Sigmoid => map!(|x| T::Acc::ONE / (T::Acc::ONE + (-x).exp())),
        Degrees => map!(|x| x * T::Acc::of(180.0 / core::f64::consts::PI)),
        Radians => map!(|x| x * T::Acc::of(core::f64::consts::PI / 180.0)),
        IsNan => apply1::<T, bool>(y, x, |x| x.acc().is_nan()),
        IsInf => apply1::<T, bool>(y, x, |x| x.acc().is_infinite()),
        IsPosInf => apply1::<T, bool>(y, x, |x| x.acc().is_infinite() && x.acc() > T::Acc::ZERO),
        IsNegInf => apply1::<T, bool>(y, x, |x| x.acc().is_infinite() && x.acc() < T::Acc::ZERO),
        IsFinite => apply1::<T, bool>(y, x, |x| !x.acc().is_infinite() && !x.acc().is_nan()),
        LogicalNot => apply1::<T, bool>(y, x, |x| x.acc() == T::Acc::ZERO),
        BitwiseInvert => return false,
    }
    true
}

/// Integer ops wrap on overflow, as C++ does for MLX.
pub trait Int: Element + Ord {
    /// 0
    const ZERO: Self;
    /// |x| (wrapping)
    fn abs_w(self) -> Self;
    /// -x (wrapping)
    fn neg_w(self) -> Self;
    /// x*x (wrapping)
    fn sq_w(self) -> Self;
    /// sign
    fn signum_(self) -> Self;
    /// !x
    fn not_(self) -> Self;
}

macro_rules! impl_int {
    (signed: $($t:ty),*) => {$(
        impl Int for $t {
            const ZERO: Self = 0;
            #[inline] fn abs_w(self) -> Self { self.wrapping_abs() }
            #[inline] fn neg_w(self) -> Self { self.wrapping_neg() }
            #[inline] fn sq_w(self) -> Self { self.wrapping_mul(self) }
            #[inline] fn signum_(self) -> Self { self.signum() }
            #[inline] fn not_(self) -> Self { !self }
        }
    )*};
    (unsigned: $($t:ty),*) => {$(
        impl Int for $t {
            const ZERO: Self = 0;
            #[inline] fn abs_w(self) -> Self { self }
            #[inline] fn neg_w(self) -> Self { self.wrapping_neg() }
            #[inline] fn sq_w(self) -> Self { self.wrapping_mul(self) }
            #[inline] fn signum_(self) -> Self { (self != 0) as $t }
            #[inline] fn not_(self) -> Self { !self }
        }
    )*};
}
impl_int!(signed: i8, i16, i32, i64);
impl_int!(unsigned: u8, u16, u32, u64);

unsafe fn integer<T: Int>(op: UnaryOp, y: &mut [u8], x: Option<&[u8]>) -> bool {
    use UnaryOp::*;
    match op {
        Abs => apply1::<T, T>(y, x, |x| x.abs_w()),
        Negative => apply1::<T, T>(y, x, |x| x.neg_w()),
        Sign => apply1::<T, T>(y, x, |x| x.signum_()),
        Square => apply1::<T, T>(y, x, |x| x.sq_w()),
        BitwiseInvert => apply1::<T, T>(y, x, |x| x.not_()),
        IsNan | IsInf | IsPosInf | IsNegInf => apply1::<T, bool>(y, x, |_| false),
        IsFinite => apply1::<T, bool>(y, x, |_| true),
        LogicalNot => apply1::<T, bool>(y, x, |x| x == T::ZERO),
        _ => return false,
    }
    true
}

unsafe fn boolean(op: UnaryOp, y: &mut [u8], x: Option<&[u8]>) -> bool {
    use UnaryOp::*;
    match op {
        Abs | Sign | Square => apply1::<bool, bool>(y, x, |x| x),
        LogicalNot | BitwiseInvert => apply1::<bool, bool>(y, x, |x| !x),
        IsNan | IsInf | IsPosInf | IsNegInf => apply1::<bool, bool>(y, x, |_| false),
        IsFinite => apply1::<bool, bool>(y, x, |_| true),
        _ => return false,
    }
    true
}

unsafe fn complex(op: UnaryOp, y: &mut [u8], x: Option<&[u8]>) -> bool {
    use super::complex as cm;
    use UnaryOp::*;
    type C = Complex64;
    macro_rules! c { ($f:expr) => {{ let f = fn1::<C, C, _>($f); apply1::<C, C>(y, x, f) }}; }
    macro_rules! r { ($f:expr) => {{ let f = fn1::<C, f32, _>($f); apply1::<C, f32>(y, x, f) }}; }
    macro_rules! b { ($f:expr) => {{ let f = fn1::<C, bool, _>($f); apply1::<C, bool>(y, x, f) }}; }
    match op {
        Abs => r!(cm::abs),
        Real => r!(|z| z.re),
        Imag => r!(|z| z.im),
        Negative => c!(|z| C::new(-z.re, -z.im)),
        Conjugate => c!(|z| C::new(z.re, -z.im)),
        Sign => c!(|z| {
            let m = cm::abs(z);
            if m == 0.0 { C::new(0.0, 0.0) } else { C::new(z.re / m, z.im / m) }
        }),
        Round => c!(|z| C::new(libm::rintf(z.re), libm::rintf(z.im))),
        Square => c!(|z| cm::mul(z, z)),
        Sqrt => c!(cm::sqrt),
        Rsqrt => c!(|z| cm::div(C::new(1.0, 0.0), cm::sqrt(z))),
        Reciprocal => c!(|z| cm::div(C::new(1.0, 0.0), z)),
        Exp => c!(cm::exp),
        Log => c!(cm::log),
        Log1p => c!(|z| cm::log(cm::add(z, C::new(1.0, 0.0)))),
        Log2 => c!(|z| cm::scale(cm::log(z), core::f32::consts::LOG2_E)),
        Log10 => c!(|z| cm::scale(cm::log(z), core::f32::consts::LOG10_E)),
        Sin => c!(cm::sin),
        Cos => c!(cm::cos),
        Tan => c!(|z| cm::div(cm::sin(z), cm::cos(z))),
        Sinh => c!(cm::sinh),
        Cosh => c!(cm::cosh),
        Tanh => c!(|z| cm::div(cm::sinh(z), cm::cosh(z))),
        Arcsin => c!(cm::asin),
        Arccos => c!(cm::acos),
        Arctan => c!(cm::atan),
        Arcsinh => c!(cm::asinh),
        Arccosh => c!(cm::acosh),
        Arctanh => c!(cm::atanh),
        Degrees => c!(|z| cm::scale(z, 180.0 / core::f32::consts::PI)),
        Radians => c!(|z| cm::scale(z, core::f32::consts::PI / 180.0)),
        IsNan => b!(|z| z.re.is_nan() || z.im.is_nan()),
        IsInf => b!(|z| z.re.is_infinite() || z.im.is_infinite()),
        IsFinite => b!(|z| z.re.is_finite() && z.im.is_finite()),
        // MLX compares with the complex ±inf (imaginary part 0): `equal(a, array(±inf, complex64))`.
        IsPosInf => b!(|z| z.re == f32::INFINITY && z.im == 0.0),
        IsNegInf => b!(|z| z.re == f32::NEG_INFINITY && z.im == 0.0),
        LogicalNot => b!(|z| z.re == 0.0 && z.im == 0.0),
        _ => return false,
    }
    true
}
