//! Binary kernels and `select`. Inputs arrive cast to the compute dtype and broadcast to the
//! output shape, so each kernel is a plain zip.

use super::elementwise::{fn2, map2, OutPtr, GRAIN};
use super::math::{Float, Real};
use super::unary::Int;
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::element::{Complex64, Element};
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::parallel::parallel_for;
use alloc::vec::Vec;

/// Evaluates `op` on two same-shape, same-dtype inputs.
pub fn eval(op: BinaryOp, mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    let name = op.name();
    let (shape, _) = super::out0(outputs, name)?.clone();
    let (Some(b), Some(a)) = (inputs.pop(), inputs.pop()) else {
        return Err(Error::runtime(name, "Missing input."));
    };
    match a.dtype() {
        DType::Bool => boolean(op, a, b, &shape),
        DType::Complex64 => complex(op, a, b, &shape),
        d if d.is_float() => crate::dispatch_float!(d, T => float::<T>(op, a, b, &shape), else unsupported(name, d)),
        d => crate::dispatch_int!(d, T => integer::<T>(op, a, b, &shape), else unsupported(name, d)),
    }
}

fn unsupported(op: &'static str, d: DType) -> Result<Data> {
    Err(Error::unsupported(op, alloc::format!("{op} does not support {d}.")))
}

fn compare<T: Element>(op: BinaryOp, a: Array, b: Array, shape: &[usize], lt: fn(T, T) -> bool) -> Result<Data> {
    use BinaryOp::*;
    let n = op.name();
    match op {
        Equal => map2::<T, T, bool>(a, b, shape, n, |x, y| x == y),
        NotEqual => map2::<T, T, bool>(a, b, shape, n, |x, y| x != y),
        Less => map2::<T, T, bool>(a, b, shape, n, move |x, y| lt(x, y)),
        LessEqual => map2::<T, T, bool>(a, b, shape, n, move |x, y| lt(x, y) || x == y),
        Greater => map2::<T, T, bool>(a, b, shape, n, move |x, y| lt(y, x)),
        GreaterEqual => map2::<T, T, bool>(a, b, shape, n, move |x, y| lt(y, x) || x == y),
        _ => unsupported(n, T::DTYPE),
    }
}

fn float<T: Real>(op: BinaryOp, a: Array, b: Array, shape: &[usize]) -> Result<Data> {
    use BinaryOp::*;
    let n = op.name();
    macro_rules! f {
        ($g:expr) => {{
            let g = fn2::<T::Acc, T::Acc, T::Acc, _>($g);
            map2::<T, T, T>(a, b, shape, n, move |x, y| T::from_acc(g(x.acc(), y.acc())))
        }};
    }
    match op {
        Add => map2::<T, T, T>(a, b, shape, n, |x, y| T::from_acc(x.acc() + y.acc())),
        Subtract => map2::<T, T, T>(a, b, shape, n, |x, y| T::from_acc(x.acc() - y.acc())),
        Multiply => map2::<T, T, T>(a, b, shape, n, |x, y| T::from_acc(x.acc() * y.acc())),
        Divide => map2::<T, T, T>(a, b, shape, n, |x, y| T::from_acc(x.acc() / y.acc())),
        FloorDivide => f!(|x, y| (x / y).floor()),
        Remainder => f!(|x, y| {
            let r = x.fmod(y);
            if r != T::Acc::ZERO && ((r < T::Acc::ZERO) != (y < T::Acc::ZERO)) { r + y } else { r }
        }),
        Power => f!(|x, y| x.powf(y)),
        // NaN wins, as in MLX.
        Maximum => f!(|x, y| if x.is_nan() || x > y { x } else { y }),
        Minimum => f!(|x, y| if x.is_nan() || x < y { x } else { y }),
        Arctan2 => f!(|x, y| x.atan2(y)),
        LogAddExp => f!(|x, y| {
            if x.is_nan() || y.is_nan() {
                return x + y;
            }
            let (hi, lo) = if x > y { (x, y) } else { (y, x) };
            let inf = T::Acc::ONE / T::Acc::ZERO;
            if lo == -inf || hi == inf { hi } else { hi + (lo - hi).exp().ln_1p() }
        }),
        LogicalAnd | LogicalOr | BitwiseAnd | BitwiseOr | BitwiseXor | LeftShift | RightShift => unsupported(n, T::DTYPE),
        _ => compare::<T>(op, a, b, shape, |x, y| x < y),
    }
}

