//! `mx.linalg`'s decompositions and the ops MLX composes from them: inv, tri_inv, cholesky,
//! cholesky_inv, qr, svd, eigh/eigvalsh, eig/eigvals, lu/lu_factor, solve, solve_triangular,
//! pinv, det and slogdet. Validation order, error wording, output shapes and dtypes follow
//! MLX 0.32's `mlx/linalg.cpp`; the composites are built from the same pieces as there, so
//! their dtype rules and errors fall out the same way. Kernels: `cpu/decomp`.

use super::{fmt_shape, matmul, LinalgOp};
use crate::array::Array;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops;
use crate::primitive::Primitive;
use alloc::format;
use alloc::vec::Vec;

fn check_float(dtype: DType, op: &'static str) -> Result<()> {
    if dtype != DType::Float32 && dtype != DType::Float64 {
        return Err(Error::invalid(
            op,
            format!("Arrays must have type float32 or float64. Received array with type {dtype}."),
        ));
    }
    Ok(())
}

/// The dtypes MLX's svd and eig family accept.
fn check_float_or_complex(dtype: DType, op: &'static str) -> Result<()> {
    match dtype {
        DType::Float32 | DType::Float64 | DType::Complex64 => Ok(()),
        other => Err(Error::invalid(
            op,
            format!("Arrays must have type float32, float64 or complex64. Received array with type {other}."),
        )),
    }
}

fn check_matrix(a: &Array, op: &'static str) -> Result<()> {
    if a.ndim() < 2 {
        return Err(Error::invalid(
            op,
            format!("Arrays must have >= 2 dimensions. Received array with {} dimensions.", a.ndim()),
        ));
    }
    Ok(())
}

fn is_square(a: &Array) -> bool {
    let nd = a.ndim();
    a.shape()[nd - 1] == a.shape()[nd - 2]
}

fn with_last(a: &Array, drop: usize, add: &[usize]) -> Vec<usize> {
    let mut s = a.shape()[..a.ndim() - drop].to_vec();
    s.extend_from_slice(add);
    s
}

fn single(op: LinalgOp, a: &Array, shape: Vec<usize>, dtype: DType) -> Array {
    Array::from_op(Primitive::Linalg(op), alloc::vec![a.clone()], shape, dtype)
}

fn inv_impl(a: &Array, tri: bool, upper: bool) -> Result<Array> {
    const OP: &str = "linalg::inv";
    check_float(a.dtype(), OP)?;
    check_matrix(a, OP)?;
    if !is_square(a) {
        return Err(Error::invalid(OP, "Inverses are only defined for square matrices."));
    }
    Ok(single(LinalgOp::Inverse { tri, upper }, a, a.shape().to_vec(), a.dtype()))
}

/// `mx.linalg.inv(a)`: inverses of the square matrices in the last two axes. A singular
/// matrix (an exactly zero LU pivot) fails at evaluation, as MLX's LAPACK path does.
pub fn inv(a: &Array) -> Result<Array> {
    inv_impl(a, false, true)
}

/// `mx.linalg.tri_inv(a, upper=False)`: inverses of the `upper` (else lower) triangles; the
/// other triangle is ignored and comes back zero.
pub fn tri_inv(a: &Array, upper: bool) -> Result<Array> {
    inv_impl(a, true, upper)
}

/// `mx.linalg.cholesky(a, upper=False)`: `L` (`A = L·Lᵀ`, from the lower triangle) or `U`
/// (`A = Uᵀ·U`, from the upper triangle). Not positive definite: no error, as in MLX.
pub fn cholesky(a: &Array, upper: bool) -> Result<Array> {
    const OP: &str = "linalg::cholesky";
    check_float(a.dtype(), OP)?;
    check_matrix(a, OP)?;
    if !is_square(a) {
        return Err(Error::invalid(OP, "Cholesky decomposition is only defined for square matrices."));
    }
    Ok(single(LinalgOp::Cholesky { upper }, a, a.shape().to_vec(), a.dtype()))
}

/// `mx.linalg.cholesky_inv(L, upper=False)`: `A⁻¹` from the Cholesky factor of `A`.
pub fn cholesky_inv(l: &Array, upper: bool) -> Result<Array> {
    const OP: &str = "linalg::cholesky_inv";
    check_float(l.dtype(), OP)?;
    check_matrix(l, OP)?;
    if !is_square(l) {
        return Err(Error::invalid(OP, "Cholesky inverse is only defined for square matrices."));
    }
    let l_inv = tri_inv(l, upper)?;
    let t = ops::swapaxes(&l_inv, -1, -2)?;
    if upper {
        matmul(&l_inv, &t)
    } else {
        matmul(&t, &l_inv)
    }
}

