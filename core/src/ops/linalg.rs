//! The linalg family: matrix products and convolution as primitives (their kernels, in
//! `cpu/linalg.rs`, all go through the one GEMM in `cpu/gemm.rs`), and the ops MLX composes
//! from them — inner, outer, tensordot, einsum, trace, kron, `linalg.norm`. Shapes, dtype rules
//! and error wording follow MLX 0.32 (`mlx/ops.cpp`, `mlx/einsum.cpp`, `mlx/linalg.cpp`).

pub(crate) mod grad;
mod conv;
pub(crate) mod conv_rules;
mod conv_transpose;
mod convolve;
mod decomp;
mod einsum;
mod norm;

pub use conv::{conv1d, conv2d, conv3d, conv_general, ConvParams};
pub use conv_transpose::{conv_transpose1d, conv_transpose2d, conv_transpose3d};
pub use convolve::convolve;
pub use decomp::{
    cholesky, cholesky_inv, det, eig, eigh, eigvals, eigvalsh, inv, lu, lu_factor, pinv, qr, slogdet, solve,
    solve_triangular, svd, tri_inv,
};
pub use einsum::einsum;
pub use norm::{norm, NormOrd};

use crate::array::Array;
use crate::dtype::{promote_types, result_type, DType};
use crate::error::{Error, Result};
use crate::ops::{astype, diagonal, expand_dims, multiply, reshape, squeeze, sum, transpose};
use crate::primitive::{Primitive, F64};
use crate::shape::{broadcast_shapes, checked_size, normalize_axis};
use alloc::format;
use alloc::vec::Vec;

/// The linalg family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LinalgOp {
    /// `a @ b` over equal (already broadcast) batch dims: `[..., M, K] × [..., K, N]`.
    Matmul,
    /// `alpha·(a @ b) + beta·c`, with `c` broadcast to the output shape.
    AddMM {
        /// Scale of the product (an f32 value, as MLX stores it).
        alpha: F64,
        /// Scale of `c`.
        beta: F64,
    },
    /// N-d convolution, input `[N, spatial…, C_in]`, weight `[C_out, spatial…, C_in/groups]`.
    Conv(ConvParams),
    /// Singular values of the last two axes, descending: `[..., M, N] → [..., min(M, N)]`.
    SingularValues,
    // ---- decompositions (kernels in `cpu/decomp`)
    /// Inverse of square matrices; `tri`: of the `upper` (else lower) triangle only.
    Inverse {
        /// Triangular inverse.
        tri: bool,
        /// Which triangle (`tri` only).
        upper: bool,
    },
    /// Cholesky factor from the `upper` (else lower) triangle.
    Cholesky {
        /// Return `U` (`A = UᵀU`) instead of `L` (`A = LLᵀ`).
        upper: bool,
    },
    /// Reduced QR: outputs `Q [..., M, K]`, `R [..., K, N]`.
    Qr,
    /// Full SVD: outputs `U [..., M, M]`, `S [..., K]`, `Vt [..., N, N]`.
    Svd,
    /// Symmetric eigen-decomposition from the `lower` (else upper) triangle: values
    /// ascending, and when `vectors` the eigenvectors as columns.
    Eigh {
        /// Read the lower triangle (MLX's `UPLO="L"`).
        lower: bool,
        /// Also output the eigenvectors.
        vectors: bool,
    },
    /// General eigen-decomposition, complex64 values (and vectors when `vectors`).
    Eig {
        /// Also output the eigenvectors.
        vectors: bool,
    },
    /// Partial-pivot LU: outputs the packed `LU`, LAPACK pivots and the row permutation (uint32).
    Lu,
}

