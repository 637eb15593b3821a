//! What `mx.export_function(callback, fun, ...)` hands its callback: a traced function as a
//! sequence of events — its inputs, keyword inputs, outputs, captured constants, then each
//! primitive in topological order with its inputs and outputs — as MLX's exporter reports
//! them (docs/EXPORT.md). Arrays are named as MLX names them: inputs first (`A`, `B`, …), then
//! the outputs, the constants, and each primitive's new outputs in order.
//!
//! The events are written as JSON (the front end turns them into its own objects); constant
//! arrays travel separately and are referred to by index. Primitives carry MLX's class name
//! (`Subtract`, `AsType`, …) and, for the primitives whose MLX state has a meaning here, its
//! arguments: `Log` its base, `AsType`/`View` the dtype, `Reduce` its type and axes,
//! `Reshape`/`Broadcast` the shape, `Transpose` the permutation, `Concatenate` the axis.
//! Other primitives list no arguments; our graph can also differ from MLX's in its ops
//! (mlx-arm keeps reductions' axes and reshapes after them where MLX squeezes).

use super::Trace;
use crate::array::Array;
use crate::dtype::DType;
use crate::graph_utils::letters;
use crate::error::Result;
use crate::ops::binary::BinaryOp;
use crate::ops::cast::CastOp;
use crate::ops::linalg::LinalgOp;
use crate::ops::reduce::{ReduceKind, ReduceOp};
use crate::ops::shape::ShapeOp;
use crate::ops::unary::UnaryOp;
use crate::primitive::Primitive;
use crate::transforms::compile::tape::Ref;
use crate::transforms::Fun;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

/// A trace's events as JSON (a list of objects) and the constants they refer to by index.
#[derive(Debug)]
pub struct Listing {
    /// `[{"type": "inputs", ...}, ...]`; see the module comment.
    pub json: String,
    /// The captured constants (`{"type": "constants"}` lists `[name, index]` pairs).
    pub constants: Vec<Array>,
}

/// Traces `fun` on `args` and sorted `kwargs` (as [`super::ExportedFunction::add`] does,
/// without requiring a file form for every primitive) and lists the trace.
pub fn list(fun: Fun<'_>, args: &[Array], kwargs: &[(String, Array)], shapeless: bool) -> Result<Listing> {
    let trace = Trace::record(fun, args, kwargs, shapeless)?;
    Ok(Listing { json: events(&trace), constants: trace.tape.consts.clone() })
}

/// Names values in MLX's order (`A` … `Z`, `AA`, …).
#[derive(Default)]
struct Names(BTreeMap<Ref, String>);

impl Names {
    fn get(&mut self, r: Ref) -> String {
        let next = self.0.len() + 1;
        self.0.entry(r).or_insert_with(|| letters(next)).clone()
    }
}

/// A JSON string literal.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn ints(out: &mut String, v: impl IntoIterator<Item = i64>) {
    out.push('[');
    for (i, x) in v.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
    out.push(']');
}

/// `[name, [shape], "dtype"]` for each value.
fn values(out: &mut String, names: &mut Names, vals: &[(Ref, &[usize], DType)]) {
    out.push('[');
    for (i, (r, shape, dtype)) in vals.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        quote(out, &names.get(*r));
        out.push(',');
        ints(out, shape.iter().map(|&d| d as i64));
        out.push(',');
        quote(out, dtype.name());
        out.push(']');
    }
    out.push(']');
}

/// One argument of a primitive: an integer, a list, a shape (`{"shape": [...]}`, a tuple in
/// Python) or a dtype (`{"dtype": "int32"}`).
enum Arg {
    Int(i64),
    List(Vec<i64>),
    Shape(Vec<usize>),
    Dtype(DType),
    Str(String),
    Bool(bool),
    /// A list of tuples of flags (MLX's `CustomKernel` shape infos).
    Flags(Vec<[bool; 3]>),
}

fn write_args(out: &mut String, args: &[Arg]) {
    out.push('[');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match a {
            Arg::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Arg::List(v) => ints(out, v.iter().copied()),
            Arg::Shape(v) => {
                out.push_str("{\"shape\":");
                ints(out, v.iter().map(|&d| d as i64));
                out.push('}');
            }
            Arg::Dtype(d) => {
                out.push_str("{\"dtype\":");
                quote(out, d.name());
                out.push('}');
            }
            Arg::Str(v) => quote(out, v),
            Arg::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Arg::Flags(v) => {
                out.push_str("{\"tuples\":[");
                for (j, f) in v.iter().enumerate() {
                    let _ = write!(out, "{}[{},{},{}]", if j > 0 { "," } else { "" }, f[0], f[1], f[2]);
                }
                out.push_str("]}");
            }
        }
    }
    out.push(']');
}

/// `snake_case` as `CamelCase` (MLX's class names are mostly our op names so spelled).
fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

use alloc::string::ToString;

