//! `vmap`: vectorizes a function over an axis of its inputs.
//!
//! As in MLX, the function runs once on *tracers* of one example's shape (the mapped axis
//! removed); then the recorded graph is replayed from those tracers to the outputs with each
//! primitive's batching rule ([`rule`]), on arrays whose mapped axis is moved to the front.
//! Keeping the batch axis at position 0 everywhere makes most rules one line: the same
//! primitive, its axis parameters shifted by one, and every input batched (an input that does
//! not depend on the mapped inputs is broadcast along a new leading axis). A primitive without
//! a rule is an `unsupported` error naming it, never a wrong result.

use super::{make_tracer, node_key, tape, Fun, TraceGuard};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{self, index::IndexOp, reduce::ReduceOp, shape::ShapeOp, sort::SortOp};
use crate::primitive::Primitive;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

const OP: &str = "vmap";

/// The batching rules, per primitive family (docs/GRAD.md is generated from it; keep it in
/// step with [`rule`]).
pub const RULES: &[(&str, &str)] = &[
    ("unary, binary, select (where), astype, view", "yes"),
    ("reduce: sum, prod, max, min, all, any, argmax, argmin, scans (cumsum …)", "yes"),
    ("matmul, addmm", "yes"),
    ("conv (conv1d, conv2d, conv3d, conv_general)", "yes (a mapped weight: one grouped convolution)"),
    ("shape: reshape, transpose, broadcast_to, broadcast_axes, slice, slice_update, concatenate, diagonal, copy, stop_gradient", "yes"),
    ("shape: dynamic slice / slice update", "yes when the start indices are not mapped"),
    ("index: gather (take, indexing), scatter family (put_along_axis, .at[] updates)", "yes"),
    ("sort, argsort, partition, argpartition", "yes"),
    ("searchsorted", "yes over the values (a mapped sorted sequence is a ValueError)"),
    ("fft family (one node per axis)", "yes"),
    ("fast: rope", "yes (one fused node over the batch)"),
    ("fast: rms_norm, layer_norm, scaled_dot_product_attention", "yes (through the fallback)"),
    ("decompositions: inv, cholesky, qr, svd, eigh, eig, lu", "yes"),
    ("quantized; random; depends", "no (an error naming the primitive)"),
];

