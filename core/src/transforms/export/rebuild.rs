//! Replays an imported trace through the public op builders rather than recording its nodes
//! as written: each builder checks its parameters and infers its output, so a corrupt or
//! hostile file gets an error where a raw replay would hand its kernels inconsistent shapes.
//! Every rebuilt value is compared with the shape and dtype the file records.
//!
//! Shapeless calls (inputs of other shapes than the trace) work wherever the builder infers
//! the output shape from the inputs. Ops whose parameters fix an output shape (reshape,
//! broadcast, slice, gather …) refuse inputs of new shapes with a clear error.

use crate::array::Array;
use crate::backend::OutMeta;
use crate::error::{Error, Result};
use crate::ops::{
    self, cast::CastOp, creation::CreationOp, index::IndexOp, linalg::LinalgOp, quantized::QuantizedOp, reduce::ReduceOp,
    reduce::ScanKind, shape::ShapeOp, sort::SortOp,
};
use crate::primitive::Primitive;
use crate::transforms::compile::tape::{Ref, Tape};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

const OP: &str = "import_function::call";

/// The outputs of `tape` over `inputs` (already matched to the trace's signature).
pub(super) fn replay(tape: &Tape, inputs: &[Array]) -> Result<Vec<Array>> {
    let mut values: Vec<Vec<Array>> = Vec::with_capacity(tape.nodes.len());
    // The value of a reference and the shape the trace recorded for it.
    let get = |values: &Vec<Vec<Array>>, r: Ref| -> Result<(Array, Vec<usize>)> {
        let found = match r {
            Ref::Input(i) => inputs.get(i).cloned().zip(tape.input_shapes.get(i).cloned()),
            Ref::Const(i) => tape.consts.get(i).map(|c| (c.clone(), c.shape().to_vec())),
            Ref::Node(k, j) => values.get(k).and_then(|v| v.get(j)).cloned().zip(tape.nodes.get(k).and_then(|n| n.metas.get(j)).map(|m| m.0.clone())),
        };
        found.ok_or_else(|| Error::runtime(OP, "An imported graph refers to a missing value."))
    };
    for node in &tape.nodes {
        let mut args = Vec::with_capacity(node.inputs.len());
        let mut changed = false;
        for &r in &node.inputs {
            let (a, recorded) = get(&values, r)?;
            changed |= a.shape() != &recorded[..];
            args.push(a);
        }
        let name = node.prim.name();
        if changed && fixes_shape(&node.prim) {
            return Err(Error::invalid(
                OP,
                format!("The output shape of '{name}' was fixed when the function was exported; it cannot be called with inputs of other shapes."),
            ));
        }
        let outs = build(&node.prim, &args, &node.metas)?;
        check(name, &outs, &node.metas, changed)?;
        values.push(outs);
    }
    tape.outputs.iter().map(|&r| get(&values, r).map(|(a, _)| a)).collect()
}

/// Whether the rebuilt outputs match the file: same count and dtypes, and the recorded shapes
/// unless the inputs changed shape.
pub(crate) fn check(name: &str, outs: &[Array], metas: &[OutMeta], changed: bool) -> Result<()> {
    let bad = |i: usize, a: &Array, (s, d): &OutMeta| {
        Error::invalid(
            OP,
            format!(
                "The imported graph is inconsistent: '{name}' output {i} is {:?} {} but the file records {:?} {}.",
                a.shape(),
                a.dtype(),
                s,
                d
            ),
        )
    };
    if outs.len() != metas.len() {
        return Err(Error::invalid(OP, format!("The imported graph is inconsistent: '{name}' makes {} outputs, the file records {}.", outs.len(), metas.len())));
    }
    for (i, (a, m)) in outs.iter().zip(metas).enumerate() {
        if a.dtype() != m.1 || (!changed && a.shape() != &m.0[..]) || a.ndim() != m.0.len() {
            return Err(bad(i, a, m));
        }
    }
    Ok(())
}

/// Whether [`build`] infers `prim`'s output shape from its inputs' shapes, so a shapeless
/// compiled replay may rebuild it on inputs of new shapes (the others retrace there).
pub(crate) fn infers_shapes(prim: &Primitive) -> bool {
    matches!(
        prim,
        Primitive::Unary(_)
            | Primitive::Binary(_)
            | Primitive::Select
            | Primitive::Cast(_)
            | Primitive::Reduce(_)
            | Primitive::Sort(_)
            | Primitive::Index(IndexOp::Scatter { .. })
            | Primitive::Linalg(LinalgOp::Matmul | LinalgOp::AddMM { .. } | LinalgOp::Conv(_))
            | Primitive::Fast(ops::fast::FastOp::Softmax)
            | Primitive::Shape(ShapeOp::Transpose(_) | ShapeOp::Copy | ShapeOp::Concatenate(_) | ShapeOp::Diagonal { .. } | ShapeOp::StopGradient | ShapeOp::BroadcastAxes(_))
    )
}

