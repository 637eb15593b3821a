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
use crate::ops::{self, index::IndexOp, quantized::QuantizedOp, reduce::ReduceOp, shape::ShapeOp, sort::SortOp};
use crate::primitive::Primitive;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

const OP: &str = "vmap";

/// The batching rule of each row of the gradient table ([`super::rules::table`]'s family and
/// primitive), for docs/GRAD.md's per-primitive table. Kept in step with [`rule`] below (the
/// tests in core/tests/vmap.rs check each rule against the loop it stands for).
pub fn status(family: &str, name: &str) -> &'static str {
    const MLX_NO: &str = "no: MLX's error (`[Primitive::vmap] Not implemented for …`)";
    match (family, name) {
        ("unary" | "binary" | "cast" | "reduce" | "index" | "fft", _) => "yes",
        ("sort", n) if n.contains("searchsorted") => "yes (searchsorted: over the values; a mapped sorted sequence is a ValueError, as MLX)",
        ("sort", _) => "yes",
        ("shape", "depends" | "as_strided") => MLX_NO,
        ("shape", n) if n.starts_with("slice") => "yes (dynamic: when the start indices are not mapped)",
        ("shape", _) => "yes",
        ("linalg", "conv") => "yes (a mapped weight: one grouped convolution)",
        ("linalg", _) => "yes",
        ("fast", "rope") => "yes (one fused node over the batch)",
        ("fast", "softmax") => "yes",
        ("fast", _) => "yes (through the fallback)",
        ("creation", _) => "not needed (no array inputs)",
        ("random", _) => "yes (one draw per key, as MLX batches a batch of keys; an unmapped key draws the same for every example)",
        ("quantized", "quantize" | "dequantize") => "yes (each example alone, the values of MLX's fallback)",
        ("quantized", "quantized_matmul" | "gather_qmm") => "no: MLX's error (`[QuantizedMatmul::vmap] NYI`, `[GatherQMM::vmap] NYI`)",
        ("quantized", n) if n.contains("fp8") => MLX_NO,
        ("fused", _) => "no rule needed: vmap of a compiled function replays its unfused trace (docs/COMPILE.md)",
        _ => "no (an error naming the primitive)",
    }
}

/// `mx.vmap(fun, in_axes, out_axes)` applied to `inputs`. `in_axes[i]` is the mapped axis of
/// input `i`, or -1 for an input that is not mapped (passed whole to every call); `out_axes[i]`
/// is where output `i` gets the mapped axis. Empty `in_axes`/`out_axes` mean 0 for all.
pub fn vmap(fun: Fun<'_>, inputs: &[Array], in_axes: &[i32], out_axes: &[i32]) -> Result<Vec<Array>> {
    let in_axes: Vec<i32> = if in_axes.is_empty() { vec![0; inputs.len()] } else { in_axes.to_vec() };
    let (s_inputs, s_outputs) = vmap_trace(fun, inputs, &in_axes)?;
    let out_axes: Vec<i32> = if out_axes.is_empty() { vec![0; s_outputs.len()] } else { out_axes.to_vec() };
    vmap_replace(inputs, &s_inputs, &s_outputs, &in_axes, &out_axes)
}

/// The first half of [`vmap`] (MLX's `detail::vmap_trace`): runs `fun` once on tracers of one
/// example's shape and returns `(s_inputs, s_outputs)`: the tracers (an input that is not
/// mapped, `in_axes[i] == -1`, is passed as it is) and `fun`'s outputs on them.
/// [`vmap_replace`] then replays the recorded graph on the batched inputs.
pub fn vmap_trace(fun: Fun<'_>, inputs: &[Array], in_axes: &[i32]) -> Result<(Vec<Array>, Vec<Array>)> {
    mapped_size(inputs, in_axes)?;
    let _guard = TraceGuard::new();
    let zero = ops::zeros(&[], DType::Int32)?;
    let mut s_inputs = Vec::with_capacity(inputs.len());
    let mut leaves = BTreeSet::new();
    for (x, &ax) in inputs.iter().zip(in_axes) {
        if ax < 0 {
            s_inputs.push(x.clone());
            continue;
        }
        let example = ops::take(x, &zero, Some(ax as isize))?;
        let t = make_tracer(&example)?;
        leaves.insert(node_key(&t));
        s_inputs.push(t);
    }
    let s_outputs = {
        let _mapped = MappedGuard::push(leaves);
        fun(&s_inputs)?
    };
    Ok((s_inputs, s_outputs))
}

