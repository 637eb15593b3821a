//! A traced function as plain data: the ops between its inputs and outputs in topological
//! order, each naming its inputs as [`Ref`]s (an input, a captured constant, or an output of
//! an earlier op). Built once per input signature from a trace, simplified, and replayed on
//! every call by recording the same primitives over the new inputs.

use crate::array::Array;
use crate::backend::OutMeta;
use crate::error::{Error, Result};
use crate::ops::fused::{broadcast_all, is_elementwise, record_elementwise, FusedOp, FusedReduceOp};
use crate::ops::shape::ShapeOp;
use crate::primitive::Primitive;
use crate::transforms::export::rebuild;
use crate::transforms::{node_key, tape, tape_by};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::vec::Vec;

/// Where a value of the tape comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Ref {
    /// The i-th argument.
    Input(usize),
    /// The i-th captured constant.
    Const(usize),
    /// Output `j` of node `k`.
    Node(usize, usize),
}

/// One recorded op.
#[derive(Clone)]
pub(crate) struct TNode {
    pub(crate) prim: Primitive,
    pub(crate) inputs: Vec<Ref>,
    /// Shapes and dtypes at trace time (elementwise and fused nodes recompute their shape).
    pub(crate) metas: Vec<OutMeta>,
    /// For a reshape of a shapeless trace asked with an inferred axis or made by
    /// `expand_dims`: how it was asked, so a replay on other shapes asks it again.
    pub(crate) reshape_to: Option<super::ReshapeRequest>,
}

/// A traced function.
#[derive(Clone)]
pub(crate) struct Tape {
    pub(crate) n_inputs: usize,
    /// Arrays the function captured (they are frozen at trace time, as in MLX).
    pub(crate) consts: Vec<Array>,
    pub(crate) nodes: Vec<TNode>,
    pub(crate) outputs: Vec<Ref>,
    /// Input shapes at trace time (shapeless replays check non-elementwise nodes against them).
    pub(crate) input_shapes: Vec<Vec<usize>>,
    /// Whether a node reads a constant of more than one element that was still lazy when
    /// the trace ended: made during the trace from shapes the trace saw (as the cotangent a
    /// `grad` inside the function broadcasts from its seed), so other shapes need a trace of
    /// their own (a lazy value captured from outside is treated alike: more traces, same
    /// values).
    pub(crate) shaped_consts: bool,
}

/// The input of a broadcast node, if `a` is one (pending or kept by the trace).
pub(crate) fn broadcast_source(a: &Array) -> Option<Array> {
    let op = a.graph_op()?;
    if op.prim != Primitive::Shape(ShapeOp::Broadcast) {
        return None;
    }
    let src = op.inputs.lock().first().cloned();
    src
}

impl Tape {
    /// Builds the tape of `outputs` computed from the tracers `leaves` (in argument order).
    /// Inputs of elementwise ops that are broadcasts are recorded unbroadcast (the replay
    /// broadcasts again, and fused loads broadcast on the fly) so the tape does not fix
    /// shapes it need not fix. With `lazy_elementwise`, a captured value not yet evaluated
    /// that an elementwise op computes from other constants is recorded as that op (as MLX's
    /// export records every node) rather than as a new constant: an exported file then holds
    /// `w + 0` as an add over `w`, not a second copy of `w`.
    pub(crate) fn build(leaves: &[Array], outputs: &[Array], lazy_elementwise: bool) -> Result<Tape> {
        let leaf_keys: BTreeSet<usize> = leaves.iter().map(node_key).collect();
        let ops = if lazy_elementwise {
            tape_by(outputs, |a| {
                if leaf_keys.contains(&node_key(a)) {
                    None
                } else if a.node.tracer {
                    a.graph_op()
                } else {
                    a.pending_op().filter(|op| is_elementwise(&op.prim) && op.metas.len() == 1)
                }
            })
        } else {
            tape(outputs, &leaf_keys)
        };
        let mut refs: BTreeMap<usize, Ref> = BTreeMap::new();
        for (i, l) in leaves.iter().enumerate() {
            refs.insert(node_key(l), Ref::Input(i));
        }
        let mut t = Tape {
            n_inputs: leaves.len(),
            consts: Vec::new(),
            nodes: Vec::new(),
            outputs: Vec::new(),
            input_shapes: leaves.iter().map(|a| a.shape().to_vec()).collect(),
            shaped_consts: false,
        };
        for (k, op) in ops.iter().enumerate() {
            let inputs = op.inputs.lock().clone();
            let mut args: Vec<Array> = inputs.clone();
            if is_elementwise(&op.prim) && op.metas.len() == 1 {
                let stripped: Vec<Array> = inputs.iter().map(|a| broadcast_source(a).unwrap_or_else(|| a.clone())).collect();
                if broadcast_all(stripped.iter().map(|a| a.shape()), "compile").ok().as_deref() == Some(&op.metas[0].0[..]) {
                    args = stripped;
                }
            }
            let inputs: Vec<Ref> = args.iter().map(|a| t.resolve(&mut refs, a)).collect();
            let lazy_const = |(r, a): (&Ref, &Array)| matches!(r, Ref::Const(_)) && a.size() > 1 && a.pending_op().is_some();
            t.shaped_consts |= inputs.iter().zip(&args).any(lazy_const);
            let reshape_to = match op.prim {
                Primitive::Shape(ShapeOp::Reshape) => op.outputs.lock().first().and_then(|w| super::reshape_request(w.as_ptr() as usize)),
                _ => None,
            };
            t.nodes.push(TNode { prim: op.prim.clone(), inputs, metas: op.metas.clone(), reshape_to });
            for (j, w) in op.outputs.lock().iter().enumerate() {
                refs.insert(w.as_ptr() as usize, Ref::Node(k, j));
            }
        }
        t.outputs = outputs.iter().map(|a| t.resolve(&mut refs, a)).collect();
        Ok(t)
    }

