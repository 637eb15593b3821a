//! vjp rules of the shape family: views map the cotangent back through the inverse view
//! (a slice's cotangent is written into zeros, a broadcast's is summed over the broadcast
//! axes), copies pass it through, joins split it.

use super::ShapeOp;
use crate::array::Array;
use crate::error::Result;
use crate::ops::*;
use crate::primitive::Primitive;
use crate::transforms::rules::{unsupported, Grads};
use alloc::vec;
use alloc::vec::Vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("reshape (squeeze, expand_dims, flatten …)", "yes"),
    ("transpose (swapaxes, moveaxis …)", "yes"),
    ("broadcast_to", "yes (sums over broadcast axes)"),
    ("broadcast_axes (matmul's batch axes in a shapeless trace)", "yes (to its first input; the others give shapes only)"),
    ("slice (static and dynamic)", "yes"),
    ("slice_update (static and dynamic)", "yes"),
    ("concatenate (stack, split …)", "yes"),
    ("contiguous", "yes"),
    ("diagonal (trace, diag)", "yes"),
    ("depends", "yes (to the passed-through inputs)"),
    ("stop_gradient", "zero (by definition)"),
    ("as_strided", "yes (as MLX: each output element's cotangent added into the input element it reads)"),
];

fn isz(s: &[usize]) -> Vec<isize> {
    s.iter().map(|&d| d as isize).collect()
}

pub(crate) fn vjp(op: &ShapeOp, inputs: &[Array], out: &Array, g: &Array, needs: &[bool]) -> Result<Grads> {
    let x = &inputs[0];
    let one = |d: Array| Ok(vec![Some(d)]);
    match op {
        // A reshape a shapeless trace noted (a squeeze, an expand_dims …) is undone by its
        // inverse request, which a replay asks again on other shapes (MLX's `Squeeze::vjp`
        // is an `expand_dims`); any other goes back to the traced shape.
        ShapeOp::Reshape => match crate::transforms::compile::reshape_request(crate::transforms::node_key(out)) {
            Some(req) => one(req.inverse(g, x)?),
            None => one(reshape(g, &isz(x.shape()))?),
        },
        ShapeOp::Transpose(perm) => {
            let mut inv = vec![0isize; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p] = i as isize;
            }
            one(transpose(g, Some(&inv))?)
        }
        // In a shapeless trace the sum keeps its axes (no reshape to the traced shape).
        ShapeOp::Broadcast if crate::transforms::compile::shape_generic(g) => one(unbroadcast_generic(g, x.shape())?),
        ShapeOp::Broadcast => one(unbroadcast(g, x.shape())?),
        // The inputs after the first only give their shapes (MLX stops their gradients).
        ShapeOp::BroadcastAxes(_) => {
            let mut grads = vec![Some(unbroadcast_generic(g, x.shape())?)];
            grads.resize(inputs.len(), None);
            Ok(grads)
        }
        ShapeOp::Slice { start, step } => {
            let z = zeros_like(x)?;
            let op = ShapeOp::SliceUpdate { start: start.clone(), step: step.clone() };
            one(Array::from_op(Primitive::Shape(op), vec![z, g.clone()], x.shape().to_vec(), x.dtype()))
        }
        ShapeOp::SliceUpdate { start, step } => {
            let up = &inputs[1];
            let dx = if needs[0] {
                let op = ShapeOp::SliceUpdate { start: start.clone(), step: step.clone() };
                Some(Array::from_op(Primitive::Shape(op), vec![g.clone(), zeros_like(up)?], x.shape().to_vec(), x.dtype()))
            } else {
                None
            };
            let dup = if needs[1] {
                let op = ShapeOp::Slice { start: start.clone(), step: step.clone() };
                Some(Array::from_op(Primitive::Shape(op), vec![g.clone()], up.shape().to_vec(), up.dtype()))
            } else {
                None
            };
            Ok(vec![dx, dup])
        }
        ShapeOp::DynamicSlice { axes } => {
            let op = ShapeOp::DynamicSliceUpdate { axes: axes.clone() };
            let z = zeros_like(x)?;
            let dx = Array::from_op(Primitive::Shape(op), vec![z, g.clone(), inputs[1].clone()], x.shape().to_vec(), x.dtype());
            Ok(vec![Some(dx), None])
        }
        ShapeOp::DynamicSliceUpdate { axes } => {
            let (up, starts) = (&inputs[1], &inputs[2]);
            let dx = if needs[0] {
                let op = ShapeOp::DynamicSliceUpdate { axes: axes.clone() };
                Some(Array::from_op(Primitive::Shape(op), vec![g.clone(), zeros_like(up)?, starts.clone()], x.shape().to_vec(), x.dtype()))
            } else {
                None
            };
            let dup = if needs[1] {
                let op = ShapeOp::DynamicSlice { axes: axes.clone() };
                Some(Array::from_op(Primitive::Shape(op), vec![g.clone(), starts.clone()], up.shape().to_vec(), up.dtype()))
            } else {
                None
            };
            Ok(vec![dx, dup, None])
        }
        ShapeOp::Copy => one(g.clone()),
        ShapeOp::Concatenate(axis) => {
            let nd = out.ndim();
            let mut at = 0isize;
            let mut grads = Vec::with_capacity(inputs.len());
            for (a, need) in inputs.iter().zip(needs) {
                let n = a.shape()[*axis] as isize;
                if *need {
                    let mut start = vec![0isize; nd];
                    let mut stop = isz(out.shape());
                    start[*axis] = at;
                    stop[*axis] = at + n;
                    grads.push(Some(slice(g, &start, &stop, &vec![1; nd])?));
                } else {
                    grads.push(None);
                }
                at += n;
            }
            Ok(grads)
        }
        ShapeOp::Diagonal { offset, axis1, axis2 } => one(diagonal_vjp(x, g, *offset, *axis1, *axis2)?),
        ShapeOp::StopGradient => Ok(vec![None]),
        ShapeOp::AsStrided { strides, offset } => one(as_strided_vjp(x, out, g, strides, *offset)?),
        ShapeOp::Depends(_) => Err(unsupported(op.name())),
    }
}