/// MLX's class name of the node computing `out_shape` from inputs of `in_shapes` with `prim`
/// (what `export_to_dot` labels it with). A fused node is named as MLX names its `Compiled`
/// primitive: `Compiled` then the class names of the ops it computes in order, each input the
/// kernel broadcasts counted as a `Broadcast` where it is first read (MLX fuses the
/// broadcast node there), so `x + broadcast_to(y, s) * z` is `CompiledBroadcastMultiplyAdd`.
pub(crate) fn class_name(prim: &Primitive, in_shapes: &[&[usize]], out_shape: &[usize]) -> String {
    // A fused reduction: its chain's name (over the chain's broadcast shape), then MLX's
    // class of the reduction it ends in (`CompiledMultiplyReduce`).
    let (op, reduce, out_shape) = match prim {
        Primitive::Fused(op) => (&**op, None, out_shape),
        Primitive::FusedReduce(r) => (&r.program, Some(r.kind), &*chain_shape(in_shapes, out_shape)),
        _ => return mlx_name(prim, out_shape, DType::Float32).0,
    };
    let mut name = String::from("Compiled");
    let mut seen = alloc::vec![false; op.n_inputs];
    for step in &op.steps {
        for &r in &step.args {
            if r < op.n_inputs && !seen[r] {
                seen[r] = true;
                if in_shapes.get(r).is_some_and(|s| *s != out_shape) {
                    name.push_str("Broadcast");
                }
            }
        }
        name.push_str(&mlx_name(&step.prim, out_shape, step.dtype).0);
    }
    if let Some(kind) = reduce {
        let r = Primitive::Reduce(crate::ops::reduce::ReduceOp::Reduce { kind, axes: Vec::new() });
        name.push_str(&mlx_name(&r, out_shape, DType::Float32).0);
    }
    name
}

/// The broadcast shape of a fused reduction's inputs (its chain's shape), else `out`.
fn chain_shape(in_shapes: &[&[usize]], out: &[usize]) -> Vec<usize> {
    crate::ops::fused::broadcast_all(in_shapes.iter().copied(), "compiled").unwrap_or_else(|_| out.to_vec())
}

/// MLX's class name of `prim` and the arguments its `state()` gives, where we know them.
fn mlx_name(prim: &Primitive, out_shape: &[usize], out_dtype: DType) -> (String, Vec<Arg>) {
    let named = |s: &str| (String::from(s), Vec::new());
    match prim {
        Primitive::Unary(op) => match op {
            // MLX's `Log` holds its base: 2, 10 or e (its enum's 0, 1, 2).
            UnaryOp::Log2 => (String::from("Log"), alloc::vec![Arg::Int(0)]),
            UnaryOp::Log10 => (String::from("Log"), alloc::vec![Arg::Int(1)]),
            UnaryOp::Log => (String::from("Log"), alloc::vec![Arg::Int(2)]),
            UnaryOp::Erfinv => named("ErfInv"),
            op => match op.name().strip_prefix("arc") {
                Some(rest) => (String::from("Arc") + &camel(rest), Vec::new()),
                None => (camel(op.name()), Vec::new()),
            },
        },
        Primitive::Binary(op) => match op {
            BinaryOp::LogAddExp => named("LogAddExp"),
            BinaryOp::Arctan2 => named("ArcTan2"),
            op => (camel(op.name()), Vec::new()),
        },
        Primitive::Select => named("Select"),
        Primitive::Cast(CastOp::AsType) => (String::from("AsType"), alloc::vec![Arg::Dtype(out_dtype)]),
        Primitive::Cast(CastOp::View) => (String::from("View"), alloc::vec![Arg::Dtype(out_dtype)]),
        Primitive::Reduce(ReduceOp::Reduce { kind, axes }) => {
            // MLX's `Reduce::ReduceType`: And, Or, Sum, Prod, Min, Max.
            let t = match kind {
                ReduceKind::All => 0,
                ReduceKind::Any => 1,
                ReduceKind::Sum => 2,
                ReduceKind::Prod => 3,
                ReduceKind::Min => 4,
                ReduceKind::Max => 5,
            };
            (String::from("Reduce"), alloc::vec![Arg::Int(t), Arg::List(axes.iter().map(|&a| a as i64).collect())])
        }
        Primitive::Reduce(ReduceOp::ArgReduce { .. }) => named("ArgReduce"),
        Primitive::Reduce(ReduceOp::Scan { .. }) => named("Scan"),
        Primitive::Shape(op) => match op {
            ShapeOp::Reshape => (String::from("Reshape"), alloc::vec![Arg::Shape(out_shape.to_vec())]),
            ShapeOp::Broadcast => (String::from("Broadcast"), alloc::vec![Arg::Shape(out_shape.to_vec())]),
            ShapeOp::Transpose(perm) => (String::from("Transpose"), alloc::vec![Arg::List(perm.iter().map(|&a| a as i64).collect())]),
            ShapeOp::Concatenate(axis) => (String::from("Concatenate"), alloc::vec![Arg::Int(*axis as i64)]),
            ShapeOp::BroadcastAxes(ignore) => (String::from("BroadcastAxes"), alloc::vec![Arg::List(ignore.iter().map(|&a| a as i64).collect())]),
            ShapeOp::Copy => named("Copy"),
            ShapeOp::AsStrided { .. } => named("AsStrided"),
            ShapeOp::SliceUpdate { .. } => named("SliceUpdate"),
            ShapeOp::DynamicSlice { .. } => named("DynamicSlice"),
            ShapeOp::DynamicSliceUpdate { .. } => named("DynamicSliceUpdate"),
            op => (camel(op.name()), Vec::new()),
        },
        Primitive::Linalg(LinalgOp::Matmul) => named("Matmul"),
        Primitive::Linalg(LinalgOp::AddMM { .. }) => named("AddMM"),
        Primitive::Linalg(LinalgOp::Conv(_)) => named("Convolution"),
        Primitive::Quantized(crate::ops::quantized::QuantizedOp::QuantizedMatmul { .. }) => named("QuantizedMatmul"),
        Primitive::Quantized(crate::ops::quantized::QuantizedOp::GatherQmm { .. }) => named("GatherQMM"),
        Primitive::Fused(_) => named("Compiled"),
        // MLX's state: name, source, grid, threadgroup, shape infos, row-contiguity, scalar
        // arguments (none from Python), precompiled (no), shared memory (0), math mode.
        Primitive::Fast(crate::ops::fast::FastOp::MetalKernel(k)) => {
            let mut args = alloc::vec![Arg::Str(k.name.clone()), Arg::Str(k.source.clone())];
            args.extend(k.grid.iter().chain(&k.threadgroup).map(|&v| Arg::Int(i64::from(v))));
            args.extend([
                Arg::Flags(k.shape_infos.clone()),
                Arg::Bool(k.ensure_row_contiguous),
                Arg::List(Vec::new()),
                Arg::Bool(false),
                Arg::Int(0),
                Arg::Int(i64::from(k.math_mode)),
            ]);
            (String::from("CustomKernel"), args)
        }
        p => (camel(p.name()), Vec::new()),
    }
}