    /// The ref of `a`: known, or a new constant.
    fn resolve(&mut self, refs: &mut BTreeMap<usize, Ref>, a: &Array) -> Ref {
        *refs.entry(node_key(a)).or_insert_with(|| {
            self.consts.push(a.clone());
            Ref::Const(self.consts.len() - 1)
        })
    }

    /// Merges equal nodes (same primitive on the same inputs) and drops nodes no output
    /// needs.
    pub(crate) fn simplify(&mut self) {
        // Common subexpressions: nodes in order, each compared with earlier equal-hash ones.
        let mut remap: BTreeMap<Ref, Ref> = BTreeMap::new();
        let mut seen: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for k in 0..self.nodes.len() {
            for r in self.nodes[k].inputs.iter_mut() {
                if let Some(&to) = remap.get(r) {
                    *r = to;
                }
            }
            let h = hash_of(&(&self.nodes[k].prim, &self.nodes[k].inputs));
            let bucket = seen.entry(h).or_default();
            let same = bucket.iter().copied().find(|&e| {
                let (a, b) = (&self.nodes[e], &self.nodes[k]);
                a.prim == b.prim && a.inputs == b.inputs && a.metas == b.metas && a.reshape_to == b.reshape_to
            });
            match same {
                Some(e) => {
                    for j in 0..self.nodes[k].metas.len() {
                        remap.insert(Ref::Node(k, j), Ref::Node(e, j));
                    }
                }
                None => bucket.push(k),
            }
        }
        for r in self.outputs.iter_mut() {
            if let Some(&to) = remap.get(r) {
                *r = to;
            }
        }
        self.drop_dead();
    }

    /// Removes nodes whose outputs nothing reads, renumbering the rest.
    fn drop_dead(&mut self) {
        let mut live = alloc::vec![false; self.nodes.len()];
        for r in &self.outputs {
            if let Ref::Node(k, _) = r {
                live[*k] = true;
            }
        }
        for k in (0..self.nodes.len()).rev() {
            if live[k] {
                for r in &self.nodes[k].inputs {
                    if let Ref::Node(i, _) = r {
                        live[*i] = true;
                    }
                }
            }
        }
        let mut new_index = alloc::vec![usize::MAX; self.nodes.len()];
        let mut kept = Vec::new();
        for (k, node) in core::mem::take(&mut self.nodes).into_iter().enumerate() {
            if live[k] {
                new_index[k] = kept.len();
                kept.push(node);
            }
        }
        let fix = |r: &mut Ref| {
            if let Ref::Node(k, j) = *r {
                *r = Ref::Node(new_index[k], j);
            }
        };
        for node in kept.iter_mut() {
            node.inputs.iter_mut().for_each(fix);
        }
        self.outputs.iter_mut().for_each(fix);
        self.nodes = kept;
    }

