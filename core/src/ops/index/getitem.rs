//! Python-style indexing for the `__getitem__` / `__setitem__` / `.at[]` layers:
//! `index(a, &[Index::…])`, `index_update(a, idx, value)` and `at_add` … `at_minimum`.
//!
//! Semantics follow MLX 0.32 (`python/src/indexing.cpp`): ints and arrays are "advanced"
//! indices gathered together; their broadcast dims go first when a slice or `None` separates
//! them, else where the first of them stood (numpy's rule, with `None` counting as a
//! separator as in MLX). Slices and ints without arrays are views. Boolean arrays are refused
//! for reading (as MLX does); for writing, a lone boolean mask is a `where`.

use super::{gather, scatter_with, ScatterMode};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use alloc::vec;
use alloc::vec::Vec;

/// One entry of a Python index tuple.
#[derive(Clone, Debug)]
pub enum Index {
    /// `i` (negative counts from the end).
    Int(isize),
    /// `start:stop:step`, each optional.
    Slice {
        /// Start (None: beginning, or end for negative steps).
        start: Option<isize>,
        /// Stop (None: end, or before the beginning for negative steps).
        stop: Option<isize>,
        /// Step (None: 1).
        step: Option<isize>,
    },
    /// `None` / `np.newaxis`: a new size-1 axis.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
    /// An integer (or, for updates, boolean) index array.
    Array(Array),
}

impl Index {
    /// The full slice `:`.
    pub fn full() -> Index {
        Index::Slice { start: None, stop: None, step: None }
    }
    /// The slice `start:stop:step`.
    pub fn slice(start: Option<isize>, stop: Option<isize>, step: Option<isize>) -> Index {
        Index::Slice { start, stop, step }
    }
}

/// An entry after ellipsis expansion.
enum E {
    Int,
    /// A slice; `true` when it keeps the whole axis in order (`:`).
    Slice(bool),
    New,
    Arr(Array),
}

impl E {
    fn advanced(&self) -> bool {
        matches!(self, E::Int | E::Arr(_))
    }
}

/// The parsed index: entries (one per non-None axis, plus Nones) and the basic view.
struct Plan {
    entries: Vec<E>,
    /// Basic slicing of `a`: ints become one-element windows, arrays full axes.
    start: Vec<isize>,
    stop: Vec<isize>,
    step: Vec<isize>,
    has_array: bool,
}

fn slice_params(s: Option<isize>, e: Option<isize>, k: Option<isize>, n: isize) -> Result<(isize, isize, isize)> {
    let k = k.unwrap_or(1);
    if k == 0 {
        return Err(Error::invalid("slice", "slice step cannot be zero"));
    }
    let s = s.unwrap_or(if k < 0 { n - 1 } else { 0 });
    let e = e.unwrap_or(if k < 0 { -n - 1 } else { n });
    Ok((s, e, k))
}

