//! Elementwise ops that MLX composes from others: clip, isclose/allclose/array_equal, divmod,
//! logical_xor, nan_to_num, round with decimals.

use crate::array::Array;
use crate::dtype::{finfo, DType};
use crate::element::Value;
use crate::error::{Error, Result};
use crate::ops::*;
use alloc::vec::Vec;

/// `mx.clip(a, a_min, a_max)`: either bound may be `None`, not both.
pub fn clip(a: &Array, a_min: Option<&Array>, a_max: Option<&Array>) -> Result<Array> {
    if a_min.is_none() && a_max.is_none() {
        return Err(Error::invalid("clip", "At most one of a_min and a_max may be None"));
    }
    let mut out = a.clone();
    if let Some(lo) = a_min {
        out = maximum(&out, lo)?;
    }
    if let Some(hi) = a_max {
        out = minimum(&out, hi)?;
    }
    Ok(out)
}

/// `mx.isclose(a, b, rtol, atol, equal_nan)`: `|a - b| <= atol + rtol·|b|`, with infinities
/// equal only to themselves.
pub fn isclose(a: &Array, b: &Array, rtol: f64, atol: f64, equal_nan: bool) -> Result<Array> {
    let diff = abs(&subtract(a, b)?)?;
    let tol = add(&Array::scalar(atol as f32)?, &multiply(&Array::scalar(rtol as f32)?, &abs(b)?)?)?;
    let mut out = less_equal(&diff, &tol)?;
    let (ia, ib) = (isinf(a)?, isinf(b)?);
    let any_inf = logical_or(&ia, &ib)?;
    let both_inf = logical_and(&logical_and(&ia, &ib)?, &equal(a, b)?)?;
    out = logical_or(&logical_and(&out, &logical_not(&any_inf)?)?, &both_inf)?;
    if equal_nan {
        out = logical_or(&out, &logical_and(&isnan(a)?, &isnan(b)?)?)?;
    }
    Ok(out)
}

/// `mx.allclose(a, b, rtol, atol, equal_nan)`: a 0-d bool.
pub fn allclose(a: &Array, b: &Array, rtol: f64, atol: f64, equal_nan: bool) -> Result<Array> {
    all(&isclose(a, b, rtol, atol, equal_nan)?, None, false)
}

/// `mx.array_equal(a, b, equal_nan)`: false for different shapes, else all elements equal.
pub fn array_equal(a: &Array, b: &Array, equal_nan: bool) -> Result<Array> {
    if a.shape() != b.shape() {
        return Array::scalar(false);
    }
    let eq = if equal_nan { logical_or(&equal(a, b)?, &logical_and(&isnan(a)?, &isnan(b)?)?)? } else { equal(a, b)? };
    all(&eq, None, false)
}

/// `mx.divmod(a, b)`: `[floor_divide(a, b), remainder(a, b)]`.
/// As MLX's DivMod primitive, neither output carries a gradient (the remainder alone,
/// `mx.remainder`, does).
pub fn divmod(a: &Array, b: &Array) -> Result<Vec<Array>> {
    let (sa, sb) = (stop_gradient(a)?, stop_gradient(b)?);
    Ok(alloc::vec![floor_divide(&sa, &sb)?, remainder(&sa, &sb)?])
}

/// `mx.logical_xor(a, b)`.
pub fn logical_xor(a: &Array, b: &Array) -> Result<Array> {
    not_equal(&astype(a, DType::Bool)?, &astype(b, DType::Bool)?)
}

/// `mx.positive(a)`: the input itself.
pub fn positive(a: &Array) -> Result<Array> {
    Ok(a.clone())
}

/// `mx.nan_to_num(a, nan, posinf, neginf)`: replaces NaN and infinities in floating arrays
/// (infinities default to the dtype's largest finite values); other dtypes pass through.
pub fn nan_to_num(a: &Array, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Result<Array> {
    if !a.dtype().is_inexact() {
        return Ok(a.clone());
    }
    if a.dtype() == DType::Complex64 {
        // MLX 0.32.4 refuses complex input (a ValueError), rather than cleaning each part.
        return Err(Error::invalid("nan_to_num", "Does not yet support given type: complex64."));
    }
    let info = finfo(a.dtype())?;
    let k = |v: f64| Array::from_value(Value::F(v), a.dtype());
    let out = where_(&isnan(a)?, &k(nan)?, a)?;
    let out = where_(&isposinf(a)?, &k(posinf.unwrap_or(info.max))?, &out)?;
    where_(&isneginf(a)?, &k(neginf.unwrap_or(info.min))?, &out)
}

/// `mx.round(a, decimals)`: round half to even, at `decimals` digits (integers pass through).
pub fn round_decimals(a: &Array, decimals: i32) -> Result<Array> {
    if decimals == 0 || !a.dtype().is_inexact() {
        return round(a);
    }
    let s = Array::from_value(Value::F(libm::pow(10.0, decimals as f64)), a.dtype())?;
    divide(&round(&multiply(a, &s)?)?, &s)
}