/// Ops whose recorded parameters or output shape hold the trace's shapes.
fn fixes_shape(prim: &Primitive) -> bool {
    matches!(
        prim,
        Primitive::Shape(ShapeOp::Reshape | ShapeOp::Broadcast | ShapeOp::Slice { .. } | ShapeOp::AsStrided { .. })
            | Primitive::Index(IndexOp::Gather { .. })
            | Primitive::Creation(_)
    )
}

/// `args` when there are exactly `n`.
fn exactly<'a>(prim: &Primitive, args: &'a [Array], n: usize) -> Result<&'a [Array]> {
    if args.len() != n {
        return Err(Error::invalid(OP, format!("The imported graph gives '{}' {} inputs; it takes {n}.", prim.name(), args.len())));
    }
    Ok(args)
}

fn isizes(v: &[usize]) -> Vec<isize> {
    v.iter().map(|&d| d as isize).collect()
}

/// One node through its builder. `metas` supply what the primitive does not hold: the target
/// shape of reshape/broadcast, the length of a slice or arange, the dtype of a cast.
pub(crate) fn build(prim: &Primitive, args: &[Array], metas: &[OutMeta]) -> Result<Vec<Array>> {
    let (shape, dtype) = &metas[0];
    let one = |a: Result<Array>| a.map(|a| vec![a]);
    match prim {
        Primitive::Unary(op) => one(ops::unary(*op, &exactly(prim, args, 1)?[0])),
        Primitive::Binary(op) => {
            let a = exactly(prim, args, 2)?;
            one(ops::binary(*op, &a[0], &a[1]))
        }
        Primitive::Select => {
            let a = exactly(prim, args, 3)?;
            one(ops::where_(&a[0], &a[1], &a[2]))
        }
        Primitive::Cast(op) => {
            let a = &exactly(prim, args, 1)?[0];
            one(match op {
                CastOp::AsType => ops::astype(a, *dtype),
                CastOp::View => ops::view(a, *dtype),
            })
        }
        Primitive::Reduce(op) => one(build_reduce(op, &exactly(prim, args, 1)?[0])),
        Primitive::Shape(op) => one(build_shape(prim, op, args, shape)),
        Primitive::Index(IndexOp::Gather { axes, slice_sizes }) => {
            let (a, idx) = args.split_first().ok_or_else(|| Error::invalid(OP, "gather without inputs"))?;
            one(ops::gather(a, idx, &isizes(axes), slice_sizes))
        }
        Primitive::Index(IndexOp::Scatter { axes, mode }) => {
            if args.len() < 2 {
                return Err(Error::invalid(OP, "scatter needs an array and updates"));
            }
            one(ops::scatter_with(&args[0], &args[2..], &args[1], &isizes(axes), *mode))
        }
        Primitive::Sort(op) => one(match op {
            SortOp::Sort { axis } => ops::sort(&exactly(prim, args, 1)?[0], Some(*axis as isize)),
            SortOp::ArgSort { axis } => ops::argsort(&exactly(prim, args, 1)?[0], Some(*axis as isize)),
            SortOp::Partition { kth, axis } => ops::partition(&exactly(prim, args, 1)?[0], *kth as isize, Some(*axis as isize)),
            SortOp::ArgPartition { kth, axis } => ops::argpartition(&exactly(prim, args, 1)?[0], *kth as isize, Some(*axis as isize)),
            SortOp::SearchSorted { right } => {
                let a = exactly(prim, args, 2)?;
                ops::searchsorted(&a[0], &a[1], if *right { "right" } else { "left" })
            }
        }),
        Primitive::Linalg(LinalgOp::Matmul) => {
            let a = exactly(prim, args, 2)?;
            one(ops::matmul(&a[0], &a[1]))
        }
        Primitive::Linalg(LinalgOp::AddMM { alpha, beta }) => {
            let a = exactly(prim, args, 3)?;
            one(ops::addmm(&a[2], &a[0], &a[1], alpha.get() as f32, beta.get() as f32))
        }
        Primitive::Linalg(LinalgOp::Conv(p)) => {
            let a = exactly(prim, args, 2)?;
            let g = isize::try_from(p.groups).map_err(|_| Error::invalid(OP, "conv groups out of range"))?;
            let (s, lo, hi, kd, id) = (isizes(&p.stride), isizes(&p.pad_lo), isizes(&p.pad_hi), isizes(&p.kernel_dilation), isizes(&p.input_dilation));
            one(ops::conv_general(&a[0], &a[1], &s, &lo, &hi, &kd, &id, g, p.flip))
        }
        Primitive::Creation(CreationOp::Arange { start, step }) => {
            exactly(prim, args, 0)?;
            let n = shape.first().copied().unwrap_or(0) as f64;
            // Half a step short of the end: the length comes out as `n` whatever the rounding.
            let (start, step) = (start.get(), step.get());
            one(ops::arange(start, start + step * (n - 0.5), step, *dtype))
        }
        Primitive::Fast(ops::fast::FastOp::Softmax) => {
            let a = exactly(prim, args, 1)?;
            one(ops::fast::softmax_rows(&a[0]))
        }
        Primitive::Quantized(op) => build_quantized(prim, op, args, *dtype),
        // (A file holding one is refused when read, `custom_kernel::refuse_import`; inside an
        // export trace the node is recorded again, as a direct call is.)
        Primitive::Fast(ops::fast::FastOp::MetalKernel(k)) => ops::fast::custom_kernel::record((**k).clone(), args.to_vec(), metas.to_vec()),
        // No wire form (the encoder refuses them), so a decoded file cannot hold them.
        Primitive::Linalg(_) | Primitive::Random(_) | Primitive::Fast(_) | Primitive::Fft(_) | Primitive::Custom(_) | Primitive::Fused(_) | Primitive::FusedReduce(_) => {
            Err(Error::unsupported(OP, format!("'{}' cannot be replayed from a file.", prim.name())))
        }
    }
}