fn plan(a: &Array, idx: &[Index], for_update: bool) -> Result<Plan> {
    const OP: &str = "index";
    let nd = a.ndim();
    let ell = idx.iter().filter(|i| matches!(i, Index::Ellipsis)).count();
    if ell > 1 {
        return Err(Error::invalid(OP, "An index can only have a single ellipsis (...)"));
    }
    let non_none = idx.iter().filter(|i| !matches!(i, Index::NewAxis | Index::Ellipsis)).count();
    if non_none > nd {
        if nd == 0 {
            return Err(Error::invalid(OP, "too many indices for array: array is 0-dimensional"));
        }
        return Err(Error::invalid(OP, alloc::format!("Too many indices for array with {nd} dimensions.")));
    }
    let mut p = Plan {
        entries: Vec::with_capacity(idx.len() + nd),
        start: vec![0; nd],
        stop: a.shape().iter().map(|&d| d as isize).collect(),
        step: vec![1; nd],
        has_array: false,
    };
    let mut axis = 0usize;
    for i in idx {
        match i {
            Index::Ellipsis => {
                for _ in 0..nd - non_none {
                    let n = a.shape()[axis] as isize;
                    p.entries.push(E::Slice(n >= 0));
                    axis += 1;
                }
            }
            Index::NewAxis => p.entries.push(E::New),
            Index::Int(v) => {
                let n = a.shape()[axis] as isize;
                let w = if *v < 0 { v + n } else { *v };
                if w < 0 || w >= n {
                    return Err(Error::index(
                        OP,
                        alloc::format!("index {v} is out of bounds for axis {axis} with size {n}"),
                    ));
                }
                p.start[axis] = w;
                p.stop[axis] = w + 1;
                p.entries.push(E::Int);
                axis += 1;
            }
            Index::Slice { start, stop, step } => {
                let n = a.shape()[axis] as isize;
                let (s, e, k) = slice_params(*start, *stop, *step, n)?;
                p.start[axis] = s;
                p.stop[axis] = e;
                p.step[axis] = k;
                p.entries.push(E::Slice(k == 1 && s == 0 && (e >= n || e == n)));
                axis += 1;
            }
            Index::Array(arr) => {
                if arr.dtype() == DType::Bool && !for_update {
                    return Err(Error::invalid(OP, "boolean indices are not yet supported"));
                }
                if !arr.dtype().is_integer() && arr.dtype() != DType::Bool {
                    return Err(Error::invalid(OP, "Indices must be integral."));
                }
                p.has_array = true;
                p.entries.push(E::Arr(arr.clone()));
                axis += 1;
            }
        }
    }
    Ok(p)
}

/// Builds `a[idx]` for a parsed plan.
fn apply(a: &Array, p: &Plan) -> Result<Array> {
    let v = crate::ops::slice(a, &p.start, &p.stop, &p.step)?;
    let n_axes = p.entries.iter().filter(|e| !matches!(e, E::New)).count();
    let trailing: Vec<usize> = v.shape()[n_axes..].to_vec();
    // Sizes of the basic entries, in entry order (None → 1), split around the advanced block.
    let basic_dims = |e: &E, ax: usize| -> Option<usize> {
        match e {
            E::New => Some(1),
            E::Slice(..) => Some(v.shape()[ax]),
            _ => None,
        }
    };
    if !p.has_array {
        let mut shape: Vec<isize> = Vec::new();
        let mut ax = 0;
        for e in &p.entries {
            if let Some(d) = basic_dims(e, ax) {
                shape.push(d as isize);
            }
            if !matches!(e, E::New) {
                ax += 1;
            }
        }
        shape.extend(trailing.iter().map(|&d| d as isize));
        return crate::ops::reshape(&v, &shape);
    }
    // Advanced block: gather every int/array axis of the view at once.
    let mut idx = Vec::new();
    let mut axes = Vec::new();
    let mut sizes = v.shape().to_vec();
    let mut ax = 0usize;
    for e in &p.entries {
        match e {
            E::Int => {
                idx.push(Array::scalar(0i32)?);
                axes.push(ax as isize);
                sizes[ax] = 1;
            }
            E::Arr(arr) => {
                idx.push(arr.clone());
                axes.push(ax as isize);
                sizes[ax] = 1;
            }
            _ => {}
        }
        if !matches!(e, E::New) {
            ax += 1;
        }
    }
    let g = gather(&v, &idx, &axes, &sizes)?;
    let bnd = g.ndim() - v.ndim();
    let bshape: Vec<usize> = g.shape()[..bnd].to_vec();
    // B + the non-advanced axes of v, in order.
    let rest: Vec<usize> = (0..v.ndim()).filter(|i| !axes.contains(&(*i as isize))).map(|i| v.shape()[i]).collect();
    let mut br: Vec<isize> = bshape.iter().chain(&rest).map(|&d| d as isize).collect();
    let g = crate::ops::reshape(&g, &br)?;
    let first = p.entries.iter().position(E::advanced).unwrap_or(0);
    let last = p.entries.iter().rposition(E::advanced).unwrap_or(0);
    let gather_first = p.entries[first..=last].iter().any(|e| !e.advanced());
    let mut tokens: Vec<isize> = Vec::new();
    let mut ax = 0;
    let mut r0 = 0usize; // rest-dims that precede the block
    if gather_first {
        tokens.extend(bshape.iter().map(|&d| d as isize));
    }
    for (i, e) in p.entries.iter().enumerate() {
        if !gather_first && i == first {
            tokens.extend(bshape.iter().map(|&d| d as isize));
        }
        if let Some(d) = basic_dims(e, ax) {
            tokens.push(d as isize);
            if !gather_first && i < first && !matches!(e, E::New) {
                r0 += 1;
            }
        }
        if !matches!(e, E::New) {
            ax += 1;
        }
    }
    tokens.extend(trailing.iter().map(|&d| d as isize));
    let g = if !gather_first && r0 > 0 {
        let nb = bshape.len();
        let mut perm: Vec<isize> = (nb..nb + r0).map(|i| i as isize).collect();
        perm.extend((0..nb).map(|i| i as isize));
        perm.extend((nb + r0..br.len()).map(|i| i as isize));
        br.clear();
        crate::ops::transpose(&g, Some(&perm))?
    } else {
        g
    };
    crate::ops::reshape(&g, &tokens)
}

