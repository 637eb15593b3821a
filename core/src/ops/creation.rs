//! Array creation: `full`, `zeros`, `ones`, `arange` and friends.

use crate::array::Array;
use crate::dtype::DType;
use crate::element::Value;
use crate::error::{Error, Result};
use crate::primitive::{Primitive, F64};
use crate::shape::checked_size;

/// The creation family (generators that need a kernel; constants are dense copies of a scalar).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CreationOp {
    /// `start, start+step, …` accumulated in the output dtype, as MLX does.
    Arange {
        /// First value.
        start: F64,
        /// Increment.
        step: F64,
    },
}

impl CreationOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            CreationOp::Arange { .. } => "arange",
        }
    }
}

/// `mx.full(shape, value, dtype)`: one scalar written to every element. The result owns dense
/// row-major memory, as MLX's `Full` does: a caller that exports it (numpy, the buffer
/// protocol, C) gets an ordinary writable array, not a zero-stride view.
pub fn full(shape: &[usize], value: Value, dtype: DType) -> Result<Array> {
    checked_size(shape, "full")?;
    full_array(shape, &Array::from_value(value, dtype)?, dtype)
}

/// `mx.full(shape, array)`: `vals` (converted to `dtype`) broadcast to `shape`, made dense.
pub fn full_array(shape: &[usize], vals: &Array, dtype: DType) -> Result<Array> {
    crate::ops::contiguous(&crate::ops::broadcast_to(&crate::ops::astype(vals, dtype)?, shape)?)
}

/// `mx.zeros(shape, dtype)`.
pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
    full(shape, Value::I(0), dtype)
}

/// `mx.ones(shape, dtype)`.
pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
    full(shape, Value::I(1), dtype)
}

/// `mx.zeros_like(a)`.
pub fn zeros_like(a: &Array) -> Result<Array> {
    full_like(a, Value::I(0), None)
}

/// `mx.ones_like(a)`.
pub fn ones_like(a: &Array) -> Result<Array> {
    full_like(a, Value::I(1), None)
}

/// `mx.full_like(a, value, dtype=None)`. In a shapeless trace the value is broadcast against
/// `a` itself (MLX's `full_like` broadcasts against `a`), so a replay on other shapes infers
/// the shape again instead of reading a constant of the traced shape.
pub fn full_like(a: &Array, value: Value, dtype: Option<DType>) -> Result<Array> {
    let dtype = dtype.unwrap_or(a.dtype());
    if crate::transforms::compile::shape_generic(a) {
        let v = Array::from_value(value, dtype)?;
        return crate::ops::contiguous(&crate::ops::shape::broadcast_axes(&v, core::slice::from_ref(a), &[])?);
    }
    full(a.shape(), value, dtype)
}

/// `mx.empty(shape, dtype)`. In MLX 0.32 `mx.empty` *is* `mx.zeros` (the same function
/// object), so the contents are defined: zeros.
pub fn empty(shape: &[usize], dtype: DType) -> Result<Array> {
    zeros(shape, dtype)
}

/// `mx.empty_like(a, dtype=None)`: MLX 0.32 binds it to `zeros_like`, so zeros of `a`'s shape
/// and `dtype` (default `a`'s dtype).
pub fn empty_like(a: &Array, dtype: Option<DType>) -> Result<Array> {
    zeros(a.shape(), dtype.unwrap_or(a.dtype()))
}

/// `mx.arange(start, stop, step, dtype)`: `ceil((stop - start) / step)` values.
pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Result<Array> {
    const OP: &str = "arange";
    if dtype == DType::Bool {
        return Err(Error::invalid(OP, "Cannot make an arange of type bool."));
    }
    if !(start.is_finite() && stop.is_finite() && step.is_finite()) {
        return Err(Error::invalid(OP, "Cannot compute length."));
    }
    if step == 0.0 {
        return Err(Error::invalid(OP, "Cannot compute length."));
    }
    let real = libm::ceil((stop - start) / step);
    if real > (i32::MAX as f64) {
        return Err(Error::invalid(OP, "Maximum size exceeded."));
    }
    let size = real.max(0.0) as usize;
    Ok(Array::from_op(
        Primitive::Creation(CreationOp::Arange { start: F64::new(start), step: F64::new(step) }),
        alloc::vec::Vec::new(),
        alloc::vec![size],
        dtype,
    ))
}

