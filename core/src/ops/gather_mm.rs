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
//! - `qqmm(x, w, scales, ...)` and `gather_qqmm`: `x` is quantized and dequantized in the
//!   mode (nvfp4 or mxfp8) and multiplied with the quantized `w` (`quantized_matmul` /
//!   `gather_qmm`, transposed); a float `w` is quantized first. MLX 0.32.4's CPU backend
//!   computes only the matrix-vector case with an already quantized `w` and raises
//!   `[QQMatmul] NYI for the general case` / `[GatherQQMM] NYI` for the rest; here every case
//!   runs, and each row equals what MLX gives for that row alone (its GPU backends compute
//!   the general case). Global scales are refused: MLX's CPU kernel accepts and silently
//!   ignores them (its own test marks that as a bug to fix). A float `w` with scales is an
//!   error here (MLX accepts the call and fails when evaluating it).

use alloc::vec::Vec;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{
    astype, dequantize, expand_dims, flatten, matmul, quantize, quantized::indices_or_default, quantized_matmul,
    squeeze, take,
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
    let lhs = crate::ops::shape::broadcast_operand(&lhs, &ishape)?;
    let rhs = crate::ops::shape::broadcast_operand(&rhs, &ishape)?;
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
/// global_scale_w=None)`: `x` quantized and dequantized in `mode` (its values moved onto the
/// mode's grid) times the quantized `w` (quantized here first when it is a float matrix). See
/// the module doc for how this relates to MLX's CPU backend.
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
    if x.ndim() == 0 {
        return Err(Error::invalid(OP, "Got 0 dimension input. Inputs must have at least one dimension."));
    }
    if w.ndim() != 2 {
        return Err(Error::invalid(
            OP,
            alloc::format!("Only 2D inputs are supported but x.ndim() == {} and w.ndim() == {}.", x.ndim(), w.ndim()),
        ));
    }
    let vector = x.ndim() == 1;
    let x2 = if vector { expand_dims(x, &[0])? } else { x.clone() };
    let q = QqOperands::new(OP, &x2, w, scales, group_size, bits, mode, global_scale_x, global_scale_w)?;
    let out = quantized_matmul(&q.x_hat, &q.w, &q.scales, None, true, group_size, bits, mode)?;
    let out = astype(&out, x.dtype())?;
    if vector {
        squeeze(&out, Some(&[0]))
    } else {
        Ok(out)
    }
}

/// `mx.gather_qqmm(x, w, scales=None, lhs_indices=None, rhs_indices=None, group_size=None,
/// bits=None, mode="nvfp4", global_scale_x=None, global_scale_w=None, sorted_indices=False)`:
/// [`qqmm`] with [`crate::ops::gather_qmm`]'s matrix-level gather over the batch dimensions of
/// `x` and `w`; without indices it is [`qqmm`].
#[allow(clippy::too_many_arguments)]
pub fn gather_qqmm(
    x: &Array,
    w: &Array,
    scales: Option<&Array>,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    group_size: Option<i64>,
    bits: Option<i64>,
    mode: &str,
    global_scale_x: Option<&Array>,
    global_scale_w: Option<&Array>,
    sorted_indices: bool,
) -> Result<Array> {
    const OP: &str = "gather_qqmm";
    if lhs_indices.is_none() && rhs_indices.is_none() {
        return qqmm(x, w, scales, group_size, bits, mode, global_scale_x, global_scale_w);
    }
    for i in [lhs_indices, rhs_indices].into_iter().flatten() {
        if !i.dtype().is_integer() {
            return Err(Error::invalid(OP, "Got indices with invalid dtype. Indices must be integral."));
        }
    }
    let q = QqOperands::new(OP, x, w, scales, group_size, bits, mode, global_scale_x, global_scale_w)?;
    let out = crate::ops::gather_qmm(
        &q.x_hat,
        &q.w,
        &q.scales,
        None,
        lhs_indices,
        rhs_indices,
        true,
        group_size,
        bits,
        mode,
        sorted_indices,
    )?;
    astype(&out, x.dtype())
}

/// What both products multiply: `x` on the mode's grid (in its own dtype) and `w` quantized
/// with its scales.
struct QqOperands {
    x_hat: Array,
    w: Array,
    scales: Array,
}

impl QqOperands {
    #[allow(clippy::too_many_arguments)]
    fn new(
        op: &'static str,
        x: &Array,
        w: &Array,
        scales: Option<&Array>,
        group_size: Option<i64>,
        bits: Option<i64>,
        mode: &str,
        global_scale_x: Option<&Array>,
        global_scale_w: Option<&Array>,
    ) -> Result<QqOperands> {
        if !matches!(mode, "nvfp4" | "mxfp8") {
            return Err(Error::invalid(
                op,
                alloc::format!("Only 'nvfp4' and 'mxfp8' quantization modes are supported but '{mode}' was provided."),
            ));
        }
        if global_scale_x.is_some() || global_scale_w.is_some() {
            return Err(Error::unsupported(op, "Global scales are not supported on the CPU."));
        }
        if !x.dtype().is_float() || x.dtype() == DType::Float64 {
            return Err(Error::invalid(
                op,
                alloc::format!(
                    "Only real floating types except float64 are supported but first argument dtype == {}.",
                    x.dtype()
                ),
            ));
        }
        let (w, scales) = match (w.dtype(), scales) {
            (DType::Uint32, Some(s)) => (w.clone(), s.clone()),
            (DType::Uint32, None) => {
                return Err(Error::invalid(op, "Scales must be provided if second argument is quantized."));
            }
            (_, Some(_)) => {
                return Err(Error::invalid(
                    op,
                    alloc::format!("Scales were given but the second argument is not quantized (dtype {}).", w.dtype()),
                ));
            }
            (_, None) => pair(op, quantize(w, group_size, bits, mode, None)?)?,
        };
        let (xq, xs) = pair(op, quantize(x, group_size, bits, mode, None)?)?;
        let x_hat = dequantize(&xq, &xs, None, group_size, bits, mode, None, Some(x.dtype()))?;
        Ok(QqOperands { x_hat, w, scales })
    }
}

/// The (quantized values, scales) that `quantize` returns in the floating-point modes.
fn pair(op: &'static str, v: Vec<Array>) -> Result<(Array, Array)> {
    let mut it = v.into_iter();
    match (it.next(), it.next()) {
        (Some(q), Some(s)) => Ok((q, s)),
        _ => Err(Error::runtime(op, "Unexpected quantize outputs.")),
    }
}
