//! Shape ops built from the shape primitives (views, concatenate, slice_update, diagonal),
//! the way MLX composes them: stack = expand_dims + concatenate, tile/repeat = broadcast +
//! reshape, roll = two slices joined, split = sibling slice views of one input.

use super::{broadcast_to, expand_dims, flatten, record, reshape, slice, squeeze, transpose, ShapeOp};
use crate::array::Array;
use crate::dtype::{result_type, DType};
use crate::error::{Error, Result};
use crate::shape::{checked_size, normalize_axes, normalize_axis};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

/// MLX raises IndexError (not ValueError) for an out-of-range axis in these ops.
pub(crate) fn axis_error(e: Error) -> Error {
    if e.msg.contains("out of bounds") { Error::index(e.op, e.msg) } else { e }
}

fn ishape(s: &[usize]) -> Vec<isize> {
    s.iter().map(|&d| d as isize).collect()
}

/// Slice of `a` along one axis: `[start, stop)` with step 1 (in-range values).
fn axis_range(a: &Array, axis: usize, start: usize, stop: usize) -> Result<Array> {
    let nd = a.ndim();
    let mut s = vec![0isize; nd];
    let mut e = ishape(a.shape());
    s[axis] = start as isize;
    e[axis] = stop as isize;
    slice(a, &s, &e, &vec![1; nd])
}

/// `mx.unflatten(a, axis, shape)`: splits one axis into `shape` (one `-1` may be inferred).
pub fn unflatten(a: &Array, axis: isize, shape: &[isize]) -> Result<Array> {
    const OP: &str = "unflatten";
    if shape.is_empty() {
        return Err(Error::invalid(OP, "Shape to unflatten to cannot be empty."));
    }
    if a.ndim() == 0 {
        return Err(Error::invalid(OP, "Cannot unflatten a 0-d array."));
    }
    let ax = normalize_axis(axis, a.ndim(), OP)?;
    let inner = super::infer_shape(shape, a.shape()[ax], OP)?;
    let mut out: Vec<isize> = ishape(&a.shape()[..ax]);
    out.extend(inner.iter().map(|&d| d as isize));
    out.extend(ishape(&a.shape()[ax + 1..]));
    reshape(a, &out)
}

/// `mx.concatenate(arrays, axis)`: `None` flattens every input first. Inputs are promoted
/// to their common dtype.
pub fn concatenate(arrays: &[Array], axis: Option<isize>) -> Result<Array> {
    const OP: &str = "concatenate";
    let first = arrays.first().ok_or_else(|| Error::invalid(OP, "No arrays provided for concatenation"))?;
    let Some(axis) = axis else {
        let flat: Vec<Array> = arrays.iter().map(|a| reshape(a, &[-1])).collect::<Result<_>>()?;
        return concatenate(&flat, Some(0));
    };
    let nd = first.ndim();
    if nd == 0 {
        return Err(Error::index(OP, format!("Axis {axis} is out of bounds for array with 0 dimensions.")));
    }
    let ax = normalize_axis(axis, nd, OP).map_err(axis_error)?;
    let mut shape = first.shape().to_vec();
    shape[ax] = 0;
    for a in arrays {
        if a.ndim() != nd {
            return Err(Error::invalid(OP, "All the input arrays must have the same number of dimensions."));
        }
        for (i, (&x, &y)) in a.shape().iter().zip(first.shape()).enumerate() {
            if i != ax && x != y {
                return Err(Error::invalid(
                    OP,
                    "All the input array dimensions must match exactly except for the concatenation axis.",
                ));
            }
        }
        shape[ax] = shape[ax].checked_add(a.shape()[ax]).ok_or_else(|| Error::invalid(OP, "Shape is too large."))?;
    }
    checked_size(&shape, OP)?;
    crate::shape::check_dims(&shape, OP)?;
    let dtype = result_type(&arrays.iter().map(|a| a.dtype()).collect::<Vec<DType>>())?;
    if arrays.len() == 1 {
        return crate::ops::astype(first, dtype);
    }
    let inputs: Vec<Array> = arrays.iter().map(|a| crate::ops::astype(a, dtype)).collect::<Result<_>>()?;
    Ok(Array::from_op(crate::primitive::Primitive::Shape(ShapeOp::Concatenate(ax)), inputs, shape, dtype))
}

/// `mx.concat` (alias of [`concatenate`]).
pub fn concat(arrays: &[Array], axis: Option<isize>) -> Result<Array> {
    concatenate(arrays, axis)
}

