//! Function transforms: reverse-mode autodiff (`vjp`, `value_and_grad`, `grad`), forward
//! mode (`jvp`, by transposing the vjp) and vectorization (`vmap`, [`vmap`] module).
//!
//! As in MLX, a transform runs the function on *tracers* — fresh arrays that stand for the
//! primals (an identity op on each, marked as tracer) — so the graph the function records can
//! be told apart from constants it captured. Every op recorded on a tracer is a tracer too,
//! and while a trace runs evaluation keeps such ops (see `eval::run`), so the function may call
//! `eval` or read values without cutting the graph. The reverse walk ([`backprop`]) is
//! iterative: graphs of 10^5 nodes do not touch the call stack.
//!
//! The per-primitive rules live beside the ops that build them (`ops/<family>/grad.rs`);
//! [`rules`] dispatches to them, and a primitive without a rule is an `unsupported` error
//! naming it, never a wrong gradient.

pub mod custom;
pub mod compile;
pub mod export;
pub mod rules;
mod vmap;

pub use vmap::{is_mapped as vmap_is_mapped, status as vmap_status, vmap, vmap_replace, vmap_trace};

use crate::array::{Array, Op};
use crate::error::{Error, Result};
use crate::ops::shape::ShapeOp;
use crate::primitive::Primitive;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Number of traces running (in any thread). A counter, not a flag: transforms nest.
static TRACING: AtomicUsize = AtomicUsize::new(0);

/// Whether any transform is tracing now (MLX's `in_tracing`). While it is, evaluated tracer
/// nodes keep their graph.
pub fn tracing() -> bool {
    TRACING.load(Ordering::Acquire) > 0
}

/// Holds the tracing counter up for one trace (released on every exit path, errors included).
pub(crate) struct TraceGuard;

impl TraceGuard {
    pub(crate) fn new() -> TraceGuard {
        TRACING.fetch_add(1, Ordering::AcqRel);
        TraceGuard
    }
}

