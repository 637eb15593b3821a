//! vjp rules of the reduce family. The reduce primitive keeps reduced axes as size-1 axes
//! (the `keepdims=False` squeeze is a reshape node after it), so the cotangent broadcasts
//! straight back to the input's shape.

use super::{ReduceKind, ReduceOp, ScanKind};
use crate::array::Array;
use crate::error::Result;
use crate::ops::*;
use crate::transforms::rules::{unsupported, Grads};
use alloc::vec;
use alloc::vec::Vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("sum", "yes"),
    ("prod", "yes (exact with zeros: products of the other elements)"),
    ("max, min", "yes (ties share the cotangent equally, as MLX)"),
    ("all, any, argmax, argmin", "zero (boolean/integer output)"),
    ("cumsum", "yes"),
    ("cumprod, cummax, cummin, logcumsumexp", "no"),
];

pub(crate) fn vjp(op: &ReduceOp, inputs: &[Array], out: &Array, g: &Array) -> Result<Grads> {
    let x = &inputs[0];
    if !x.dtype().is_inexact() {
        return Ok(vec![None]);
    }
    let d = match op {
        ReduceOp::Reduce { kind, axes } => match kind {
            ReduceKind::Sum => broadcast_to(g, x.shape())?,
            ReduceKind::Max | ReduceKind::Min => {
                // The cotangent is shared equally among the elements equal to the extreme.
                let mask = astype(&equal(x, out)?, x.dtype())?;
                let ax: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
                let count = sum(&mask, Some(&ax), true)?;
                multiply(&mask, &divide(g, &count)?)?
            }
            ReduceKind::Prod => multiply(&broadcast_to(g, x.shape())?, &prod_of_others(x, axes)?)?,
            ReduceKind::All | ReduceKind::Any => return Ok(vec![None]),
        },
        ReduceOp::ArgReduce { .. } => return Ok(vec![None]),
        ReduceOp::Scan { kind: ScanKind::Sum, axis, reverse, inclusive } => {
            // Each input feeds the outputs after it (before it, reversed): the adjoint scan
            // runs the other way with the same inclusiveness.
            cumsum(g, Some(*axis as isize), !*reverse, *inclusive, None)?
        }
        ReduceOp::Scan { .. } => return Err(unsupported(op.name())),
    };
    Ok(vec![Some(d)])
}

/// For each element, the product of the other elements of its reduction group — computed as
/// exclusive products from both sides, so zeros give the exact gradient (no division by x).
fn prod_of_others(x: &Array, axes: &[usize]) -> Result<Array> {
    let nd = x.ndim();
    let keep: Vec<usize> = (0..nd).filter(|i| !axes.contains(i)).collect();
    let perm: Vec<isize> = keep.iter().chain(axes).map(|&i| i as isize).collect();
    let xt = transpose(x, Some(&perm))?;
    let mut flat: Vec<isize> = keep.iter().map(|&i| x.shape()[i] as isize).collect();
    flat.push(axes.iter().map(|&i| x.shape()[i]).product::<usize>() as isize);
    let xf = reshape(&xt, &flat)?;
    let before = cumprod(&xf, Some(-1), false, false, None)?;
    let after = cumprod(&xf, Some(-1), true, false, None)?;
    let others = multiply(&before, &after)?;
    let tshape: Vec<isize> = xt.shape().iter().map(|&d| d as isize).collect();
    let others = reshape(&others, &tshape)?;
    let mut inv = vec![0isize; nd];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as isize;
    }
    transpose(&others, Some(&inv))
}