/// A quantized node through its public builder. The recorded inputs are already in the
/// builder's canonical form (cast to the output dtype, batch-broadcast), so the builder adds
/// no node of its own; `dtype` is the recorded output dtype (dequantize's target).
fn build_quantized(prim: &Primitive, op: &QuantizedOp, args: &[Array], dtype: crate::dtype::DType) -> Result<Vec<Array>> {
    let one = |a: Result<Array>| a.map(|a| vec![a]);
    let gb = |g: usize, b: u32| (Some(g as i64), Some(i64::from(b)));
    match op {
        QuantizedOp::Quantize { mode, group_size, bits } => {
            let (g, b) = gb(*group_size, *bits);
            let (w, rest) = args.split_first().ok_or_else(|| Error::invalid(OP, "quantize without inputs"))?;
            ops::quantize(w, g, b, mode.name(), rest.first())
        }
        QuantizedOp::Dequantize { mode, group_size, bits } => {
            let (g, b) = gb(*group_size, *bits);
            if args.len() < 2 || args.len() > 4 {
                return Err(Error::invalid(OP, "The imported graph gives 'dequantize' a wrong number of inputs."));
            }
            let (biases, global) = if mode.is_fp() { (None, args.get(2)) } else { (args.get(2), args.get(3)) };
            one(ops::dequantize(&args[0], &args[1], biases, g, b, mode.name(), global, Some(dtype)))
        }
        QuantizedOp::QuantizedMatmul { mode, group_size, bits, transpose } => {
            let (g, b) = gb(*group_size, *bits);
            let n = if mode.is_fp() { 3 } else { 4 };
            let a = exactly(prim, args, n)?;
            one(ops::quantized_matmul(&a[0], &a[1], &a[2], a.get(3), *transpose, g, b, mode.name()))
        }
        QuantizedOp::GatherQmm { mode, group_size, bits, transpose } => {
            let (g, b) = gb(*group_size, *bits);
            let n = if mode.is_fp() { 5 } else { 6 };
            let a = exactly(prim, args, n)?;
            let biases = if mode.is_fp() { None } else { Some(&a[3]) };
            one(ops::gather_qmm(&a[0], &a[1], &a[2], biases, Some(&a[n - 2]), Some(&a[n - 1]), *transpose, g, b, mode.name(), false))
        }
        QuantizedOp::ToFp8 => one(ops::to_fp8(&exactly(prim, args, 1)?[0])),
        QuantizedOp::FromFp8 => one(ops::from_fp8(&exactly(prim, args, 1)?[0], dtype)),
        QuantizedOp::GgmlMatmul { ty, k } => {
            let a = exactly(prim, args, 2)?;
            one(ops::ggml_matmul(&a[0], &a[1], *ty, *k))
        }
        QuantizedOp::GgmlMatmulMany { tys, k } => {
            let a = exactly(prim, args, tys.len() + 1)?;
            let weights: Vec<(&Array, crate::quant::GgmlType)> = a[1..].iter().zip(tys.iter().copied()).collect();
            ops::ggml_matmul_many(&a[0], &weights, *k)
        }
        QuantizedOp::GgmlDequantize { ty, k } => one(ops::ggml_dequantize(&exactly(prim, args, 1)?[0], *ty, *k)),
        QuantizedOp::GgmlQuantize { ty } => one(ops::ggml_quantize(&exactly(prim, args, 1)?[0], *ty)),
    }
}