impl LinalgOp {
    /// Whether the op works on the last two axes of one input, batched over the leading ones
    /// (the decompositions, `inv` and the singular values): vmap maps them unchanged.
    pub fn is_decomposition(&self) -> bool {
        use LinalgOp::*;
        matches!(self, SingularValues | Inverse { .. } | Cholesky { .. } | Qr | Svd | Eigh { .. } | Eig { .. } | Lu)
    }

    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            LinalgOp::Matmul => "matmul",
            LinalgOp::AddMM { .. } => "addmm",
            LinalgOp::Conv(_) => "conv",
            LinalgOp::SingularValues | LinalgOp::Svd => "svd",
            LinalgOp::Inverse { .. } => "inv",
            LinalgOp::Cholesky { .. } => "cholesky",
            LinalgOp::Qr => "qr",
            LinalgOp::Eigh { .. } => "eigh",
            LinalgOp::Eig { .. } => "eig",
            LinalgOp::Lu => "lu",
        }
    }
}

/// Singular values of the matrices in the last two axes of `a` (`mx.linalg.svd(a,
/// compute_uv=False)`), descending, for float32/float64/complex64 input as MLX accepts
/// (complex64 gives float32 values).
pub fn singular_values(a: &Array) -> Result<Array> {
    const OP: &str = "linalg::svd";
    if a.ndim() < 2 {
        return Err(Error::invalid(
            OP,
            format!("Input array must have >= 2 dimensions. Received array with {} dimensions.", a.ndim()),
        ));
    }
    let dtype = match a.dtype() {
        DType::Float32 | DType::Float64 => a.dtype(),
        DType::Complex64 => DType::Float32,
        other => {
            return Err(Error::invalid(
                OP,
                format!("Arrays must have type float32, float64 or complex64. Received array with type {other}."),
            ))
        }
    };
    let nd = a.ndim();
    let mut shape = a.shape()[..nd - 2].to_vec();
    shape.push(a.shape()[nd - 2].min(a.shape()[nd - 1]));
    Ok(Array::from_op(Primitive::Linalg(LinalgOp::SingularValues), alloc::vec![a.clone()], shape, dtype))
}

pub(crate) use crate::shape::fmt_shape;

fn isz(s: &[usize]) -> Vec<isize> {
    s.iter().map(|&d| d as isize).collect()
}

/// The operands of a matmul-family op as matrices — a 1-D `a` as a row, a 1-D `b` as a column
/// (numpy's rule) — after MLX's check that `a`'s last dimension meets `b`'s second to last.
pub(crate) fn as_matrices(a: &Array, b: &Array, op: &'static str) -> Result<(Array, Array)> {
    let x = if a.ndim() == 1 { expand_dims(a, &[0])? } else { a.clone() };
    let y = if b.ndim() == 1 { expand_dims(b, &[1])? } else { b.clone() };
    if x.shape()[x.ndim() - 1] != y.shape()[y.ndim() - 2] {
        return Err(Error::invalid(
            op,
            format!(
                "Last dimension of first input with shape {} must match second to last dimension of second input with shape {}.",
                fmt_shape(x.shape()),
                fmt_shape(y.shape())
            ),
        ));
    }
    Ok((x, y))
}

/// The common type of `a` and `b` for the ops MLX runs on real floats only (gather_mm,
/// segmented_mm, block_masked_mm), with MLX's message otherwise.
pub(crate) fn real_float_type(a: &Array, b: &Array, op: &'static str) -> Result<DType> {
    let out = promote_types(a.dtype(), b.dtype());
    if !out.is_float() {
        return Err(Error::invalid(
            op,
            format!(
                "Only real floating point types are supported but {} and {} were provided which results in {}, which is not a real floating point type.",
                a.dtype(),
                b.dtype(),
                out
            ),
        ));
    }
    Ok(out)
}