/// `mx.linalg.qr(a)`: reduced QR, `Q [..., M, K]` and `R [..., K, N]` with `K = min(M, N)`.
pub fn qr(a: &Array) -> Result<(Array, Array)> {
    const OP: &str = "linalg::qr";
    check_float(a.dtype(), OP)?;
    check_matrix(a, OP)?;
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let k = m.min(n);
    let metas = alloc::vec![(with_last(a, 1, &[k]), a.dtype()), (with_last(a, 2, &[k, n]), a.dtype())];
    let mut out = Array::from_op_multi(Primitive::Linalg(LinalgOp::Qr), alloc::vec![a.clone()], metas);
    let r = out.pop().ok_or_else(|| Error::runtime(OP, "Missing output."))?;
    let q = out.pop().ok_or_else(|| Error::runtime(OP, "Missing output."))?;
    Ok((q, r))
}

/// `mx.linalg.svd(a, compute_uv=True)`: `[U, S, Vt]` (full `U [..., M, M]`, `Vt [..., N, N]`),
/// or `[S]` without `compute_uv`. Complex64 input gives complex64 `U`, `Vt` (`Vt = Vᴴ`) and
/// float32 `S`, as MLX.
pub fn svd(a: &Array, compute_uv: bool) -> Result<Vec<Array>> {
    const OP: &str = "linalg::svd";
    check_float_or_complex(a.dtype(), OP)?;
    if a.ndim() < 2 {
        return Err(Error::invalid(
            OP,
            format!("Input array must have >= 2 dimensions. Received array with {} dimensions.", a.ndim()),
        ));
    }
    if !compute_uv {
        return Ok(alloc::vec![super::singular_values(a)?]);
    }
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let metas = alloc::vec![
        (with_last(a, 2, &[m, m]), a.dtype()),
        (with_last(a, 2, &[m.min(n)]), real_of(a.dtype())),
        (with_last(a, 2, &[n, n]), a.dtype()),
    ];
    Ok(Array::from_op_multi(Primitive::Linalg(LinalgOp::Svd), alloc::vec![a.clone()], metas))
}

fn validate_eig(a: &Array, op: &'static str) -> Result<()> {
    if a.dtype() != DType::Complex64 {
        check_float_or_complex(a.dtype(), op)?;
    }
    check_matrix(a, op)?;
    if !is_square(a) {
        return Err(Error::invalid(op, "Only defined for square matrices."));
    }
    Ok(())
}

/// The eigenvalue dtype of `eigh`: float32 for complex64 input, else the input's.
fn real_of(dtype: DType) -> DType {
    if dtype == DType::Complex64 { DType::Float32 } else { dtype }
}

/// MLX reads the lower triangle for `"L"` and the upper one for any other string.
fn uplo_lower(uplo: &str) -> bool {
    uplo == "L"
}

/// `mx.linalg.eigh(a, UPLO="L")`: eigenvalues (ascending) and eigenvectors (columns) of the
/// symmetric matrices given by their lower (`"L"`) or upper (`"U"`) triangle.
pub fn eigh(a: &Array, uplo: &str) -> Result<(Array, Array)> {
    const OP: &str = "linalg::eigh";
    validate_eig(a, OP)?;
    let lower = uplo_lower(uplo);
    let metas = alloc::vec![(with_last(a, 1, &[]), real_of(a.dtype())), (a.shape().to_vec(), a.dtype())];
    let mut out =
        Array::from_op_multi(Primitive::Linalg(LinalgOp::Eigh { lower, vectors: true }), alloc::vec![a.clone()], metas);
    let v = out.pop().ok_or_else(|| Error::runtime(OP, "Missing output."))?;
    let w = out.pop().ok_or_else(|| Error::runtime(OP, "Missing output."))?;
    Ok((w, v))
}

/// `mx.linalg.eigvalsh(a, UPLO="L")`: the eigenvalues of [`eigh`] only.
pub fn eigvalsh(a: &Array, uplo: &str) -> Result<Array> {
    const OP: &str = "linalg::eigvalsh";
    validate_eig(a, OP)?;
    let lower = uplo_lower(uplo);
    Ok(single(LinalgOp::Eigh { lower, vectors: false }, a, with_last(a, 1, &[]), real_of(a.dtype())))
}

