//! `mx.segmented_mm(a, b, segments)` and `mx.block_masked_mm(a, b, block_size, mask_out,
//! mask_lhs, mask_rhs)` with MLX 0.32's CPU semantics and validation (`mlx/ops.cpp`,
//! `backend/cpu/masked_mm.cpp`), composed from ordinary ops rather than fused kernels: a
//! segment or block mask selects elements with `where` (so values outside a segment or a
//! false block never enter the product — a NaN there stays out, as in MLX's kernels).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::shape::{broadcast_shapes, fmt_shape};
use alloc::format;
use alloc::vec::Vec;

use crate::ops::linalg::{as_matrices, real_float_type};

fn zero(dtype: DType) -> Result<Array> {
    ops::zeros(&[], dtype)
}

/// `segments [..., 2]` holds `[start, end)` ranges of the inner dimension; the result
/// `[..., M, N]` holds `a[:, start:end] @ b[start:end, :]` per segment (zeros for an empty or
/// reversed range; a range past `K` is cut at `K`). Segments are read as uint32 (as MLX:
/// a negative start wraps to a huge one, giving an empty range).
pub fn segmented_mm(a: &Array, b: &Array, segments: &Array) -> Result<Array> {
    const OP: &str = "segmented_mm";
    if a.ndim() != 2 || b.ndim() != 2 {
        return Err(Error::invalid(OP, "Batched matmul not supported"));
    }
    let sn = segments.ndim();
    if sn < 1 || segments.shape()[sn - 1] != 2 {
        return Err(Error::invalid(
            OP,
            format!("The segments should have shape (..., 2) but {} was provided.", fmt_shape(segments.shape())),
        ));
    }
    let out_type = real_float_type(a, b, OP)?;
    if !segments.dtype().is_integer() {
        return Err(Error::invalid(OP, "Got segments with invalid dtype. Segments must be integral."));
    }
    // MLX does not check this and its BLAS call aborts the process; here it is an error.
    let k = a.shape()[1];
    if b.shape()[0] != k {
        return Err(Error::invalid(
            OP,
            format!(
                "Last dimension of first input with shape {} must match first dimension of second input with shape {}.",
                fmt_shape(a.shape()),
                fmt_shape(b.shape())
            ),
        ));
    }
    let a = ops::astype(a, out_type)?;
    let b = ops::astype(b, out_type)?;
    let seg = ops::astype(segments, DType::Uint32)?;
    let start = ops::slice(&seg, &offsets(sn, 0), &ends(segments.shape(), 1), &alloc::vec![1; sn])?;
    let end = ops::slice(&seg, &offsets(sn, 1), &ends(segments.shape(), 2), &alloc::vec![1; sn])?;
    // inside[..., k] = start <= k < end, shaped [..., 1, K] to select columns of a.
    let kk = ops::arange(0.0, k as f64, 1.0, DType::Uint32)?;
    let inside = ops::logical_and(&ops::greater_equal(&kk, &start)?, &ops::less(&kk, &end)?)?;
    let inside = ops::expand_dims(&inside, &[-2])?;
    let masked = ops::where_(&inside, &a, &zero(out_type)?)?;
    ops::matmul(&masked, &b)
}

fn offsets(nd: usize, last: isize) -> Vec<isize> {
    let mut v = alloc::vec![0isize; nd];
    v[nd - 1] = last;
    v
}

fn ends(shape: &[usize], last: isize) -> Vec<isize> {
    let mut v: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    let n = v.len();
    v[n - 1] = last;
    v
}

