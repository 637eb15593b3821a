//! The sort family: sort, argsort, partition, argpartition, topk and searchsorted. Ordering is
//! MLX's: ascending, NaN after everything (NaNs equal to each other), complex lexicographic;
//! sort and argsort are stable. Kernels live in `cpu/sort.rs`.

pub(crate) mod grad;

use crate::array::Array;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops;
use crate::primitive::Primitive;
use alloc::vec::Vec;

/// The sort family's primitives. `axis` is already normalized.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SortOp {
    /// Stable ascending sort along `axis`.
    Sort {
        /// The axis sorted.
        axis: usize,
    },
    /// uint32 indices of a stable ascending sort along `axis`.
    ArgSort {
        /// The axis sorted.
        axis: usize,
    },
    /// Element `kth` in its sorted place, smaller ones before it, larger ones after.
    Partition {
        /// Position (normalized).
        kth: usize,
        /// The axis partitioned.
        axis: usize,
    },
    /// uint32 indices of a partition (ties broken by index).
    ArgPartition {
        /// Position (normalized).
        kth: usize,
        /// The axis partitioned.
        axis: usize,
    },
    /// uint32 insertion points of input 1 into the sorted 1-D input 0.
    SearchSorted {
        /// `side == "right"`.
        right: bool,
    },
}

impl SortOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            SortOp::Sort { .. } => "sort",
            SortOp::ArgSort { .. } => "argsort",
            SortOp::Partition { .. } => "partition",
            SortOp::ArgPartition { .. } => "argpartition",
            SortOp::SearchSorted { .. } => "searchsorted",
        }
    }
}

/// MLX's `normalize_axis_index` (IndexError with the op prefix).
fn sort_axis(a: &Array, axis: isize, op: &'static str) -> Result<usize> {
    let nd = a.ndim() as isize;
    if axis < -nd || axis >= nd {
        return Err(Error::index(op, alloc::format!("Axis {axis} is out of bounds for array with {nd} dimensions.")));
    }
    Ok(if axis < 0 { (axis + nd) as usize } else { axis as usize })
}

/// The array and axis an op works on: `None` flattens.
fn with_axis(a: &Array, axis: Option<isize>, op: &'static str) -> Result<(Array, usize)> {
    match axis {
        None => Ok((ops::reshape(a, &[a.size() as isize])?, 0)),
        Some(ax) => Ok((a.clone(), sort_axis(a, ax, op)?)),
    }
}

fn shape_str(s: &[usize]) -> alloc::string::String {
    let parts: Vec<alloc::string::String> = s.iter().map(|d| alloc::format!("{d}")).collect();
    alloc::format!("({})", parts.join(","))
}

/// `mx.sort(a, axis=-1)`: `None` sorts the flattened array.
pub fn sort(a: &Array, axis: Option<isize>) -> Result<Array> {
    let (x, axis) = with_axis(a, axis, "sort")?;
    let (shape, dt) = (x.shape().to_vec(), x.dtype());
    Ok(Array::from_op(Primitive::Sort(SortOp::Sort { axis }), alloc::vec![x], shape, dt))
}

/// `mx.argsort(a, axis=-1)`: uint32, stable.
pub fn argsort(a: &Array, axis: Option<isize>) -> Result<Array> {
    let (x, axis) = with_axis(a, axis, "argsort")?;
    let shape = x.shape().to_vec();
    Ok(Array::from_op(Primitive::Sort(SortOp::ArgSort { axis }), alloc::vec![x], shape, DType::Uint32))
}

fn kth_of(x: &Array, kth: isize, axis: usize, given: Option<isize>, op: &'static str, sep: &str) -> Result<usize> {
    let n = x.shape()[axis] as isize;
    let k = if kth < 0 { kth + n } else { kth };
    if k < 0 || k >= n {
        let shown = given.unwrap_or(0);
        return Err(Error::invalid(
            op,
            alloc::format!("Received invalid kth {kth}{sep}along axis {shown} for array with shape: {}", shape_str(x.shape())),
        ));
    }
    Ok(k as usize)
}

/// `mx.partition(a, kth, axis=-1)`.
pub fn partition(a: &Array, kth: isize, axis: Option<isize>) -> Result<Array> {
    let (x, ax) = with_axis(a, axis, "partition")?;
    let k = kth_of(&x, kth, ax, axis, "partition", "")?;
    let (shape, dt) = (x.shape().to_vec(), x.dtype());
    Ok(Array::from_op(Primitive::Sort(SortOp::Partition { kth: k, axis: ax }), alloc::vec![x], shape, dt))
}

/// `mx.argpartition(a, kth, axis=-1)`: uint32.
pub fn argpartition(a: &Array, kth: isize, axis: Option<isize>) -> Result<Array> {
    let (x, ax) = with_axis(a, axis, "argpartition")?;
    let k = kth_of(&x, kth, ax, axis, "argpartition", " ")?;
    let shape = x.shape().to_vec();
    Ok(Array::from_op(Primitive::Sort(SortOp::ArgPartition { kth: k, axis: ax }), alloc::vec![x], shape, DType::Uint32))
}

/// `mx.topk(a, k, axis=-1)`: the `k` largest along the axis, in no particular order (NaN counts
/// as largest).
pub fn topk(a: &Array, k: isize, axis: Option<isize>) -> Result<Array> {
    let (x, ax) = with_axis(a, axis, "topk")?;
    let n = x.shape()[ax];
    if k < 0 || k as usize > n {
        return Err(Error::invalid(
            "topk",
            alloc::format!(
                "Received invalid k={k} along axis {} for array with shape: {}",
                axis.unwrap_or(0),
                shape_str(x.shape())
            ),
        ));
    }
    let k = k as usize;
    if k == n {
        return Ok(x);
    }
    let part = if k == 0 { x.clone() } else { partition(&x, -(k as isize), Some(ax as isize))? };
    let nd = x.ndim();
    let mut start = alloc::vec![0isize; nd];
    let stop: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    start[ax] = (n - k) as isize;
    ops::slice(&part, &start, &stop, &alloc::vec![1isize; nd])
}

/// `mx.searchsorted(sorted_sequence, values, side)`: uint32 insertion points of `values` into
/// the 1-D ascending `sorted_sequence` (`side` is "left" or "right"), NaN sorting last.
pub fn searchsorted(sorted_sequence: &Array, values: &Array, side: &str) -> Result<Array> {
    const OP: &str = "searchsorted";
    if side != "left" && side != "right" {
        return Err(Error::invalid(OP, alloc::format!("Invalid side '{side}'. Expected 'left' or 'right'.")));
    }
    if sorted_sequence.ndim() != 1 {
        return Err(Error::invalid(
            OP,
            alloc::format!("The sorted sequence must be 1-D but has {} dimensions.", sorted_sequence.ndim()),
        ));
    }
    if sorted_sequence.size() as u64 > u32::MAX as u64 {
        return Err(Error::invalid(
            OP,
            alloc::format!(
                "The sorted sequence has {} elements, more than the uint32 output can index.",
                sorted_sequence.size()
            ),
        ));
    }
    let dt = promote_types(sorted_sequence.dtype(), values.dtype());
    let s = ops::astype(sorted_sequence, dt)?;
    let v = ops::astype(values, dt)?;
    let shape = v.shape().to_vec();
    Ok(Array::from_op(Primitive::Sort(SortOp::SearchSorted { right: side == "right" }), alloc::vec![s, v], shape, DType::Uint32))
}
