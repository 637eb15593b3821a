//! vjp rules of the index family: a gather's cotangent is scatter-added back (repeated
//! indices accumulate); a scatter's cotangent is gathered for its updates.

use super::{IndexOp, ScatterMode};
use crate::array::Array;
use crate::error::Result;
use crate::ops::*;
use crate::primitive::Primitive;
use crate::transforms::rules::{unsupported, Grads};
use alloc::vec;
use alloc::vec::Vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("gather (take, take_along_axis, indexing)", "yes (scatter-add; none to indices)"),
    ("scatter (put_along_axis, .at[].set, item assignment)", "yes"),
    ("scatter_add (.at[].add)", "yes"),
    ("scatter_prod, scatter_max, scatter_min", "no"),
];

pub(crate) fn vjp(op: &IndexOp, inputs: &[Array], g: &Array, needs: &[bool]) -> Result<Grads> {
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
            let da = match mode {
                // Overwritten elements take nothing back.
                ScatterMode::Set if needs[0] => {
                    let mut ins = vec![g.clone(), zeros_like(up)?];
                    ins.extend(idx.iter().cloned());
                    let scat = IndexOp::Scatter { axes: axes.clone(), mode: ScatterMode::Set };
                    Some(Array::from_op(Primitive::Index(scat), ins, a.shape().to_vec(), a.dtype()))
                }
                ScatterMode::Add => Some(g.clone()),
                ScatterMode::Set => None,
                _ => return Err(unsupported(op.name())),
            };
            let dup = if needs[1] {
                let ilen = up.ndim() - a.ndim();
                let window: Vec<usize> = up.shape()[ilen..].to_vec();
                let mut ins = vec![g.clone()];
                ins.extend(idx.iter().cloned());
                let gat = IndexOp::Gather { axes: axes.clone(), slice_sizes: window };
                Some(Array::from_op(Primitive::Index(gat), ins, up.shape().to_vec(), up.dtype()))
            } else {
                None
            };
            let mut out = vec![da, dup];
            out.resize(inputs.len(), None);
            Ok(out)
        }
    }
}
