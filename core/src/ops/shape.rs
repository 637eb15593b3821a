//! Views and data movement: reshape, transpose, broadcast, slice, as_strided, contiguous.
//! Views share their input's buffer (new strides/offset); the rest copy. Ops composed from
//! these primitives (concatenate, split, tile, pad, …) live in the submodules.

pub(crate) mod grad;
mod compose;
mod dynamic;
mod pad;
pub use compose::*;
pub use dynamic::*;
pub use pad::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::primitive::Primitive;
use crate::shape::{fmt_shape, broadcast_shapes, checked_size, normalize_axes, normalize_axis};
use crate::transforms::compile::shape_generic;
use alloc::vec::Vec;

/// The shape family.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ShapeOp {
    /// Same elements, new shape (a view when the input is dense).
    Reshape,
    /// Axis permutation (a view).
    Transpose(Vec<usize>),
    /// numpy broadcasting to the output shape (a view with zero strides).
    Broadcast,
    /// Strided window: per-axis start and step (a view).
    Slice {
        /// First index per axis.
        start: Vec<isize>,
        /// Step per axis (non-zero; negative walks backwards).
        step: Vec<isize>,
    },
    /// User strides and offset in elements over the input's dense data (a checked view).
    AsStrided {
        /// Strides in elements.
        strides: Vec<isize>,
        /// Offset in elements.
        offset: usize,
    },
    /// A dense row-major copy.
    Copy,
    /// Joins its inputs (same dtype, equal shapes off `axis`) along `axis` (a copy).
    Concatenate(usize),
    /// A copy of input 0 with input 1 written into the strided window `start`/`step`
    /// (input 1 already has the window's shape and input 0's dtype).
    SliceUpdate {
        /// First index per axis.
        start: Vec<isize>,
        /// Step per axis (non-zero).
        step: Vec<isize>,
    },
    /// The window of the output's shape starting at the run-time indices in input 1 (1-d
    /// int64, one per entry of `axes`; 0 on other axes; clamped to fit) — a view of input 0.
    DynamicSlice {
        /// The axes the starts apply to (normalized, distinct).
        axes: Vec<usize>,
    },
    /// A copy of input 0 with input 1 (input 0's dtype, the window's shape) written at the
    /// run-time indices in input 2 (as for `DynamicSlice`).
    DynamicSliceUpdate {
        /// The axes the starts apply to (normalized, distinct).
        axes: Vec<usize>,
    },
    /// The `offset`-th diagonal of axes `axis1`/`axis2`, moved last (a view).
    Diagonal {
        /// Diagonal offset (positive: above the main diagonal).
        offset: isize,
        /// Row axis.
        axis1: usize,
        /// Column axis.
        axis2: usize,
    },
    /// `mx.depends`: outputs are views of the first `n` inputs; the inputs after them are
    /// only evaluated first (ordering dependencies), never read.
    Depends(usize),
    /// `mx.stop_gradient`: the input unchanged (a view) through which no gradient flows.
    StopGradient,
    /// MLX's `BroadcastAxes`: input 0 broadcast (a view, as [`ShapeOp::Broadcast`]) against
    /// every input on all axes but the given trailing ones (negative, increasing), which keep
    /// input 0's sizes. The other inputs only give their shapes, so a shapeless compiled
    /// replay infers the output shape again (matmul's batch axes in a shapeless trace).
    BroadcastAxes(Vec<isize>),
}

impl ShapeOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            ShapeOp::Reshape => "reshape",
            ShapeOp::Transpose(_) => "transpose",
            ShapeOp::Broadcast => "broadcast_to",
            ShapeOp::Slice { .. } => "slice",
            ShapeOp::AsStrided { .. } => "as_strided",
            ShapeOp::Copy => "contiguous",
            ShapeOp::Concatenate(_) => "concatenate",
            ShapeOp::SliceUpdate { .. } => "slice_update",
            ShapeOp::Diagonal { .. } => "diagonal",
            ShapeOp::DynamicSlice { .. } => "slice",
            ShapeOp::DynamicSliceUpdate { .. } => "slice_update",
            ShapeOp::Depends(_) => "depends",
            ShapeOp::StopGradient => "stop_gradient",
            ShapeOp::BroadcastAxes(_) => "broadcast_axes",
        }
    }
}

pub(crate) fn record(op: ShapeOp, a: &Array, shape: Vec<usize>) -> Array {
    Array::from_op(Primitive::Shape(op), alloc::vec![a.clone()], shape, a.dtype())
}


/// `a` itself — or, in a shapeless trace, `a` through a reshape node to its own shape: an op
/// that is a no-op only at `a`'s shape must leave a node that fixes the shape, or a replay on
/// other shapes would skip it (the replay retraces at such nodes).
pub(crate) fn pinned(a: &Array) -> Array {
    if shape_generic(a) {
        record(ShapeOp::Reshape, a, a.shape().to_vec())
    } else {
        a.clone()
    }
}

