//! Reductions over axes (sum, prod, max, min, all, any). Arg-reductions, scans and the
//! composite statistics (mean, var, logsumexp …) build on these.

use crate::array::Array;
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::primitive::Primitive;
use crate::shape::normalize_axes;
use alloc::vec::Vec;

/// Which reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    /// Sum.
    Sum,
    /// Product.
    Prod,
    /// Maximum (NaN propagates).
    Max,
    /// Minimum (NaN propagates).
    Min,
    /// Logical and.
    All,
    /// Logical or.
    Any,
}

/// The reduce family.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Reduce `axes` (sorted, unique) of the input; the output keeps them as size-1 axes.
    Reduce {
        /// Which reduction.
        kind: ReduceKind,
        /// Axes reduced.
        axes: Vec<usize>,
    },
}

impl ReduceOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            ReduceOp::Reduce { kind, .. } => match kind {
                ReduceKind::Sum => "sum",
                ReduceKind::Prod => "prod",
                ReduceKind::Max => "max",
                ReduceKind::Min => "min",
                ReduceKind::All => "all",
                ReduceKind::Any => "any",
            },
        }
    }
}

/// The axes to reduce: all when `None`.
pub fn reduction_axes(a: &Array, axes: Option<&[isize]>, op: &'static str) -> Result<Vec<usize>> {
    match axes {
        None => Ok((0..a.ndim()).collect()),
        Some(ax) => normalize_axes(ax, a.ndim(), op),
    }
}

/// Output dtype of a sum/prod: small integers and bool accumulate in 32 bits, as MLX does.
pub fn sum_dtype(d: DType) -> DType {
    match d {
        DType::Bool | DType::Int8 | DType::Int16 => DType::Int32,
        DType::Uint8 | DType::Uint16 => DType::Uint32,
        other => other,
    }
}

/// Records `kind` over `axes` of `a`, keeping or dropping the reduced axes.
pub fn reduce(kind: ReduceKind, a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    let name = ReduceOp::Reduce { kind, axes: Vec::new() }.name();
    let axes = reduction_axes(a, axes, name)?;
    let out_dtype = match kind {
        ReduceKind::Sum | ReduceKind::Prod => sum_dtype(a.dtype()),
        ReduceKind::Max | ReduceKind::Min => a.dtype(),
        ReduceKind::All | ReduceKind::Any => DType::Bool,
    };
    if matches!(kind, ReduceKind::Max | ReduceKind::Min) && a.size() == 0 && !axes.is_empty() {
        return Err(Error::invalid(name, alloc::format!("[{name}] Cannot {name} reduce zero size array.")));
    }
    let _ = Kind::Bool;
    let kept: Vec<usize> = a.shape().iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
    let out = Array::from_op(Primitive::Reduce(ReduceOp::Reduce { kind, axes: axes.clone() }), alloc::vec![a.clone()], kept, out_dtype);
    if keepdims {
        Ok(out)
    } else {
        let s: Vec<isize> = a.shape().iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d as isize).collect();
        crate::ops::reshape(&out, &s)
    }
}

/// `mx.sum(a, axis, keepdims)`.
pub fn sum(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Sum, a, axes, keepdims)
}
/// `mx.prod(a, axis, keepdims)`.
pub fn prod(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Prod, a, axes, keepdims)
}
/// `mx.max(a, axis, keepdims)`.
pub fn max(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Max, a, axes, keepdims)
}
/// `mx.min(a, axis, keepdims)`.
pub fn min(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Min, a, axes, keepdims)
}
/// `mx.all(a, axis, keepdims)`.
pub fn all(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::All, a, axes, keepdims)
}
/// `mx.any(a, axis, keepdims)`.
pub fn any(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Any, a, axes, keepdims)
}
