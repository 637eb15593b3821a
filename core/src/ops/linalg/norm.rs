//! `mx.linalg.norm`: vector and matrix norms composed from reductions, as `mlx/linalg.cpp`
//! builds them (same dtype rules: results are at least float32, the L2 / Frobenius norm keeps
//! the `sqrt(sum(square))` dtype chain). The matrix 2-norm, -2-norm and nuclear norm reduce
//! singular values (MLX calls its LAPACK SVD; we use the Jacobi kernel in `cpu/svd.rs`).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::reduce::at_least_float;
use crate::ops::{abs, astype, expand_dims, flatten, max, min, not_equal, power, reshape, sqrt, square, sum, transpose};
use alloc::format;
use alloc::vec::Vec;

const OP: &str = "linalg::norm";

/// The `ord` argument of `norm`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrd {
    /// A numeric order (`inf` and `-inf` included).
    Num(f64),
    /// `'fro'` (or `'f'`): the Frobenius norm of a matrix.
    Fro,
    /// `'nuc'`: the nuclear norm of a matrix.
    Nuc,
}

fn l2(a: &Array, axes: &[isize], keepdims: bool) -> Result<Array> {
    if a.dtype() == DType::Complex64 {
        let m = abs(a)?;
        sqrt(&sum(&crate::ops::multiply(&m, &m)?, Some(axes), keepdims)?)
    } else {
        sqrt(&sum(&square(a)?, Some(axes), keepdims)?)
    }
}

fn vector_norm(a: &Array, ord: f64, axes: &[isize], keepdims: bool) -> Result<Array> {
    let dtype = at_least_float(a.dtype());
    if ord == 0.0 {
        let nz = not_equal(a, &Array::scalar(0i32)?)?;
        astype(&sum(&nz, Some(axes), keepdims)?, dtype)
    } else if ord == 1.0 {
        astype(&sum(&abs(a)?, Some(axes), keepdims)?, dtype)
    } else if ord == 2.0 {
        l2(a, axes, keepdims)
    } else if ord == f64::INFINITY {
        astype(&max(&abs(a)?, Some(axes), keepdims)?, dtype)
    } else if ord == f64::NEG_INFINITY {
        astype(&min(&abs(a)?, Some(axes), keepdims)?, dtype)
    } else {
        let p = Array::from_value(crate::Value::F(ord), dtype)?;
        let inv = Array::from_value(crate::Value::F(1.0 / ord), dtype)?;
        power(&sum(&power(&abs(a)?, &p)?, Some(axes), keepdims)?, &inv)
    }
}

fn matrix_norm(a: &Array, ord: NormOrd, axes: &[isize], keepdims: bool) -> Result<Array> {
    let dtype = at_least_float(a.dtype());
    let nd = a.ndim() as isize;
    let row = if axes[0] < 0 { axes[0] + nd } else { axes[0] };
    let col = if axes[1] < 0 { axes[1] + nd } else { axes[1] };
    let sum_abs = |ax: isize| sum(&abs(a)?, Some(&[ax]), keepdims);
    match ord {
        NormOrd::Fro => l2(a, axes, keepdims),
        NormOrd::Num(o) if o == 1.0 || o == -1.0 => {
            let c = col - (!keepdims && col > row && col > 0) as isize;
            let s = sum_abs(row)?;
            let r = if o == 1.0 { max(&s, Some(&[c]), keepdims)? } else { min(&s, Some(&[c]), keepdims)? };
            astype(&r, dtype)
        }
        NormOrd::Num(o) if o.is_infinite() => {
            let r_ax = row - (!keepdims && row > col && row > 0) as isize;
            let s = sum_abs(col)?;
            let r = if o > 0.0 { max(&s, Some(&[r_ax]), keepdims)? } else { min(&s, Some(&[r_ax]), keepdims)? };
            astype(&r, dtype)
        }
        // MLX casts back to the input's float type here (not for 'nuc'): complex64 input
        // gives a complex64 2-norm.
        NormOrd::Num(o) if o == 2.0 || o == -2.0 => astype(
            &singular_value_norm(a, row, col, keepdims, |s| {
                if o > 0.0 { max(s, Some(&[-1]), false) } else { min(s, Some(&[-1]), false) }
            })?,
            dtype,
        ),
        NormOrd::Nuc => singular_value_norm(a, row, col, keepdims, |s| sum(s, Some(&[-1]), false)),
        NormOrd::Num(o) => Err(Error::invalid(OP, format!("Invalid ord {o} for matrix norm."))),
    }
}

/// Reduces the singular values of the (row, col) matrices of `a` with `reduce`, putting the
/// reduced axes back as size 1 when `keepdims`.
fn singular_value_norm(
    a: &Array,
    row: isize,
    col: isize,
    keepdims: bool,
    reduce: impl Fn(&Array) -> Result<Array>,
) -> Result<Array> {
    let nd = a.ndim() as isize;
    let mut perm: Vec<isize> = (0..nd).filter(|&i| i != row && i != col).collect();
    perm.extend([row, col]);
    let s = crate::ops::linalg::singular_values(&transpose(a, Some(&perm))?)?;
    let r = reduce(&s)?;
    if keepdims {
        let mut axes = [row, col];
        axes.sort_unstable();
        expand_dims(&r, &axes)
    } else {
        Ok(r)
    }
}

/// `mx.linalg.norm(a, ord=None, axis=None, keepdims=False)`.
///
/// `ord = None` is the L2 norm of the flattened array (no axes) or over the given one or two
/// axes; a numeric `ord` picks a vector (one axis) or matrix (two axes) norm; `'fro'`/`'nuc'`
/// need exactly two axes.
pub fn norm(a: &Array, ord: Option<NormOrd>, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    let all: Vec<isize> = (0..a.ndim() as isize).collect();
    match ord {
        None => match axes {
            None => {
                let out = l2(&flatten(a, 0, -1)?, &[0], keepdims)?;
                if keepdims {
                    reshape(&out, &alloc::vec![1; a.ndim()])
                } else {
                    Ok(out)
                }
            }
            Some(ax) => {
                if ax.len() > 2 {
                    return Err(Error::invalid(OP, "Received too many axes for norm."));
                }
                l2(a, ax, keepdims)
            }
        },
        Some(NormOrd::Num(o)) => {
            let ax = axes.unwrap_or(&all);
            match ax.len() {
                1 => vector_norm(a, o, ax, keepdims),
                2 => matrix_norm(a, NormOrd::Num(o), ax, keepdims),
                _ => Err(Error::invalid(OP, "Received too many axes for norm.")),
            }
        }
        Some(o) => {
            let ax = axes.unwrap_or(&all);
            if ax.len() != 2 {
                let name = if o == NormOrd::Fro { "fro" } else { "nuc" };
                return Err(Error::invalid(
                    OP,
                    format!("Norm '{name}' only supported for matrices, but received {} axis/axes.", ax.len()),
                ));
            }
            matrix_norm(a, o, ax, keepdims)
        }
    }
}
