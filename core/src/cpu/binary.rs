//! Binary kernels and `select`. Inputs arrive cast to the compute dtype and broadcast to the
//! output shape, so each kernel is a plain zip. Each is a slice kernel ([`Slice2`],
//! [`Slice3`]) that the whole-array driver and the fused kernel both run.

use super::elementwise::{apply2, as_bytes, fn2, map2_slices, typed, typed_mut, OutPtr, GRAIN};
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

/// A binary slice kernel: `y = op(a, b)` elementwise over byte slices holding elements of the
/// dtype it was chosen for (by [`kernel`]; both operands have it) and of `op`'s output dtype;
/// `a = None` computes in place (`y` holds the first operand; only where its elements have the
/// output's size). Returns false where `op` is not defined on that dtype.
///
/// # Safety
/// The slices hold valid, aligned elements of their dtypes; `a` and `b` have `y`'s element count.
pub type Slice2 = unsafe fn(BinaryOp, &mut [u8], Option<&[u8]>, &[u8]) -> bool;

/// The slice kernel for operands of dtype `dt`.
pub fn kernel(dt: DType) -> Slice2 {
    match dt {
        DType::Bool => boolean,
        DType::Complex64 => complex,
        d if d.is_float() => crate::dispatch_float!(d, T => float::<T> as Slice2, else undefined),
        d => crate::dispatch_int!(d, T => integer::<T> as Slice2, else undefined),
    }
}

/// The kernel of a dtype no arm above covers: defines no op.
unsafe fn undefined(_: BinaryOp, _: &mut [u8], _: Option<&[u8]>, _: &[u8]) -> bool {
    false
}

/// Whether `k` defines `op` (a call on empty slices), as an error naming the dtype if not.
pub fn check(k: Slice2, op: BinaryOp, dt: DType) -> Result<()> {
    // SAFETY: empty slices.
    if unsafe { k(op, &mut [], Some(&[]), &[]) } {
        Ok(())
    } else {
        Err(unsupported(op.name(), dt))
    }
}

/// Evaluates `op` on two same-shape, same-dtype inputs.
pub fn eval(op: BinaryOp, mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    let name = op.name();
    let (shape, out_dtype) = super::out0(outputs, name)?.clone();
    let (Some(b), Some(a)) = (inputs.pop(), inputs.pop()) else {
        return Err(Error::runtime(name, "Missing input."));
    };
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(name, "Binary kernel operands of two dtypes."));
    }
    let k = kernel(a.dtype());
    check(k, op, a.dtype())?;
    // SAFETY: the driver hands the kernel slices of the operands' and the output's dtypes.
    map2_slices(a, b, &shape, out_dtype, name, &|y, a, b| {
        unsafe { k(op, y, a, b) };
    })
}

fn unsupported(op: &'static str, d: DType) -> Error {
    Error::unsupported(op, alloc::format!("{op} does not support {d}."))
}

unsafe fn compare<T: Element>(op: BinaryOp, y: &mut [u8], a: Option<&[u8]>, b: &[u8], lt: fn(T, T) -> bool) -> bool {
    use BinaryOp::*;
    match op {
        Equal => apply2::<T, T, bool>(y, a, b, |x, y| x == y),
        NotEqual => apply2::<T, T, bool>(y, a, b, |x, y| x != y),
        Less => apply2::<T, T, bool>(y, a, b, move |x, y| lt(x, y)),
        LessEqual => apply2::<T, T, bool>(y, a, b, move |x, y| lt(x, y) || x == y),
        Greater => apply2::<T, T, bool>(y, a, b, move |x, y| lt(y, x)),
        GreaterEqual => apply2::<T, T, bool>(y, a, b, move |x, y| lt(y, x) || x == y),
        _ => return false,
    }
    true
}