/// `mx.linalg.eig(a)`: eigenvalues and eigenvectors (columns) of general square matrices,
/// both complex64 whatever the input type (float32, float64 or complex64, as MLX).
pub fn eig(a: &Array) -> Result<(Array, Array)> {
    const OP: &str = "linalg::eig";
    validate_eig(a, OP)?;
    let metas = alloc::vec![(with_last(a, 1, &[]), DType::Complex64), (a.shape().to_vec(), DType::Complex64)];
    let mut out = Array::from_op_multi(Primitive::Linalg(LinalgOp::Eig { vectors: true }), alloc::vec![a.clone()], metas);
    let v = out.pop().ok_or_else(|| Error::runtime(OP, "Missing output."))?;
    let w = out.pop().ok_or_else(|| Error::runtime(OP, "Missing output."))?;
    Ok((w, v))
}

/// `mx.linalg.eigvals(a)`: the eigenvalues of [`eig`] only.
pub fn eigvals(a: &Array) -> Result<Array> {
    const OP: &str = "linalg::eigvals";
    validate_eig(a, OP)?;
    Ok(single(LinalgOp::Eig { vectors: false }, a, with_last(a, 1, &[]), DType::Complex64))
}

/// The packed LU factor, LAPACK pivots and row permutation (MLX's `lu_helper`).
fn lu_helper(a: &Array, op: &'static str) -> Result<Vec<Array>> {
    check_float(a.dtype(), op)?;
    check_matrix(a, op)?;
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let metas = alloc::vec![
        (a.shape().to_vec(), a.dtype()),
        (with_last(a, 2, &[m.min(n)]), DType::Uint32),
        (with_last(a, 1, &[]), DType::Uint32),
    ];
    Ok(Array::from_op_multi(Primitive::Linalg(LinalgOp::Lu), alloc::vec![a.clone()], metas))
}

/// `mx.linalg.lu(a)`: `[P, L, U]` with `P` the row permutation (uint32, `A = L[P] @ U`), `L`
/// unit lower `[..., M, K]` and `U` upper `[..., K, N]`. Singular input is not an error.
pub fn lu(a: &Array) -> Result<Vec<Array>> {
    let out = lu_helper(a, "linalg::lu")?;
    let (packed, rows) = (&out[0], &out[2]);
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let k = m.min(n);
    let mut l = ops::tril(packed, -1)?;
    let mut u = ops::triu(packed, 0)?;
    let zeros = alloc::vec![0isize; nd];
    let ones = alloc::vec![1isize; nd];
    let mut stop: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
    if n != k {
        stop[nd - 1] = k as isize;
        l = ops::slice(&l, &zeros, &stop, &ones)?;
    } else if m != k {
        stop[nd - 2] = k as isize;
        u = ops::slice(&u, &zeros, &stop, &ones)?;
    }
    let l = ops::add(&l, &ops::eye(m, Some(k), 0, a.dtype())?)?;
    Ok(alloc::vec![rows.clone(), l, u])
}

/// `mx.linalg.lu_factor(a)`: the packed LU factor and LAPACK's pivots (uint32, 0-based).
pub fn lu_factor(a: &Array) -> Result<(Array, Array)> {
    let mut out = lu_helper(a, "linalg::lu_factor")?;
    out.truncate(2);
    let piv = out.pop().ok_or_else(|| Error::runtime("linalg::lu_factor", "Missing output."))?;
    let lu = out.pop().ok_or_else(|| Error::runtime("linalg::lu_factor", "Missing output."))?;
    Ok((lu, piv))
}