    /// Whether a shape was fixed at trace time: a node whose output shape cannot be inferred
    /// from its inputs' (elementwise and fused nodes take their inputs' broadcast shape;
    /// reductions, matmul, sorts … are rebuilt by their op builders), or an output that is a
    /// constant (such as `zeros_like(x)`, which does not read `x`).
    pub(crate) fn fixes_shapes(&self) -> bool {
        self.nodes.iter().any(|n| !(is_elementwise(&n.prim) || matches!(n.prim, Primitive::Fused(_) | Primitive::FusedReduce(_)) || rebuild::infers_shapes(&n.prim) || n.reshape_to.is_some()))
            || self.outputs.iter().any(|r| matches!(r, Ref::Const(_)))
            || self.shaped_consts
    }

    /// The shape the trace saw for `r`.
    pub(crate) fn traced_shape(&self, r: Ref) -> Option<&[usize]> {
        match r {
            Ref::Input(i) => self.input_shapes.get(i).map(|s| &s[..]),
            Ref::Const(i) => self.consts.get(i).map(|c| c.shape()),
            Ref::Node(k, j) => self.nodes.get(k).and_then(|n| n.metas.get(j)).map(|m| &m.0[..]),
        }
    }

    /// Whether `inputs` have the shapes the trace saw.
    pub(crate) fn same_input_shapes(&self, inputs: &[Array]) -> bool {
        inputs.len() == self.input_shapes.len() && inputs.iter().zip(&self.input_shapes).all(|(a, s)| a.shape() == &s[..])
    }

    /// Records the tape over `inputs`. With `shapeless`, inputs may differ in shape from the
    /// trace: elementwise and fused nodes take their inputs' broadcast shape, nodes whose op
    /// builder infers the shape are rebuilt through it, and any other node whose inputs changed
    /// shape is an error (its recorded output shape would be wrong; [`Tape::fixes_shapes`]
    /// lets the caller retrace instead).
    pub(crate) fn replay(&self, inputs: &[Array], shapeless: bool) -> Result<Vec<Array>> {
        if inputs.len() != self.n_inputs {
            return Err(Error::invalid("compile", format!("Expected {} inputs, got {}.", self.n_inputs, inputs.len())));
        }
        let mut values: Vec<Vec<Array>> = Vec::with_capacity(self.nodes.len());
        let get = |values: &Vec<Vec<Array>>, r: Ref| -> Result<Array> {
            let found = match r {
                Ref::Input(i) => inputs.get(i),
                Ref::Const(i) => self.consts.get(i),
                Ref::Node(k, j) => values.get(k).and_then(|v| v.get(j)),
            };
            found.cloned().ok_or_else(|| Error::runtime("compile", "A compiled graph refers to a missing value."))
        };
        for node in &self.nodes {
            let args = node.inputs.iter().map(|&r| get(&values, r)).collect::<Result<Vec<Array>>>()?;
            let outs = match &node.prim {
                Primitive::Fused(op) => alloc::vec![FusedOp::record(op, args)?],
                Primitive::FusedReduce(op) => alloc::vec![FusedReduceOp::record(op, args)?],
                p if is_elementwise(p) && node.metas.len() == 1 => alloc::vec![record_elementwise(p, args, node.metas[0].1)?],
                p => {
                    let changed = node.inputs.iter().zip(&args).any(|(&r, a)| self.traced_shape(r) != Some(a.shape()));
                    if !changed {
                        Array::from_op_multi(p.clone(), args, node.metas.clone())
                    } else if let (true, Some(to), [a]) = (shapeless, &node.reshape_to, &args[..]) {
                        // MLX's error for a size the fixed axes do not divide.
                        alloc::vec![to.apply(a)?]
                    } else if shapeless && rebuild::infers_shapes(p) {
                        let outs = rebuild::build(p, &args, &node.metas)?;
                        rebuild::check(p.name(), &outs, &node.metas, true)?;
                        outs
                    } else {
                        return Err(Error::invalid(
                            "compile",
                            format!("[compile] Cannot infer output shapes of {} for new input shapes; compile this function without shapeless=True.", p.name()),
                        ));
                    }
                }
            };
            values.push(outs);
        }
        self.outputs.iter().map(|&r| get(&values, r)).collect()
    }
}

/// A 64-bit FNV-1a hash (no_std has no default hasher): buckets for CSE.
fn hash_of<T: core::hash::Hash>(v: &T) -> u64 {
    struct Fnv(u64);
    impl core::hash::Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    v.hash(&mut h);
    core::hash::Hasher::finish(&h)
}