/// `mx.vmap(fun, in_axes, out_axes)` applied to `inputs`. `in_axes[i]` is the mapped axis of
/// input `i`, or -1 for an input that is not mapped (passed whole to every call); `out_axes[i]`
/// is where output `i` gets the mapped axis. Empty `in_axes`/`out_axes` mean 0 for all.
pub fn vmap(fun: Fun<'_>, inputs: &[Array], in_axes: &[i32], out_axes: &[i32]) -> Result<Vec<Array>> {
    let in_axes: Vec<i32> = if in_axes.is_empty() { vec![0; inputs.len()] } else { in_axes.to_vec() };
    if in_axes.len() != inputs.len() {
        return Err(Error::invalid(
            OP,
            format!("The number of in axes ({}) must match the number of inputs ({}).", in_axes.len(), inputs.len()),
        ));
    }
    // As MLX: the size is the last mapped input's; the first disagreeing input is reported.
    for (x, &ax) in inputs.iter().zip(&in_axes) {
        if ax < 0 {
            continue;
        }
        if x.ndim() == 0 {
            return Err(Error::invalid(OP, "Cannot vmap an input with zero dimensions."));
        }
        if ax as usize >= x.ndim() {
            return Err(Error::invalid(OP, format!("Axis {ax} invalid for input with {} dimensions.", x.ndim())));
        }
    }
    let mut size: Option<usize> = None;
    for (x, &ax) in inputs.iter().zip(&in_axes) {
        if ax >= 0 {
            size = Some(x.shape()[ax as usize]);
        }
    }
    let n = size.ok_or_else(|| Error::invalid(OP, "At least one of in_axes must be non-None."))?;
    for (x, &ax) in inputs.iter().zip(&in_axes) {
        if ax >= 0 && x.shape()[ax as usize] != n {
            return Err(Error::invalid(OP, format!("Inconsistent axis sizes: {} and {n}.", x.shape()[ax as usize])));
        }
    }

    let _guard = TraceGuard::new();
    // Tracers of one example's shape; the batched arrays (mapped axis first) beside them.
    let mut batched: BTreeMap<usize, Array> = BTreeMap::new();
    let mut s_inputs = Vec::with_capacity(inputs.len());
    let mut leaves = BTreeSet::new();
    let zero = ops::zeros(&[], DType::Int32)?;
    for (x, &ax) in inputs.iter().zip(&in_axes) {
        if ax < 0 {
            s_inputs.push(x.clone());
            continue;
        }
        let example = ops::take(x, &zero, Some(ax as isize))?;
        let t = make_tracer(&example)?;
        batched.insert(node_key(&t), ops::moveaxis(x, ax as isize, 0)?);
        leaves.insert(node_key(&t));
        s_inputs.push(t);
    }
    let s_outputs = {
        let _mapped = MappedGuard::push(leaves.clone());
        fun(&s_inputs)?
    };
    let out_axes: Vec<i32> = if out_axes.is_empty() { vec![0; s_outputs.len()] } else { out_axes.to_vec() };
    if out_axes.len() != s_outputs.len() {
        return Err(Error::invalid(
            OP,
            format!("The number of out axes ({}) must match the number of outputs ({}).", out_axes.len(), s_outputs.len()),
        ));
    }

    for op in tape(&s_outputs, &leaves) {
        let op_inputs = op.inputs.lock().clone();
        let b: Vec<Option<Array>> = op_inputs.iter().map(|a| batched.get(&node_key(a)).cloned()).collect();
        if b.iter().all(Option::is_none) {
            continue; // does not depend on the mapped inputs: the same for every example
        }
        let outs = rule(&op.prim, &op_inputs, &b, &op.metas, n)?;
        for (w, o) in op.outputs.lock().iter().zip(outs) {
            batched.insert(w.as_ptr() as usize, o);
        }
    }

    s_outputs
        .iter()
        .zip(&out_axes)
        .map(|(o, &ax)| {
            let nd = o.ndim() + 1;
            if ax < 0 || ax as usize >= nd {
                return Err(Error::invalid(OP, format!("Axis {ax} invalid for output with {nd} dimensions.")));
            }
            match batched.get(&node_key(o)) {
                Some(b) => ops::moveaxis(b, 0, ax as isize),
                None => {
                    // Independent of the mapped inputs: the same value repeated along the axis.
                    let e = ops::expand_dims(o, &[ax as isize])?;
                    let mut shape = e.shape().to_vec();
                    shape[ax as usize] = n;
                    ops::contiguous(&ops::broadcast_to(&e, &shape)?)
                }
            }
        })
        .collect()
}

/// The mapped tracers of the vmaps whose function is running now (any thread; the keys are
/// live nodes, so sets of other threads cannot match an array of this one).
static MAPPED: spin::Mutex<Vec<BTreeSet<usize>>> = spin::Mutex::new(Vec::new());

/// Holds one vmap's mapped tracers in [`MAPPED`] while its function runs.
struct MappedGuard(BTreeSet<usize>);

impl MappedGuard {
    fn push(leaves: BTreeSet<usize>) -> MappedGuard {
        MAPPED.lock().push(leaves.clone());
        MappedGuard(leaves)
    }
}

impl Drop for MappedGuard {
    fn drop(&mut self) {
        let mut m = MAPPED.lock();
        if let Some(i) = m.iter().rposition(|s| *s == self.0) {
            m.remove(i);
        }
    }
}

/// Whether `a` depends on an input mapped by a vmap whose function is running now: for an
/// op whose batching rule MLX refuses for some inputs (pad's value), which here is composed
/// of ops that would batch it. Only tracer nodes are walked, so this is cheap.
pub fn is_mapped(a: &Array) -> bool {
    let leaves: BTreeSet<usize> = {
        let m = MAPPED.lock();
        if m.is_empty() {
            return false;
        }
        m.iter().flat_map(|s| s.iter().copied()).collect()
    };
    if leaves.contains(&node_key(a)) {
        return true;
    }
    super::tape(core::slice::from_ref(a), &leaves)
        .iter()
        .any(|op| op.inputs.lock().iter().any(|x| leaves.contains(&node_key(x))))
}

