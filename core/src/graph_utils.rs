//! Graph utilities as MLX's `graph_utils`: [`NodeNamer`] names the arrays of a graph and
//! [`export_to_dot`] writes the graph behind some outputs as Graphviz dot text — a box per
//! operation labelled with its primitive, a node per array named by the namer, edges from
//! inputs to operations and from operations to their outputs, inputs ranked as sources and
//! the given outputs as sinks. Only pending (unevaluated) arrays still hold their operation;
//! an evaluated array appears as an input, as in MLX.

use crate::array::{Array, Node, Op};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;

/// Names of arrays: those set with [`NodeNamer::set_name`], else `A`, `B`, … `Z`, `AA`, `AB`, …
/// given in the order arrays are first asked about (the count of names so far picks the next,
/// as MLX's `NodeNamer`). Holds the arrays it names, so a name never passes to another array.
#[derive(Default)]
pub struct NodeNamer {
    names: BTreeMap<usize, (Array, String)>,
}

fn key(a: &Array) -> usize {
    Arc::as_ptr(&a.node) as usize
}

impl NodeNamer {
    /// An empty namer.
    pub fn new() -> NodeNamer {
        NodeNamer::default()
    }

    /// Names `a` (replacing a name it had).
    pub fn set_name(&mut self, a: &Array, name: &str) {
        self.names.insert(key(a), (a.clone(), String::from(name)));
    }

    /// The name of `a`, giving it the next generated one if it has none.
    pub fn get_name(&mut self, a: &Array) -> &str {
        let next = self.names.len() + 1;
        &self.names.entry(key(a)).or_insert_with(|| (a.clone(), letters(next))).1
    }
}

/// The `n`-th (1-based) name of the sequence A … Z, AA, AB, … (MLX's names for a graph's
/// values, in `export_to_dot` and in an export's listing).
pub(crate) fn letters(mut n: usize) -> String {
    let mut rev = Vec::new();
    while n > 0 {
        rev.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    rev.iter().rev().map(|&c| c as char).collect()
}

/// A dot identifier: the name quoted, with quotes and backslashes escaped.
fn quoted(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars() {
        if c == '"' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// Writes the graph computing `outputs` as Graphviz dot to `out`. Each operation (visited
/// once, inputs before the operations reading them) is a rectangle `P<k>` labelled with its
/// primitive's MLX class name; arrays are nodes named by `namer`.
pub fn export_to_dot(out: &mut impl Write, namer: &mut NodeNamer, outputs: &[Array]) -> core::fmt::Result {
    let sinks: Vec<usize> = outputs.iter().map(key).collect();
    let mut seen_arrays: BTreeMap<usize, ()> = BTreeMap::new();
    let mut op_ids: BTreeMap<usize, usize> = BTreeMap::new();
    writeln!(out, "digraph {{")?;
    // Iterative post-order depth-first search (graphs may be 10^5 nodes deep).
    let mut stack: Vec<(Array, bool)> = outputs.iter().rev().map(|a| (a.clone(), false)).collect();
    while let Some((a, expanded)) = stack.pop() {
        let op = a.graph_op();
        let visit_key = op.as_ref().map_or(key(&a), |op| Arc::as_ptr(op) as usize);
        let done = match &op {
            Some(_) => op_ids.contains_key(&visit_key),
            None => seen_arrays.contains_key(&visit_key),
        };
        if done {
            continue;
        }
        let Some(op) = op else {
            seen_arrays.insert(visit_key, ());
            writeln!(out, "{{ rank=source; {}; }}", quoted(namer.get_name(&a)))?;
            continue;
        };
        let inputs: Vec<Array> = op.inputs.lock().clone();
        if !expanded {
            stack.push((a, true));
            stack.extend(inputs.into_iter().rev().map(|i| (i, false)));
            continue;
        }
        let id = op_ids.len();
        op_ids.insert(visit_key, id);
        write_op(out, namer, &op, id, &inputs, &a, &sinks)?;
    }
    writeln!(out, "}}")
}

/// One operation: its box, edges from its inputs, and its outputs (siblings included).
fn write_op(out: &mut impl Write, namer: &mut NodeNamer, op: &Op, id: usize, inputs: &[Array], reached: &Array, sinks: &[usize]) -> core::fmt::Result {
    // MLX's class names (`Multiply`, `CompiledBroadcastMultiplyAdd`), as its export_to_dot.
    let in_shapes: Vec<&[usize]> = inputs.iter().map(Array::shape).collect();
    let label = crate::transforms::export::listing::class_name(&op.prim, &in_shapes, reached.shape());
    writeln!(out, "{{ P{id} [label={}, shape=rectangle]; }}", quoted(&label))?;
    for i in inputs {
        writeln!(out, "{} -> P{id}", quoted(namer.get_name(i)))?;
    }
    let mut outs: Vec<Array> = op.outputs.lock().iter().filter_map(|w| w.upgrade()).map(|node: Arc<Node>| Array { node }).collect();
    if outs.is_empty() {
        outs.push(reached.clone());
    }
    for o in &outs {
        let rank = if sinks.contains(&key(o)) { "rank=sink; " } else { "" };
        let name = quoted(namer.get_name(o));
        writeln!(out, "{{ {rank}{name}; }}")?;
        writeln!(out, "P{id} -> {name}")?;
    }
    Ok(())
}

/// The streams that evaluating `outputs` would run work on: the stream of every pending
/// operation behind them, each once, in the order first met (evaluated arrays add none).
/// Front ends that bind streams to threads, as MLX does, check these before evaluating.
pub fn pending_streams(outputs: &[Array]) -> Vec<crate::Stream> {
    let mut streams = Vec::new();
    let mut seen: BTreeMap<usize, ()> = BTreeMap::new();
    // Iterative: pending graphs may be 10^5 nodes deep.
    let mut stack: Vec<Array> = outputs.to_vec();
    while let Some(a) = stack.pop() {
        let Some(op) = a.pending_op() else { continue };
        if seen.insert(Arc::as_ptr(&op) as usize, ()).is_some() {
            continue;
        }
        if !streams.contains(&op.stream) {
            streams.push(op.stream);
        }
        stack.extend(op.inputs.lock().iter().cloned());
    }
    streams
}

/// [`export_to_dot`] into a string.
pub fn to_dot_string(namer: &mut NodeNamer, outputs: &[Array]) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = export_to_dot(&mut s, namer, outputs);
    s
}