/// `mx.stack(arrays, axis=0)`: joins equal-shaped arrays along a new axis.
pub fn stack(arrays: &[Array], axis: isize) -> Result<Array> {
    const OP: &str = "stack";
    let first = arrays.first().ok_or_else(|| Error::invalid(OP, "No arrays provided for stacking"))?;
    if arrays.iter().any(|a| a.shape() != first.shape()) {
        return Err(Error::invalid(OP, "All arrays must have the same shape"));
    }
    let ax = normalize_axis(axis, first.ndim() + 1, OP)? as isize;
    let ex: Vec<Array> = arrays.iter().map(|a| expand_dims(a, &[ax])).collect::<Result<_>>()?;
    concatenate(&ex, Some(ax))
}

/// `mx.unstack(x, axis=0)`: the slices along `axis`, that axis removed (views).
pub fn unstack(a: &Array, axis: isize) -> Result<Vec<Array>> {
    const OP: &str = "unstack";
    if a.ndim() == 0 {
        return Err(Error::invalid(OP, "No array to unstack"));
    }
    let ax = normalize_axis(axis, a.ndim(), OP)?;
    (0..a.shape()[ax]).map(|i| squeeze(&axis_range(a, ax, i, i + 1)?, Some(&[ax as isize]))).collect()
}

/// How [`split`] cuts: into `n` equal sections or at the given indices.
#[derive(Clone, Copy, Debug)]
pub enum SplitSpec<'a> {
    /// Equal sections (the axis must divide evenly).
    Sections(usize),
    /// Cut points along the axis (numpy rules: negative wraps, clamped, decreasing gives empty).
    Indices(&'a [isize]),
}

/// `mx.split(a, indices_or_sections, axis=0)`: sibling slice views of `a` (no copy; each is
/// computed once, from the one evaluated input).
pub fn split(a: &Array, spec: SplitSpec<'_>, axis: isize) -> Result<Vec<Array>> {
    const OP: &str = "split";
    if a.ndim() == 0 {
        return Err(Error::invalid(OP, "Cannot split a 0-d array."));
    }
    let ax = normalize_axis(axis, a.ndim(), OP)?;
    let n = a.shape()[ax];
    let cuts: Vec<usize> = match spec {
        SplitSpec::Sections(k) => {
            if k == 0 || n % k != 0 {
                return Err(Error::invalid(
                    OP,
                    format!(
                        "Array split does not result in sub arrays with equal size: attempting {k} splits along axis {ax} for shape {:?}.",
                        a.shape()
                    ),
                ));
            }
            (1..k).map(|i| i * (n / k)).collect()
        }
        SplitSpec::Indices(ix) => ix
            .iter()
            .map(|&i| {
                let i = if i < 0 { i + n as isize } else { i };
                i.clamp(0, n as isize) as usize
            })
            .collect(),
    };
    // numpy: piece i is a[cut[i-1]:cut[i]]; a cut below the previous one gives an empty piece.
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut prev = 0usize;
    for &c in cuts.iter().chain(core::iter::once(&n)) {
        out.push(axis_range(a, ax, prev, c.max(prev))?);
        prev = c;
    }
    Ok(out)
}

/// `mx.tile(a, reps)`: numpy rules (shorter of `a.ndim`/`reps` is padded with leading 1s).
pub fn tile(a: &Array, reps: &[usize]) -> Result<Array> {
    const OP: &str = "tile";
    let nd = a.ndim().max(reps.len());
    let mut shape = vec![1usize; nd - a.ndim()];
    shape.extend_from_slice(a.shape());
    let mut r = vec![1usize; nd - reps.len()];
    r.extend_from_slice(reps);
    let mut expanded = Vec::with_capacity(2 * nd);
    let mut bshape = Vec::with_capacity(2 * nd);
    let mut out = Vec::with_capacity(nd);
    for (&d, &k) in shape.iter().zip(&r) {
        expanded.extend([1isize, d as isize]);
        bshape.extend([k, d]);
        out.push(d.checked_mul(k).ok_or_else(|| Error::invalid(OP, "Shape is too large."))? as isize);
    }
    checked_size(&bshape, OP)?;
    let x = broadcast_to(&reshape(a, &expanded)?, &bshape)?;
    reshape(&x, &out)
}