/// The error for a primitive without a batching rule.
fn unsupported(name: &'static str) -> Error {
    Error::unsupported(name, format!("The vmap rule of {name} is not supported yet."))
}

/// Input `i` with a leading batch axis of `n`: its batched form, or the input broadcast.
fn batch(inputs: &[Array], b: &[Option<Array>], i: usize, n: usize) -> Result<Array> {
    if let Some(x) = &b[i] {
        return Ok(x.clone());
    }
    let x = &inputs[i];
    let mut shape = vec![n];
    shape.extend_from_slice(x.shape());
    ops::broadcast_to(&ops::expand_dims(x, &[0])?, &shape)
}

fn batch_all(inputs: &[Array], b: &[Option<Array>], n: usize) -> Result<Vec<Array>> {
    (0..inputs.len()).map(|i| batch(inputs, b, i, n)).collect()
}

fn shifted(axes: &[usize]) -> Vec<usize> {
    axes.iter().map(|a| a + 1).collect()
}

/// The batched outputs (batch axis first) of one recorded op. `metas` are the op's
/// per-example output shapes and dtypes.
fn rule(prim: &Primitive, inputs: &[Array], b: &[Option<Array>], metas: &[(Vec<usize>, DType)], n: usize) -> Result<Vec<Array>> {
    // The same primitive (or `prim`) on batched inputs, with the batch axis prepended to
    // every output shape.
    let same = |prim: Primitive, ins: Vec<Array>| -> Vec<Array> {
        let metas = metas
            .iter()
            .map(|(s, d)| {
                let mut shape = vec![n];
                shape.extend_from_slice(s);
                (shape, *d)
            })
            .collect();
        Array::from_op_multi(prim, ins, metas)
    };
    if let Primitive::Custom(op) = prim {
        return op.vmap(inputs, b, n);
    }
    // Decompositions (and inv) work on the last two axes, batched over any leading ones; some
    // have several outputs (svd, qr, eigh, eig, lu).
    if let Primitive::Linalg(op) = prim {
        if op.is_decomposition() {
            return Ok(same(prim.clone(), batch_all(inputs, b, n)?));
        }
    }
    if metas.len() != 1 {
        return Err(unsupported(prim.name()));
    }
    match prim {
        // Elementwise (inputs already broadcast to one shape), casts, copies, matmul (batch
        // dims already equal): the same op over one more leading axis.
        Primitive::Unary(_)
        | Primitive::Binary(_)
        | Primitive::Select
        | Primitive::Cast(_)
        | Primitive::Linalg(ops::linalg::LinalgOp::Matmul)
        | Primitive::Linalg(ops::linalg::LinalgOp::AddMM { .. })
        | Primitive::Shape(ShapeOp::Reshape | ShapeOp::Copy | ShapeOp::StopGradient)
        // Row-wise over the last axis, which a leading batch axis leaves last.
        | Primitive::Fast(ops::fast::FastOp::Softmax) => Ok(same(prim.clone(), batch_all(inputs, b, n)?)),
        Primitive::Reduce(op) => {
            let op = match op.clone() {
                ReduceOp::Reduce { kind, axes } => ReduceOp::Reduce { kind, axes: shifted(&axes) },
                ReduceOp::ArgReduce { max, axis } => ReduceOp::ArgReduce { max, axis: axis + 1 },
                ReduceOp::Scan { kind, axis, reverse, inclusive } => ReduceOp::Scan { kind, axis: axis + 1, reverse, inclusive },
            };
            Ok(same(Primitive::Reduce(op), batch_all(inputs, b, n)?))
        }
        Primitive::Linalg(ops::linalg::LinalgOp::Conv(p)) => {
            Ok(vec![ops::linalg::conv_rules::vmap(p, &inputs[0], &inputs[1], b[0].as_ref(), b[1].as_ref(), &metas[0].0, n)?])
        }
        Primitive::Fast(op) => ops::fast::grad::vmap(op, inputs, b, n),
        // One axis per node: the same transform one axis further.
        Primitive::Fft(op) => Ok(same(Primitive::Fft(ops::fft::FftOp { axis: op.axis + 1, ..op.clone() }), batch_all(inputs, b, n)?)),
        Primitive::Shape(op) => shape_rule(op, prim, inputs, b, metas, n, same),
        Primitive::Sort(op) => {
            let op = match *op {
                SortOp::Sort { axis } => SortOp::Sort { axis: axis + 1 },
                SortOp::ArgSort { axis } => SortOp::ArgSort { axis: axis + 1 },
                SortOp::Partition { kth, axis } => SortOp::Partition { kth, axis: axis + 1 },
                SortOp::ArgPartition { kth, axis } => SortOp::ArgPartition { kth, axis: axis + 1 },
                SortOp::SearchSorted { .. } => {
                    // Elementwise in the values; one sorted sequence for every example.
                    if b[0].is_some() {
                        return Err(Error::invalid("searchsorted", "Cannot vmap over the sorted sequence, only over the values being searched for."));
                    }
                    return Ok(same(prim.clone(), vec![inputs[0].clone(), batch(inputs, b, 1, n)?]));
                }
            };
            Ok(same(Primitive::Sort(op), batch_all(inputs, b, n)?))
        }
        Primitive::Index(IndexOp::Scatter { axes, mode }) => {
            // Scatter into each example's own array: an extra index (0..n) on the batch axis,
            // and a window of 1 on it for the updates.
            let a = batch(inputs, b, 0, n)?;
            let up = batch(inputs, b, 1, n)?;
            let ilen = inputs[1].ndim() - inputs[0].ndim();
            let mut bshape = vec![n];
            bshape.extend_from_slice(&inputs[1].shape()[..ilen]);
            let mut iota_shape = vec![n as isize];
            iota_shape.extend(core::iter::repeat(1).take(ilen));
            let iota = ops::reshape(&ops::arange(0.0, n as f64, 1.0, DType::Int32)?, &iota_shape)?;
            let mut idx = vec![ops::broadcast_to(&iota, &bshape)?];
            for i in 2..inputs.len() {
                idx.push(ops::broadcast_to(&batch(inputs, b, i, n)?, &bshape)?);
            }
            let mut ushape: Vec<isize> = up.shape()[..=ilen].iter().map(|&d| d as isize).collect();
            ushape.push(1);
            ushape.extend(up.shape()[ilen + 1..].iter().map(|&d| d as isize));
            let mut ax: Vec<isize> = vec![0];
            ax.extend(axes.iter().map(|&a| a as isize + 1));
            Ok(vec![ops::scatter_with(&a, &idx, &ops::reshape(&up, &ushape)?, &ax, *mode)?])
        }
        Primitive::Index(IndexOp::Gather { axes, slice_sizes }) => {
            // Gather from each example's own array: an extra index (0..n) on the batch axis.
            let a = batch(inputs, b, 0, n)?;
            let ishape = &metas[0].0[..metas[0].0.len() - slice_sizes.len()];
            let mut bshape = vec![n];
            bshape.extend_from_slice(ishape);
            let mut iota_shape = vec![n as isize];
            iota_shape.extend(core::iter::repeat(1).take(ishape.len()));
            let iota = ops::reshape(&ops::arange(0.0, n as f64, 1.0, DType::Int32)?, &iota_shape)?;
            let mut idx = vec![ops::broadcast_to(&iota, &bshape)?];
            for i in 1..inputs.len() {
                let x = batch(inputs, b, i, n)?;
                // An index of lower rank than the others lines up on the right.
                let mut s: Vec<isize> = vec![n as isize];
                s.extend(core::iter::repeat(1).take(ishape.len() - (x.ndim() - 1)));
                s.extend(x.shape()[1..].iter().map(|&d| d as isize));
                idx.push(ops::broadcast_to(&ops::reshape(&x, &s)?, &bshape)?);
            }
            let mut ax: Vec<isize> = vec![0];
            ax.extend(axes.iter().map(|&a| a as isize + 1));
            let mut sizes = vec![1];
            sizes.extend_from_slice(slice_sizes);
            let g = ops::gather(&a, &idx, &ax, &sizes)?;
            // [n, I…, 1, window…] → [n, I…, window…]
            let mut out: Vec<isize> = bshape.iter().map(|&d| d as isize).collect();
            out.extend(slice_sizes.iter().map(|&d| d as isize));
            Ok(vec![ops::reshape(&g, &out)?])
        }
        _ => Err(unsupported(prim.name())),
    }
}