/// Integer helpers with C++-compatible results and no panics (x/0 gives 0).
pub trait IntArith: Int {
    /// Wrapping add/sub/mul.
    fn add_w(self, o: Self) -> Self;
    /// Wrapping subtraction.
    fn sub_w(self, o: Self) -> Self;
    /// Wrapping multiplication.
    fn mul_w(self, o: Self) -> Self;
    /// Floor division (0 when dividing by zero).
    fn floor_div(self, o: Self) -> Self;
    /// Python-style remainder (sign of the divisor; 0 when dividing by zero).
    fn py_rem(self, o: Self) -> Self;
    /// Integer power by squaring (negative exponents give 0 unless |base| is 1).
    fn pow_i(self, e: Self) -> Self;
    /// Bitwise and/or/xor.
    fn and(self, o: Self) -> Self;
    /// Bitwise or.
    fn or(self, o: Self) -> Self;
    /// Bitwise xor.
    fn xor(self, o: Self) -> Self;
    /// Left shift; shifts past the width give 0.
    fn shl_(self, o: Self) -> Self;
    /// Right shift (arithmetic for signed); shifts past the width saturate.
    fn shr_(self, o: Self) -> Self;
}

macro_rules! impl_int_arith {
    ($($t:ty),*) => {$(
        impl IntArith for $t {
            #[inline] fn add_w(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline] fn sub_w(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline] fn mul_w(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline]
            fn floor_div(self, o: Self) -> Self {
                if o == 0 { return 0; }
                let q = self.wrapping_div(o);
                #[allow(unused_comparisons)]
                let adjust = (self.wrapping_rem(o) != 0) && ((self < 0) != (o < 0));
                if adjust { q.wrapping_sub(1) } else { q }
            }
            #[inline]
            fn py_rem(self, o: Self) -> Self {
                // MLX computes x - y * floor_divide(x, y), so x % 0 == x.
                if o == 0 { return self; }
                let r = self.wrapping_rem(o);
                #[allow(unused_comparisons)]
                let adjust = r != 0 && ((r < 0) != (o < 0));
                if adjust { r.wrapping_add(o) } else { r }
            }
            #[inline]
            fn pow_i(self, e: Self) -> Self {
                // MLX's integer power returns 0 for any negative exponent.
                #[allow(unused_comparisons)]
                if e < 0 {
                    return 0;
                }
                let (mut base, mut e, mut acc) = (self, e as u64, 1 as $t);
                while e > 0 {
                    if e & 1 == 1 { acc = acc.wrapping_mul(base); }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                acc
            }
            #[inline] fn and(self, o: Self) -> Self { self & o }
            #[inline] fn or(self, o: Self) -> Self { self | o }
            #[inline] fn xor(self, o: Self) -> Self { self ^ o }
            #[inline]
            fn shl_(self, o: Self) -> Self {
                // x86 C++ semantics as real MLX has them: narrow types are promoted to 32 bits
                // and the shift count is masked to the promoted width.
                let bits = if <$t>::BITS < 32 { 32 } else { <$t>::BITS };
                let c = (o as u64 as u32) & (bits - 1);
                if <$t>::BITS < 32 { ((self as i32) << c) as $t } else { self.wrapping_shl(c) }
            }
            #[inline]
            fn shr_(self, o: Self) -> Self {
                let bits = if <$t>::BITS < 32 { 32 } else { <$t>::BITS };
                let c = (o as u64 as u32) & (bits - 1);
                if <$t>::BITS < 32 { ((self as i32) >> c) as $t } else { self.wrapping_shr(c) }
            }
        }
    )*};
}
impl_int_arith!(i8, i16, i32, i64, u8, u16, u32, u64);

fn integer<T: IntArith>(op: BinaryOp, a: Array, b: Array, shape: &[usize]) -> Result<Data> {
    use BinaryOp::*;
    let n = op.name();
    macro_rules! f { ($g:expr) => {{ let g = fn2::<T, T, T, _>($g); map2::<T, T, T>(a, b, shape, n, g) }}; }
    match op {
        Add => map2::<T, T, T>(a, b, shape, n, T::add_w),
        Subtract => map2::<T, T, T>(a, b, shape, n, T::sub_w),
        Multiply => map2::<T, T, T>(a, b, shape, n, T::mul_w),
        FloorDivide => f!(T::floor_div),
        Remainder => f!(T::py_rem),
        Power => f!(T::pow_i),
        Maximum => f!(|x, y| if x > y { x } else { y }),
        Minimum => f!(|x, y| if x < y { x } else { y }),
        BitwiseAnd => f!(T::and),
        BitwiseOr => f!(T::or),
        BitwiseXor => f!(T::xor),
        LeftShift => f!(T::shl_),
        RightShift => f!(T::shr_),
        Divide | Arctan2 | LogAddExp | LogicalAnd | LogicalOr => unsupported(n, T::DTYPE),
        _ => compare::<T>(op, a, b, shape, |x, y| x < y),
    }
}

fn boolean(op: BinaryOp, a: Array, b: Array, shape: &[usize]) -> Result<Data> {
    use BinaryOp::*;
    let n = op.name();
    macro_rules! f { ($g:expr) => {{ let g = fn2::<bool, bool, bool, _>($g); map2::<bool, bool, bool>(a, b, shape, n, g) }}; }
    match op {
        // C++ bool arithmetic converted back to bool.
        Add | Maximum | LogicalOr | BitwiseOr => f!(|x, y| x | y),
        Multiply | Minimum | LogicalAnd | BitwiseAnd => f!(|x, y| x & y),
        Subtract | BitwiseXor => f!(|x, y| x ^ y),
        Power => f!(|x, y| x | !y),
        // Integer semantics on 0/1 (x // 0 == 0, x % 0 == x).
        FloorDivide => f!(|x, y| x & y),
        Remainder => f!(|x, y| x & !y),
        LeftShift | RightShift => unsupported(n, DType::Bool),
        Divide | Arctan2 | LogAddExp => unsupported(n, DType::Bool),
        _ => compare::<bool>(op, a, b, shape, |x, y| !x & y),
    }
}

fn complex(op: BinaryOp, a: Array, b: Array, shape: &[usize]) -> Result<Data> {
    use super::complex as cm;
    use BinaryOp::*;
    type C = Complex64;
    let n = op.name();
    macro_rules! f { ($g:expr) => {{ let g = fn2::<C, C, C, _>($g); map2::<C, C, C>(a, b, shape, n, g) }}; }
    // Lexicographic order, as MLX compares complex numbers.
    fn lt(x: C, y: C) -> bool {
        x.re < y.re || (x.re == y.re && x.im < y.im)
    }
    match op {
        Add => f!(cm::add),
        Subtract => f!(cm::sub),
        Multiply => f!(cm::mul),
        // MLX's floor_divide on complex is plain division.
        Divide | FloorDivide => f!(cm::div),
        Power => f!(cm::pow),
        Maximum => f!(|x, y| if lt(y, x) { x } else { y }),
        Minimum => f!(|x, y| if lt(x, y) { x } else { y }),
        LogAddExp => f!(|x, y| {
            let (hi, lo) = if lt(y, x) { (x, y) } else { (y, x) };
            cm::add(hi, cm::log(cm::add(C::new(1.0, 0.0), cm::exp(cm::sub(lo, hi)))))
        }),
        Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual => compare::<C>(op, a, b, shape, lt),
        _ => unsupported(n, DType::Complex64),
    }
}

/// `where(cond, x, y)` with all three broadcast to the output shape.
pub fn select(mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    const OP: &str = "where";
    let (shape, dtype) = super::out0(outputs, OP)?.clone();
    let (Some(y), Some(x), Some(c)) = (inputs.pop(), inputs.pop(), inputs.pop()) else {
        return Err(Error::runtime(OP, "Missing input."));
    };
    let cd = c.data()?;
    let cv = cd.read::<bool>(&shape)?;
    crate::dispatch_all!(dtype, T => {
        let (xd, yd) = (x.data()?, y.data()?);
        let (xv, yv) = (xd.read::<T>(&shape)?, yd.read::<T>(&shape)?);
        let out = Data::alloc(&shape, dtype, OP)?;
        let p = OutPtr(out.buf.as_mut_ptr() as *mut T);
        let (cv, xv, yv): (&[bool], &[T], &[T]) = (&cv, &xv, &yv);
        parallel_for(cv.len(), GRAIN, &|r| {
            // SAFETY: fresh buffer; disjoint ranges.
            let o = unsafe { p.chunk(&r) };
            for (i, z) in r.clone().zip(o.iter_mut()) {
                *z = if cv[i] { xv[i] } else { yv[i] };
            }
        });
        Ok(out)
    })
}
