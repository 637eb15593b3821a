//! The index family: MLX's `gather` and `scatter` primitives and the ops built on them
//! (`take`, `take_along_axis`, `put_along_axis`, `.at[]` updates, Python-style indexing in
//! the [`getitem`] submodule).
//!
//! Out-of-range indices: MLX's CPU kernels do not check them (they read or write outside
//! the array). Here a negative index wraps once (`i + dim`, as MLX does) and any index still
//! outside its axis makes evaluation fail with an `Index` error — never an out-of-bounds access.

pub(crate) mod grad;
mod getitem;
pub use getitem::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::primitive::Primitive;
use crate::shape::{broadcast_shapes, checked_size, normalize_axis};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

/// How a scatter combines an update with the element already there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterMode {
    /// Overwrite (duplicates: the last update in row-major order wins).
    Set,
    /// `out + update` (bool: or).
    Add,
    /// `out * update` (bool: and).
    Prod,
    /// `out > update ? out : update` (a NaN update wins over a number; complex: lexicographic).
    Max,
    /// `out < update ? out : update`.
    Min,
}

/// The index family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexOp {
    /// Inputs `[a, idx_0 … idx_k]` (indices broadcast to one shape `I`): output `I + slice_sizes`,
    /// element `[i, s]` = `a[s + idx(i) along axes]`.
    Gather {
        /// The axes of `a` the index arrays address.
        axes: Vec<usize>,
        /// Window size per axis of `a` (1 on the indexed axes in the usual case).
        slice_sizes: Vec<usize>,
    },
    /// Inputs `[a, updates, idx_0 … idx_k]`: `updates` has shape `I + window` (window has
    /// `a.ndim()` axes); each window is combined into a copy of `a` at the indexed position.
    Scatter {
        /// The axes of `a` the index arrays address.
        axes: Vec<usize>,
        /// The combine rule.
        mode: ScatterMode,
    },
}

impl IndexOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            IndexOp::Gather { .. } => "gather",
            IndexOp::Scatter { mode: ScatterMode::Set, .. } => "scatter",
            IndexOp::Scatter { mode: ScatterMode::Add, .. } => "scatter_add",
            IndexOp::Scatter { mode: ScatterMode::Prod, .. } => "scatter_prod",
            IndexOp::Scatter { mode: ScatterMode::Max, .. } => "scatter_max",
            IndexOp::Scatter { mode: ScatterMode::Min, .. } => "scatter_min",
        }
    }
}

/// Checks index dtypes and axes, then broadcasts the index arrays to one shape.
fn prepare_indices(a: &Array, indices: &[Array], axes: &[isize], op: &'static str) -> Result<(Vec<Array>, Vec<usize>, Vec<usize>)> {
    if indices.len() != axes.len() {
        return Err(Error::invalid(op, format!("{} indices provided for {} axes.", indices.len(), axes.len())));
    }
    if indices.len() > a.ndim() {
        return Err(Error::invalid(op, "Too many index arrays for the array's dimensions."));
    }
    let mut ax = Vec::with_capacity(axes.len());
    for &x in axes {
        let i = normalize_axis(x, a.ndim(), op)?;
        if ax.contains(&i) {
            return Err(Error::invalid(op, "Repeated axes."));
        }
        ax.push(i);
    }
    let mut ishape: Vec<usize> = Vec::new();
    for idx in indices {
        if !idx.dtype().is_integer() {
            return Err(Error::invalid(op, format!("Got indices with invalid dtype. Indices must be integral.")));
        }
        ishape = broadcast_shapes(&ishape, idx.shape(), op)?;
    }
    let idx = indices.iter().map(|i| crate::ops::broadcast_to(i, &ishape)).collect::<Result<_>>()?;
    Ok((idx, ax, ishape))
}

/// MLX's `gather(a, indices, axes, slice_sizes)`: output shape `broadcast(indices) + slice_sizes`.
pub fn gather(a: &Array, indices: &[Array], axes: &[isize], slice_sizes: &[usize]) -> Result<Array> {
    const OP: &str = "gather";
    if a.ndim() == 0 {
        return Err(Error::invalid(OP, "Cannot gather from a 0-d array."));
    }
    let (idx, ax, ishape) = prepare_indices(a, indices, axes, OP)?;
    if slice_sizes.len() != a.ndim() {
        return Err(Error::invalid(OP, "Got slice_sizes with an incorrect number of elements."));
    }
    if slice_sizes.iter().zip(a.shape()).any(|(&s, &d)| s > d) {
        return Err(Error::invalid(OP, "Slice sizes must be in [0, a.shape(i)]."));
    }
    let mut shape = ishape;
    shape.extend_from_slice(slice_sizes);
    checked_size(&shape, OP)?;
    let mut inputs = vec![a.clone()];
    inputs.extend(idx);
    Ok(Array::from_op(
        Primitive::Index(IndexOp::Gather { axes: ax, slice_sizes: slice_sizes.to_vec() }),
        inputs,
        shape,
        a.dtype(),
    ))
}