/// `mx.repeat(a, repeats, axis=None)`: each element `repeats` times; `None` flattens first.
pub fn repeat(a: &Array, repeats: isize, axis: Option<isize>) -> Result<Array> {
    const OP: &str = "repeat";
    if repeats < 0 {
        return Err(Error::invalid(OP, "Number of repeats cannot be negative"));
    }
    let Some(axis) = axis else {
        return repeat(&flatten(a, 0, -1)?, repeats, Some(0));
    };
    // A 0-d array has no axis to repeat along: IndexError, as MLX 0.32.4 (axis=None flattens first).
    let ax = normalize_axis(axis, a.ndim(), OP)?;
    let x = expand_dims(a, &[ax as isize + 1])?;
    let mut b = x.shape().to_vec();
    b[ax + 1] = repeats as usize;
    checked_size(&b, OP)?;
    let mut out = ishape(a.shape());
    out[ax] *= repeats;
    reshape(&broadcast_to(&x, &b)?, &out)
}

/// `mx.roll(a, shift, axis=None)` with MLX's rules: `None` rolls the flattened array by the
/// sum of the shifts; a single shift applies to every listed axis, otherwise shift `i` rolls
/// axis `i` (extra shifts are ignored, too few is an error). MLX's `roll(a, shifts, int axis)`
/// also sums the shifts: call this with `&[sum]` for that form.
pub fn roll(a: &Array, shift: &[isize], axes: Option<&[isize]>) -> Result<Array> {
    const OP: &str = "roll";
    let Some(axes) = axes else {
        // MLX: with no axis the shifts add up and the flattened array rolls by the total.
        let total = shift.iter().try_fold(0isize, |t, &s| t.checked_add(s));
        let total = total.ok_or_else(|| Error::new(crate::error::ErrorKind::Overflow, OP, "The total shift overflows."))?;
        let flat = reshape(a, &[-1])?;
        return reshape(&roll(&flat, &[total], Some(&[0]))?, &ishape(a.shape()));
    };
    // One shift applies to every axis (a Python int); otherwise MLX needs at least one shift
    // per axis and ignores extra ones.
    if shift.len() != 1 && shift.len() < axes.len() {
        return Err(Error::invalid(
            OP,
            alloc::format!(
                "At least one shift value per axis is required, {} provided for {} axes.",
                shift.len(),
                axes.len()
            ),
        ));
    }
    let mut out = a.clone();
    for (i, &ax) in axes.iter().enumerate() {
        let ax = normalize_axis(ax, a.ndim(), OP)?;
        let n = a.shape()[ax] as isize;
        if n == 0 {
            continue;
        }
        let s = shift[if shift.len() == 1 { 0 } else { i }].rem_euclid(n) as usize;
        if s == 0 {
            continue;
        }
        let n = n as usize;
        let tail = axis_range(&out, ax, n - s, n)?;
        let head = axis_range(&out, ax, 0, n - s)?;
        out = concatenate(&[tail, head], Some(ax as isize))?;
    }
    Ok(out)
}

/// MLX's `roll(a, shifts, int axis)`: rolls `axis` by the sum of `shifts` (what Python's
/// `mx.roll(a, (1, 2), 0)` does).
pub fn roll_summed(a: &Array, shift: &[isize], axis: isize) -> Result<Array> {
    let total = shift.iter().try_fold(0isize, |t, &s| t.checked_add(s));
    let total = total.ok_or_else(|| Error::new(crate::error::ErrorKind::Overflow, "roll", "The total shift overflows."))?;
    roll(a, &[total], Some(&[axis]))
}

/// `mx.flip(a, axis=None)`: reverses the given axes (all when `None`) as a view. As in
/// MLX, an axis listed twice is reversed once; an out-of-range axis is a ValueError.
pub fn flip(a: &Array, axes: Option<&[isize]>) -> Result<Array> {
    let nd = a.ndim();
    let ax: Vec<usize> = match axes {
        None => (0..nd).collect(),
        Some(x) => x.iter().map(|&i| normalize_axis(i, nd, "flip")).collect::<Result<_>>()?,
    };
    if ax.is_empty() {
        return Ok(a.clone());
    }
    let mut start = vec![0isize; nd];
    let mut stop = ishape(a.shape());
    let mut step = vec![1isize; nd];
    for &i in &ax {
        start[i] = -1;
        stop[i] = -(a.shape()[i] as isize) - 1;
        step[i] = -1;
    }
    slice(a, &start, &stop, &step)
}

/// `mx.atleast_1d(a)`.
pub fn atleast_1d(a: &Array) -> Result<Array> {
    if a.ndim() == 0 { reshape(a, &[1]) } else { Ok(a.clone()) }
}

/// `mx.atleast_2d(a)`: `(n,)` becomes `(1, n)`.
pub fn atleast_2d(a: &Array) -> Result<Array> {
    match a.ndim() {
        0 => reshape(a, &[1, 1]),
        1 => expand_dims(a, &[0]),
        _ => Ok(a.clone()),
    }
}

