//! Fusion: groups of elementwise nodes of one shape become one [`FusedOp`] node.
//!
//! A node joins the group of its consumers when it is elementwise, has the group's shape,
//! is not an output of the function, and every node that reads it is in that one group — so
//! its value never has to exist outside the fused kernel. Walking the tape backwards, each
//! group grows from its last node (its root) towards the inputs; chains, diamonds and
//! trees fuse, and a value read outside the group stays an ordinary node.
//!
//! A group of one node becomes a fused node too when it reads a broadcast operand that the
//! fused kernel loads faster than the ordinary binary kernel does (a scalar or a row repeated
//! over leading axes: [`cheap_broadcast`]), as MLX compiles `x * s` into one
//! `CompiledBroadcastMultiply` kernel (`core/examples/bench_compile.rs`; figures in
//! docs/COMPILE.md: a column operand is slower fused, so it stays an ordinary node).
//!
//! A float sum / prod / max / min over trailing axes is a group root too: the elementwise
//! node it reads (and that node's group) joins it, and the group becomes one
//! [`FusedReduceOp`] node whose kernel folds each block of the chain as it is made
//! ([`reduces_a_chain`] says which reductions; docs/COMPILE.md "Reductions fused …").

use super::tape::{Ref, TNode, Tape};
use crate::ops::fused::{is_elementwise, FusedOp, FusedReduceOp, Step};
use crate::ops::reduce::{ReduceKind, ReduceOp};
use crate::primitive::Primitive;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// The tape with its fusible groups (two nodes or more) replaced by fused nodes.
pub(crate) fn fuse(t: &Tape) -> Tape {
    let n = t.nodes.len();
    let mut readers: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
    for (k, node) in t.nodes.iter().enumerate() {
        for r in &node.inputs {
            if let Ref::Node(i, _) = r {
                readers[*i].push(k);
            }
        }
    }
    let is_output = |k: usize| t.outputs.iter().any(|r| matches!(r, Ref::Node(i, _) if *i == k));
    let fusible = |k: usize| is_elementwise(&t.nodes[k].prim) && t.nodes[k].metas.len() == 1;
    let reduce_root = |k: usize| reduces_a_chain(t, k, &fusible).is_some();
    // The shape a group's members have: its root's, or a reduction root's input's.
    let group_shape = |g: usize| match (reduce_root(g), t.nodes[g].inputs.first()) {
        (true, Some(&r)) => t.traced_shape(r),
        _ => Some(&t.nodes[g].metas[0].0[..]),
    };
    // group[k]: the root of k's group.
    let mut group: Vec<usize> = (0..n).collect();
    for k in (0..n).rev() {
        if !fusible(k) || is_output(k) || readers[k].is_empty() {
            continue;
        }
        let g = group[readers[k][0]];
        let joins = (fusible(g) || reduce_root(g))
            && readers[k].iter().all(|&c| group[c] == g)
            && group_shape(g) == Some(&t.nodes[k].metas[0].0[..]);
        if joins {
            group[k] = g;
        }
    }
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for k in 0..n {
        members.entry(group[k]).or_default().push(k);
    }
    let mut out = Tape { nodes: Vec::new(), outputs: Vec::new(), ..t.clone() };
    // new_ref[k]: where node k's (first) output lives in the new tape.
    let mut new_ref: Vec<Option<usize>> = alloc::vec![None; n];
    for k in 0..n {
        let m = &members[&group[k]];
        if m.len() < 2 && !(fusible(k) && cheap_broadcast(t, k)) {
            let node = &t.nodes[k];
            let inputs = node.inputs.iter().map(|&r| renumber(r, &new_ref)).collect();
            out.nodes.push(TNode { prim: node.prim.clone(), inputs, metas: node.metas.clone(), reshape_to: node.reshape_to.clone() });
            new_ref[k] = Some(out.nodes.len() - 1);
        } else if group[k] == k {
            out.nodes.push(match reduces_a_chain(t, k, &fusible) {
                Some((kind, axes)) => fused_reduce_node(t, m, kind, axes, &new_ref),
                None => fused_node(t, m, &new_ref),
            });
            new_ref[k] = Some(out.nodes.len() - 1);
        }
    }
    out.outputs = t.outputs.iter().map(|&r| renumber(r, &new_ref)).collect();
    out
}

