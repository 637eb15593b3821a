//! `compile`: trace a function of arrays once per input signature, keep the simplified graph,
//! and replay it on later calls with chains of elementwise ops fused into one kernel
//! (docs/COMPILE.md).
//!
//! The trace runs the function on tracers (as the other transforms do), so the ops it
//! records on its inputs are told apart from the constants it captured; those are frozen at
//! trace time, as in MLX. The graph becomes a [`tape::Tape`]: common subexpressions merged,
//! unused nodes dropped, broadcasts feeding elementwise ops folded into them. Calls whose
//! inputs are tracers of an enclosing transform (grad or vmap of a compiled function, compile
//! of compile) run the function itself, as MLX does, so every rule of the ordinary ops
//! applies and captured tracers stay live; other calls replay the fused tape.

mod fuse;
pub(crate) mod tape;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::transforms::{make_tracer, node_key, TraceGuard};
use alloc::collections::BTreeSet;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use tape::Tape;
pub(crate) use tape::broadcast_source;

/// A function of arrays to arrays that can be kept and called again (what `compile` takes).
/// `Send + Sync`, so a [`Compiled`] function can be shared by threads (see [`Compiled`]).
pub type CompileFn = Arc<dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync>;

/// How compiled functions run (MLX's `CompileMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileMode {
    /// Call the function itself every time (no tracing).
    Disabled,
    /// Replay the trace as recorded: no simplification, no fusion.
    NoSimplify,
    /// Replay the simplified trace without fusion.
    NoFuse,
    /// Simplify and fuse (the default).
    Enabled,
}

/// Number of shapeless traces running (in any thread; a counter, as traces nest).
static SHAPELESS_TRACES: AtomicUsize = AtomicUsize::new(0);

/// Whether an op on `a` must record its node even where `a`'s shape makes it a no-op (a
/// reduction over size-1 axes, a reshape / broadcast / slice to the same shape): true for the
/// tracers of a shapeless trace, whose tape is replayed on other shapes — a reduction recorded
/// as a cast would return unreduced values there. Other threads' tracers may see it too; that
/// only keeps a node that was not needed (same values).
pub(crate) fn shape_generic(a: &Array) -> bool {
    SHAPELESS_TRACES.load(Ordering::Acquire) > 0 && a.is_tracer()
}

/// How a reshape recorded in a shapeless trace is asked again on other shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReshapeRequest {
    /// A target with an inferred axis (`-1`), inferred again (as MLX's `Reshape`).
    Infer(Vec<isize>),
    /// Size-1 axes inserted at these output positions (as MLX's `ExpandDims` primitive).
    ExpandDims(Vec<isize>),
    /// These size-1 axes removed (as MLX's `Squeeze` primitive).
    Squeeze(Vec<isize>),
    /// The same array: the tracer an inner transform (a `grad` inside the compiled function)
    /// makes of its argument, which records an identity reshape.
    Identity,
}

impl ReshapeRequest {
    /// The reshape asked of `a`.
    pub(crate) fn apply(&self, a: &Array) -> Result<Array> {
        match self {
            ReshapeRequest::Infer(to) => crate::ops::reshape(a, to),
            ReshapeRequest::ExpandDims(axes) => crate::ops::expand_dims(a, axes),
            ReshapeRequest::Squeeze(axes) => crate::ops::squeeze(a, Some(axes)),
            ReshapeRequest::Identity => Ok(a.clone()),
        }
    }

    /// The reshape that maps `g` (shaped like this reshape's output) back to the shape of
    /// its input `x`, asked so that a shapeless replay asks it again: the cotangent's way
    /// back through a noted reshape. An inferred target has no such inverse (the input's
    /// shape is not a function of the request): it goes back to `x`'s traced shape.
    pub(crate) fn inverse(&self, g: &Array, x: &Array) -> Result<Array> {
        match self {
            ReshapeRequest::ExpandDims(axes) => crate::ops::squeeze(g, Some(axes)),
            ReshapeRequest::Squeeze(axes) => crate::ops::expand_dims(g, axes),
            ReshapeRequest::Identity => Ok(g.clone()),
            ReshapeRequest::Infer(_) => crate::ops::reshape(g, &x.shape().iter().map(|&d| d as isize).collect::<Vec<_>>()),
        }
    }
}

