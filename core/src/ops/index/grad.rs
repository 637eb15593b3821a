//! vjp rules of the index family: a gather's cotangent is scatter-added back (repeated
//! indices accumulate); a scatter's cotangent is gathered for its updates.

use super::{IndexOp, ScatterMode};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::*;
use crate::primitive::Primitive;
use crate::transforms::rules::Grads;
use alloc::vec;
use alloc::vec::Vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("gather (take, take_along_axis, indexing)", "yes (scatter-add; towards the indices a ValueError, as MLX: stop_gradient them)"),
    ("scatter (put_along_axis, .at[].set, item assignment)", "yes"),
    ("scatter_add (.at[].add)", "yes"),
    ("scatter_prod (.at[].multiply)", "yes (through out / a and out / updates)"),
    ("scatter_max, scatter_min (.at[].maximum/minimum)", "yes (every element equal to the result gets the cotangent, ties included, as MLX)"),
];

/// MLX's refusal of a cotangent towards integer indices (`op`: "gather" or "scatter"): an
/// index computed from a differentiated input must be cut with `stop_gradient`.
pub(crate) fn indices_refused(op: &'static str) -> Error {
    Error::invalid(op, "Cannot calculate VJP with respect to indices. Use stop_gradient on indices to stop gradients from being computed.")
}

pub(crate) fn vjp(op: &IndexOp, inputs: &[Array], out: &Array, g: &Array, needs: &[bool]) -> Result<Grads> {
    // Index inputs: after the source (gather) or after the source and updates (scatter).
    let (name, first_index) = if matches!(op, IndexOp::Gather { .. }) { ("gather", 1) } else { ("scatter", 2) };
    if needs.iter().skip(first_index).any(|&n| n) {
        return Err(indices_refused(name));
    }
    match op {
        IndexOp::Gather { axes, .. } => {
            let a = &inputs[0];
            if !a.dtype().is_inexact() {
                return Ok(vec![None; inputs.len()]);
            }
            let mut ins = vec![zeros_like(a)?, g.clone()];
            ins.extend(inputs[1..].iter().cloned());
            let scat = IndexOp::Scatter { axes: axes.clone(), mode: ScatterMode::Add };
            let mut out = vec![Some(Array::from_op(Primitive::Index(scat), ins, a.shape().to_vec(), a.dtype()))];
            out.resize(inputs.len(), None);
            Ok(out)
        }
        IndexOp::Scatter { axes, mode } => {
            let (a, up) = (&inputs[0], &inputs[1]);
            let idx = &inputs[2..];
            if !a.dtype().is_inexact() {
                return Ok(vec![None; inputs.len()]);
            }
            // `x` gathered at the updates' windows (shape of `updates`).
            let at_updates = |x: &Array| -> Array {
                let ilen = up.ndim() - a.ndim();
                let window: Vec<usize> = up.shape()[ilen..].to_vec();
                let mut ins = vec![x.clone()];
                ins.extend(idx.iter().cloned());
                let gat = IndexOp::Gather { axes: axes.clone(), slice_sizes: window };
                Array::from_op(Primitive::Index(gat), ins, up.shape().to_vec(), up.dtype())
            };
            let masked = |keep: &Array, x: &Array| -> Result<Array> { where_(keep, x, &zeros_like(x)?) };
            let (da, dup) = match mode {
                // Overwritten elements take nothing back.
                ScatterMode::Set => {
                    let da = if needs[0] {
                        let mut ins = vec![g.clone(), zeros_like(up)?];
                        ins.extend(idx.iter().cloned());
                        let scat = IndexOp::Scatter { axes: axes.clone(), mode: ScatterMode::Set };
                        Some(Array::from_op(Primitive::Index(scat), ins, a.shape().to_vec(), a.dtype()))
                    } else {
                        None
                    };
                    (da, at_updates(g))
                }
                ScatterMode::Add => (Some(g.clone()), at_updates(g)),
                // out = a · Π updates at each place: ∂/∂a = out / a, ∂/∂u = out / u.
                ScatterMode::Prod => {
                    let gy = multiply(g, out)?;
                    (Some(divide(&gy, a)?), divide(&at_updates(&gy), up)?)
                }
                // The result is one of the candidates: each candidate equal to it (ties all
                // count, as MLX) receives the cotangent.
                ScatterMode::Max | ScatterMode::Min => {
                    let da = masked(&equal(out, a)?, g)?;
                    (Some(da), masked(&equal(&at_updates(out), up)?, &at_updates(g))?)
                }
            };
            let mut grads = vec![da, if needs[1] { Some(dup) } else { None }];
            grads.resize(inputs.len(), None);
            Ok(grads)
        }
    }
}