/// Whether node `k` reads an operand broadcast to its shape, and every such operand is a
/// scalar or a block of trailing axes repeated over leading ones (the trace's shapes: a
/// shapeless replay on other shapes stays correct, as the fused kernel takes any broadcast).
fn cheap_broadcast(t: &Tape, k: usize) -> bool {
    let out = &t.nodes[k].metas[0].0;
    let mut any = false;
    for &r in &t.nodes[k].inputs {
        let Some(s) = t.traced_shape(r) else { return false };
        if s == &out[..] {
            continue;
        }
        any = true;
        // Left-padded to the output's rank: size-1 axes first, then the output's own sizes.
        let pad = out.len().saturating_sub(s.len());
        let p = |i: usize| if i < pad { 1 } else { s[i - pad] };
        // Every axis up to the last broadcast one must be broadcast (size 1 in the operand).
        let last = (0..out.len()).rev().find(|&i| p(i) != out[i]);
        if s.len() > out.len() || last.is_some_and(|b| (0..=b).any(|i| p(i) != 1)) {
            return false;
        }
    }
    any
}

/// `Some((kind, number of axes))` when node `k` is a reduction the fused kernel can run with
/// its input's chain: a float sum / prod / max / min over trailing axes (the order
/// `cpu/reduce.rs` folds them in, which `cpu/fused_reduce.rs` repeats, so the result is the
/// same bits) of a fusible node.
fn reduces_a_chain(t: &Tape, k: usize, fusible: &dyn Fn(usize) -> bool) -> Option<(ReduceKind, usize)> {
    let node = &t.nodes[k];
    let Primitive::Reduce(ReduceOp::Reduce { kind, axes }) = &node.prim else { return None };
    let (Some(&Ref::Node(i, 0)), 1) = (node.inputs.first(), node.inputs.len()) else { return None };
    let nd = t.traced_shape(Ref::Node(i, 0))?.len();
    let trailing = !axes.is_empty() && axes.iter().enumerate().all(|(j, &a)| a + axes.len() == nd + j);
    let ok = fusible(i)
        && trailing
        && t.nodes[i].metas[0].1.is_float()
        && matches!(kind, ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Max | ReduceKind::Min);
    ok.then_some((*kind, axes.len()))
}

/// The fused reduction for the group `members` (in tape order, the reduction last; the one
/// before it is the chain's result, which the reduction reads).
fn fused_reduce_node(t: &Tape, members: &[usize], kind: ReduceKind, axes: usize, new_ref: &[Option<usize>]) -> TNode {
    let root = &t.nodes[members[members.len() - 1]];
    let (program, inputs) = chain_program(t, &members[..members.len() - 1], new_ref);
    let op = FusedReduceOp { program, kind, axes };
    TNode { prim: Primitive::FusedReduce(Arc::new(op)), inputs, metas: root.metas.clone(), reshape_to: None }
}

/// The fused node for the group `members` (in tape order, root last).
fn fused_node(t: &Tape, members: &[usize], new_ref: &[Option<usize>]) -> TNode {
    let (op, inputs) = chain_program(t, members, new_ref);
    let root = &t.nodes[members[members.len() - 1]];
    TNode { prim: Primitive::Fused(Arc::new(op)), inputs, metas: root.metas.clone(), reshape_to: None }
}

/// The program computing the group `members` (in tape order, its result last) and the
/// inputs it reads, in the new tape.
fn chain_program(t: &Tape, members: &[usize], new_ref: &[Option<usize>]) -> (FusedOp, Vec<Ref>) {
    let mut externals: Vec<Ref> = Vec::new();
    let mut reg_of: BTreeMap<Ref, usize> = BTreeMap::new();
    // First pass: the external inputs, in order of first use.
    for &k in members {
        for &r in &t.nodes[k].inputs {
            let internal = matches!(r, Ref::Node(i, _) if members.contains(&i));
            if !internal && !reg_of.contains_key(&r) {
                reg_of.insert(r, externals.len());
                externals.push(r);
            }
        }
    }
    let n_inputs = externals.len();
    let mut steps = Vec::with_capacity(members.len());
    for (s, &k) in members.iter().enumerate() {
        let node = &t.nodes[k];
        let args = node.inputs.iter().map(|r| reg_of[r]).collect();
        steps.push(Step { prim: node.prim.clone(), args, dtype: node.metas[0].1 });
        reg_of.insert(Ref::Node(k, 0), n_inputs + s);
    }
    let inputs = externals.into_iter().map(|r| renumber(r, new_ref)).collect();
    (FusedOp { n_inputs, steps }, inputs)
}

/// `r` in the new tape. Every node read is emitted before its readers (an external input
/// of a group is never inside another group that ends later), so the lookup is filled.
fn renumber(r: Ref, new_ref: &[Option<usize>]) -> Ref {
    match r {
        Ref::Node(k, j) => Ref::Node(new_ref[k].unwrap_or(usize::MAX), j),
        other => other,
    }
}