/// The reshapes of shapeless traces that a replay on other shapes can ask again, with the
/// reshape's output: a target holding an inferred axis (`-1`: `x.reshape(n, -1)` serves every
/// size that `n` divides, and any other is an error rather than a new trace, as in MLX), or an
/// `expand_dims`. Emptied when the last shapeless trace ends.
static RESHAPE_REQUESTS: spin::Mutex<Vec<(Array, ReshapeRequest)>> = spin::Mutex::new(Vec::new());

/// Notes that the reshape `out` of `a` was asked for `requested` (kept only in a shapeless
/// trace, and only when an axis is inferred).
pub(crate) fn note_reshape(a: &Array, out: &Array, requested: &[isize]) {
    if requested.contains(&-1) && shape_generic(a) {
        RESHAPE_REQUESTS.lock().push((out.clone(), ReshapeRequest::Infer(requested.to_vec())));
    }
}

/// Notes that the reshape `out` of `a` is `expand_dims(a, axes)` (kept only in a shapeless
/// trace).
pub(crate) fn note_expand_dims(a: &Array, out: &Array, axes: &[isize]) {
    if shape_generic(a) {
        RESHAPE_REQUESTS.lock().push((out.clone(), ReshapeRequest::ExpandDims(axes.to_vec())));
    }
}

/// Notes that the reshape `out` of `a` is `squeeze(a, axes)` (kept only in a shapeless trace).
pub(crate) fn note_squeeze(a: &Array, out: &Array, axes: &[isize]) {
    if shape_generic(a) {
        RESHAPE_REQUESTS.lock().push((out.clone(), ReshapeRequest::Squeeze(axes.to_vec())));
    }
}

/// Notes that the reshape `out` of `a` is an inner transform's tracer of `a` (kept only in a
/// shapeless trace): a replay on other shapes passes `a` through.
pub(crate) fn note_identity(a: &Array, out: &Array) {
    if shape_generic(a) {
        RESHAPE_REQUESTS.lock().push((out.clone(), ReshapeRequest::Identity));
    }
}

/// The request noted for the reshape whose output node is `key`.
pub(crate) fn reshape_request(key: usize) -> Option<ReshapeRequest> {
    RESHAPE_REQUESTS.lock().iter().find(|(a, _)| crate::transforms::node_key(a) == key).map(|(_, r)| r.clone())
}

/// Holds [`SHAPELESS_TRACES`] up for one shapeless trace (released on every exit path).
struct ShapelessGuard;

impl ShapelessGuard {
    fn new() -> ShapelessGuard {
        SHAPELESS_TRACES.fetch_add(1, Ordering::AcqRel);
        ShapelessGuard
    }
}

impl Drop for ShapelessGuard {
    fn drop(&mut self) {
        if SHAPELESS_TRACES.fetch_sub(1, Ordering::AcqRel) == 1 {
            RESHAPE_REQUESTS.lock().clear();
        }
    }
}

/// The global mode, as its index in [`CompileMode`] order.
static MODE: AtomicU8 = AtomicU8::new(3);

/// Sets how every compiled function runs from its next call on.
pub fn set_compile_mode(mode: CompileMode) {
    MODE.store(mode as u8, Ordering::Release);
}

/// The current mode.
pub fn compile_mode() -> CompileMode {
    match MODE.load(Ordering::Acquire) {
        0 => CompileMode::Disabled,
        1 => CompileMode::NoSimplify,
        2 => CompileMode::NoFuse,
        _ => CompileMode::Enabled,
    }
}

/// Makes compiled functions call their function directly (MLX's `disable_compile`).
pub fn disable_compile() {
    set_compile_mode(CompileMode::Disabled);
}

/// Undoes [`disable_compile`] (back to [`CompileMode::Enabled`]).
pub fn enable_compile() {
    set_compile_mode(CompileMode::Enabled);
}

