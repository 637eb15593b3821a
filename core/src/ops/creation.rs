//! Array creation: `full`, `zeros`, `ones`, `arange` and friends.

use crate::array::Array;
use crate::dtype::DType;
use crate::element::Value;
use crate::error::{Error, Result};
use crate::primitive::{Primitive, F64};
use crate::shape::checked_size;

/// The creation family (generators that need a kernel; constants are broadcast views).
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

/// `mx.full(shape, value, dtype)`: a broadcast view of one scalar (no memory per element).
pub fn full(shape: &[usize], value: Value, dtype: DType) -> Result<Array> {
    checked_size(shape, "full")?;
    crate::ops::broadcast_to(&Array::from_value(value, dtype)?, shape)
}

/// `mx.full(shape, array)`: broadcasts `vals` (converted to `dtype`) to `shape`.
pub fn full_array(shape: &[usize], vals: &Array, dtype: DType) -> Result<Array> {
    crate::ops::broadcast_to(&crate::ops::astype(vals, dtype)?, shape)
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
    zeros(a.shape(), a.dtype())
}

/// `mx.ones_like(a)`.
pub fn ones_like(a: &Array) -> Result<Array> {
    ones(a.shape(), a.dtype())
}

/// `mx.full_like(a, value, dtype=None)`.
pub fn full_like(a: &Array, value: Value, dtype: Option<DType>) -> Result<Array> {
    full(a.shape(), value, dtype.unwrap_or(a.dtype()))
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
    let real = ((stop - start) / step).ceil();
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
