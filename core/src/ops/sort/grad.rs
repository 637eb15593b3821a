//! vjp rules of the sort family. Sort and partition permute their input along one axis, so
//! the cotangent goes back through the transpose of that permutation: scattered (added) to
//! the positions the argsort / argpartition of the same input names. The indices are
//! integers computed from the input, so no gradient flows through them: the rule is
//! differentiable again (second derivatives) wherever scatter-add is.

use super::{argpartition, argsort, SortOp};
use crate::array::Array;
use crate::error::Result;
use crate::ops::{stop_gradient, zeros_like};
use crate::transforms::rules::Grads;
use alloc::vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("sort, partition (and topk)", "yes (cotangent scattered back through the permutation)"),
    ("argsort, argpartition, searchsorted", "zero (integer output)"),
];

pub(crate) fn vjp(op: &SortOp, inputs: &[Array], g: &Array) -> Result<Grads> {
    let x = &inputs[0];
    if !x.dtype().is_inexact() {
        return Ok(vec![None; inputs.len()]);
    }
    let (perm, axis) = match op {
        SortOp::Sort { axis } => (argsort(x, Some(*axis as isize))?, *axis),
        SortOp::Partition { kth, axis } => (argpartition(x, *kth as isize, Some(*axis as isize))?, *axis),
        SortOp::ArgSort { .. } | SortOp::ArgPartition { .. } | SortOp::SearchSorted { .. } => {
            return Ok(vec![None; inputs.len()])
        }
    };
    // The permutation is locally constant in x: cut it, so a second derivative does not ask
    // for a cotangent of the indices (MLX refuses that).
    let perm = stop_gradient(&perm)?;
    let d = crate::ops::index::scatter_add_along_axis(&zeros_like(x)?, &perm, g, axis as isize)?;
    Ok(vec![Some(d)])
}