/// `a[idx]` with Python/MLX semantics (see the module docs).
pub fn index(a: &Array, idx: &[Index]) -> Result<Array> {
    if idx.is_empty() {
        return Ok(a.clone());
    }
    let p = plan(a, idx, false)?;
    apply(a, &p)
}

/// Removes leading size-1 axes of an update (MLX does so before broadcasting).
fn strip_leading_ones(v: &Array) -> Result<Array> {
    let s = v.shape().iter().take_while(|&&d| d == 1).count();
    if s == 0 {
        return Ok(v.clone());
    }
    crate::ops::reshape(v, &v.shape()[s..].iter().map(|&d| d as isize).collect::<Vec<_>>())
}

fn combine(mode: ScatterMode, x: &Array, y: &Array) -> Result<Array> {
    match mode {
        ScatterMode::Set => Ok(y.clone()),
        ScatterMode::Add => crate::ops::add(x, y),
        ScatterMode::Prod => crate::ops::multiply(x, y),
        ScatterMode::Max => crate::ops::maximum(x, y),
        ScatterMode::Min => crate::ops::minimum(x, y),
    }
}

fn update(a: &Array, idx: &[Index], value: &Array, mode: ScatterMode) -> Result<Array> {
    const OP: &str = "index_update";
    let p = plan(a, idx, true)?;
    let bools: Vec<&Array> =
        p.entries.iter().filter_map(|e| if let E::Arr(x) = e { Some(x) } else { None }).filter(|x| x.dtype() == DType::Bool).collect();
    if !bools.is_empty() {
        return mask_update(a, &p, bools[0], value, mode);
    }
    let value = crate::ops::astype(value, a.dtype())?;
    let target = apply(a, &p)?;
    let up = crate::ops::broadcast_to(&strip_leading_ones(&value)?, target.shape()).map_err(|_| {
        Error::invalid(OP, alloc::format!("Cannot broadcast update of shape {:?} to shape {:?}.", value.shape(), target.shape()))
    })?;
    // A window of a: write it back with slice_update. Not for maximum/minimum: as MLX, their
    // gradient reaches every candidate equal to the result (the scatter's rule), where the
    // elementwise maximum would send a tie to one side only.
    if !p.has_array && !matches!(mode, ScatterMode::Max | ScatterMode::Min) {
        let window = crate::ops::slice(a, &p.start, &p.stop, &p.step)?;
        let up = crate::ops::reshape(&up, &window.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())?;
        let new = combine(mode, &window, &up)?;
        return crate::ops::slice_update(a, &new, &p.start, &p.stop, &p.step);
    }
    // Advanced: the coordinates of every target element, found by indexing broadcast iotas
    // (views: only the picked positions are read), then one scatter over all axes.
    let nd = a.ndim();
    let mut coords = Vec::with_capacity(nd);
    for (k, &d) in a.shape().iter().enumerate() {
        let mut s = vec![1isize; nd];
        s[k] = d as isize;
        let iota = crate::ops::reshape(&crate::ops::arange(0.0, d as f64, 1.0, DType::Int32)?, &s)?;
        coords.push(apply(&crate::ops::broadcast_to(&iota, a.shape())?, &p)?);
    }
    let mut ushape: Vec<isize> = target.shape().iter().map(|&d| d as isize).collect();
    ushape.extend(core::iter::repeat(1).take(nd));
    let up = crate::ops::reshape(&up, &ushape)?;
    let axes: Vec<isize> = (0..nd as isize).collect();
    scatter_with(a, &coords, &up, &axes, mode)
}