/// MLX's `scatter*(a, indices, updates, axes)`: `updates` (cast to `a`'s dtype) has shape
/// `broadcast(indices) + window` with one window axis per axis of `a`.
pub fn scatter_with(a: &Array, indices: &[Array], updates: &Array, axes: &[isize], mode: ScatterMode) -> Result<Array> {
    const OP: &str = "scatter";
    if a.ndim() == 0 {
        return Err(Error::invalid(OP, "Cannot scatter into a 0-d array."));
    }
    let (idx, ax, ishape) = prepare_indices(a, indices, axes, OP)?;
    if updates.ndim() != ishape.len() + a.ndim() {
        return Err(Error::invalid(
            OP,
            format!(
                "Updates with {} dimensions do not match the sum of the array ({}) and indices ({}) dimensions.",
                updates.ndim(),
                a.ndim(),
                ishape.len()
            ),
        ));
    }
    let window = &updates.shape()[ishape.len()..];
    if window.iter().zip(a.shape()).any(|(&w, &d)| w > d) {
        return Err(Error::invalid(OP, "Update window is larger than the array."));
    }
    let mut ushape = ishape.clone();
    ushape.extend_from_slice(window);
    let up = crate::ops::broadcast_to(&crate::ops::astype(updates, a.dtype())?, &ushape)?;
    if updates.shape()[..ishape.len()] != ishape[..] {
        return Err(Error::invalid(OP, "Updates do not match the indices' shape."));
    }
    let mut inputs = vec![a.clone(), up];
    inputs.extend(idx);
    Ok(Array::from_op(Primitive::Index(IndexOp::Scatter { axes: ax, mode }), inputs, a.shape().to_vec(), a.dtype()))
}

/// `scatter` with overwrite semantics.
pub fn scatter(a: &Array, indices: &[Array], updates: &Array, axes: &[isize]) -> Result<Array> {
    scatter_with(a, indices, updates, axes, ScatterMode::Set)
}
/// `scatter_add`.
pub fn scatter_add(a: &Array, indices: &[Array], updates: &Array, axes: &[isize]) -> Result<Array> {
    scatter_with(a, indices, updates, axes, ScatterMode::Add)
}
/// `scatter_prod`.
pub fn scatter_prod(a: &Array, indices: &[Array], updates: &Array, axes: &[isize]) -> Result<Array> {
    scatter_with(a, indices, updates, axes, ScatterMode::Prod)
}
/// `scatter_max`.
pub fn scatter_max(a: &Array, indices: &[Array], updates: &Array, axes: &[isize]) -> Result<Array> {
    scatter_with(a, indices, updates, axes, ScatterMode::Max)
}
/// `scatter_min`.
pub fn scatter_min(a: &Array, indices: &[Array], updates: &Array, axes: &[isize]) -> Result<Array> {
    scatter_with(a, indices, updates, axes, ScatterMode::Min)
}

/// `mx.take(a, indices, axis=None)`: `None` indexes the flattened array. The result has
/// shape `a.shape[:axis] + indices.shape + a.shape[axis+1:]`.
pub fn take(a: &Array, indices: &Array, axis: Option<isize>) -> Result<Array> {
    const OP: &str = "take";
    let Some(axis) = axis else {
        return take(&crate::ops::reshape(a, &[-1])?, indices, Some(0));
    };
    if a.ndim() == 0 {
        return Err(Error::index(OP, format!("Received invalid axis {axis} for array with 0 dimensions.")));
    }
    let ax = normalize_axis(axis, a.ndim(), OP)
        .map_err(|_| Error::index(OP, format!("Received invalid axis {axis} for array with {} dimensions.", a.ndim())))?;
    if a.shape()[ax] == 0 && indices.size() > 0 {
        return Err(Error::invalid(OP, "Cannot do a non-empty take from an array with zero elements along the axis."));
    }
    let mut sizes = a.shape().to_vec();
    sizes[ax] = 1;
    let g = gather(a, core::slice::from_ref(indices), &[ax as isize], &sizes)?;
    // g: I + a.shape with a 1 at ax; drop it, then move the index dims to position ax.
    let ni = indices.ndim();
    let mut squeezed: Vec<isize> = g.shape()[..ni].iter().map(|&d| d as isize).collect();
    squeezed.extend(a.shape().iter().enumerate().filter(|&(i, _)| i != ax).map(|(_, &d)| d as isize));
    let g = crate::ops::reshape(&g, &squeezed)?;
    let mut perm: Vec<isize> = (ni..ni + ax).map(|i| i as isize).collect();
    perm.extend((0..ni).map(|i| i as isize));
    perm.extend((ni + ax..g.ndim()).map(|i| i as isize));
    crate::ops::transpose(&g, Some(&perm))
}