/// `mx.matmul(a, b)`: numpy semantics — 1-D operands are promoted to a row / column and the
/// inserted axis removed again; batch dims broadcast. Only inexact dtypes (floats, complex).
pub fn matmul(a: &Array, b: &Array) -> Result<Array> {
    const OP: &str = "matmul";
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::invalid(OP, "Got 0 dimension input. Inputs must have at least one dimension."));
    }
    let (a_vec, b_vec) = (a.ndim() == 1, b.ndim() == 1);
    let (mut x, mut y) = as_matrices(a, b, OP)?;
    let out_type = promote_types(a.dtype(), b.dtype());
    if !out_type.is_inexact() {
        return Err(Error::invalid(
            OP,
            format!(
                "Only inexact types are supported but {} and {} were provided which results in {}, which is not a floating point type.",
                a.dtype(),
                b.dtype(),
                out_type
            ),
        ));
    }
    x = astype(&x, out_type)?;
    y = astype(&y, out_type)?;
    let (x, y) = broadcast_batch(&x, &y)?;
    let mut shape = x.shape().to_vec();
    let nd = shape.len();
    shape[nd - 1] = y.shape()[nd - 1];
    let out = Array::from_op(Primitive::Linalg(LinalgOp::Matmul), alloc::vec![x, y], shape, out_type);
    squeeze_vectors(out, a_vec, b_vec)
}

/// Broadcasts the batch dims (all but the last two) of two matrices against each other.
fn broadcast_batch(x: &Array, y: &Array) -> Result<(Array, Array)> {
    let (nx, ny) = (x.ndim(), y.ndim());
    if nx == 2 && ny == 2 {
        return Ok((x.clone(), y.clone()));
    }
    let batch = broadcast_shapes(&x.shape()[..nx - 2], &y.shape()[..ny - 2], "broadcast_shapes")?;
    if crate::transforms::compile::shape_generic(x) || crate::transforms::compile::shape_generic(y) {
        // A shapeless trace (MLX's dynamic tracing): each operand is broadcast against the
        // other, so a replay on other batch shapes infers them again (a vmapped matmul).
        let fit = |a: &Array, other: &Array| -> Result<Array> {
            let nd = a.ndim();
            if a.shape()[..nd - 2] == batch[..] {
                return Ok(a.clone());
            }
            crate::ops::shape::broadcast_axes(a, core::slice::from_ref(other), &[-2, -1])
        };
        return Ok((fit(x, y)?, fit(y, x)?));
    }
    let mut sx = batch.clone();
    sx.extend_from_slice(&x.shape()[nx - 2..]);
    let mut sy = batch;
    sy.extend_from_slice(&y.shape()[ny - 2..]);
    Ok((crate::ops::shape::broadcast_operand(x, &sx)?, crate::ops::shape::broadcast_operand(y, &sy)?))
}

/// Removes the axes that 1-D operands of a matrix product inserted.
fn squeeze_vectors(out: Array, a_vec: bool, b_vec: bool) -> Result<Array> {
    let nd = out.ndim() as isize;
    let mut axes = Vec::new();
    if a_vec {
        axes.push(nd - 2);
    }
    if b_vec {
        axes.push(nd - 1);
    }
    if axes.is_empty() {
        Ok(out)
    } else {
        squeeze(&out, Some(&axes))
    }
}

