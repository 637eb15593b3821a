//! Window functions `mx.hanning`, `mx.hamming`, `mx.blackman`, `mx.bartlett`: float32
//! arrays of `M` points built lazily from `arange`, with MLX's formulas (so the rounding is
//! MLX's): an empty array for `M < 1`, `[1.0]` for `M == 1`.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::{abs, add, arange, cos, multiply, ones, sin, square, subtract, zeros};

/// `n = arange(M)` and the f32 scalar `factor(M - 1)` (computed as MLX's C++ does), or the fixed result for `M <= 1`.
fn points(m: i64, factor: impl Fn(i64) -> f32) -> Result<core::result::Result<(Array, Array), Array>> {
    if m < 1 {
        return Ok(Err(zeros(&[0], DType::Float32)?));
    }
    if m == 1 {
        return Ok(Err(ones(&[1], DType::Float32)?));
    }
    let n = arange(0.0, m as f64, 1.0, DType::Float32)?;
    Ok(Ok((n, Array::scalar(factor(m - 1))?)))
}

fn f32s(v: f64) -> Result<Array> {
    Array::scalar(v as f32)
}

/// `mx.hanning(M)`: `sin(π n / (M - 1))²`.
pub fn hanning(m: i64) -> Result<Array> {
    match points(m, |d| (core::f64::consts::PI / d as f64) as f32)? {
        Err(fixed) => Ok(fixed),
        Ok((n, f)) => square(&sin(&multiply(&f, &n)?)?),
    }
}

/// `mx.hamming(M)`: `0.54 - 0.46 cos(2π n / (M - 1))`.
pub fn hamming(m: i64) -> Result<Array> {
    match points(m, |d| (2.0 * core::f64::consts::PI / d as f64) as f32)? {
        Err(fixed) => Ok(fixed),
        Ok((n, f)) => subtract(&f32s(0.54)?, &multiply(&f32s(0.46)?, &cos(&multiply(&f, &n)?)?)?),
    }
}

/// `mx.blackman(M)`: `0.34 - 0.5 cos(x) + 0.16 cos(x)²` with `x = 2π n / (M - 1)` (MLX's
/// form of `0.42 - 0.5 cos(x) + 0.08 cos(2x)`).
pub fn blackman(m: i64) -> Result<Array> {
    match points(m, |d| (2.0 * core::f64::consts::PI / d as f64) as f32)? {
        Err(fixed) => Ok(fixed),
        Ok((n, f)) => {
            let c = cos(&multiply(&f, &n)?)?;
            let t1 = multiply(&f32s(0.5)?, &c)?;
            let t2 = multiply(&f32s(0.16)?, &square(&c)?)?;
            add(&subtract(&f32s(0.34)?, &t1)?, &t2)
        }
    }
}

/// `mx.bartlett(M)`: `1 - |2 n / (M - 1) - 1|`.
pub fn bartlett(m: i64) -> Result<Array> {
    match points(m, |d| 2.0f32 / d as f32)? {
        Err(fixed) => Ok(fixed),
        Ok((n, f)) => {
            let one = f32s(1.0)?;
            subtract(&one, &abs(&subtract(&multiply(&f, &n)?, &one)?)?)
        }
    }
}
