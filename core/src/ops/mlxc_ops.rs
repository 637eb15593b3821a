//! Ops of MLX's C++ API that mlx-c's `ops.h` exposes and MLX's Python does not (so they have
//! no `mx.` name): `masked_scatter`, `number_of_elements`, `slice_update_{add,max,min,prod}`.
//! Each is composed of ops this core has; `copy` and `scatter_add_axis` map onto
//! [`crate::ops::contiguous`] and [`crate::ops::index::scatter_add_along_axis`].

use alloc::format;
use alloc::vec::Vec;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::element::Value;
use crate::ops::{
    add, astype, broadcast_to, concatenate, cumsum, full, maximum, minimum, multiply, reshape, slice, slice_update, stop_gradient,
    take, where_, zeros,
};
use crate::shape::{fmt_shape, normalize_axis};

/// `masked_scatter(a, mask, src)`: a copy of `a` whose positions where `mask` (broadcast to
/// `a`) is true take the elements of `src` (flattened, cast to `a`'s dtype) in row-major
/// order. A mask that selects more positions than `src` has fails when evaluated (MLX: "Source
/// does not have enough elements for mask").
pub fn masked_scatter(a: &Array, mask: &Array, src: &Array) -> Result<Array> {
    const OP: &str = "masked_scatter";
    if mask.dtype() != DType::Bool {
        return Err(Error::invalid(OP, format!("The mask has to be boolean but it is {}.", mask.dtype())));
    }
    let mask = broadcast_to(mask, a.shape())
        .map_err(|_| Error::invalid(OP, format!("The mask of shape {} does not broadcast to {}.", fmt_shape(mask.shape()), fmt_shape(a.shape()))))?;
    // Behind one padding element, the k-th selected position reads src[k] (index k + 1) and
    // the others the padding (index 0): an index is out of range only where the mask selects
    // more positions than src holds.
    let flat_src = concatenate(&[zeros(&[1], a.dtype())?, reshape(&astype(src, a.dtype())?, &[-1])?], Some(0))?;
    let flat_mask = reshape(&mask, &[-1])?;
    let k = cumsum(&astype(&flat_mask, DType::Int32)?, Some(0), false, true, None)?;
    // Positions depend on the mask only, which carries no gradient (as MLX's MaskedScatter).
    let idx = stop_gradient(&where_(&flat_mask, &k, &Array::scalar(0i32)?)?)?;
    let picked = reshape(&take(&flat_src, &idx, Some(0))?, &shape_isize(a.shape()))?;
    where_(&mask, &picked, a)
}

/// `number_of_elements(a, axes, inverted, dtype)`: the product of `a`'s sizes along `axes`
/// (with `inverted`, along every other axis), as a 0-d array of `dtype`.
pub fn number_of_elements(a: &Array, axes: &[isize], inverted: bool, dtype: DType) -> Result<Array> {
    const OP: &str = "number_of_elements";
    let mut chosen = alloc::vec![false; a.ndim()];
    for &ax in axes {
        chosen[normalize_axis(ax, a.ndim(), OP)?] = true;
    }
    let n: u64 = a.shape().iter().zip(&chosen).filter(|&(_, &c)| c != inverted).map(|(&d, _)| d as u64).product();
    full(&[], Value::U(n), dtype)
}

/// How a `slice_update_*` combines the window's values with the update.
#[derive(Clone, Copy, Debug)]
pub enum SliceReduce {
    /// `window + update`.
    Add,
    /// `max(window, update)`.
    Max,
    /// `min(window, update)`.
    Min,
    /// `window · update`.
    Prod,
}

/// `slice_update_{add,max,min,prod}(src, update, start, stop, strides)`: [`slice_update`] whose
/// window becomes the window combined with `update` (broadcast to it, cast to `src`'s dtype).
/// A strided window never repeats a position, so combining once per position is exact.
pub fn slice_update_reduce(
    src: &Array,
    update: &Array,
    start: &[isize],
    stop: &[isize],
    strides: &[isize],
    how: SliceReduce,
) -> Result<Array> {
    let window = slice(src, start, stop, strides)?;
    let up = astype(update, src.dtype())?;
    let combined = match how {
        SliceReduce::Add => add(&window, &up)?,
        SliceReduce::Max => maximum(&window, &up)?,
        SliceReduce::Min => minimum(&window, &up)?,
        SliceReduce::Prod => multiply(&window, &up)?,
    };
    slice_update(src, &astype(&combined, src.dtype())?, start, stop, strides)
}

fn shape_isize(s: &[usize]) -> Vec<isize> {
    s.iter().map(|&d| d as isize).collect()
}