fn validate_solve(a: &Array, b: &Array, op: &'static str) -> Result<()> {
    if a.ndim() < 2 {
        return Err(Error::invalid(
            op,
            format!("First input must have >= 2 dimensions. Received array with {} dimensions.", a.ndim()),
        ));
    }
    if b.ndim() < 1 {
        return Err(Error::invalid(
            op,
            format!("Second input must have >= 1 dimensions. Received array with {} dimensions.", b.ndim()),
        ));
    }
    if !is_square(a) {
        return Err(Error::invalid(
            op,
            format!("First input must be a square matrix. Received array with shape {}.", fmt_shape(a.shape())),
        ));
    }
    let b_dim = if b.ndim() > 1 { b.shape()[b.ndim() - 2] } else { b.shape()[0] };
    if a.shape()[a.ndim() - 1] != b_dim {
        return Err(Error::invalid(
            op,
            format!(
                "Last dimension of first input with shape {} must match second to last dimension of second input with shape {}.",
                fmt_shape(a.shape()),
                fmt_shape(b.shape())
            ),
        ));
    }
    let out = promote_types(a.dtype(), b.dtype());
    if out != DType::Float32 && out != DType::Float64 {
        return Err(Error::invalid(
            op,
            format!(
                "Input arrays must promote to float32 or float64.  Received arrays with type {} and {}.",
                a.dtype(),
                b.dtype()
            ),
        ));
    }
    Ok(())
}

/// `mx.linalg.solve(a, b)`: `x` with `a @ x = b` (`b` a vector or a matrix of right-hand
/// sides), through `lu` and two triangular solves as MLX.
pub fn solve(a: &Array, b: &Array) -> Result<Array> {
    validate_solve(a, b, "linalg::solve")?;
    let f = lu(a)?;
    let mut perm = ops::argsort(&f[0], Some(-1))?;
    let mut axis = -1;
    if b.ndim() >= 2 {
        perm = ops::expand_dims(&perm, &[-1])?;
        axis = -2;
    }
    let pb = ops::take_along_axis(b, &perm, Some(axis))?;
    let y = solve_triangular(&f[1], &pb, false)?;
    solve_triangular(&f[2], &y, true)
}

/// `mx.linalg.solve_triangular(a, b, upper=False)`: `tri_inv(a, upper) @ b`, as MLX.
pub fn solve_triangular(a: &Array, b: &Array, upper: bool) -> Result<Array> {
    validate_solve(a, b, "linalg::solve_triangular")?;
    matmul(&tri_inv(a, upper)?, b)
}

fn scalar(v: f64, dtype: DType) -> Result<Array> {
    ops::astype(&Array::scalar(v)?, dtype)
}

/// `mx.linalg.pinv(a)`: the Moore-Penrose pseudo-inverse from the SVD, singular values below
/// `10·max(M, N)·eps·σ_max` dropped (MLX's cutoff).
pub fn pinv(a: &Array) -> Result<Array> {
    const OP: &str = "linalg::pinv";
    check_float(a.dtype(), OP)?;
    check_matrix(a, OP)?;
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    if a.size() == 0 {
        let mut s = a.shape().to_vec();
        s.swap(nd - 1, nd - 2);
        return ops::zeros(&s, a.dtype());
    }
    let k = m.min(n);
    let outs = svd(a, true)?;
    let zeros = alloc::vec![0isize; nd];
    let ones = alloc::vec![1isize; nd];
    let mut ends: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
    ends[nd - 2] = m as isize;
    ends[nd - 1] = k as isize;
    let u = ops::swapaxes(&ops::slice(&outs[0], &zeros, &ends, &ones)?, -1, -2)?;
    ends[nd - 2] = k as isize;
    ends[nd - 1] = n as isize;
    let v = ops::swapaxes(&ops::slice(&outs[2], &zeros, &ends, &ones)?, -1, -2)?;
    let s = ops::expand_dims(&outs[1], &[-2])?;
    let eps = if a.dtype() == DType::Float64 { f64::EPSILON } else { f32::EPSILON as f64 };
    let rcond = 10.0 * m.max(n) as f64 * eps;
    let cutoff = ops::multiply(&scalar(rcond, a.dtype())?, &ops::max(&s, Some(&[-1]), true)?)?;
    let rs = ops::where_(&ops::greater(&s, &cutoff)?, &ops::reciprocal(&s)?, &scalar(0.0, a.dtype())?)?;
    matmul(&ops::multiply(&v, &rs)?, &u)
}

fn validate_det(a: &Array, op: &'static str) -> Result<DType> {
    if a.dtype() == DType::Complex64 {
        return Err(Error::invalid(op, "Complex inputs are not supported."));
    }
    check_matrix(a, op)?;
    if !is_square(a) {
        return Err(Error::invalid(op, "Only defined for square matrices."));
    }
    Ok(if a.dtype().is_inexact() { a.dtype() } else { promote_types(a.dtype(), DType::Float32) })
}