#[allow(clippy::too_many_arguments)]
fn shape_rule(
    op: &ShapeOp,
    prim: &Primitive,
    inputs: &[Array],
    b: &[Option<Array>],
    metas: &[(Vec<usize>, DType)],
    n: usize,
    same: impl Fn(Primitive, Vec<Array>) -> Vec<Array>,
) -> Result<Vec<Array>> {
    let with = |op: ShapeOp| -> Result<Vec<Array>> { Ok(same(Primitive::Shape(op), batch_all(inputs, b, n)?)) };
    let prepend = |v: &[isize], first: isize| -> Vec<isize> {
        let mut out = vec![first];
        out.extend_from_slice(v);
        out
    };
    match op {
        ShapeOp::Transpose(perm) => {
            let mut p = vec![0];
            p.extend(perm.iter().map(|a| a + 1));
            with(ShapeOp::Transpose(p))
        }
        ShapeOp::Broadcast => {
            // Right-aligned broadcasting: line the example axes up behind the batch axis.
            let x = batch(inputs, b, 0, n)?;
            let target = &metas[0].0;
            let mut s: Vec<isize> = vec![n as isize];
            s.extend(core::iter::repeat(1).take(target.len() - (x.ndim() - 1)));
            s.extend(x.shape()[1..].iter().map(|&d| d as isize));
            let mut shape = vec![n];
            shape.extend_from_slice(target);
            Ok(vec![ops::broadcast_to(&ops::reshape(&x, &s)?, &shape)?])
        }
        ShapeOp::BroadcastAxes(ignore) => {
            // As MLX's rule, with the batch axis first: batched inputs get size-1 axes behind
            // it up to the largest example rank, so every example axis lines up on the right
            // behind the batch axis; unbatched inputs stay as they are (right-aligned, they
            // never reach the batch axis). The node stays shape-generic in a shapeless trace.
            let rank = inputs.iter().map(Array::ndim).max().unwrap_or(0);
            let mut ins = Vec::with_capacity(inputs.len());
            for (x, bx) in inputs.iter().zip(b) {
                ins.push(match bx {
                    Some(bx) if x.ndim() < rank => ops::expand_dims(bx, &(1..=(rank - x.ndim()) as isize).collect::<Vec<_>>())?,
                    Some(bx) => bx.clone(),
                    None => x.clone(),
                });
            }
            let (first, others) = ins.split_first().ok_or_else(|| unsupported(prim.name()))?;
            Ok(vec![ops::shape::broadcast_axes(first, others, ignore)?])
        }
        ShapeOp::Slice { start, step } => with(ShapeOp::Slice { start: prepend(start, 0), step: prepend(step, 1) }),
        ShapeOp::SliceUpdate { start, step } => with(ShapeOp::SliceUpdate { start: prepend(start, 0), step: prepend(step, 1) }),
        ShapeOp::Concatenate(axis) => with(ShapeOp::Concatenate(axis + 1)),
        ShapeOp::Diagonal { offset, axis1, axis2 } => with(ShapeOp::Diagonal { offset: *offset, axis1: axis1 + 1, axis2: axis2 + 1 }),
        // Run-time starts shared by every example (batched starts have no rule yet).
        ShapeOp::DynamicSlice { axes } if b[1].is_none() => {
            let ins = vec![batch(inputs, b, 0, n)?, inputs[1].clone()];
            Ok(same(Primitive::Shape(ShapeOp::DynamicSlice { axes: shifted(axes) }), ins))
        }
        ShapeOp::DynamicSliceUpdate { axes } if b[2].is_none() => {
            let ins = vec![batch(inputs, b, 0, n)?, batch(inputs, b, 1, n)?, inputs[2].clone()];
            Ok(same(Primitive::Shape(ShapeOp::DynamicSliceUpdate { axes: shifted(axes) }), ins))
        }
        _ => Err(unsupported(prim.name())),
    }
}