/// `mx.addmm(c, a, b, alpha=1, beta=1)`: `alpha·(a @ b) + beta·c` in one pass; `c` broadcasts to
/// the product's shape. Real floating types only (complex is composed from matmul, as in MLX).
pub fn addmm(c: &Array, a: &Array, b: &Array, alpha: f32, beta: f32) -> Result<Array> {
    const OP: &str = "addmm";
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::invalid(OP, "Got 0 dimension input. Inputs must have at least one dimension."));
    }
    let out_type = result_type(&[a.dtype(), b.dtype(), c.dtype()])?;
    if out_type == DType::Complex64 {
        let prod = multiply(&matmul(a, b)?, &Array::scalar(alpha)?)?;
        return crate::ops::add(&prod, &multiply(&Array::scalar(beta)?, c)?);
    }
    let (a_vec, b_vec) = (a.ndim() == 1, b.ndim() == 1);
    let (x, y) = as_matrices(a, b, OP)?;
    if !out_type.is_float() {
        return Err(Error::invalid(
            OP,
            format!(
                "Only real floating point types are supported but {}, {} and {} were provided which results in {}, which is not a real floating point type.",
                c.dtype(),
                a.dtype(),
                b.dtype(),
                out_type
            ),
        ));
    }
    let x = astype(&x, out_type)?;
    let y = astype(&y, out_type)?;
    let c = astype(c, out_type)?;
    let (x, y) = broadcast_batch(&x, &y)?;
    let nd = x.ndim();
    let mut out_shape = x.shape().to_vec();
    out_shape[nd - 1] = y.shape()[nd - 1];
    // The shape the caller sees (vector axes removed); c must broadcast to it.
    let mut visible = out_shape.clone();
    if b_vec {
        visible.remove(nd - 1);
    }
    if a_vec {
        visible.remove(nd - 2);
    }
    let cshape = broadcast_shapes(c.shape(), &visible, "broadcast_shapes")?;
    let mut c = crate::ops::shape::broadcast_operand(&c, &cshape)?;
    if a_vec || b_vec {
        let mut s = c.shape().to_vec();
        if b_vec {
            s.push(1);
        }
        if a_vec {
            let last = s.last().copied().unwrap_or(1);
            s.push(last);
            let l = s.len();
            s[l - 2] = 1;
        }
        c = reshape(&c, &isz(&s))?;
    }
    if c.shape() != out_shape.as_slice() {
        return Err(Error::invalid(OP, "input c must broadcast to the output shape"));
    }
    let op = LinalgOp::AddMM { alpha: F64::new(alpha as f64), beta: F64::new(beta as f64) };
    let out = Array::from_op(Primitive::Linalg(op), alloc::vec![x, y, c], out_shape, out_type);
    squeeze_vectors(out, a_vec, b_vec)
}

/// `mx.outer(a, b)`: `a.flatten()[:, None] * b.flatten()` (any dtype, as multiply allows).
pub fn outer(a: &Array, b: &Array) -> Result<Array> {
    let x = reshape(a, &[a.size() as isize, 1])?;
    let y = reshape(b, &[-1])?;
    multiply(&x, &y)
}

/// `mx.inner(a, b)`: contraction over the last axes (a scalar operand multiplies).
pub fn inner(a: &Array, b: &Array) -> Result<Array> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return multiply(a, b);
    }
    if a.shape()[a.ndim() - 1] != b.shape()[b.ndim() - 1] {
        return Err(Error::invalid("inner", "a and b must have the same last dimension."));
    }
    tensordot_axes(a, b, &[-1], &[-1])
}

/// `mx.tensordot(a, b, axes=n)`: contracts the last `n` axes of `a` with the first `n` of `b`.
pub fn tensordot(a: &Array, b: &Array, axes: isize) -> Result<Array> {
    const OP: &str = "tensordot";
    if axes < 0 {
        return Err(Error::invalid(OP, "axis must be greater or equal to 0."));
    }
    if axes as usize > a.ndim().min(b.ndim()) {
        return Err(Error::invalid(OP, "axis must be less than the number of dimensions of a and b."));
    }
    let n = axes;
    let ax_a: Vec<isize> = (0..n).map(|i| i - n).collect();
    let ax_b: Vec<isize> = (0..n).collect();
    tensordot_axes(a, b, &ax_a, &ax_b)
}