/// What a trace is keyed on: per input its dtype and shape (only the number of axes when
/// shapeless, as MLX).
#[derive(Clone, PartialEq, Eq)]
struct Signature(Vec<(DType, usize, Vec<usize>)>);

impl Signature {
    fn of(inputs: &[Array], shapeless: bool) -> Signature {
        Signature(
            inputs
                .iter()
                .map(|a| (a.dtype(), a.ndim(), if shapeless { Vec::new() } else { a.shape().to_vec() }))
                .collect(),
        )
    }
}

/// One trace: as recorded, simplified, and fused.
struct Entry {
    sig: Signature,
    tapes: Arc<Tapes>,
}

struct Tapes {
    raw: Tape,
    plain: Tape,
    fused: Tape,
}

/// A compiled function: call it like the original.
///
/// It is `Send + Sync`: several threads may call one compiled function at once. The rule that
/// makes this sound and correct: a call only reads what the cache shares — the traces, whose
/// captured constants are evaluated when the trace is made (two threads must never evaluate
/// one lazy array at once) — and records a new graph over its own inputs. Two threads meeting
/// an untraced signature together may both trace it (the function then runs twice; either
/// trace serves later calls).
pub struct Compiled {
    fun: CompileFn,
    shapeless: bool,
    cache: spin::Mutex<Vec<Entry>>,
    traces: AtomicUsize,
}

/// `mx.compile(fun, shapeless)`.
pub fn compile(fun: CompileFn, shapeless: bool) -> Compiled {
    Compiled { fun, shapeless, cache: spin::Mutex::new(Vec::new()), traces: AtomicUsize::new(0) }
}

impl Compiled {
    /// Calls the function: replays the trace for this input signature (tracing it first if
    /// there is none yet).
    pub fn call(&self, inputs: &[Array]) -> Result<Vec<Array>> {
        let mode = compile_mode();
        // As MLX: inputs that are tracers of an enclosing transform (vmap or grad of a
        // compiled function, compile of compile) run the function itself, so the transform
        // sees its ops — and whatever enclosing-scope tracers it captured (a trace would
        // freeze those as constants).
        if mode == CompileMode::Disabled || inputs.iter().any(Array::is_tracer) {
            return (self.fun)(inputs);
        }
        let mut tapes = self.traced(Signature::of(inputs, self.shapeless), inputs)?;
        // A shapeless trace with ops whose output shapes were fixed by the trace (reshape,
        // reductions, matmul …) cannot serve other shapes: those get a trace of their own.
        if self.shapeless && tapes.plain.fixes_shapes() && !tapes.plain.same_input_shapes(inputs) {
            tapes = self.traced(Signature::of(inputs, false), inputs)?;
        }
        let tape = match mode {
            CompileMode::NoSimplify => &tapes.raw,
            CompileMode::NoFuse => &tapes.plain,
            _ => &tapes.fused,
        };
        tape.replay(inputs, self.shapeless)
    }

    /// The trace for `sig`, made now if there is none.
    fn traced(&self, sig: Signature, inputs: &[Array]) -> Result<Arc<Tapes>> {
        let found = self.cache.lock().iter().find(|e| e.sig == sig).map(|e| e.tapes.clone());
        if let Some(t) = found {
            return Ok(t);
        }
        // The lock is not held while the function runs (it may take long, or call this
        // compiled function on other shapes).
        let t = self.trace(inputs)?;
        self.cache.lock().push(Entry { sig, tapes: t.clone() });
        Ok(t)
    }

    /// How many times the function was traced (once per new input signature).
    pub fn traces(&self) -> usize {
        self.traces.load(Ordering::Acquire)
    }

    /// Forgets every trace (the next call traces again).
    pub fn clear_cache(&self) {
        self.cache.lock().clear();
    }

    fn trace(&self, inputs: &[Array]) -> Result<Arc<Tapes>> {
        self.traces.fetch_add(1, Ordering::AcqRel);
        let _shapeless = self.shapeless.then(ShapelessGuard::new);
        let raw = record_raw(&*self.fun, inputs, false)?;
        // Every call shares the constants: they are evaluated once here, not by whichever
        // threads replay first (see [`Compiled`]).
        crate::eval::eval(&raw.consts)?;
        let mut plain = raw.clone();
        plain.simplify();
        let fused = fuse::fuse(&plain);
        Ok(Arc::new(Tapes { raw, plain, fused }))
    }
}