impl Drop for TraceGuard {
    fn drop(&mut self) {
        TRACING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A function of arrays to arrays, as the transforms take it.
pub type Fun<'a> = &'a dyn Fn(&[Array]) -> Result<Vec<Array>>;

/// A stand-in for `p`: the same values through an identity op, marked as tracer. The op links
/// the tracer to `p`, so a transform of a transform (grad of grad) differentiates through it.
pub(crate) fn make_tracer(p: &Array) -> Result<Array> {
    let shape = p.shape().to_vec();
    let mut v = Array::from_op_traced(Primitive::Shape(ShapeOp::Reshape), vec![p.clone()], vec![(shape, p.dtype())], true);
    let t = v.pop().ok_or_else(|| Error::runtime("vjp", "tracer op made no output"))?;
    // Inside a shapeless compile (a grad of the compiled function's arguments) the identity
    // reshape is replayed as the argument itself on other shapes, not as a fixed shape.
    compile::note_identity(p, &t);
    Ok(t)
}

pub(crate) fn node_key(a: &Array) -> usize {
    Arc::as_ptr(&a.node) as usize
}

/// `mx.vjp(fun, primals, cotangents)`: the outputs of `fun(primals)` and the vector-Jacobian
/// products `cotangents · ∂outputs/∂primals`, one per primal. As in MLX, cotangents pair with
/// the outputs in order, skipping outputs made by `stop_gradient` (they take none); too few
/// cotangents is an error, extra ones are ignored.
pub fn vjp(fun: Fun<'_>, primals: &[Array], cotangents: &[Array]) -> Result<(Vec<Array>, Vec<Array>)> {
    let argnums: Vec<usize> = (0..primals.len()).collect();
    vjp_impl(fun, primals, &argnums, cotangents, "vjp")
}

/// The vjps with respect to `primals[argnums]` only, for rules that differentiate a composed
/// form (one cotangent per output).
pub(crate) fn vjp_argnums(fun: Fun<'_>, primals: &[Array], argnums: &[usize], cotangents: &[Array]) -> Result<Vec<Array>> {
    Ok(vjp_impl(fun, primals, argnums, cotangents, "vjp")?.1)
}

/// The vjp with respect to `primals[argnums]`, pairing outputs with cotangents as [`vjp`]
/// describes.
fn vjp_impl(
    fun: Fun<'_>,
    primals: &[Array],
    argnums: &[usize],
    cotangents: &[Array],
    op: &'static str,
) -> Result<(Vec<Array>, Vec<Array>)> {
    let _guard = TraceGuard::new();
    let (inputs, tracers) = trace_inputs(primals, argnums, op)?;
    let outputs = fun(&inputs)?;
    let (mut outs, mut cots) = (Vec::new(), Vec::new());
    for o in &outputs {
        if is_stop_gradient(o) {
            continue;
        }
        let Some(c) = cotangents.get(cots.len()) else {
            return Err(Error::invalid(
                op,
                format!(
                    "Number of outputs to compute gradients for ({}) does not match number of cotangents ({}).",
                    outputs.len(),
                    cotangents.len()
                ),
            ));
        };
        if o.shape() != c.shape() {
            let hint = if outputs.len() == 1 && o.size() == 1 { " If you are using grad your function must return a scalar." } else { "" };
            return Err(Error::invalid(
                op,
                format!(
                    "Output shape {} does not match cotangent shape {}.{hint}",
                    crate::shape::fmt_shape(o.shape()),
                    crate::shape::fmt_shape(c.shape())
                ),
            ));
        }
        outs.push(o.clone());
        cots.push(c.clone());
    }
    let grads = backprop(&outs, &cots, &tracers)?;
    Ok((outputs, grads))
}

/// Whether `a` is the output of `stop_gradient` (MLX gives such outputs no cotangent).
fn is_stop_gradient(a: &Array) -> bool {
    a.graph_op().is_some_and(|op| matches!(op.prim, Primitive::Shape(ShapeOp::StopGradient)))
}

/// Checks `argnums` and replaces those primals with tracers: `(the function's inputs, the
/// tracers)`. Call with the trace guard held.
fn trace_inputs(primals: &[Array], argnums: &[usize], op: &'static str) -> Result<(Vec<Array>, Vec<Array>)> {
    let mut seen = BTreeSet::new();
    for &i in argnums {
        if i >= primals.len() {
            return Err(Error::invalid(
                op,
                format!("[{op}] Can't compute the gradient of argument index {i} because the function is called with only {} positional arguments.", primals.len()),
            ));
        }
        if !seen.insert(i) {
            return Err(Error::invalid(op, format!("[{op}] Duplicate argument index {i} is not allowed.")));
        }
    }
    let mut inputs = primals.to_vec();
    let mut tracers = Vec::with_capacity(argnums.len());
    for &i in argnums {
        let t = make_tracer(&primals[i])?;
        inputs[i] = t.clone();
        tracers.push(t);
    }
    Ok((inputs, tracers))
}

/// The ops between `outputs` and `leaves`, in topological order (inputs first). Only tracer
/// nodes are followed — anything else cannot depend on the leaves — and the walk stops at the
/// leaves. Iterative post-order, like `eval`'s tape.
pub(crate) fn tape(outputs: &[Array], leaves: &BTreeSet<usize>) -> Vec<Arc<Op>> {
    tape_by(outputs, |a| if !a.node.tracer || leaves.contains(&node_key(a)) { None } else { a.graph_op() })
}

/// The ops `follow` leads to from `outputs` (it gives the op to walk into, or `None` at a
/// leaf), in topological order.
pub(crate) fn tape_by(outputs: &[Array], follow: impl Fn(&Array) -> Option<Arc<Op>>) -> Vec<Arc<Op>> {
    let mut tape = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<(Arc<Op>, usize)> = Vec::new();
    for root in outputs {
        let Some(op) = follow(root) else { continue };
        if !seen.insert(Arc::as_ptr(&op) as usize) {
            continue;
        }
        stack.push((op, 0));
        while let Some((op, next)) = stack.last_mut() {
            let child = {
                let inputs = op.inputs.lock();
                if *next < inputs.len() {
                    *next += 1;
                    Some(follow(&inputs[*next - 1]))
                } else {
                    None
                }
            };
            match child {
                Some(Some(c)) => {
                    if seen.insert(Arc::as_ptr(&c) as usize) {
                        stack.push((c, 0));
                    }
                }
                Some(None) => {}
                None => {
                    if let Some((op, _)) = stack.pop() {
                        tape.push(op);
                    }
                }
            }
        }
    }
    tape
}

/// Accumulates cotangents from `outputs` back to `leaves` and returns one per leaf (zeros
/// where none arrives).
fn backprop(outputs: &[Array], cotangents: &[Array], leaves: &[Array]) -> Result<Vec<Array>> {
    let leaf_keys: BTreeSet<usize> = leaves.iter().map(node_key).collect();
    let tape = tape(outputs, &leaf_keys);
    // Forward pass: which nodes depend on a leaf. Only those receive cotangents (a captured
    // tracer of an enclosing transform is a constant here).
    let mut active = leaf_keys.clone();
    let mut op_active = Vec::with_capacity(tape.len());
    for op in &tape {
        // stop_gradient cuts the dependence (its output needs no cotangent, and an index
        // behind it is not asked for one).
        let on = !matches!(op.prim, Primitive::Shape(ShapeOp::StopGradient)) && op.inputs.lock().iter().any(|a| active.contains(&node_key(a)));
        if on {
            for w in op.outputs.lock().iter() {
                active.insert(w.as_ptr() as usize);
            }
        }
        op_active.push(on);
    }
    let mut cot: BTreeMap<usize, Array> = BTreeMap::new();
    for (o, c) in outputs.iter().zip(cotangents) {
        if active.contains(&node_key(o)) {
            accumulate(&mut cot, o, c.clone())?;
        }
    }
    for (op, on) in tape.iter().zip(op_active).rev() {
        if !on {
            continue;
        }
        let weak_outs = op.outputs.lock().clone();
        let cots: Vec<Option<Array>> = weak_outs.iter().map(|w| cot.remove(&(w.as_ptr() as usize))).collect();
        if cots.iter().all(Option::is_none) {
            continue;
        }
        let outs: Vec<Option<Array>> = weak_outs.iter().map(|w| w.upgrade().map(|node| Array { node })).collect();
        let inputs = op.inputs.lock().clone();
        let needs: Vec<bool> = inputs.iter().map(|a| active.contains(&node_key(a))).collect();
        let grads = rules::vjp(&op.prim, &inputs, &outs, &cots, &needs)?;
        for ((a, g), need) in inputs.iter().zip(grads).zip(&needs) {
            if let (Some(g), true) = (g, *need) {
                if g.shape() != a.shape() {
                    return Err(Error::runtime(
                        op.prim.name(),
                        format!(
                            "[vjp] The {} rule gave a cotangent of shape {} for an input of shape {}.",
                            op.prim.name(),
                            crate::shape::fmt_shape(g.shape()),
                            crate::shape::fmt_shape(a.shape())
                        ),
                    ));
                }
                accumulate(&mut cot, a, g)?;
            }
        }
    }
    leaves
        .iter()
        .map(|t| match cot.remove(&node_key(t)) {
            Some(g) => Ok(g),
            None => crate::ops::zeros_like(t),
        })
        .collect()
}

/// Adds `g` to the cotangent of `a`, in `a`'s dtype (rules may compute in a wider one).
fn accumulate(cot: &mut BTreeMap<usize, Array>, a: &Array, g: Array) -> Result<()> {
    let g = if g.dtype() != a.dtype() { crate::ops::astype(&g, a.dtype())? } else { g };
    let k = node_key(a);
    let sum = match cot.remove(&k) {
        Some(prev) => crate::ops::add(&prev, &g)?,
        None => g,
    };
    cot.insert(k, sum);
    Ok(())
}

/// `mx.value_and_grad(fun, argnums)` applied to `primals`: the outputs of `fun` and the
/// gradient of its first output (a scalar) with respect to `primals[argnums]`. Outputs after
/// the first are auxiliary (returned, not differentiated), as MLX's `has_aux` tuple form.
pub fn value_and_grad(fun: Fun<'_>, primals: &[Array], argnums: &[usize]) -> Result<(Vec<Array>, Vec<Array>)> {
    const OP: &str = "value_and_grad";
    if argnums.is_empty() {
        return Err(Error::invalid(OP, "[value_and_grad] Must specify at least one argument."));
    }
    let checked = |xs: &[Array]| -> Result<Vec<Array>> {
        let outs = fun(xs)?;
        match outs.first() {
            None => Err(Error::invalid(OP, "[value_and_grad] The function must return at least one array.")),
            Some(o) if o.size() != 1 || o.ndim() != 0 => Err(Error::invalid(
                OP,
                format!(
                    "[value_and_grad] The function must return a scalar, got an array of shape {}.",
                    crate::shape::fmt_shape(o.shape())
                ),
            )),
            Some(_) => Ok(outs),
        }
    };
    let _guard = TraceGuard::new();
    let (inputs, tracers) = trace_inputs(primals, argnums, OP)?;
    let outputs = checked(&inputs)?;
    // The cotangent of the scalar output: 1 in its dtype.
    let one = crate::ops::ones(&[], outputs[0].dtype())?;
    let grads = backprop(&outputs[..1], &[one], &tracers)?;
    Ok((outputs, grads))
}

/// `mx.grad(fun, argnums)` applied to `primals`: the gradients of `value_and_grad`.
pub fn grad(fun: Fun<'_>, primals: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
    Ok(value_and_grad(fun, primals, argnums)?.1)
}

/// `mx.jvp(fun, primals, tangents)`: the outputs of `fun(primals)` and the Jacobian-vector
/// products `∂outputs/∂primals · tangents`, one per output.
///
/// Computed by transposing the vjp: `u ↦ vjp(fun, primals, u)` is linear in the cotangents
/// `u`, and the vjp of that map with respect to `u`, with `tangents` as its cotangents, is
/// `J · tangents`. It costs about two reverse passes and needs every rule on the path to be
/// differentiable itself (the same condition as a second derivative).
pub fn jvp(fun: Fun<'_>, primals: &[Array], tangents: &[Array]) -> Result<(Vec<Array>, Vec<Array>)> {
    const OP: &str = "jvp";
    // MLX's checks and messages.
    if tangents.len() != primals.len() {
        return Err(Error::invalid(OP, "Number of inputs does not match number of tangents."));
    }
    if primals.iter().zip(tangents).any(|(p, t)| p.shape() != t.shape()) {
        return Err(Error::invalid(OP, "Input shape does not match shape of tangent."));
    }
    // Outputs (and their shapes, for the placeholder cotangents) come from a plain call.
    let outputs = fun(primals)?;
    let us: Vec<Array> = outputs.iter().map(crate::ops::zeros_like).collect::<Result<_>>()?;
    // The linear map u ↦ Jᵀu, with the primals held fixed (captured, so constant here).
    let transpose = |u: &[Array]| -> Result<Vec<Array>> {
        let (_, g) = vjp(fun, primals, u)?;
        Ok(g)
    };
    let (_, mut jt) = vjp(&transpose, &us, tangents)?;
    // A boolean output (a comparison) has a zero tangent of the tangents' dtype, as MLX.
    if let Some(t) = tangents.first() {
        for (j, o) in jt.iter_mut().zip(&outputs) {
            if o.dtype() == crate::dtype::DType::Bool {
                *j = crate::ops::zeros(o.shape(), t.dtype())?;
            }
        }
    }
    Ok((outputs, jt))
}