unsafe fn float<T: Real>(op: BinaryOp, y: &mut [u8], a: Option<&[u8]>, b: &[u8]) -> bool {
    use BinaryOp::*;
    macro_rules! f {
        ($g:expr) => {{
            let g = fn2::<T::Acc, T::Acc, T::Acc, _>($g);
            apply2::<T, T, T>(y, a, b, move |x, y| T::from_acc(g(x.acc(), y.acc())))
        }};
    }
    match op {
        Add => apply2::<T, T, T>(y, a, b, |x, y| T::from_acc(x.acc() + y.acc())),
        Subtract => apply2::<T, T, T>(y, a, b, |x, y| T::from_acc(x.acc() - y.acc())),
        Multiply => apply2::<T, T, T>(y, a, b, |x, y| T::from_acc(x.acc() * y.acc())),
        Divide => apply2::<T, T, T>(y, a, b, |x, y| T::from_acc(x.acc() / y.acc())),
        // MLX: floor(divide(a, b)), so the quotient is rounded to T before the floor (for
        // float16/bfloat16 that rounding can reach the next integer: 24.99 → 25).
        FloorDivide => apply2::<T, T, T>(y, a, b, |x, y| T::from_acc(T::from_acc(x.acc() / y.acc()).acc().floor())),
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
        LogicalAnd | LogicalOr | BitwiseAnd | BitwiseOr | BitwiseXor | LeftShift | RightShift => return false,
        _ => return compare::<T>(op, y, a, b, |x, y| x < y),
    }
    true
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

unsafe fn integer<T: IntArith>(op: BinaryOp, y: &mut [u8], a: Option<&[u8]>, b: &[u8]) -> bool {
    use BinaryOp::*;
    macro_rules! f { ($g:expr) => {{ let g = fn2::<T, T, T, _>($g); apply2::<T, T, T>(y, a, b, g) }}; }
    match op {
        Add => apply2::<T, T, T>(y, a, b, T::add_w),
        Subtract => apply2::<T, T, T>(y, a, b, T::sub_w),
        Multiply => apply2::<T, T, T>(y, a, b, T::mul_w),
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
        Divide | Arctan2 | LogAddExp | LogicalAnd | LogicalOr => return false,
        _ => return compare::<T>(op, y, a, b, |x, y| x < y),
    }
    true
}

unsafe fn boolean(op: BinaryOp, y: &mut [u8], a: Option<&[u8]>, b: &[u8]) -> bool {
    use BinaryOp::*;
    macro_rules! f { ($g:expr) => {{ let g = fn2::<bool, bool, bool, _>($g); apply2::<bool, bool, bool>(y, a, b, g) }}; }
    match op {
        // C++ bool arithmetic converted back to bool.
        Add | Maximum | LogicalOr | BitwiseOr => f!(|x, y| x | y),
        Multiply | Minimum | LogicalAnd | BitwiseAnd => f!(|x, y| x & y),
        Subtract | BitwiseXor => f!(|x, y| x ^ y),
        Power => f!(|x, y| x | !y),
        // Integer semantics on 0/1 (x // 0 == 0, x % 0 == x).
        FloorDivide => f!(|x, y| x & y),
        Remainder => f!(|x, y| x & !y),
        LeftShift | RightShift => return false,
        Divide | Arctan2 | LogAddExp => return false,
        _ => return compare::<bool>(op, y, a, b, |x, y| !x & y),
    }
    true
}

unsafe fn complex(op: BinaryOp, y: &mut [u8], a: Option<&[u8]>, b: &[u8]) -> bool {
    use super::complex as cm;
    use BinaryOp::*;
    type C = Complex64;
    macro_rules! f { ($g:expr) => {{ let g = fn2::<C, C, C, _>($g); apply2::<C, C, C>(y, a, b, g) }}; }
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
        // A NaN in either part of `x` wins, and a NaN `y` compares false (MLX's rule).
        Maximum => f!(|x, y| if x.re.is_nan() || x.im.is_nan() || lt(y, x) { x } else { y }),
        Minimum => f!(|x, y| if x.re.is_nan() || x.im.is_nan() || lt(x, y) { x } else { y }),
        LogAddExp => f!(|x, y| {
            let (hi, lo) = if lt(y, x) { (x, y) } else { (y, x) };
            cm::add(hi, cm::log(cm::add(C::new(1.0, 0.0), cm::exp(cm::sub(lo, hi)))))
        }),
        Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual => return compare::<C>(op, y, a, b, lt),
        _ => return false,
    }
    true
}

/// A `where` slice kernel: `y = c ? x : z` elementwise over byte slices (`c` of bools, the
/// others of the dtype it was chosen for by [`select_kernel`]).
///
/// # Safety
/// The slices hold valid, aligned elements of their dtypes, `y`'s element count each.
pub type Slice3 = unsafe fn(&mut [u8], &[u8], &[u8], &[u8]);

/// The `where` slice kernel for values of dtype `dt`.
pub fn select_kernel(dt: DType) -> Slice3 {
    crate::dispatch_all!(dt, T => select_slice::<T> as Slice3)
}

unsafe fn select_slice<T: Element>(y: &mut [u8], c: &[u8], x: &[u8], z: &[u8]) {
    for (((o, &c), &x), &z) in typed_mut::<T>(y).iter_mut().zip(typed::<bool>(c)).zip(typed::<T>(x)).zip(typed::<T>(z)) {
        *o = if c { x } else { z };
    }
}

/// `where(cond, x, y)` with all three broadcast to the output shape.
pub fn select(mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    const OP: &str = "where";
    let (shape, dtype) = super::out0(outputs, OP)?.clone();
    let (Some(y), Some(x), Some(c)) = (inputs.pop(), inputs.pop(), inputs.pop()) else {
        return Err(Error::runtime(OP, "Missing input."));
    };
    let k = select_kernel(dtype);
    let sz = dtype.size();
    let cd = c.data()?;
    let cv = cd.read::<bool>(&shape)?;
    crate::dispatch_all!(dtype, T => {
        let (xd, yd) = (x.data()?, y.data()?);
        let (xv, yv) = (xd.read::<T>(&shape)?, yd.read::<T>(&shape)?);
        // Every element is written below.
        let out = Data::alloc_for_overwrite(&shape, dtype, OP)?;
        let p = OutPtr(out.buf.as_mut_ptr());
        let (cv, xv, yv) = (as_bytes::<bool>(&cv), as_bytes::<T>(&xv), as_bytes::<T>(&yv));
        parallel_for(cv.len(), GRAIN, &|r| {
            let b = r.start * sz..r.end * sz;
            // SAFETY: fresh buffer; disjoint ranges; each slice holds its dtype's elements.
            unsafe { k(p.chunk(&b), &cv[r.clone()], &xv[b.clone()], &yv[b.clone()]) };
        });
        Ok(out)
    })
}