/// A lone boolean mask `a[mask] op= value` where `value` broadcasts against `a`: a `where`.
fn mask_update(a: &Array, p: &Plan, mask: &Array, value: &Array, mode: ScatterMode) -> Result<Array> {
    const OP: &str = "index_update";
    let only = p.entries.iter().filter(|e| !matches!(e, E::Slice(true))).count() == 1
        && matches!(p.entries.first(), Some(E::Arr(_)));
    if !only || mask.ndim() > a.ndim() || mask.shape() != &a.shape()[..mask.ndim()] {
        return Err(Error::unsupported(OP, "Boolean masks are only supported alone, matching the array's leading dimensions."));
    }
    let mut ms: Vec<isize> = mask.shape().iter().map(|&d| d as isize).collect();
    ms.extend(core::iter::repeat(1).take(a.ndim() - mask.ndim()));
    let m = crate::ops::reshape(mask, &ms)?;
    let value = crate::ops::astype(value, a.dtype())?;
    if crate::shape::broadcast_shapes(a.shape(), value.shape(), OP).ok().as_deref() != Some(a.shape()) {
        return Err(Error::unsupported(OP, "A boolean-mask update must broadcast against the array."));
    }
    let new = combine(mode, a, &value)?;
    crate::ops::where_(&m, &new, a)
}

/// `a[idx] = value` as a new array (`__setitem__`); duplicates: the last write wins.
pub fn index_update(a: &Array, idx: &[Index], value: &Array) -> Result<Array> {
    update(a, idx, value, ScatterMode::Set)
}
/// `a.at[idx].add(value)` (duplicates accumulate).
pub fn at_add(a: &Array, idx: &[Index], value: &Array) -> Result<Array> {
    update(a, idx, value, ScatterMode::Add)
}
/// `a.at[idx].subtract(value)`: adds `-value` (value first cast to `a`'s dtype).
pub fn at_subtract(a: &Array, idx: &[Index], value: &Array) -> Result<Array> {
    let v = crate::ops::negative(&crate::ops::astype(value, a.dtype())?)?;
    update(a, idx, &v, ScatterMode::Add)
}
/// `a.at[idx].multiply(value)`.
pub fn at_multiply(a: &Array, idx: &[Index], value: &Array) -> Result<Array> {
    update(a, idx, value, ScatterMode::Prod)
}
/// `a.at[idx].divide(value)`: multiplies by `reciprocal(value)`, as MLX does.
pub fn at_divide(a: &Array, idx: &[Index], value: &Array) -> Result<Array> {
    update(a, idx, &crate::ops::reciprocal(value)?, ScatterMode::Prod)
}
/// `a.at[idx].maximum(value)`.
pub fn at_maximum(a: &Array, idx: &[Index], value: &Array) -> Result<Array> {
    update(a, idx, value, ScatterMode::Max)
}
/// `a.at[idx].minimum(value)`.
pub fn at_minimum(a: &Array, idx: &[Index], value: &Array) -> Result<Array> {
    update(a, idx, value, ScatterMode::Min)
}