/// `mx.atleast_3d(a)`: `(n,)` becomes `(1, n, 1)`, `(m, n)` becomes `(m, n, 1)`.
pub fn atleast_3d(a: &Array) -> Result<Array> {
    match a.ndim() {
        0 => reshape(a, &[1, 1, 1]),
        1 => expand_dims(a, &[0, 2]),
        2 => expand_dims(a, &[2]),
        _ => Ok(a.clone()),
    }
}

/// `mx.matrix_transpose(a)`: swaps the last two axes.
pub fn matrix_transpose(a: &Array) -> Result<Array> {
    let nd = a.ndim();
    if nd < 2 {
        return Err(Error::invalid("matrix_transpose", "The array must have at least 2 dimensions."));
    }
    let mut perm: Vec<isize> = (0..nd as isize).collect();
    perm.swap(nd - 1, nd - 2);
    transpose(a, Some(&perm))
}

/// `mx.diagonal(a, offset=0, axis1=0, axis2=1)`: the diagonal, moved to the last axis (a view).
pub fn diagonal(a: &Array, offset: isize, axis1: isize, axis2: isize) -> Result<Array> {
    const OP: &str = "diagonal";
    if a.ndim() < 2 {
        return Err(Error::invalid(OP, format!("Array must have at least two dimensions, but got {} dimensions.", a.ndim())));
    }
    let (a1, a2) = (normalize_axis(axis1, a.ndim(), OP)?, normalize_axis(axis2, a.ndim(), OP)?);
    if a1 == a2 {
        return Err(Error::invalid(OP, "axis1 and axis2 cannot be the same axis"));
    }
    let (d1, d2) = (a.shape()[a1] as isize, a.shape()[a2] as isize);
    let len = if offset >= 0 { d1.min(d2 - offset) } else { (d1 + offset).min(d2) }.max(0) as usize;
    let mut shape: Vec<usize> = (0..a.ndim()).filter(|&i| i != a1 && i != a2).map(|i| a.shape()[i]).collect();
    shape.push(len);
    let offset = if len == 0 { 0 } else { offset };
    Ok(record(ShapeOp::Diagonal { offset, axis1: a1, axis2: a2 }, a, shape))
}

/// `mx.diag(a, k=0)`: a 1-D input becomes a 2-D matrix with it on the `k`-th diagonal; a 2-D
/// input gives its `k`-th diagonal.
pub fn diag(a: &Array, k: isize) -> Result<Array> {
    const OP: &str = "diag";
    match a.ndim() {
        1 => {
            let n = a.shape()[0];
            let m = n + k.unsigned_abs();
            let total = checked_size(&[m, m], OP)?;
            let flat = crate::ops::zeros(&[total], a.dtype())?;
            let start = if k >= 0 { k as usize } else { k.unsigned_abs() * m };
            let out = if n == 0 {
                flat
            } else {
                let stop = start + (n - 1) * (m + 1) + 1;
                slice_update(&flat, a, &[start as isize], &[stop as isize], &[(m + 1) as isize])?
            };
            reshape(&out, &[m as isize, m as isize])
        }
        2 => diagonal(a, k, 0, 1),
        _ => Err(Error::invalid(OP, "array must be 1-D or 2-D")),
    }
}