/// `a @ b` with `block_size × block_size` tiles masked: `mask_lhs [..., ⌈M/bs⌉, ⌈K/bs⌉]` and
/// `mask_rhs [..., ⌈K/bs⌉, ⌈N/bs⌉]` on the operands, `mask_out [..., ⌈M/bs⌉, ⌈N/bs⌉]` on the
/// product. A bool mask zeroes the false tiles; a float mask scales each tile by its value.
/// The operand masks are bool only when both are (a missing one is `true`). MLX's CPU kernel
/// computes in float32 only: other result types are a RuntimeError (raised here when the op is
/// built, MLX raises it at evaluation).
pub fn block_masked_mm(
    a: &Array,
    b: &Array,
    block_size: i64,
    mask_out: Option<&Array>,
    mask_lhs: Option<&Array>,
    mask_rhs: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "block_masked_mm";
    if mask_out.is_none() && mask_lhs.is_none() && mask_rhs.is_none() {
        return ops::matmul(a, b);
    }
    if block_size != 32 && block_size != 64 {
        return Err(Error::invalid(
            OP,
            format!("Only block_sizes 32, 64 are supported.Got block size {block_size}."),
        ));
    }
    let bs = block_size as usize;
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::invalid(OP, "Got 0 dimension input. Inputs must have at least one dimension."));
    }
    let (a_vec, b_vec) = (a.ndim() == 1, b.ndim() == 1);
    let (a, b) = as_matrices(a, b, OP)?;
    let (an, bn) = (a.ndim(), b.ndim());
    let out_type = real_float_type(&a, &b, OP)?;
    let (m, k, n) = (a.shape()[an - 2], a.shape()[an - 1], b.shape()[bn - 1]);
    let batch = broadcast_shapes(&a.shape()[..an - 2], &b.shape()[..bn - 2], OP)?;
    let with = |r: usize, c: usize| [&batch[..], &[r, c]].concat();
    let a = crate::ops::shape::broadcast_operand(&ops::astype(&a, out_type)?, &with(m, k))?;
    let b = crate::ops::shape::broadcast_operand(&ops::astype(&b, out_type)?, &with(k, n))?;
    let tiles = |d: usize| d.div_ceil(bs);
    // A mask of dtype `dt` broadcast to [batch, ty, tx], then applied tile-wise to `x`.
    let apply = |x: &Array, mask: &Array, dt: DType, rows: usize, cols: usize| -> Result<Array> {
        let mk = crate::ops::shape::broadcast_operand(&ops::astype(mask, dt)?, &with(tiles(rows), tiles(cols)))?;
        let full = ops::repeat(&ops::repeat(&mk, bs as isize, Some(-2))?, bs as isize, Some(-1))?;
        let nd = full.ndim();
        let mut stop: Vec<isize> = full.shape().iter().map(|&d| d as isize).collect();
        stop[nd - 2] = rows as isize;
        stop[nd - 1] = cols as isize;
        let full = ops::slice(&full, &alloc::vec![0; nd], &stop, &alloc::vec![1; nd])?;
        if dt == DType::Bool {
            ops::where_(&full, x, &zero(out_type)?)
        } else {
            ops::multiply(x, &full)
        }
    };
    if out_type != DType::Float32 {
        return Err(Error::runtime("BlockMaskedMM::eval", "Currently only supports float32."));
    }
    let (mut a, mut b) = (a, b);
    if mask_lhs.is_some() || mask_rhs.is_some() {
        let t = Array::from_slice(&[true], &[1])?;
        let lhs = mask_lhs.cloned().unwrap_or_else(|| t.clone());
        let rhs = mask_rhs.cloned().unwrap_or(t);
        let dt = if lhs.dtype() == DType::Bool && rhs.dtype() == DType::Bool { DType::Bool } else { out_type };
        let lhs = if a_vec { ops::expand_dims(&lhs, &[-2])? } else { lhs };
        let rhs = if b_vec { ops::expand_dims(&rhs, &[-1])? } else { rhs };
        a = apply(&a, &lhs, dt, m, k)?;
        b = apply(&b, &rhs, dt, k, n)?;
    }
    let mut out = ops::matmul(&a, &b)?;
    if let Some(mo) = mask_out {
        let mut ex = Vec::new();
        if a_vec {
            ex.push(-2);
        }
        if b_vec {
            ex.push(-1);
        }
        let mo = if ex.is_empty() { mo.clone() } else { ops::expand_dims(mo, &ex)? };
        let dt = if mo.dtype() == DType::Bool { DType::Bool } else { out_type };
        out = apply(&out, &mo, dt, m, n)?;
    }
    let nd = out.ndim() as isize;
    let mut axes = Vec::new();
    if a_vec {
        axes.push(nd - 2);
    }
    if b_vec {
        axes.push(nd - 1);
    }
    if axes.is_empty() { Ok(out) } else { ops::squeeze(&out, Some(&axes)) }
}
