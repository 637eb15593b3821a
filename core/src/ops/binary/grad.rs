//! vjp rules of the binary family and `where` (select). Both operands were broadcast to the
//! output shape and cast to the compute dtype when the op was recorded (`binary`), so each
//! rule works elementwise; the broadcast and astype nodes below them sum and cast back.

use super::{BinaryKind, BinaryOp};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::*;
use crate::transforms::rules::{scalar, unsupported, Grads};
use alloc::vec;
use alloc::vec::Vec;

/// Whether `op` has a rule, for docs/GRAD.md.
pub(crate) fn status(op: BinaryOp) -> &'static str {
    match op.kind() {
        BinaryKind::Compare | BinaryKind::Logical | BinaryKind::Bitwise => "zero (boolean/integer output)",
        _ if op == BinaryOp::FloorDivide => "yes (zero almost everywhere)",
        _ => "yes",
    }
}

/// Cotangents of `a` and `b` for `y = op(a, b)`.
pub(crate) fn vjp(op: BinaryOp, inputs: &[Array], y: &Array, g: &Array, needs: &[bool]) -> Result<Grads> {
    // In a shapeless trace an operand that is a constant broadcast to the traced shape (the
    // `2` of `x ** 2`) is used unbroadcast, as MLX's rules read it: what the rule computes
    // from it alone (`2 - 1`) stays a scalar instead of a constant of the traced shape, which
    // would tie the trace to that shape (docs/COMPILE.md). The cotangents still take the
    // output's shape from `g`; a rule whose result would not is asked with the operands as
    // they are.
    if crate::transforms::compile::shape_generic(y) || crate::transforms::compile::shape_generic(g) {
        let stripped: Vec<Array> = inputs.iter().map(|a| if a.is_tracer() { None } else { crate::transforms::compile::broadcast_source(a) }.unwrap_or_else(|| a.clone())).collect();
        if stripped.iter().zip(inputs).any(|(s, a)| s.shape() != a.shape()) {
            let grads = vjp_of(op, &stripped, y, g, needs)?;
            let kept = |(d, a): (&Option<Array>, &Array)| d.as_ref().is_none_or(|d| d.shape() == a.shape());
            if grads.iter().zip(inputs).zip(needs).all(|(da, &n)| !n || kept(da)) {
                return Ok(grads.into_iter().zip(needs).map(|(d, &n)| if n { d } else { None }).collect());
            }
        }
    }
    vjp_of(op, inputs, y, g, needs)
}

fn vjp_of(op: BinaryOp, inputs: &[Array], y: &Array, g: &Array, needs: &[bool]) -> Result<Grads> {
    use BinaryOp::*;
    let (a, b) = (&inputs[0], &inputs[1]);
    // Integer operands are differentiated through +, - and × (exact in integers), as MLX.
    let integer_rule = a.dtype().is_integer() && matches!(op, Add | Subtract | Multiply);
    if matches!(op.kind(), BinaryKind::Compare | BinaryKind::Logical | BinaryKind::Bitwise) || !(a.dtype().is_inexact() || integer_rule) {
        return Ok(vec![None, None]);
    }
    if a.dtype() == DType::Complex64 && matches!(op, Multiply | Divide | Power) {
        // Holomorphic in each operand: g · conj(∂y) = conj(the rule applied to conj(g)).
        let d = rule(op, a, b, y, &conjugate(g)?, needs)?;
        return d.into_iter().map(|d| d.map(|d| conjugate(&d)).transpose()).collect();
    }
    if a.dtype() == DType::Complex64 && !matches!(op, Add | Subtract) {
        return Err(unsupported(op.name()));
    }
    rule(op, a, b, y, g, needs)
}

fn rule(op: BinaryOp, a: &Array, b: &Array, y: &Array, g: &Array, needs: &[bool]) -> Result<Grads> {
    use BinaryOp::*;
    let one = scalar(1.0, a)?;
    let (da, db) = match op {
        Add => (g.clone(), g.clone()),
        Subtract => (g.clone(), negative(g)?),
        Multiply => (multiply(g, b)?, multiply(g, a)?),
        // d(a/b)/db = -a/b² = -y/b
        Divide => (divide(g, b)?, negative(&divide(&multiply(g, y)?, b)?)?),
        // Piecewise constant in both operands.
        FloorDivide => (zeros_like(a)?, zeros_like(b)?),
        // a - b·floor(a/b): 1 for a, -floor(a/b) for b.
        Remainder => (g.clone(), negative(&multiply(g, &floor(&divide(a, b)?)?)?)?),
        Power => {
            let da = if needs[0] { multiply(g, &multiply(b, &power(a, &subtract(b, &one)?)?)?)? } else { zeros_like(a)? };
            // d a^b / db = log(a)·a^b, taken as 0 where a == 0 (0·log 0 → 0, as MLX).
            let db = if needs[1] {
                let l = multiply(&log(a)?, y)?;
                multiply(g, &where_(&not_equal(a, &zeros_like(a)?)?, &l, &zeros_like(a)?)?)?
            } else {
                zeros_like(b)?
            };
            (da, db)
        }
        // Ties send the whole cotangent to b, as MLX's masks (a > b, a <= b) do.
        Maximum => (multiply(g, &astype(&greater(a, b)?, a.dtype())?)?, multiply(g, &astype(&less_equal(a, b)?, a.dtype())?)?),
        Minimum => (multiply(g, &astype(&less(a, b)?, a.dtype())?)?, multiply(g, &astype(&greater_equal(a, b)?, a.dtype())?)?),
        // atan2(a, b): ∂/∂a = b/(a²+b²), ∂/∂b = -a/(a²+b²).
        Arctan2 => {
            let r = add(&square(a)?, &square(b)?)?;
            (multiply(g, &divide(b, &r)?)?, negative(&multiply(g, &divide(a, &r)?)?)?)
        }
        // log(e^a + e^b): ∂/∂a = sigmoid(a - b).
        LogAddExp => (multiply(g, &sigmoid(&subtract(a, b)?)?)?, multiply(g, &sigmoid(&subtract(b, a)?)?)?),
        _ => return Ok(vec![None, None]),
    };
    Ok(vec![needs[0].then_some(da), needs[1].then_some(db)])
}

/// `where(c, x, y)`: the cotangent goes to `x` where `c` holds, to `y` elsewhere; none to `c`.
pub(crate) fn select_vjp(inputs: &[Array], g: &Array) -> Result<Grads> {
    let (c, x) = (&inputs[0], &inputs[1]);
    // As MLX, integer values are routed too (exact); booleans carry nothing.
    if x.dtype() == crate::dtype::DType::Bool {
        return Ok(vec![None, None, None]);
    }
    let z = zeros_like(g)?;
    Ok(vec![None, Some(where_(c, g, &z)?), Some(where_(c, &z, g)?)])
}