/// as_strided reads input element `offset + Σ i_k strides_k` (row-major order) for output
/// index `i`; several outputs may read one element. So the input's cotangent adds each output's
/// cotangent into the element it read: the same view of `0..size` gives those positions.
fn as_strided_vjp(x: &Array, out: &Array, g: &Array, strides: &[isize], offset: usize) -> Result<Array> {
    let n = x.size();
    let positions = arange(0.0, n as f64, 1.0, crate::dtype::DType::Int32)?;
    let idx = reshape(&as_strided(&positions, out.shape(), strides, offset)?, &[out.size() as isize])?;
    let flat_g = reshape(g, &[out.size() as isize, 1])?;
    let zeros = zeros(&[n], g.dtype())?;
    let acc = scatter_add(&zeros, core::slice::from_ref(&idx), &flat_g, &[0])?;
    reshape(&acc, &x.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())
}

/// Sums `g` down to `shape`: over the leading axes broadcasting added and over the axes that
/// were 1 in `shape`.
/// [`unbroadcast`] for a node of a shapeless trace (`broadcast_axes`): a sum keeping its
/// axes, then a `squeeze` of the leading ones, and no reshape to `shape`, so a replay on other
/// shapes of the same ranks infers every shape again (MLX reuses its trace there) rather than
/// tracing anew. The same sum, so the same values.
fn unbroadcast_generic(g: &Array, shape: &[usize]) -> Result<Array> {
    let lead = g.ndim().saturating_sub(shape.len());
    let mut axes: Vec<isize> = (0..lead as isize).collect();
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 && g.shape().get(lead + i) != Some(&1) {
            axes.push((lead + i) as isize);
        }
    }
    if g.ndim() < shape.len() || (axes.is_empty() && g.shape() != shape) {
        return unbroadcast(g, shape);
    }
    if axes.is_empty() {
        return Ok(g.clone());
    }
    let s = sum(g, Some(&axes), true)?;
    if lead == 0 {
        return Ok(s);
    }
    let leading: Vec<isize> = (0..lead as isize).collect();
    squeeze(&s, Some(&leading))
}

pub(crate) fn unbroadcast(g: &Array, shape: &[usize]) -> Result<Array> {
    let lead = g.ndim() - shape.len();
    let mut axes: Vec<isize> = (0..lead as isize).collect();
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 && g.shape()[lead + i] != 1 {
            axes.push((lead + i) as isize);
        }
    }
    if axes.is_empty() {
        return reshape(g, &isz(shape));
    }
    reshape(&sum(g, Some(&axes), false)?, &isz(shape))
}

/// Puts the diagonal's cotangent `g` (`[others…, L]`) back on the `offset`-th diagonal of
/// axes `axis1`/`axis2` of a zero array shaped like `x`.
fn diagonal_vjp(x: &Array, g: &Array, offset: isize, axis1: usize, axis2: usize) -> Result<Array> {
    let (n1, n2) = (x.shape()[axis1], x.shape()[axis2]);
    let l = g.shape()[g.ndim() - 1];
    // Element (r, c) of the diagonal has index r (offset >= 0) or c (offset < 0) in g: pad g
    // to that axis's length and broadcast it across the other one.
    let nd = g.ndim();
    let (len, expand_at) = if offset >= 0 { (n1, -1isize) } else { (n2, -2isize) };
    let mut pads = vec![(0usize, 0usize); nd];
    pads[nd - 1] = (0, len.saturating_sub(l));
    let gp = pad(g, &pads, PadMode::Constant, &zeros(&[], g.dtype())?)?;
    let gp = expand_dims(&gp, &[expand_at])?;
    let mut full = g.shape()[..nd - 1].to_vec();
    full.push(n1);
    full.push(n2);
    let gb = broadcast_to(&gp, &full)?;
    let mask = eye(n1, Some(n2), offset as i64, crate::dtype::DType::Bool)?;
    let placed = where_(&mask, &gb, &zeros(&[], g.dtype())?)?;
    // Axes are now [others…, axis1, axis2]: move them back.
    let others: Vec<usize> = (0..x.ndim()).filter(|&i| i != axis1 && i != axis2).collect();
    let mut perm_from = others.clone();
    perm_from.push(axis1);
    perm_from.push(axis2);
    let mut inv = vec![0isize; x.ndim()];
    for (i, &p) in perm_from.iter().enumerate() {
        inv[p] = i as isize;
    }
    transpose(&placed, Some(&inv))
}