/// `mx.tensordot(a, b, axes=[axes_a, axes_b])`: contracts the listed axis pairs.
pub fn tensordot_axes(a: &Array, b: &Array, axes_a: &[isize], axes_b: &[isize]) -> Result<Array> {
    const OP: &str = "tensordot";
    if axes_a.len() != axes_b.len() {
        return Err(Error::invalid(OP, "axes must have the same size."));
    }
    let na = axes_a.iter().map(|&x| normalize_axis(x, a.ndim(), OP)).collect::<Result<Vec<_>>>()?;
    let nb = axes_b.iter().map(|&x| normalize_axis(x, b.ndim(), OP)).collect::<Result<Vec<_>>>()?;
    let mut csize = 1usize;
    for (&i, &j) in na.iter().zip(&nb) {
        if a.shape()[i] != b.shape()[j] {
            return Err(Error::invalid(OP, "a and b must have the same shape on the contracted axes."));
        }
        csize = csize.saturating_mul(a.shape()[i]);
    }
    let mut t1 = Vec::new();
    let mut t2 = Vec::new();
    let mut rshape = Vec::new();
    let (mut size1, mut size2) = (1usize, 1usize);
    for i in 0..a.ndim() {
        if !na.contains(&i) {
            t1.push(i as isize);
            size1 = size1.saturating_mul(a.shape()[i]);
            rshape.push(a.shape()[i] as isize);
        }
    }
    t1.extend(na.iter().map(|&i| i as isize));
    t2.extend(nb.iter().map(|&i| i as isize));
    for i in 0..b.ndim() {
        if !nb.contains(&i) {
            t2.push(i as isize);
            size2 = size2.saturating_mul(b.shape()[i]);
            rshape.push(b.shape()[i] as isize);
        }
    }
    let x = reshape(&transpose(a, Some(&t1))?, &[size1 as isize, csize as isize])?;
    let y = reshape(&transpose(b, Some(&t2))?, &[csize as isize, size2 as isize])?;
    reshape(&matmul(&x, &y)?, &rshape)
}

/// `mx.trace(a, offset=0, axis1=0, axis2=1, dtype=None)`: sum of a diagonal, in `dtype`
/// (default: the input's dtype; the sum then follows `sum`'s dtype rules).
pub fn trace(a: &Array, offset: isize, axis1: isize, axis2: isize, dtype: Option<DType>) -> Result<Array> {
    const OP: &str = "trace";
    let nd = a.ndim();
    if nd < 2 {
        return Err(Error::invalid(OP, format!("Array must have at least two dimensions, but got {nd} dimensions.")));
    }
    let norm = |ax: isize, which: &str| -> Result<usize> {
        let v = if ax < 0 { ax + nd as isize } else { ax };
        if v < 0 || v >= nd as isize {
            return Err(Error::index(OP, format!("Invalid {which} {ax} for array with {nd} dimensions.")));
        }
        Ok(v as usize)
    };
    let (a1, a2) = (norm(axis1, "axis1")?, norm(axis2, "axis2")?);
    if a1 == a2 {
        return Err(Error::invalid(OP, "axis1 and axis2 cannot be the same axis"));
    }
    let d = diagonal(a, offset, a1 as isize, a2 as isize)?;
    let d = astype(&d, dtype.unwrap_or(a.dtype()))?;
    sum(&d, Some(&[-1]), false)
}

/// `mx.kron(a, b)`: the Kronecker product, as an interleaved broadcast multiply.
pub fn kron(a: &Array, b: &Array) -> Result<Array> {
    const OP: &str = "kron";
    if a.size() == 0 || b.size() == 0 {
        return Err(Error::invalid(OP, "Input arrays cannot be empty."));
    }
    let nd = a.ndim().max(b.ndim());
    let mut sa = alloc::vec![1usize; 2 * nd];
    let mut sb = alloc::vec![1usize; 2 * nd];
    let mut out = alloc::vec![1usize; nd];
    for (k, &d) in a.shape().iter().rev().enumerate() {
        let i = nd - 1 - k;
        sa[2 * i] = d;
        out[i] *= d;
    }
    for (k, &d) in b.shape().iter().rev().enumerate() {
        let i = nd - 1 - k;
        sb[2 * i + 1] = d;
        out[i] = out[i].checked_mul(d).ok_or_else(|| Error::invalid(OP, "Shape overflow."))?;
    }
    checked_size(&out, OP)?;
    let p = multiply(&reshape(a, &isz(&sa))?, &reshape(b, &isz(&sb))?)?;
    reshape(&p, &isz(&out))
}
