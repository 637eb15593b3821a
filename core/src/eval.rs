//! Evaluation: an iterative post-order walk builds the tape (no recursion, so graphs of
//! 10^5+ nodes work on small stacks), then each op runs once on its stream's backend and its
//! outputs become ready — which drops the op and, with it, intermediates nobody else holds.

use crate::array::{Array, Op, State};
use crate::error::{Error, Result};
use core::sync::atomic::{AtomicUsize, Ordering};
use alloc::sync::Arc;
use alloc::vec::Vec;

#[cfg(feature = "std")]
mod background;

/// Materializes `outputs` and everything they depend on. Ops a background evaluation took
/// ([`eval_in_background`]) are waited for, not run again.
pub fn eval(outputs: &[Array]) -> Result<()> {
    for a in outputs {
        if let Some(e) = a.failure() {
            return Err(e);
        }
    }
    let (tape, _waits_for) = build_tape(outputs);
    #[cfg(feature = "std")]
    background::wait_for(_waits_for);
    for op in tape {
        run(op)?;
    }
    for a in outputs {
        if let Some(e) = a.failure() {
            return Err(e);
        }
    }
    Ok(())
}

/// Starts materializing `outputs` on a background thread and returns at once (with `std`;
/// without it, this is [`eval`]). Building the next graph on the calling thread then overlaps
/// with the kernels: a language model's decode step (graph building ~0.5 ms of ~5–8 ms)
/// builds step n+1 from step n's lazy token while step n runs. Tapes run one at a time in the
/// order they were given; [`eval`] (and every read of an array's data) waits for the ones its
/// arrays depend on. Failures surface when the arrays are read, as with [`eval`].
///
/// Only for graphs of CPU work with no callbacks into the caller's runtime (what the
/// language-model crate submits): `async_eval` stays synchronous for user code.
pub fn eval_in_background(outputs: &[Array]) -> Result<()> {
    #[cfg(feature = "std")]
    {
        // Ops of earlier tapes that this one needs are left out of it: they run first anyway.
        background::submit(build_tape(outputs).0);
        Ok(())
    }
    #[cfg(not(feature = "std"))]
    eval(outputs)
}

/// Like [`eval`]; CPU work completes before it returns, GPU backends may still be running.
/// As in MLX, an array of a running transform (a tracer) cannot be evaluated asynchronously:
/// that is an error, decided per array, so evaluations of other arrays — another thread's, or
/// constants inside the trace — are not affected.
pub fn async_eval(outputs: &[Array]) -> Result<()> {
    if crate::transforms::tracing() && outputs.iter().any(|a| a.node.tracer) {
        return Err(crate::error::Error::invalid("async_eval", "Not allowed inside a graph transformation."));
    }
    eval(outputs)
}

/// The pending ops `outputs` need, in an order where inputs come first (each op's inputs in
/// their order, depth first), leaving out those a background tape holds; and the latest such
/// tape's number (0: none).
///
/// An op is marked with this walk's number when it is first expanded (no set of visited ops:
/// a decode step's tape is ~600 ops, and a tree insert per op cost more than the walk). An
/// op is marked when taken off the stack, not when pushed, so a shared input reached again
/// through a later sibling is still placed before everything that reads it; in a DAG an op
/// found marked has either been placed already or is an ancestor of itself, which cannot be.
fn build_tape(outputs: &[Array]) -> (Vec<Arc<Op>>, usize) {
    static WALKS: AtomicUsize = AtomicUsize::new(0);
    let walk = WALKS.fetch_add(1, Ordering::Relaxed).wrapping_add(1).max(1);
    let mut tape = Vec::new();
    let mut waits_for = 0;
    // (op, whether its inputs have been pushed: then popping it places it on the tape).
    let mut stack: Vec<(Arc<Op>, bool)> = Vec::new();
    for root in outputs.iter().rev() {
        if let Some(op) = root.pending_op() {
            stack.push((op, false));
        }
    }
    while let Some((op, expanded)) = stack.pop() {
        if expanded {
            tape.push(op);
            continue;
        }
        if op.visit.swap(walk, Ordering::Relaxed) == walk || scheduled(&op, &mut waits_for) {
            continue;
        }
        let at = stack.len();
        {
            let inputs = op.inputs.lock();
            // Reversed, so that the first input is expanded first.
            for a in inputs.iter().rev() {
                if let Some(c) = a.pending_op() {
                    stack.push((c, false));
                }
            }
        }
        stack.insert(at, (op, true));
    }
    (tape, waits_for)
}

/// Whether a background tape holds `op` (then `waits_for` is raised to that tape's number).
fn scheduled(op: &Op, waits_for: &mut usize) -> bool {
    match op.ticket.load(Ordering::Acquire) {
        0 => false,
        t => {
            *waits_for = (*waits_for).max(t);
            true
        }
    }
}

fn run(op: Arc<Op>) -> Result<()> {
    if op.started.swap(true, Ordering::AcqRel) {
        // Another walk's evaluation took it (see `build_tape`); its outputs are its to set.
        return Ok(());
    }
    // A traced op keeps its inputs (and its outputs keep the op) so that a vjp can still walk
    // the graph after the traced function evaluated something; others free them now.
    let keep = op.tracer && crate::transforms::tracing();
    let inputs = if keep { op.inputs.lock().clone() } else { core::mem::take(&mut *op.inputs.lock()) };
    #[cfg(feature = "std")]
    let started = crate::profile::start();
    let result = check_inputs(&inputs).and_then(|_| crate::backend::dispatch(op.stream, &op.prim, inputs, &op.metas));
    #[cfg(feature = "std")]
    crate::profile::record(op.prim.name(), started);
    let outputs = op.outputs.lock();
    match result {
        Ok(datas) => {
            if datas.len() != op.metas.len() {
                let e = Error::runtime(op.prim.name(), "Kernel returned the wrong number of outputs.");
                fail(&outputs, &e);
                return Err(e);
            }
            for (w, d) in outputs.iter().zip(datas) {
                if let Some(node) = w.upgrade() {
                    if keep {
                        *node.kept.lock() = Some(op.clone());
                    }
                    *node.state.lock() = State::Ready(d);
                }
            }
            Ok(())
        }
        Err(e) => {
            fail(&outputs, &e);
            Err(e)
        }
    }
}

fn fail(outputs: &[alloc::sync::Weak<crate::array::Node>], e: &Error) {
    for w in outputs {
        if let Some(node) = w.upgrade() {
            *node.state.lock() = State::Failed(e.clone());
        }
    }
}

fn check_inputs(inputs: &[Array]) -> Result<()> {
    for a in inputs {
        // One look at each input's state (a decode step checks ~1500 inputs).
        match &*a.node.state.lock() {
            State::Ready(_) => {}
            State::Failed(e) => return Err(e.clone()),
            State::Pending(_) => return Err(Error::runtime("eval", "An input was not evaluated before its consumer.")),
        }
    }
    Ok(())
}
