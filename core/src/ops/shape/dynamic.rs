//! `mx.slice` / `mx.slice_update` with the start indices given as an *array* (MLX's dynamic
//! slice): the starts are read when the graph is evaluated, so a KV-cache offset can itself be
//! the lazy result of other ops. The window's size is static (`slice_size` / the update's
//! shape), so the output shape is known when the op is recorded.
//!
//! Out-of-range starts: real MLX 0.32 reads and writes outside the array there (garbage values,
//! or a segfault for negative starts). We follow the static forms (`slice_dynamic`): a negative
//! start is wrapped once by the axis length, then every start is clamped so the window fits.

use alloc::vec::Vec;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::primitive::Primitive;
use crate::shape::{fmt_shape, normalize_axis};

use super::ShapeOp;

/// Validates `start` (integer, 0-d or 1-d, one entry per axis) and `axes` (in range, distinct),
/// returning the normalized axes and the starts as a lazy 1-d int64 array.
fn starts_and_axes(a: &Array, start: &Array, axes: &[isize], op: &'static str) -> Result<(Vec<usize>, Array)> {
    if !start.dtype().is_integer() {
        return Err(Error::invalid(op, alloc::format!("Start indices must be integers, got type {}.", start.dtype())));
    }
    if start.ndim() > 1 {
        return Err(Error::invalid(
            op,
            alloc::format!("array of starting indices must be zero or one dimensional but has dimension {}.", start.ndim()),
        ));
    }
    if start.size() != axes.len() {
        return Err(Error::invalid(
            op,
            alloc::format!("Number of starting indices {} does not match number of axes {}.", start.size(), axes.len()),
        ));
    }
    let mut ax = Vec::with_capacity(axes.len());
    for &x in axes {
        let i = normalize_axis(x, a.ndim(), op).map_err(|_| {
            Error::index(op, alloc::format!("Invalid axis {x} for array with dimension {}.", a.ndim()))
        })?;
        if ax.contains(&i) {
            return Err(Error::invalid(op, "Repeat axes not allowed."));
        }
        ax.push(i);
    }
    let s = crate::ops::reshape(&crate::ops::astype(start, DType::Int64)?, &[axes.len() as isize])?;
    Ok((ax, s))
}

/// `mx.slice(a, start_indices, axes, slice_size)`: the window of shape `slice_size` whose
/// corner is `start_indices` on `axes` and 0 on every other axis.
pub fn slice_at(a: &Array, start_indices: &Array, axes: &[isize], slice_size: &[usize]) -> Result<Array> {
    const OP: &str = "slice";
    let (ax, s) = starts_and_axes(a, start_indices, axes, OP)?;
    if slice_size.len() != a.ndim() {
        return Err(Error::invalid(OP, alloc::format!("Invalid slice size for array with {} dimensions.", a.ndim())));
    }
    if slice_size.iter().zip(a.shape()).any(|(&s, &d)| s > d) {
        return Err(Error::invalid(
            OP,
            alloc::format!("Invalid slice size {} for array with shape {}.", fmt_shape(slice_size), fmt_shape(a.shape())),
        ));
    }
    Ok(Array::from_op(
        Primitive::Shape(ShapeOp::DynamicSlice { axes: ax }),
        alloc::vec![a.clone(), s],
        slice_size.to_vec(),
        a.dtype(),
    ))
}

/// `mx.slice_update(a, update, start_indices, axes)`: a copy of `a` with `update` (cast to
/// `a`'s dtype) written at `start_indices` on `axes` (0 on other axes). As in MLX, an update
/// with fewer dimensions spans the whole of each missing leading axis that has no start (one
/// index of those that have), and the window is that shape capped by `a`'s, the update
/// broadcasting to it.
pub fn slice_update_at(a: &Array, update: &Array, start_indices: &Array, axes: &[isize]) -> Result<Array> {
    const OP: &str = "slice_update";
    let (ax, s) = starts_and_axes(a, start_indices, axes, OP)?;
    if update.ndim() > a.ndim() {
        return Err(Error::invalid(
            OP,
            alloc::format!("The update of shape {} has more dimensions than the array of shape {}.", fmt_shape(update.shape()), fmt_shape(a.shape())),
        ));
    }
    // Missing leading axes: size 1 where a start is given, else the whole axis (MLX 0.32).
    let lead = a.ndim() - update.ndim();
    let mut padded: Vec<usize> = (0..lead).map(|i| if ax.contains(&i) { 1 } else { a.shape()[i] }).collect();
    padded.extend_from_slice(update.shape());
    let window: Vec<usize> = padded.iter().zip(a.shape()).map(|(&u, &n)| u.min(n)).collect();
    let up = crate::ops::broadcast_to(&crate::ops::astype(update, a.dtype())?, &window).map_err(|_| {
        Error::invalid("broadcast_shapes", alloc::format!("Shapes {} and {} cannot be broadcast.", fmt_shape(update.shape()), fmt_shape(&window)))
    })?;
    if window.contains(&0) {
        return Ok(crate::ops::shape::pinned(a));
    }
    Ok(Array::from_op(
        Primitive::Shape(ShapeOp::DynamicSliceUpdate { axes: ax }),
        alloc::vec![a.clone(), up, s],
        a.shape().to_vec(),
        a.dtype(),
    ))
}

/// The window's first index on every axis: `starts[k]` on `axes[k]` (wrapped once when
/// negative, clamped so `window` fits inside `shape`), 0 elsewhere. Used by the CPU kernels.
pub fn window_starts(shape: &[usize], window: &[usize], axes: &[usize], starts: &[i64]) -> Vec<isize> {
    let mut out = alloc::vec![0isize; shape.len()];
    for (&i, &s) in axes.iter().zip(starts) {
        let n = shape[i] as i64;
        let v = if s < 0 { s.saturating_add(n) } else { s };
        let hi = n - window[i] as i64;
        out[i] = v.clamp(0, hi.max(0)) as isize;
    }
    out
}