/// `mx.linspace(start, stop, num, dtype)`: computed as MLX does, `(1 - t)·start + t·stop` with
/// `t = arange(num) / (num - 1)`, in float64 for a float64 result and float32 otherwise, then cast.
pub fn linspace(start: f64, stop: f64, num: i64, dtype: DType) -> Result<Array> {
    use crate::ops::{add, astype, divide, multiply, subtract};
    if num < 0 {
        return Err(Error::invalid(
            "linspace",
            alloc::format!("[linspace] number of samples, {num}, must be non-negative."),
        ));
    }
    if num == 1 {
        return astype(&Array::from_slice(&[start as f32], &[1])?, dtype);
    }
    let inner = if dtype == DType::Float64 { DType::Float64 } else { DType::Float32 };
    let f = |v: f64| Array::from_value(crate::element::Value::F(v), inner);
    let t = divide(&arange(0.0, num as f64, 1.0, inner)?, &f((num - 1) as f64)?)?;
    let t_bar = subtract(&f(1.0)?, &t)?;
    astype(&add(&multiply(&t_bar, &f(start)?)?, &multiply(&t, &f(stop)?)?)?, dtype)
}

/// Row and column index grids `(i, j)` of shape `(n, 1)` and `(m,)` as int64.
fn index_grids(n: usize, m: usize) -> Result<(Array, Array)> {
    let i = crate::ops::reshape(&arange(0.0, n as f64, 1.0, DType::Int64)?, &[n as isize, 1])?;
    let j = arange(0.0, m as f64, 1.0, DType::Int64)?;
    Ok((i, j))
}

/// `mx.eye(n, m=None, k=0, dtype=float32)`: ones on the k-th diagonal.
pub fn eye(n: usize, m: Option<usize>, k: i64, dtype: DType) -> Result<Array> {
    let m = m.unwrap_or(n);
    checked_size(&[n, m], "eye")?;
    let (i, j) = index_grids(n, m)?;
    let d = crate::ops::subtract(&j, &i)?;
    crate::ops::astype(&crate::ops::equal(&d, &Array::scalar(k)?)?, dtype)
}

/// `mx.identity(n, dtype=float32)`.
pub fn identity(n: usize, dtype: DType) -> Result<Array> {
    eye(n, None, 0, dtype)
}

/// `mx.tri(n, m=None, k=0, dtype=float32)`: ones at and below the k-th diagonal.
pub fn tri(n: usize, m: Option<usize>, k: i64, dtype: DType) -> Result<Array> {
    let m = m.unwrap_or(n);
    checked_size(&[n, m], "tri")?;
    let (i, j) = index_grids(n, m)?;
    let d = crate::ops::subtract(&j, &i)?;
    crate::ops::astype(&crate::ops::less_equal(&d, &Array::scalar(k)?)?, dtype)
}

/// `mx.meshgrid(*arrays, sparse=False, indexing='xy')`.
pub fn meshgrid(arrays: &[Array], sparse: bool, indexing: &str) -> Result<alloc::vec::Vec<Array>> {
    use alloc::vec::Vec;
    if indexing != "xy" && indexing != "ij" {
        return Err(Error::invalid("meshgrid", "[meshgrid] Invalid indexing value. Valid values are 'xy' and 'ij'."));
    }
    let n = arrays.len();
    let mut outs = Vec::with_capacity(n);
    for (i, a) in arrays.iter().enumerate() {
        let mut shape = alloc::vec![1isize; n];
        shape[i] = -1;
        if indexing == "xy" && n >= 2 {
            if i == 0 {
                shape.swap(0, 1);
            } else if i == 1 {
                shape.swap(0, 1);
            }
        }
        outs.push(crate::ops::reshape(&crate::ops::flatten(a, 0, -1)?, &shape)?);
    }
    if sparse {
        return Ok(outs);
    }
    crate::ops::broadcast_arrays(&outs)
}