/// Resolves a shape with at most one `-1` against `size` elements.
pub fn infer_shape(shape: &[isize], size: usize, op: &'static str) -> Result<Vec<usize>> {
    let mut infer = None;
    let mut known = 1usize;
    for (i, &d) in shape.iter().enumerate() {
        if d == -1 {
            if infer.replace(i).is_some() {
                return Err(Error::invalid(op, "Can only infer one dimension."));
            }
        } else if d < 0 {
            return Err(Error::invalid(op, alloc::format!("Invalid dimension {d} in shape.")));
        } else {
            known = known.checked_mul(d as usize).ok_or_else(|| Error::invalid(op, "Shape is too large."))?;
        }
    }
    let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = infer {
        if known == 0 || size % known != 0 {
            return Err(Error::invalid(
                op,
                alloc::format!("Cannot infer the shape of an array of size {size} into shape {}.", fmt_shape(shape)),
            ));
        }
        out[i] = size / known;
    } else if known != size {
        return Err(Error::invalid(
            op,
            alloc::format!("Cannot reshape array of size {size} into shape {}.", fmt_shape(shape)),
        ));
    }
    Ok(out)
}

/// `mx.reshape(a, shape)`; one dimension may be `-1`.
pub fn reshape(a: &Array, shape: &[isize]) -> Result<Array> {
    let requested = shape;
    let shape = infer_shape(shape, a.size(), "reshape")?;
    crate::shape::check_dims(&shape, "reshape")?;
    if shape == a.shape() && !shape_generic(a) {
        return Ok(a.clone());
    }
    let out = record(ShapeOp::Reshape, a, shape);
    // A shapeless trace keeps an inferred axis (`-1`) inferred on replay (transforms/compile).
    crate::transforms::compile::note_reshape(a, &out, requested);
    Ok(out)
}

/// `mx.transpose(a, axes)`; `None` reverses the axes.
pub fn transpose(a: &Array, axes: Option<&[isize]>) -> Result<Array> {
    const OP: &str = "transpose";
    let nd = a.ndim();
    let perm: Vec<usize> = match axes {
        None => (0..nd).rev().collect(),
        Some(ax) => {
            if ax.len() != nd {
                return Err(Error::invalid(
                    OP,
                    alloc::format!("Received {} axes for array with {} dimensions.", ax.len(), nd),
                ));
            }
            let mut p = Vec::with_capacity(nd);
            for &x in ax {
                p.push(normalize_axis(x, nd, OP)?);
            }
            let mut sorted = p.clone();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(Error::invalid(OP, "Repeated axes in transpose."));
            }
            p
        }
    };
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(a.clone());
    }
    let shape = perm.iter().map(|&p| a.shape()[p]).collect();
    Ok(record(ShapeOp::Transpose(perm), a, shape))
}

/// `mx.permute_dims` (same as `transpose` with explicit axes).
pub fn permute_dims(a: &Array, axes: &[isize]) -> Result<Array> {
    transpose(a, Some(axes))
}

/// `mx.swapaxes(a, axis1, axis2)`.
pub fn swapaxes(a: &Array, axis1: isize, axis2: isize) -> Result<Array> {
    let nd = a.ndim();
    let (i, j) = (normalize_axis(axis1, nd, "swapaxes")?, normalize_axis(axis2, nd, "swapaxes")?);
    let mut perm: Vec<isize> = (0..nd as isize).collect();
    perm.swap(i, j);
    transpose(a, Some(&perm))
}

/// `mx.moveaxis(a, source, destination)`.
pub fn moveaxis(a: &Array, source: isize, destination: isize) -> Result<Array> {
    let nd = a.ndim();
    let (s, d) = (normalize_axis(source, nd, "moveaxis")?, normalize_axis(destination, nd, "moveaxis")?);
    let mut perm: Vec<isize> = (0..nd as isize).collect();
    let x = perm.remove(s);
    perm.insert(d, x);
    transpose(a, Some(&perm))
}

/// `mx.broadcast_to(a, shape)`. In a shapeless trace a broadcast to `a`'s own shape keeps
/// its node (the shape is the caller's, fixed at trace time).
pub fn broadcast_to(a: &Array, shape: &[usize]) -> Result<Array> {
    if a.shape() == shape && shape_generic(a) {
        return Ok(record(ShapeOp::Broadcast, a, shape.to_vec()));
    }
    broadcast_operand(a, shape)
}

