//! vjp rules of the reduce family. The reduce primitive keeps reduced axes as size-1 axes
//! (the `keepdims=False` squeeze is a reshape node after it), so the cotangent broadcasts
//! straight back to the input's shape.

use super::{ReduceKind, ReduceOp, ScanKind};
use crate::array::Array;
use crate::dtype::DType;
use crate::element::Value;
use crate::error::Result;
use crate::ops::*;
use crate::transforms::rules::{scalar, Grads};
use alloc::vec;
use alloc::vec::Vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("sum", "yes"),
    ("prod", "yes (exact with zeros: products of the other elements)"),
    ("max, min", "yes (ties share the cotangent equally, as MLX)"),
    ("all, any, argmax, argmin", "zero (boolean/integer output)"),
    ("cumsum", "yes"),
    ("cummax, cummin", "yes (to the latest element, in scan order, equal to the running extreme, as MLX)"),
    ("cumprod", "yes (exact with zeros: the first zero's gradient without division, later elements 0)"),
    ("logcumsumexp", "yes (as MLX: the cotangent split by sign, each part through a logcumsumexp the other way)"),
];

/// The cotangent `g` (reduced axes kept as size 1) broadcast to `x`'s shape. In a shapeless
/// trace it is broadcast against `x` itself (MLX's `broadcast_arrays({cotan, in})`, a
/// broadcast whose shape a replay infers again), so the trace serves other shapes.
fn back_to(g: &Array, x: &Array) -> Result<Array> {
    if crate::transforms::compile::shape_generic(x) || crate::transforms::compile::shape_generic(g) {
        crate::ops::shape::broadcast_axes(g, core::slice::from_ref(x), &[])
    } else {
        broadcast_to(g, x.shape())
    }
}

pub(crate) fn vjp(op: &ReduceOp, inputs: &[Array], out: &Array, g: &Array) -> Result<Grads> {
    let x = &inputs[0];
    // As MLX, integer arrays are differentiated through sums, products and extremes (exact
    // in integers); the other rules need floating inputs.
    let integer_rule = matches!(
        op,
        ReduceOp::Reduce { kind: ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Max | ReduceKind::Min, .. }
            | ReduceOp::Scan { kind: ScanKind::Sum, .. }
    );
    if !(x.dtype().is_inexact() || (x.dtype().is_integer() && integer_rule)) {
        return Ok(vec![None]);
    }
    let d = match op {
        ReduceOp::Reduce { kind, axes } => match kind {
            ReduceKind::Sum => back_to(g, x)?,
            ReduceKind::Max | ReduceKind::Min => {
                // The cotangent is shared equally among the elements equal to the extreme.
                let mask = astype(&equal(x, out)?, x.dtype())?;
                let ax: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
                let count = sum(&mask, Some(&ax), true)?;
                // Integer cotangents stay integers (a float division would cut the path
                // back to an integer primal).
                // Where the extreme is unique the share is `g` itself, so the rule stays linear
                // in `g` there (jvp transposes it: an integer floor division has no rule back).
                let share = if x.dtype().is_integer() {
                    where_(&equal(&count, &ones_like(&count)?)?, g, &floor_divide(g, &count)?)?
                } else {
                    divide(g, &count)?
                };
                multiply(&mask, &share)?
            }
            // Holomorphic: the cotangent times the conjugate derivative for complex inputs.
            ReduceKind::Prod if x.dtype() == DType::Complex64 => {
                conjugate(&multiply(&back_to(&conjugate(g)?, x)?, &prod_of_others(x, axes)?)?)?
            }
            ReduceKind::Prod => multiply(&back_to(g, x)?, &prod_of_others(x, axes)?)?,
            ReduceKind::All | ReduceKind::Any => return Ok(vec![None]),
        },
        ReduceOp::ArgReduce { .. } => return Ok(vec![None]),
        ReduceOp::Scan { kind: ScanKind::Sum, axis, reverse, inclusive } => {
            // Each input feeds the outputs after it (before it, reversed): the adjoint scan
            // runs the other way with the same inclusiveness.
            cumsum(g, Some(*axis as isize), !*reverse, *inclusive, None)?
        }
        ReduceOp::Scan { kind: kind @ (ScanKind::Max | ScanKind::Min), axis, reverse, inclusive } => {
            running_extreme_vjp(x, *kind == ScanKind::Max, *axis, *reverse, *inclusive, out, g)?
        }
        ReduceOp::Scan { kind: ScanKind::Prod, axis, reverse, inclusive } if x.dtype() == DType::Complex64 => {
            // Holomorphic: the real rule on the conjugate cotangent, conjugated.
            conjugate(&running_product_vjp(x, *axis, *reverse, *inclusive, out, &conjugate(g)?)?)?
        }
        ReduceOp::Scan { kind: ScanKind::Prod, axis, reverse, inclusive } => running_product_vjp(x, *axis, *reverse, *inclusive, out, g)?,
        ReduceOp::Scan { kind: ScanKind::LogAddExp, axis, reverse, inclusive } => logcumsumexp_vjp(x, *axis, *reverse, *inclusive, out, g)?,
    };
    Ok(vec![Some(d)])
}