// What the documentation of `Compiled` promises, checked at build time.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<Compiled>();
};

/// The graph `fun` records on tracers of `inputs`, as traced (no simplification);
/// `lazy_elementwise` as for [`Tape::build`] (exports).
fn record_raw(fun: crate::transforms::Fun<'_>, inputs: &[Array], lazy_elementwise: bool) -> Result<Tape> {
    let _guard = TraceGuard::new();
    let tracers = inputs.iter().map(make_tracer).collect::<Result<Vec<_>>>()?;
    let outputs = fun(&tracers)?;
    let tape = Tape::build(&tracers, &outputs, lazy_elementwise)?;
    refuse_captured_arguments(&tape.consts, inputs)?;
    Ok(tape)
}

/// As MLX: a function that reaches one of its own arguments through its enclosing scope
/// (captured directly, or inside a lazy graph it captured) instead of through its parameter
/// is refused, since the trace would freeze that argument's value into the compiled graph.
fn refuse_captured_arguments(consts: &[Array], inputs: &[Array]) -> Result<()> {
    let args: BTreeSet<usize> = inputs.iter().map(node_key).collect();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<Array> = consts.to_vec();
    while let Some(a) = stack.pop() {
        if !seen.insert(node_key(&a)) {
            continue;
        }
        if args.contains(&node_key(&a)) {
            return Err(Error::invalid("compile", "Attempting to compile a function with uncaptured inputs is not allowed."));
        }
        if let Some(op) = a.graph_op() {
            stack.extend(op.inputs.lock().iter().cloned());
        }
    }
    Ok(())
}

/// The simplified graph of `fun` on `inputs` (what `export_function` writes); `shapeless`
/// keeps the ops that are no-ops only at these shapes (see [`shape_generic`]).
pub(crate) fn record(fun: crate::transforms::Fun<'_>, inputs: &[Array], shapeless: bool) -> Result<Tape> {
    let _shapeless = shapeless.then(ShapelessGuard::new);
    let mut t = record_raw(fun, inputs, true)?;
    t.simplify();
    Ok(t)
}

/// The number of steps of the fused node that computes `a`, or `None` when `a` is not the
/// output of a fused node (for tests and diagnostics).
pub fn fused_steps(a: &Array) -> Option<usize> {
    match &a.graph_op()?.prim {
        crate::primitive::Primitive::Fused(op) => Some(op.steps.len()),
        _ => None,
    }
}

/// The kernels behind `outputs` (their unevaluated graph, inputs before readers), for tests
/// and benchmarks to see what fusion made: `fused(N)` for a fused chain of N steps,
/// `fused_sum(N)` (`_prod`, `_max`, `_min`) for a chain of N steps reduced in the same pass,
/// and the primitive's name for any other node.
pub fn kernels(outputs: &[Array]) -> Vec<alloc::string::String> {
    use crate::primitive::Primitive;
    use alloc::string::ToString;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    // Depth-first, a node listed once all its inputs are.
    let mut stack: Vec<(Array, bool)> = outputs.iter().rev().map(|a| (a.clone(), false)).collect();
    while let Some((a, expanded)) = stack.pop() {
        let Some(op) = a.graph_op() else { continue };
        let key = node_key(&a);
        if expanded {
            if seen.insert(key) {
                out.push(match &op.prim {
                    Primitive::Fused(f) => alloc::format!("fused({})", f.steps.len()),
                    Primitive::FusedReduce(f) => alloc::format!("fused_{}({})", crate::ops::reduce::ReduceOp::Reduce { kind: f.kind, axes: Vec::new() }.name(), f.program.steps.len()),
                    p => p.name().to_string(),
                });
            }
            continue;
        }
        if seen.contains(&key) {
            continue;
        }
        stack.push((a.clone(), true));
        for i in op.inputs.lock().iter().rev() {
            stack.push((i.clone(), false));
        }
    }
    out
}
