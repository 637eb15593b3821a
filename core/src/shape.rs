//! Shape arithmetic shared by every op: sizes with overflow checks, strides, broadcasting, axes.

use crate::error::{Error, Result};
use alloc::vec::Vec;

/// A shape as MLX's messages print it: `(2,3)`, `(4)`, `()`.
pub fn fmt_shape<D: core::fmt::Display>(s: &[D]) -> alloc::string::String {
    let inner: Vec<alloc::string::String> = s.iter().map(|d| alloc::format!("{d}")).collect();
    alloc::format!("({})", inner.join(","))
}

/// The element count of `shape`, or an error naming `op` when it overflows.
pub fn checked_size(shape: &[usize], op: &'static str) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).ok_or_else(|| {
        Error::invalid(op, alloc::format!("Shape {} has more elements than can be addressed.", fmt_shape(shape)))
    })
}

/// MLX stores shape dimensions as 32-bit integers; a dimension beyond `i32::MAX` is an
/// `Overflow` error (Python `OverflowError`) naming the value, as MLX reports it, rather than
/// a graph that wraps or fails later under a shape the caller never asked for.
pub fn check_dims(shape: &[usize], op: &'static str) -> Result<()> {
    match shape.iter().find(|&&d| d > i32::MAX as usize) {
        Some(d) => Err(Error::new(
            crate::error::ErrorKind::Overflow,
            op,
            alloc::format!(
                "Shape dimension {d} is outside the supported range [-2147483648, 2147483647]. \
                 MLX currently uses 32-bit integers for shape dimensions."
            ),
        )),
        None => Ok(()),
    }
}

/// Row-major strides (in elements) of a dense array of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = alloc::vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// numpy broadcasting of two shapes.
pub fn broadcast_shapes(a: &[usize], b: &[usize], op: &'static str) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = alloc::vec![0usize; n];
    for i in 0..n {
        let da = if i < n - a.len() { 1 } else { a[i - (n - a.len())] };
        let db = if i < n - b.len() { 1 } else { b[i - (n - b.len())] };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::invalid(
                    op,
                    alloc::format!("Shapes {} and {} cannot be broadcast.", fmt_shape(a), fmt_shape(b)),
                ))
            }
        };
    }
    Ok(out)
}

/// Resolves a possibly negative axis against `ndim`.
pub fn normalize_axis(axis: isize, ndim: usize, op: &'static str) -> Result<usize> {
    let n = ndim as isize;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n {
        return Err(Error::index(
            op,
            alloc::format!("Axis {axis} is out of bounds for array with {ndim} dimensions."),
        ));
    }
    Ok(a as usize)
}

/// Resolves a list of axes, rejecting duplicates; returns them sorted.
pub fn normalize_axes(axes: &[isize], ndim: usize, op: &'static str) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        out.push(normalize_axis(a, ndim, op)?);
    }
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid(op, "Received duplicate axes."));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[3, 1], &[4], "t").unwrap(), [3, 4]);
        assert_eq!(broadcast_shapes(&[], &[2, 0], "t").unwrap(), [2, 0]);
        assert!(broadcast_shapes(&[3], &[4], "t").is_err());
        assert!(checked_size(&[usize::MAX, 2], "t").is_err());
        assert_eq!(row_major_strides(&[2, 3, 4]), [12, 4, 1]);
        assert_eq!(normalize_axes(&[-1, 0], 3, "t").unwrap(), [0, 2]);
        assert!(normalize_axes(&[1, -2], 3, "t").is_err());
    }
}