/// The JSON events of `t`.
fn events(t: &Trace) -> String {
    let tape = &t.tape;
    let mut names = Names::default();
    let mut out = String::from("[");
    let meta_of = |r: Ref| -> (Vec<usize>, DType) {
        match r {
            Ref::Input(i) => (tape.input_shapes.get(i).cloned().unwrap_or_default(), t.input_dtypes.get(i).copied().unwrap_or(DType::Float32)),
            Ref::Const(i) => tape.consts.get(i).map_or((Vec::new(), DType::Float32), |c| (c.shape().to_vec(), c.dtype())),
            Ref::Node(k, j) => tape.nodes.get(k).and_then(|n| n.metas.get(j)).cloned().unwrap_or((Vec::new(), DType::Float32)),
        }
    };
    let list = |names: &mut Names, out: &mut String, refs: &[Ref]| {
        let metas: Vec<(Ref, Vec<usize>, DType)> = refs.iter().map(|&r| {
            let (s, d) = meta_of(r);
            (r, s, d)
        }).collect();
        let vals: Vec<(Ref, &[usize], DType)> = metas.iter().map(|(r, s, d)| (*r, &s[..], *d)).collect();
        values(out, names, &vals);
    };
    let inputs: Vec<Ref> = (0..tape.n_inputs).map(Ref::Input).collect();
    out.push_str("{\"type\":\"inputs\",\"inputs\":");
    // Keyword inputs are listed (and named) with the positional ones, as MLX does.
    list(&mut names, &mut out, &inputs);
    let kw_refs = &inputs[t.n_args.min(inputs.len())..];
    out.push_str("},{\"type\":\"keyword_inputs\",\"keywords\":[");
    for (i, (k, &r)) in t.kwarg_names.iter().zip(kw_refs).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        quote(&mut out, k);
        out.push(',');
        quote(&mut out, &names.get(r));
        out.push(']');
    }
    out.push_str("]},{\"type\":\"outputs\",\"outputs\":");
    list(&mut names, &mut out, &tape.outputs);
    out.push_str("},{\"type\":\"constants\",\"constants\":[");
    for i in 0..tape.consts.len() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        quote(&mut out, &names.get(Ref::Const(i)));
        let _ = write!(out, ",{i}]");
    }
    out.push_str("]}");
    for (k, n) in tape.nodes.iter().enumerate() {
        let (name, args) = n.metas.first().map_or_else(|| mlx_name(&n.prim, &[], DType::Float32), |(s, d)| mlx_name(&n.prim, s, *d));
        out.push_str(",{\"type\":\"primitive\",\"name\":");
        quote(&mut out, &name);
        out.push_str(",\"arguments\":");
        write_args(&mut out, &args);
        out.push_str(",\"inputs\":");
        list(&mut names, &mut out, &n.inputs);
        out.push_str(",\"outputs\":");
        let outs: Vec<Ref> = (0..n.metas.len()).map(|j| Ref::Node(k, j)).collect();
        list(&mut names, &mut out, &outs);
        out.push('}');
    }
    out.push(']');
    out
}