fn tri_mask(a: &Array, k: isize, lower: bool, op: &'static str) -> Result<Array> {
    if a.ndim() < 2 {
        return Err(Error::invalid(op, "array must be at least 2-D"));
    }
    let (n, m) = (a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
    let mask = if lower {
        crate::ops::tri(n, Some(m), k as i64, DType::Bool)?
    } else {
        crate::ops::logical_not(&crate::ops::tri(n, Some(m), k as i64 - 1, DType::Bool)?)?
    };
    crate::ops::where_(&mask, a, &crate::ops::zeros_like(a)?)
}

/// `mx.tril(x, k=0)`: zeros above the `k`-th diagonal of the last two axes.
pub fn tril(a: &Array, k: isize) -> Result<Array> {
    tri_mask(a, k, true, "tril")
}

/// `mx.triu(x, k=0)`: zeros below the `k`-th diagonal of the last two axes.
pub fn triu(a: &Array, k: isize) -> Result<Array> {
    tri_mask(a, k, false, "triu")
}

/// The C++ form of `slice_update`: writes `update` (broadcast to the window, cast to `a`'s
/// dtype) into the window `start:stop:step` of a copy of `a` (numpy slice rules per axis).
pub fn slice_update(a: &Array, update: &Array, start: &[isize], stop: &[isize], step: &[isize]) -> Result<Array> {
    const OP: &str = "slice_update";
    // The window's shape and normalized starts come from the view op's own rules.
    let window = slice(a, start, stop, step)?;
    let starts = normalized_starts(a, start, step, window.shape())?;
    let up = broadcast_to(&crate::ops::astype(update, a.dtype())?, window.shape())
        .map_err(|_| Error::invalid(OP, format!("Cannot broadcast update of shape {:?} to the slice of shape {:?}.", update.shape(), window.shape())))?;
    if window.size() == 0 {
        return Ok(super::pinned(a));
    }
    Ok(Array::from_op(
        crate::primitive::Primitive::Shape(ShapeOp::SliceUpdate { start: starts, step: step.to_vec() }),
        vec![a.clone(), up],
        a.shape().to_vec(),
        a.dtype(),
    ))
}

/// The first index of each axis of the window `slice` picks (numpy normalization).
fn normalized_starts(a: &Array, start: &[isize], step: &[isize], window: &[usize]) -> Result<Vec<isize>> {
    let mut out = Vec::with_capacity(a.ndim());
    for i in 0..a.ndim() {
        let n = a.shape()[i] as isize;
        let v = if start[i] < 0 { start[i] + n } else { start[i] };
        let s = if step[i] > 0 { v.clamp(0, n) } else { v.clamp(-1, n - 1) };
        out.push(if window[i] == 0 { 0 } else { s });
    }
    Ok(out)
}

/// Static form of `mx.slice(a, start_indices, axes, slice_size)`: `slice_size` gives the
/// window's size on every axis; `start_indices` the start on each of `axes` (other axes start
/// at 0). Starts are wrapped when negative and clamped so the window fits (MLX reads out of
/// bounds there; we never do).
pub fn slice_dynamic(a: &Array, start_indices: &[isize], axes: &[isize], slice_size: &[usize]) -> Result<Array> {
    const OP: &str = "slice";
    if slice_size.len() != a.ndim() {
        return Err(Error::invalid(OP, format!("Invalid slice size for array with {} dimensions.", a.ndim())));
    }
    if slice_size.iter().zip(a.shape()).any(|(&s, &d)| s > d) {
        return Err(Error::invalid(OP, "Slice size is larger than the array."));
    }
    let sizes: Vec<usize> = axes
        .iter()
        .map(|&ax| normalize_axis(ax, a.ndim(), OP).map(|i| slice_size[i]))
        .collect::<Result<_>>()?;
    let (start, mut stop) = window_of(a, start_indices, axes, &sizes, OP)?;
    for (i, &s) in slice_size.iter().enumerate() {
        if !axes.iter().any(|&x| normalize_axis(x, a.ndim(), OP).ok() == Some(i)) {
            stop[i] = s as isize;
        }
    }
    slice(a, &start, &stop, &vec![1; a.ndim()])
}

/// Static form of `mx.slice_update(a, update, start_indices, axes)`: [`slice_update_at`] with
/// the starts given as integers (same window rule: the update's shape, missing leading axes
/// whole unless they have a start; starts wrapped when negative and clamped to fit).
pub fn slice_update_dynamic(a: &Array, update: &Array, start_indices: &[isize], axes: &[isize]) -> Result<Array> {
    let s: Vec<i64> = start_indices.iter().map(|&v| v as i64).collect();
    super::slice_update_at(a, update, &Array::from_slice(&s, &[s.len()])?, axes)
}

fn window_of(a: &Array, start_indices: &[isize], axes: &[isize], sizes: &[usize], op: &'static str) -> Result<(Vec<isize>, Vec<isize>)> {
    if start_indices.len() != axes.len() || sizes.len() != axes.len() {
        return Err(Error::invalid(op, "start_indices, axes and slice sizes must have the same length."));
    }
    let ax = normalize_axes(axes, a.ndim(), op)?;
    let _ = ax;
    let mut start = vec![0isize; a.ndim()];
    let mut stop = ishape(a.shape());
    for ((&s, &x), &size) in start_indices.iter().zip(axes).zip(sizes) {
        let i = normalize_axis(x, a.ndim(), op)?;
        let n = a.shape()[i] as isize;
        if size as isize > n {
            return Err(Error::invalid(op, format!("Slice size {size} is larger than axis {i} of size {n}.")));
        }
        let v = if s < 0 { s + n } else { s };
        let v = v.clamp(0, n - size as isize);
        start[i] = v;
        stop[i] = v + size as isize;
    }
    Ok((start, stop))
}
