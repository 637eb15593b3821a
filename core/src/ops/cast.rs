//! `astype` (value conversion) and `view` (reinterpreting bytes).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::primitive::Primitive;

/// The cast family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastOp {
    /// Convert values to the output dtype.
    AsType,
    /// Reinterpret the bytes as the output dtype.
    View,
}

impl CastOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            CastOp::AsType => "astype",
            CastOp::View => "view",
        }
    }
}

/// `a.astype(dtype)`: converts values (floats to ints truncate, as MLX does).
pub fn astype(a: &Array, dtype: DType) -> Result<Array> {
    if a.dtype() == dtype {
        return Ok(a.clone());
    }
    Ok(Array::from_op(Primitive::Cast(CastOp::AsType), alloc::vec![a.clone()], a.shape().to_vec(), dtype))
}

/// `mx.view(a, dtype)`: the same bytes seen as another dtype; the last axis scales by the
/// ratio of item sizes.
pub fn view(a: &Array, dtype: DType) -> Result<Array> {
    if a.dtype() == dtype {
        return Ok(a.clone());
    }
    // MLX keeps the raw bytes through a bool view (`x.view(bool_).view(int32)` is `x`). Our
    // bool buffers hold only 0/1 (the kernel normalizes), so while the bool view is still
    // pending, view its source directly: same bytes, same shape as MLX's round trip.
    if a.dtype() == DType::Bool {
        if let Some(op) = a.pending_op() {
            if op.prim == Primitive::Cast(CastOp::View) {
                let src = op.inputs.lock().first().cloned();
                if let Some(x) = src {
                    return view(&x, dtype);
                }
            }
        }
    }
    let (from, to) = (a.itemsize(), dtype.size());
    let mut shape = a.shape().to_vec();
    if from != to {
        let Some(last) = shape.last_mut() else {
            return Err(Error::invalid("view", "Changing the type size of a scalar array is not supported."));
        };
        if (*last * from) % to != 0 {
            return Err(Error::invalid(
                "view",
                alloc::format!("The last dimension must be divisible by {} to view {} as {}.", to / from.min(to), a.dtype(), dtype),
            ));
        }
        *last = *last * from / to;
    }
    Ok(Array::from_op(Primitive::Cast(CastOp::View), alloc::vec![a.clone()], shape, dtype))
}

/// vjp of the cast family: `astype` casts the cotangent back to a floating input's dtype
/// (integer inputs receive none); `view` reinterprets bits and has no gradient rule.
pub(crate) fn vjp(op: &CastOp, inputs: &[Array], g: &Array) -> Result<alloc::vec::Vec<Option<Array>>> {
    match op {
        CastOp::AsType => {
            let x = &inputs[0];
            if !x.dtype().is_inexact() || !g.dtype().is_inexact() {
                return Ok(alloc::vec![None]);
            }
            Ok(alloc::vec![Some(astype(g, x.dtype())?)])
        }
        // MLX's View has no vjp: its error, its name ("View <dtype>").
        CastOp::View => Err(crate::transforms::rules::not_in_mlx(&alloc::format!("View {}", g.dtype()))),
    }
}