/// Index grids for `*_along_axis`: one array per axis of `shape`, arange along that axis
/// (the `axis` entry is `indices` itself), all broadcastable to `shape`.
fn along_axis_indices(shape: &[usize], indices: &Array, ax: usize) -> Result<Vec<Array>> {
    let nd = shape.len();
    let mut out = Vec::with_capacity(nd);
    for (i, &d) in shape.iter().enumerate() {
        if i == ax {
            out.push(indices.clone());
        } else {
            let mut s = vec![1isize; nd];
            s[i] = d as isize;
            out.push(crate::ops::reshape(&crate::ops::arange(0.0, d as f64, 1.0, DType::Int32)?, &s)?);
        }
    }
    Ok(out)
}

fn check_along(a: &Array, indices: &Array, op: &'static str) -> Result<()> {
    if !indices.dtype().is_integer() {
        return Err(Error::invalid(op, "Indices must be integral."));
    }
    if indices.ndim() != a.ndim() {
        return Err(Error::invalid(
            op,
            format!("Indices of dimension {} does not match array of dimension {}.", indices.ndim(), a.ndim()),
        ));
    }
    Ok(())
}

/// `mx.take_along_axis(a, indices, axis=-1)`: `None` uses the flattened array.
pub fn take_along_axis(a: &Array, indices: &Array, axis: Option<isize>) -> Result<Array> {
    const OP: &str = "take_along_axis";
    let Some(axis) = axis else {
        return take_along_axis(&crate::ops::reshape(a, &[-1])?, &crate::ops::reshape(indices, &[-1])?, Some(0));
    };
    check_along(a, indices, OP)?;
    let ax = normalize_axis(axis, a.ndim(), OP)?;
    // Broadcast a and indices against each other on every axis but `ax`.
    let mut ashape = a.shape().to_vec();
    let mut ishape = indices.shape().to_vec();
    ashape[ax] = 1;
    ishape[ax] = 1;
    let b = broadcast_shapes(&ashape, &ishape, OP)?;
    let (mut sa, mut si) = (b.clone(), b.clone());
    sa[ax] = a.shape()[ax];
    si[ax] = indices.shape()[ax];
    let a = crate::ops::broadcast_to(a, &sa)?;
    let idx = crate::ops::broadcast_to(indices, &si)?;
    let grids = along_axis_indices(&sa, &idx, ax)?;
    let axes: Vec<isize> = (0..sa.len() as isize).collect();
    let g = gather(&a, &grids, &axes, &vec![1; sa.len()])?;
    crate::ops::reshape(&g, &si.iter().map(|&d| d as isize).collect::<Vec<_>>())
}

/// `mx.put_along_axis(a, indices, values, axis=None)`: a copy of `a` with `values` written at
/// `indices` along `axis` (`None`: of the flattened array).
pub fn put_along_axis(a: &Array, indices: &Array, values: &Array, axis: Option<isize>) -> Result<Array> {
    scatter_along_axis(a, indices, values, axis, ScatterMode::Set)
}

/// `put_along_axis` with the values added (repeated indices accumulate): the vjp of the
/// permuting ops (sort, partition, cummax …) sends cotangents back this way.
pub fn scatter_add_along_axis(a: &Array, indices: &Array, values: &Array, axis: isize) -> Result<Array> {
    scatter_along_axis(a, indices, values, Some(axis), ScatterMode::Add)
}

fn scatter_along_axis(a: &Array, indices: &Array, values: &Array, axis: Option<isize>, mode: ScatterMode) -> Result<Array> {
    const OP: &str = "put_along_axis";
    let Some(axis) = axis else {
        let flat = crate::ops::reshape(a, &[-1])?;
        let r = scatter_along_axis(&flat, &crate::ops::reshape(indices, &[-1])?, &crate::ops::reshape(values, &[-1])?, Some(0), mode)?;
        return crate::ops::reshape(&r, &a.shape().iter().map(|&d| d as isize).collect::<Vec<_>>());
    };
    check_along(a, indices, OP)?;
    let ax = normalize_axis(axis, a.ndim(), OP)?;
    let mut ashape = a.shape().to_vec();
    ashape[ax] = 1;
    // The indices broadcast with a (off `ax`) and the values broadcast to the indices.
    let ib = broadcast_shapes(&ashape, indices.shape(), OP)?;
    let mut ishape = ib.clone();
    ishape[ax] = indices.shape()[ax];
    let idx = crate::ops::broadcast_to(indices, &ishape)?;
    let vals = crate::ops::broadcast_to(values, &ishape)?;
    let grids = along_axis_indices(&ishape, &idx, ax)?;
    let mut ushape = ishape.clone();
    ushape.extend(core::iter::repeat(1).take(a.ndim()));
    let up = crate::ops::reshape(&vals, &ushape.iter().map(|&d| d as isize).collect::<Vec<_>>())?;
    let axes: Vec<isize> = (0..a.ndim() as isize).collect();
    scatter_with(a, &grids, &up, &axes, mode)
}
