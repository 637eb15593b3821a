//! Products of vectors along one axis: `mx.vecdot` (conjugated dot product) and
//! `mx.linalg.cross` (3-vectors, with 2-vectors read as having a zero third component), both
//! composed from elementwise ops as MLX does.

use crate::array::Array;
use crate::dtype::promote_types;
use crate::error::{Error, Result};
use crate::ops::{astype, concatenate, conjugate, multiply, negative, split, subtract, sum, zeros_like, SplitSpec};
use crate::shape::{broadcast_shapes, normalize_axis};
use alloc::vec::Vec;

/// `mx.vecdot(a, b, axis=-1)`: `sum(conj(a) * b, axis)`, with broadcasting of the other axes.
pub fn vecdot(a: &Array, b: &Array, axis: isize) -> Result<Array> {
    const OP: &str = "vecdot";
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::invalid(OP, "inputs must be at least 1D."));
    }
    let (na, nb) = (a.ndim() as isize, b.ndim() as isize);
    let ax = if axis < 0 { axis + na } else { axis };
    if ax < 0 || ax >= na {
        return Err(Error::invalid(OP, "axis is out of bounds."));
    }
    let b_ok = if axis < 0 { axis + nb == ax } else { axis < nb };
    if !b_ok {
        return Err(Error::invalid(OP, "axis is out of bounds."));
    }
    let bx = if axis < 0 { axis + nb } else { axis };
    if a.shape()[ax as usize] != b.shape()[bx as usize] {
        return Err(Error::invalid(OP, "a and b must have the same size along axis."));
    }
    sum(&multiply(&conjugate(a)?, b)?, Some(&[ax]), false)
}

/// `mx.linalg.cross(a, b, axis=-1)`: the cross product along `axis`, which must have size 2
/// or 3 in both inputs; the result has size 3 there.
pub fn cross(a: &Array, b: &Array, axis: isize) -> Result<Array> {
    const OP: &str = "linalg::cross";
    let check = |x: &Array| -> Result<usize> {
        let i = normalize_axis(axis, x.ndim(), OP)?;
        if !(2..=3).contains(&x.shape()[i]) {
            return Err(Error::invalid(OP, "The specified axis must have size 2 or 3."));
        }
        Ok(i)
    };
    let (ia, ib) = (check(a)?, check(b)?);
    let (a2, b2) = (a.shape()[ia] == 2, b.shape()[ib] == 2);
    let dtype = promote_types(a.dtype(), b.dtype());
    let mut sa = a.shape().to_vec();
    let mut sb = b.shape().to_vec();
    sa[ia] = 3;
    sb[ib] = 3;
    let mut out_shape = broadcast_shapes(&sa, &sb, OP)?;
    let ax = if axis < 0 { (axis + out_shape.len() as isize) as usize } else { axis as usize };
    out_shape[ax] = if a2 { 2 } else { 3 };
    let a_ = crate::ops::shape::broadcast_operand(&astype(a, dtype)?, &out_shape)?;
    out_shape[ax] = if b2 { 2 } else { 3 };
    let b_ = crate::ops::shape::broadcast_operand(&astype(b, dtype)?, &out_shape)?;
    let x = split(&a_, SplitSpec::Sections(if a2 { 2 } else { 3 }), ax as isize)?;
    let y = split(&b_, SplitSpec::Sections(if b2 { 2 } else { 3 }), ax as isize)?;
    let mut parts: Vec<Array> = Vec::with_capacity(3);
    if a2 && b2 {
        let z = zeros_like(&x[0])?;
        parts.push(z.clone());
        parts.push(z);
    } else if b2 {
        parts.push(negative(&multiply(&x[2], &y[1])?)?);
        parts.push(multiply(&x[2], &y[0])?);
    } else if a2 {
        parts.push(multiply(&x[1], &y[2])?);
        parts.push(negative(&multiply(&x[0], &y[2])?)?);
    } else {
        parts.push(subtract(&multiply(&x[1], &y[2])?, &multiply(&x[2], &y[1])?)?);
        parts.push(subtract(&multiply(&x[2], &y[0])?, &multiply(&x[0], &y[2])?)?);
    }
    parts.push(subtract(&multiply(&x[0], &y[1])?, &multiply(&x[1], &y[0])?)?);
    concatenate(&parts, Some(ax as isize))
}