fn build_reduce(op: &ReduceOp, a: &Array) -> Result<Array> {
    match op {
        // The primitive keeps the reduced axes (a reshape after it drops them).
        ReduceOp::Reduce { kind, axes } => ops::reduce(*kind, a, Some(&isizes(axes)), true),
        ReduceOp::ArgReduce { max: true, axis } => ops::argmax(a, Some(*axis as isize), true),
        ReduceOp::ArgReduce { max: false, axis } => ops::argmin(a, Some(*axis as isize), true),
        ReduceOp::Scan { kind, axis, reverse, inclusive } => {
            let (ax, r, i) = (Some(*axis as isize), *reverse, *inclusive);
            match kind {
                ScanKind::Sum => ops::cumsum(a, ax, r, i, None),
                ScanKind::Prod => ops::cumprod(a, ax, r, i, None),
                ScanKind::Max => ops::cummax(a, ax, r, i),
                ScanKind::Min => ops::cummin(a, ax, r, i),
                ScanKind::LogAddExp => ops::logcumsumexp(a, ax, r, i),
            }
        }
    }
}

fn build_shape(prim: &Primitive, op: &ShapeOp, args: &[Array], shape: &[usize]) -> Result<Array> {
    match op {
        ShapeOp::Reshape => ops::reshape(&exactly(prim, args, 1)?[0], &isizes(shape)),
        ShapeOp::Transpose(perm) => ops::transpose(&exactly(prim, args, 1)?[0], Some(&isizes(perm))),
        ShapeOp::Broadcast => ops::broadcast_to(&exactly(prim, args, 1)?[0], shape),
        ShapeOp::Slice { start, step } => {
            let a = &exactly(prim, args, 1)?[0];
            if start.len() != a.ndim() || step.len() != a.ndim() || shape.len() != a.ndim() {
                return Err(Error::invalid(OP, "The imported graph has a slice of the wrong rank."));
            }
            // The stop that gives the recorded length: one step past the last element taken
            // (below zero for negative steps, written so the slice does not wrap it).
            let stop = (0..a.ndim())
                .map(|i| {
                    let n = a.shape()[i] as isize;
                    let e = start[i].saturating_add(step[i].saturating_mul(shape[i] as isize));
                    if e < 0 {
                        -n - 1
                    } else {
                        e
                    }
                })
                .collect::<Vec<_>>();
            ops::slice(a, start, &stop, step)
        }
        ShapeOp::AsStrided { strides, offset } => ops::as_strided(&exactly(prim, args, 1)?[0], shape, strides, *offset),
        ShapeOp::Copy => ops::contiguous(&exactly(prim, args, 1)?[0]),
        ShapeOp::Concatenate(axis) => ops::concatenate(args, Some(*axis as isize)),
        ShapeOp::Diagonal { offset, axis1, axis2 } => ops::diagonal(&exactly(prim, args, 1)?[0], *offset, *axis1 as isize, *axis2 as isize),
        ShapeOp::StopGradient => ops::stop_gradient(&exactly(prim, args, 1)?[0]),
        ShapeOp::BroadcastAxes(ignore) => {
            let (a, others) = args.split_first().ok_or_else(|| Error::invalid(OP, "broadcast_axes without inputs"))?;
            crate::ops::shape::broadcast_axes(a, others, ignore)
        }
        ShapeOp::SliceUpdate { .. } | ShapeOp::DynamicSlice { .. } | ShapeOp::DynamicSliceUpdate { .. } | ShapeOp::Depends(_) => {
            Err(Error::unsupported(OP, format!("'{}' cannot be replayed from a file.", prim.name())))
        }
    }
}
