//! `mx.gather_mm` and `mx.qqmm`: two products that MLX 0.32 serves on the CPU by what
//! amounts to a composition of ops this core already has, so they are composed here (no new
//! primitive or kernel).
//!
//! - `gather_mm(a, b, lhs_indices, rhs_indices)`: matrix `lhs_indices[i]` of `a`'s batch
//!   times matrix `rhs_indices[i]` of `b`'s batch, for every `i` of the broadcast indices.
//!   Composed as two `take`s along the flattened batch followed by one batched `matmul`: the
//!   selected matrices are materialized (MLX's kernel reads them in place), which costs memory
//!   but gives the same numbers. `sorted_indices` is only a performance hint in MLX and is
//!   accepted and ignored.
//! - `qqmm(x, w_q, scales, ...)`: MLX's CPU backend implements only the matrix-vector case
//!   (`w` already quantized, one row of `x`): `x` is quantized and dequantized in the same mode
//!   and multiplied with the dequantized `w` (`quantized_matmul`, transposed). Every other case
//!   raises `[QQMatmul] NYI for the general case` in MLX, and the same error here (MLX raises it
//!   when evaluating, here when the op is called). Global scales are refused: MLX's CPU kernel
//!   accepts and silently ignores them (its own test marks that as a bug to fix).

use alloc::vec::Vec;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{
    astype, dequantize, expand_dims, flatten, matmul, quantize, quantized::indices_or_default, quantized_matmul,
    reshape, squeeze, take,
};

/// `mx.gather_mm(a, b, lhs_indices=None, rhs_indices=None, sorted_indices=False)`: see the
/// module doc. Without indices it is `matmul(a, b)`.
pub fn gather_mm(
    a: &Array,
    b: &Array,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    sorted_indices: bool,
) -> Result<Array> {
    const OP: &str = "gather_mm";
    let _ = sorted_indices;
    if lhs_indices.is_none() && rhs_indices.is_none() {
        return matmul(a, b);
    }
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::invalid(OP, "Got 0 dimension input. Inputs must have at least one dimension."));
    }
    let (a_nd, b_nd) = (a.ndim(), b.ndim());
    let (a, b) = crate::ops::linalg::as_matrices(a, b, OP)?;
    let out_type = crate::ops::linalg::real_float_type(&a, &b, OP)?;
    let a = astype(&a, out_type)?;
    let b = astype(&b, out_type)?;
    let lhs = indices_or_default(OP, lhs_indices, &a)?;
    let rhs = indices_or_default(OP, rhs_indices, &b)?;
    let ishape = crate::shape::broadcast_shapes(lhs.shape(), rhs.shape(), OP)?;
    let lhs = crate::ops::broadcast_to(&lhs, &ishape)?;
    let rhs = crate::ops::broadcast_to(&rhs, &ishape)?;
    // (batch, M, K) and (batch, K, N), then the indexed matrices: ishape + (M, K) / (K, N).
    let batch3 = |x: &Array| if x.ndim() == 2 { expand_dims(x, &[0]) } else { flatten(x, 0, -3) };
    let (a3, b3) = (batch3(&a)?, batch3(&b)?);
    let out = matmul(&take(&a3, &lhs, Some(0))?, &take(&b3, &rhs, Some(0))?)?;
    // Drop the singleton axes inserted for 1-D inputs.
    let nd = out.ndim() as isize;
    let mut axes: Vec<isize> = Vec::new();
    if a_nd == 1 {
        axes.push(nd - 2);
    }
    if b_nd == 1 {
        axes.push(nd - 1);
    }
    if axes.is_empty() {
        Ok(out)
    } else {
        squeeze(&out, Some(&axes))
    }
}

/// `mx.qqmm(x, w, scales=None, group_size=None, bits=None, mode="nvfp4", global_scale_x=None,
/// global_scale_w=None)`: what MLX's CPU backend computes (see the module doc).
#[allow(clippy::too_many_arguments)]
pub fn qqmm(
    x: &Array,
    w: &Array,
    scales: Option<&Array>,
    group_size: Option<i64>,
    bits: Option<i64>,
    mode: &str,
    global_scale_x: Option<&Array>,
    global_scale_w: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "qqmm";
    if !matches!(mode, "nvfp4" | "mxfp8") {
        return Err(Error::invalid(
            OP,
            alloc::format!("Only 'nvfp4' and 'mxfp8' quantization modes are supported but '{mode}' was provided."),
        ));
    }
    if global_scale_x.is_some() || global_scale_w.is_some() {
        return Err(Error::unsupported(OP, "Global scales are not supported on the CPU."));
    }
    if !x.dtype().is_float() || x.dtype() == DType::Float64 {
        return Err(Error::invalid(OP, alloc::format!("Only float32, float16 and bfloat16 inputs are supported but x has type {}.", x.dtype())));
    }
    let in_nd = x.ndim();
    if in_nd == 0 {
        return Err(Error::invalid(OP, "Got 0 dimension input. Inputs must have at least one dimension."));
    }
    let x2 = if in_nd == 1 {
        expand_dims(x, &[0])?
    } else if w.ndim() == 2 && in_nd > 2 {
        flatten(x, 0, -2)?
    } else {
        x.clone()
    };
    let general = || Error::runtime("QQMatmul", "NYI for the general case");
    let Some(scales) = scales else { return Err(general()) };
    if w.dtype() != DType::Uint32 || x2.shape()[x2.ndim() - 2] != 1 {
        return Err(general());
    }
    // x quantized and dequantized in the same mode (values on the mode's grid), in x's dtype.
    let xq = quantize(&x2, group_size, bits, mode, None)?;
    let (xq, xs) = match xq.as_slice() {
        [q, s] => (q, s),
        _ => return Err(Error::runtime(OP, "Unexpected quantize outputs.")),
    };
    let x_hat = dequantize(xq, xs, None, group_size, bits, mode, None, Some(x2.dtype()))?;
    let out = quantized_matmul(&x_hat, w, scales, None, true, group_size, bits, mode)?;
    let out = astype(&out, x2.dtype())?;
    if in_nd > 2 && w.ndim() == 2 {
        let mut shape: Vec<isize> = x.shape()[..in_nd - 1].iter().map(|&d| d as isize).collect();
        shape.push(out.shape()[out.ndim() - 1] as isize);
        reshape(&out, &shape)
    } else if in_nd == 1 {
        squeeze(&out, Some(&[0]))
    } else {
        Ok(out)
    }
}