/// An op broadcasting its own operands to the shape it computed from them (binary ops,
/// matmul's batch axes …): unlike [`broadcast_to`], a no-op at equal shapes even in a
/// shapeless trace, since a replay on other shapes broadcasts again from the new operands.
pub(crate) fn broadcast_operand(a: &Array, shape: &[usize]) -> Result<Array> {
    if a.shape() == shape {
        return Ok(a.clone());
    }
    checked_size(shape, "broadcast_to")?;
    let b = broadcast_shapes(a.shape(), shape, "broadcast_to")?;
    if b != shape {
        return Err(Error::invalid(
            "broadcast_to",
            alloc::format!("Cannot broadcast array of shape {} into shape {}.", fmt_shape(a.shape()), fmt_shape(shape)),
        ));
    }
    Ok(record(ShapeOp::Broadcast, a, shape.to_vec()))
}

/// The output shape of [`ShapeOp::BroadcastAxes`] (MLX's `BroadcastAxes::output_shape`): the
/// inputs' shapes without the `ignore` axes broadcast together, then `first`'s sizes on those
/// axes. `ignore` must be negative, strictly increasing and within every input's rank.
pub(crate) fn broadcast_axes_shape(first: &Array, others: &[Array], ignore: &[isize]) -> Result<Vec<usize>> {
    const OP: &str = "broadcast_arrays";
    let bad = || Error::invalid(OP, "Received invalid axes to ignore.");
    if ignore.windows(2).any(|w| w[0] >= w[1]) || ignore.last().is_some_and(|&a| a >= 0) {
        return Err(bad());
    }
    let mut shape: Vec<usize> = Vec::new();
    for a in core::iter::once(first).chain(others) {
        let nd = a.ndim() as isize;
        if ignore.first().is_some_and(|&f| f + nd < 0) {
            return Err(bad());
        }
        let mut s = a.shape().to_vec();
        for &ax in ignore.iter().rev() {
            s.remove((nd + ax) as usize);
        }
        shape = broadcast_shapes(&shape, &s, OP)?;
    }
    let (nd, dims) = (first.ndim() as isize, (shape.len() + ignore.len()) as isize);
    for &ax in ignore {
        shape.insert((dims + ax) as usize, first.shape()[(nd + ax) as usize]);
    }
    checked_size(&shape, OP)?;
    Ok(shape)
}

/// `first` broadcast against `others` on all axes but `ignore` (a [`ShapeOp::BroadcastAxes`]
/// node, which a shapeless compiled replay rebuilds for new shapes). Used where a shapeless
/// trace would otherwise record a broadcast to a fixed shape.
pub(crate) fn broadcast_axes(first: &Array, others: &[Array], ignore: &[isize]) -> Result<Array> {
    let shape = broadcast_axes_shape(first, others, ignore)?;
    let mut inputs = alloc::vec![first.clone()];
    inputs.extend(others.iter().cloned());
    Ok(Array::from_op(Primitive::Shape(ShapeOp::BroadcastAxes(ignore.to_vec())), inputs, shape, first.dtype()))
}

/// `mx.broadcast_arrays(*arrays)`.
pub fn broadcast_arrays(arrays: &[Array]) -> Result<Vec<Array>> {
    let mut shape: Vec<usize> = Vec::new();
    for a in arrays {
        shape = broadcast_shapes(&shape, a.shape(), "broadcast_arrays")?;
    }
    arrays.iter().map(|a| broadcast_to(a, &shape)).collect()
}

/// `mx.expand_dims(a, axes)`: inserts size-1 axes at the given output positions.
pub fn expand_dims(a: &Array, axes: &[isize]) -> Result<Array> {
    let out_nd = a.ndim() + axes.len();
    let ax = normalize_axes(axes, out_nd, "expand_dims").map_err(compose::axis_error)?;
    let mut shape = a.shape().to_vec();
    for &i in &ax {
        shape.insert(i, 1);
    }
    let s: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    let out = reshape(a, &s)?;
    // A shapeless trace inserts the axes again on other shapes (MLX's `ExpandDims`).
    crate::transforms::compile::note_expand_dims(a, &out, axes);
    Ok(out)
}

/// `mx.squeeze(a, axes)`: removes size-1 axes (all of them when `axes` is `None`).
pub fn squeeze(a: &Array, axes: Option<&[isize]>) -> Result<Array> {
    let nd = a.ndim();
    let drop: Vec<usize> = match axes {
        None => (0..nd).filter(|&i| a.shape()[i] == 1).collect(),
        Some(ax) => {
            let ax = normalize_axes(ax, nd, "squeeze")?;
            if let Some(&bad) = ax.iter().find(|&&i| a.shape()[i] != 1) {
                return Err(Error::invalid("squeeze", alloc::format!("Cannot squeeze axis {bad} with size other than 1.")));
            }
            ax
        }
    };
    let s: Vec<isize> = (0..nd).filter(|i| !drop.contains(i)).map(|i| a.shape()[i] as isize).collect();
    let out = reshape(a, &s)?;
    // A shapeless trace removes the axes again on other shapes (MLX's `Squeeze`).
    let axes: Vec<isize> = drop.iter().map(|&i| i as isize).collect();
    crate::transforms::compile::note_squeeze(a, &out, &axes);
    Ok(out)
}