/// logcumsumexp: `∂out_j/∂x_i = exp(x_i - out_j)` for the `i` that `out_j` scans, so the
/// cotangent is `exp(x_i) · Σ_j g_j exp(-out_j)`, the sum a scan the other way. MLX's form
/// (and so its values at the edges): the sum runs in log space, the cotangent split into its
/// positive and negative parts (a log needs a positive argument; a part's zeros are the
/// dtype's lowest finite value, not `-inf`), and the two parts subtracted at the end.
fn logcumsumexp_vjp(x: &Array, axis: usize, reverse: bool, inclusive: bool, out: &Array, g: &Array) -> Result<Array> {
    // MLX's form for the value (and the derivatives towards x). When the cotangent is itself
    // differentiated (jvp transposes this rule at g = 0, where log|g| has no derivative) the
    // form sees it constant, and the g-derivative comes from the rule's linear form
    // `exp(x_i - c) · Σ_j g_j exp(c - out_j)` added as `linear(g) - linear(constant g)` (zero).
    let differentiated = g.is_tracer();
    let g0 = if differentiated { stop_gradient(g)? } else { g.clone() };
    let zero = scalar(0.0, &g0)?;
    let lowest = scalar(crate::dtype::finfo(g0.dtype())?.min, &g0)?;
    let log_abs = log(&abs(&g0)?)?;
    let part = |keep: &Array| -> Result<Array> {
        let log_g = where_(keep, &log_abs, &lowest)?;
        exp(&add(&logcumsumexp(&subtract(&log_g, out)?, Some(axis as isize), !reverse, inclusive)?, x)?)
    };
    let d = subtract(&part(&greater(&g0, &zero)?)?, &part(&less(&g0, &zero)?)?)?;
    if !differentiated {
        return Ok(d);
    }
    // c: the largest output along the axis; an exclusive scan's -inf first output, which no
    // sum reads, counted as c.
    let c = stop_gradient(&max(out, Some(&[axis as isize]), true)?)?;
    let out_c = where_(&isneginf(out)?, &c, out)?;
    let decay = exp(&subtract(&c, &out_c)?)?;
    let rise = exp(&subtract(x, &c)?)?;
    let linear = |g: &Array| -> Result<Array> { multiply(&rise, &cumsum(&multiply(g, &decay)?, Some(axis as isize), !reverse, inclusive, None)?) };
    add(&d, &subtract(&linear(g)?, &linear(&g0)?)?)
}

/// cummax / cummin: every output is a copy of one input element — the latest, in scan order,
/// equal to the running extreme (MLX's choice for ties) — and its cotangent goes back there.
/// An exclusive scan's first output copies no element and sends nothing back.
fn running_extreme_vjp(x: &Array, max: bool, axis: usize, reverse: bool, inclusive: bool, out: &Array, g: &Array) -> Result<Array> {
    let ax = Some(axis as isize);
    let running = match (inclusive, max) {
        (true, _) => out.clone(),
        (false, true) => cummax(x, ax, reverse, true)?,
        (false, false) => cummin(x, ax, reverse, true)?,
    };
    let n = x.shape()[axis];
    let mut along = vec![1isize; x.ndim()];
    along[axis] = n as isize;
    let pos = reshape(&arange(0.0, n as f64, 1.0, DType::Int32)?, &along)?;
    // Positions that set or tie the running extreme keep their index; the others get a value
    // no scan in this direction picks (-1 forward, n backward), so the owner of each output
    // is the running max (min, backward) of these.
    let never = Array::from_value(Value::I(if reverse { n as i64 } else { -1 }), DType::Int32)?;
    let candidates = where_(&equal(x, &running)?, &pos, &never)?;
    let owner = if reverse { cummin(&candidates, ax, true, inclusive)? } else { cummax(&candidates, ax, false, inclusive)? };
    // An exclusive scan's first owner is the scan's identity: out of range, masked off.
    let zero = zeros_like(&owner)?;
    let valid = logical_and(&greater_equal(&owner, &zero)?, &less(&owner, &full_like(&owner, Value::I(n as i64), None)?)?)?;
    // Locally constant in x: cut, so a second derivative asks no cotangent of the indices.
    let owner = stop_gradient(&where_(&valid, &owner, &zero)?)?;
    let g = where_(&valid, g, &zeros_like(g)?)?;
    crate::ops::index::scatter_add_along_axis(&zeros_like(x)?, &owner, &g, axis as isize)
}

/// cumprod. Output `i` is the product of the inputs up to `i` (in scan order), so
/// `dx_k = Σ_{i ≥ k} g_i · y_i / x_k` wherever no zero precedes `k` — exact there, as every
/// `y_i` past a zero is 0 and so is its true partial. The first zero `z` of a line gets the
/// same sum with `x_z` read as 1 (no division), and every element after it gets 0: each
/// product it enters also holds `x_z`.
fn running_product_vjp(x: &Array, axis: usize, reverse: bool, inclusive: bool, out: &Array, g: &Array) -> Result<Array> {
    let ax = Some(axis as isize);
    // Σ over the outputs each input reaches (the adjoint scan, the other way).
    let reach = |terms: &Array| cumsum(&multiply(terms, g)?, ax, !reverse, inclusive, None);
    let zero = zeros_like(x)?;
    let before = cumprod(x, ax, reverse, false, None)?; // products strictly before each element
    let upto = multiply(&before, x)?;
    let past_zero = equal(&upto, &zero)?; // the first zero and everything after it
    let first_zero = logical_and(&past_zero, &not_equal(&before, &zero)?)?;
    let one = ones_like(x)?;
    let with_one = cumprod(&where_(&first_zero, &one, x)?, ax, reverse, inclusive, None)?;
    // Divisors of 1 where the quotient is masked off, so no inf/nan enters the graph.
    let plain = divide(&reach(out)?, &where_(&past_zero, &one, x)?)?;
    where_(&first_zero, &reach(&with_one)?, &where_(&past_zero, &zero, &plain)?)
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