/// The mapped axis size of `inputs` (checked as MLX: one axis per input or -1, every mapped
/// axis valid and of one size; the size is the last mapped input's, the first disagreeing
/// input is reported).
fn mapped_size(inputs: &[Array], in_axes: &[i32]) -> Result<usize> {
    if in_axes.len() != inputs.len() {
        return Err(Error::invalid(
            OP,
            format!("The number of in axes ({}) must match the number of inputs ({}).", in_axes.len(), inputs.len()),
        ));
    }
    for (x, &ax) in inputs.iter().zip(in_axes) {
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
    for (x, &ax) in inputs.iter().zip(in_axes) {
        if ax >= 0 {
            size = Some(x.shape()[ax as usize]);
        }
    }
    let n = size.ok_or_else(|| Error::invalid(OP, "At least one of in_axes must be non-None."))?;
    for (x, &ax) in inputs.iter().zip(in_axes) {
        if ax >= 0 && x.shape()[ax as usize] != n {
            return Err(Error::invalid(OP, format!("Inconsistent axis sizes: {} and {n}.", x.shape()[ax as usize])));
        }
    }
    Ok(n)
}

/// The second half of [`vmap`] (MLX's `detail::vmap_replace`): replays the graph from the
/// tracers `s_inputs` to `s_outputs` (made by [`vmap_trace`] with the same `in_axes`) with each
/// primitive's batching rule on `inputs`, and puts output `i`'s mapped axis at `out_axes[i]`.
/// An output that does not depend on a mapped input is repeated along that axis.
pub fn vmap_replace(inputs: &[Array], s_inputs: &[Array], s_outputs: &[Array], in_axes: &[i32], out_axes: &[i32]) -> Result<Vec<Array>> {
    if out_axes.len() != s_outputs.len() {
        return Err(Error::invalid(
            OP,
            format!("The number of out axes ({}) must match the number of outputs ({}).", out_axes.len(), s_outputs.len()),
        ));
    }
    let n = mapped_size(inputs, in_axes)?;
    if s_inputs.len() != inputs.len() {
        return Err(Error::invalid(
            OP,
            format!("The number of traced inputs ({}) must match the number of inputs ({}).", s_inputs.len(), inputs.len()),
        ));
    }
    let _guard = TraceGuard::new();
    // The batched arrays (mapped axis first) beside the tracers they stand for.
    let mut batched: BTreeMap<usize, Array> = BTreeMap::new();
    let mut leaves = BTreeSet::new();
    for ((x, s), &ax) in inputs.iter().zip(s_inputs).zip(in_axes) {
        if ax < 0 {
            continue;
        }
        // The rules trust the traced shapes: an input of another example shape is an error.
        let mut example = x.shape().to_vec();
        example.remove(ax as usize);
        if example != s.shape() || x.dtype() != s.dtype() {
            return Err(Error::invalid(
                OP,
                format!("An input of shape {:?} ({:?}) mapped on axis {ax} does not match its traced input of shape {:?} ({:?}).", x.shape(), x.dtype(), s.shape(), s.dtype()),
            ));
        }
        batched.insert(node_key(s), ops::moveaxis(x, ax as isize, 0)?);
        leaves.insert(node_key(s));
    }

    for op in tape(s_outputs, &leaves) {
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
        .zip(out_axes)
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

/// MLX's error for a primitive without a batching rule (`Primitive::vmap`), `mlx_name` its
/// class name there.
fn not_in_mlx(mlx_name: &str) -> Error {
    Error::invalid("Primitive::vmap", format!("Not implemented for {mlx_name}."))
}

/// The op on each example alone (batched inputs indexed at `i`, the others whole), each output
/// stacked over the examples: the values of the loop that vmap stands for. For primitives whose
/// batched form in MLX computes each example on its own (random draws per key, quantization).
fn each_example(prim: &Primitive, inputs: &[Array], b: &[Option<Array>], metas: &[(Vec<usize>, DType)], n: usize) -> Result<Vec<Array>> {
    let mut per_output: Vec<Vec<Array>> = vec![Vec::with_capacity(n); metas.len()];
    for i in 0..n {
        let at = Array::from_value(crate::element::Value::I(i as i64), DType::Int32)?;
        let ins = inputs
            .iter()
            .zip(b)
            .map(|(x, bx)| match bx {
                Some(bx) => ops::take(bx, &at, Some(0)),
                None => Ok(x.clone()),
            })
            .collect::<Result<Vec<_>>>()?;
        for (k, o) in Array::from_op_multi(prim.clone(), ins, metas.to_vec()).into_iter().enumerate() {
            per_output[k].push(o);
        }
    }
    per_output.iter().map(|v| ops::stack(v, 0)).collect()
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
    match prim {
        // Draws batch over their keys (MLX's `RandomBits::vmap` turns a batch of keys into one
        // draw per key), and quantize / dequantize as MLX's fallback does: each example alone.
        Primitive::Random(_) | Primitive::Quantized(QuantizedOp::Quantize { .. } | QuantizedOp::Dequantize { .. }) => {
            return each_example(prim, inputs, b, metas, n);
        }
        // MLX has no batching rule for these: its errors.
        Primitive::Quantized(QuantizedOp::QuantizedMatmul { .. }) => return Err(Error::runtime("QuantizedMatmul::vmap", "NYI")),
        Primitive::Quantized(QuantizedOp::GatherQmm { .. }) => return Err(Error::runtime("GatherQMM::vmap", "NYI")),
        Primitive::Quantized(QuantizedOp::ToFp8) => return Err(not_in_mlx("ToFP8")),
        Primitive::Quantized(QuantizedOp::FromFp8) => return Err(not_in_mlx("FromFP8")),
        Primitive::Shape(ShapeOp::Depends(_)) => return Err(not_in_mlx("Depends")),
        Primitive::Shape(ShapeOp::AsStrided { .. }) => return Err(not_in_mlx("AsStrided")),
        _ => {}
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