/// `mx.flatten(a, start_axis=0, end_axis=-1)`.
///
/// As MLX: negative axes count from the end, then the range is clamped to the array's axes
/// (`flatten(x, 1, 10)` of a 3-d `x` flattens axes 1..=2) and only an empty range is an error,
/// so an out-of-range axis is never an IndexError here.
pub fn flatten(a: &Array, start_axis: isize, end_axis: isize) -> Result<Array> {
    let nd = a.ndim();
    if nd == 0 {
        return reshape(a, &[1]);
    }
    let wrap = |ax: isize| if ax < 0 { ax + nd as isize } else { ax };
    let (s, e) = (wrap(start_axis).max(0), wrap(end_axis).min(nd as isize - 1));
    if s > e {
        return Err(Error::invalid("flatten", "start_axis must be less than or equal to end_axis"));
    }
    let (s, e) = (s as usize, e as usize);
    if s == 0 && e == nd - 1 && a.size() > 0 {
        // Asked as `-1`, so a shapeless compile replays it on any shape (MLX's Flatten
        // primitive recomputes its shape) rather than tracing again per shape.
        return reshape(a, &[-1]);
    }
    let mut shape: Vec<isize> = a.shape()[..s].iter().map(|&d| d as isize).collect();
    shape.push(a.shape()[s..=e].iter().product::<usize>() as isize);
    shape.extend(a.shape()[e + 1..].iter().map(|&d| d as isize));
    reshape(a, &shape)
}

/// Basic slicing: `start`, `stop`, `step` per axis (numpy rules, already clamped by the caller
/// or clamped here).
pub fn slice(a: &Array, start: &[isize], stop: &[isize], step: &[isize]) -> Result<Array> {
    const OP: &str = "slice";
    let nd = a.ndim();
    if start.len() != nd || stop.len() != nd || step.len() != nd {
        return Err(Error::invalid(OP, "start, stop and step must have one entry per axis."));
    }
    let mut shape = Vec::with_capacity(nd);
    let mut starts = Vec::with_capacity(nd);
    for i in 0..nd {
        if step[i] == 0 {
            return Err(Error::invalid(OP, "Slice step cannot be zero."));
        }
        let (s, len) = slice_extent(start[i], stop[i], step[i], a.shape()[i] as isize);
        shape.push(len);
        starts.push(s);
    }
    if shape == a.shape() && step.iter().all(|&s| s == 1) && !shape_generic(a) {
        return Ok(a.clone());
    }
    Ok(record(ShapeOp::Slice { start: starts, step: step.to_vec() }, a, shape))
}

/// One axis of [`slice`]: the first index and the length of `start:stop:step` over `n`
/// elements. Negative bounds count from the end, then bounds clamp to the axis (to `-1..n-1`
/// for a negative step, where -1 is "before the first element" only after counting from the
/// end, so it is written `-n - 1`). An empty range starts at 0. `step` must not be 0.
pub fn slice_extent(start: isize, stop: isize, step: isize, n: isize) -> (isize, usize) {
    let clamp = |v: isize, lo: isize, hi: isize| v.max(lo).min(hi);
    let norm = |v: isize| if v < 0 { v + n } else { v };
    let (s, e) = if step > 0 {
        (clamp(norm(start), 0, n), clamp(norm(stop), 0, n))
    } else {
        (clamp(norm(start), -1, n - 1), clamp(norm(stop), -1, n - 1))
    };
    let len = if step > 0 { (e - s + step - 1) / step } else { (s - e - step - 1) / -step };
    let len = len.max(0) as usize;
    (if len == 0 { 0 } else { s }, len)
}

/// `mx.as_strided(a, shape, strides, offset)`: a view of `a`'s dense elements; bounds are
/// checked at evaluation so no view can reach outside the data.
pub fn as_strided(a: &Array, shape: &[usize], strides: &[isize], offset: usize) -> Result<Array> {
    if shape.len() != strides.len() {
        return Err(Error::invalid("as_strided", "shape and strides must have the same length."));
    }
    checked_size(shape, "as_strided")?;
    Ok(record(ShapeOp::AsStrided { strides: strides.to_vec(), offset }, a, shape.to_vec()))
}

/// `mx.stop_gradient(a)`: the same values; transforms treat the result as a constant.
pub fn stop_gradient(a: &Array) -> Result<Array> {
    Ok(record(ShapeOp::StopGradient, a, a.shape().to_vec()))
}

/// `mx.contiguous(a)`: a dense row-major copy.
pub fn contiguous(a: &Array) -> Result<Array> {
    Ok(record(ShapeOp::Copy, a, a.shape().to_vec()))
}