/// Determinants of matrices up to 3×3 by their closed forms (MLX's `det_raw_small`).
fn det_small(a: &Array) -> Result<Array> {
    let nd = a.ndim();
    let n = a.shape()[nd - 1];
    if n == 0 {
        return ops::broadcast_to(&scalar(1.0, a.dtype())?, &a.shape()[..nd - 2]);
    }
    let elem = |i: usize, j: usize| -> Result<Array> {
        let mut start = alloc::vec![0isize; nd];
        let mut stop: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
        start[nd - 2] = i as isize;
        stop[nd - 2] = i as isize + 1;
        start[nd - 1] = j as isize;
        stop[nd - 1] = j as isize + 1;
        ops::squeeze(&ops::slice(a, &start, &stop, &alloc::vec![1isize; nd])?, Some(&[-2, -1]))
    };
    let (mul, sub) = (ops::multiply, ops::subtract);
    match n {
        1 => elem(0, 0),
        2 => sub(&mul(&elem(0, 0)?, &elem(1, 1)?)?, &mul(&elem(0, 1)?, &elem(1, 0)?)?),
        _ => {
            let e = |i, j| elem(i, j);
            let minor = |a: usize, b: usize, c: usize, d: usize| -> Result<Array> {
                sub(&mul(&e(1, a)?, &e(2, b)?)?, &mul(&e(1, c)?, &e(2, d)?)?)
            };
            let t0 = mul(&e(0, 0)?, &minor(1, 2, 2, 1)?)?;
            let t1 = mul(&e(0, 1)?, &minor(0, 2, 2, 0)?)?;
            let t2 = mul(&e(0, 2)?, &minor(0, 1, 1, 0)?)?;
            ops::add(&sub(&t0, &t1)?, &t2)
        }
    }
}

/// `(sign, log|det|)` of float input (MLX's `slogdet_impl`): closed forms up to 3×3, else
/// from `lu_factor` (pivot parity and the signs of U's diagonal).
fn slogdet_impl(a: &Array) -> Result<(Array, Array)> {
    let dtype = a.dtype();
    let n = a.shape()[a.ndim() - 1];
    if n <= 3 {
        let raw = det_small(a)?;
        return Ok((ops::sign(&raw)?, ops::log(&ops::abs(&raw)?)?));
    }
    let (packed, pivots) = lu_factor(a)?;
    let diag = ops::diagonal(&packed, 0, -2, -1)?;
    let iota = ops::arange(0.0, n as f64, 1.0, DType::Uint32)?;
    let i32s = |x: &Array| ops::astype(x, DType::Int32);
    let parity = i32s(&ops::sum(&ops::not_equal(&pivots, &iota)?, Some(&[-1]), false)?)?;
    let zero = scalar(0.0, dtype)?;
    let num_neg = i32s(&ops::sum(&ops::less(&diag, &zero)?, Some(&[-1]), false)?)?;
    let total = ops::add(&parity, &num_neg)?;
    let two = Array::scalar(2i32)?;
    let sign = ops::astype(
        &ops::subtract(&Array::scalar(1i32)?, &ops::multiply(&two, &ops::remainder(&total, &two)?)?)?,
        dtype,
    )?;
    let logabs = ops::sum(&ops::log(&ops::abs(&diag)?)?, Some(&[-1]), false)?;
    let is_zero = ops::any(&ops::equal(&diag, &zero)?, Some(&[-1]), false)?;
    let sign = ops::where_(&is_zero, &zero, &sign)?;
    let logabs = ops::where_(&is_zero, &scalar(f64::NEG_INFINITY, dtype)?, &logabs)?;
    Ok((sign, logabs))
}

/// `mx.linalg.slogdet(a)`: `(sign, log|det|)`; integer input is computed as float32.
pub fn slogdet(a: &Array) -> Result<(Array, Array)> {
    let dtype = validate_det(a, "linalg::slogdet")?;
    slogdet_impl(&ops::astype(a, dtype)?)
}

/// `mx.linalg.det(a)`: determinants (closed forms up to 3×3, else `sign·exp(log|det|)`).
pub fn det(a: &Array) -> Result<Array> {
    let dtype = validate_det(a, "linalg::det")?;
    let x = ops::astype(a, dtype)?;
    if x.shape()[x.ndim() - 1] <= 3 {
        return det_small(&x);
    }
    let (sign, logabs) = slogdet_impl(&x)?;
    ops::multiply(&sign, &ops::exp(&logabs)?)
}
