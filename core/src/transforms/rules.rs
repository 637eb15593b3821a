//! Dispatch of the per-primitive vjp rules (written beside each op family in
//! `ops/<family>/grad.rs`), plus the table `docs/GRAD.md` is generated from.
//!
//! A rule gets the op's inputs, its output, the output's cotangent and which inputs need a
//! cotangent; it returns one optional cotangent per input (`None`: nothing flows there, e.g.
//! index or boolean inputs). Rules are built from ordinary ops, so they are differentiable in
//! turn wherever their ops have rules (second derivatives, `jvp`).

use crate::array::Array;
use crate::element::Value;
use crate::error::{Error, Result};
use crate::ops;
use crate::ops::shape::ShapeOp;
use crate::primitive::Primitive;
use alloc::format;
use alloc::vec::Vec;

/// Cotangents for an op's inputs: one entry per input.
pub(crate) type Grads = Vec<Option<Array>>;

/// The error for a primitive without a rule (never a silent zero or wrong gradient).
pub(crate) fn unsupported(name: &'static str) -> Error {
    Error::unsupported(name, format!("The vjp (gradient) of {name} is not supported yet."))
}

/// MLX's error for a primitive it gives no vjp (its `Primitive::vjp`), `mlx_name` the class
/// name MLX prints: a gradient MLX refuses is refused here with the same words.
pub(crate) fn not_in_mlx(mlx_name: &str) -> Error {
    Error::invalid("Primitive::vjp", format!("Not implemented for {mlx_name}."))
}

/// MLX's class name of a primitive MLX has no vjp for (`None`: MLX has one, or it is ours).
fn mlx_without_vjp(prim: &Primitive) -> Option<&'static str> {
    use crate::ops::linalg::LinalgOp;
    use crate::ops::quantized::QuantizedOp;
    match prim {
        Primitive::Linalg(op) => match op {
            LinalgOp::SingularValues | LinalgOp::Svd => Some("SVD"),
            LinalgOp::Inverse { .. } => Some("Inverse"),
            LinalgOp::Cholesky { .. } => Some("Cholesky"),
            LinalgOp::Qr => Some("QRF"),
            LinalgOp::Eigh { .. } => Some("Eigh"),
            LinalgOp::Eig { .. } => Some("Eig"),
            LinalgOp::Lu => Some("LUF"),
            _ => None,
        },
        Primitive::Quantized(QuantizedOp::ToFp8) => Some("ToFP8"),
        Primitive::Quantized(QuantizedOp::FromFp8) => Some("FromFP8"),
        _ => None,
    }
}

/// A 0-d constant of `like`'s dtype (so rules do not promote float16 cotangents to float32).
pub(crate) fn scalar(v: f64, like: &Array) -> Result<Array> {
    Array::from_value(Value::F(v), like.dtype())
}

/// The cotangents of an op's `needs` inputs through `fun`, a composed form of the op (its
/// fallback, or the ops a fused node stands for), with `g` the cotangent of its one output.
pub(crate) fn through(fun: crate::transforms::Fun<'_>, inputs: &[Array], needs: &[bool], g: &Array) -> Result<Grads> {
    let argnums: Vec<usize> = (0..inputs.len()).filter(|&i| needs.get(i) == Some(&true)).collect();
    let mut out = alloc::vec![None; inputs.len()];
    if argnums.is_empty() {
        return Ok(out);
    }
    let grads = crate::transforms::vjp_argnums(fun, inputs, &argnums, core::slice::from_ref(g))?;
    for (i, d) in argnums.into_iter().zip(grads) {
        out[i] = Some(d);
    }
    Ok(out)
}

/// The vjp of one recorded op. `outputs` and `cotangents` have one entry per output of the op
/// (`None`: the output is gone or receives nothing).
pub(crate) fn vjp(
    prim: &Primitive,
    inputs: &[Array],
    outputs: &[Option<Array>],
    cotangents: &[Option<Array>],
    needs: &[bool],
) -> Result<Grads> {
    if let Some(name) = mlx_without_vjp(prim) {
        return Err(not_in_mlx(name));
    }
    // Multi-output primitives first.
    if let Primitive::Shape(ShapeOp::Depends(n)) = prim {
        // Outputs are the first n inputs unchanged; the rest are ordering-only.
        let mut g: Grads = cotangents.iter().take(*n).cloned().collect();
        g.resize(inputs.len(), None);
        return Ok(g);
    }
    if let Primitive::Custom(op) = prim {
        return op.vjp(inputs, outputs, cotangents, needs);
    }
    if let Primitive::Quantized(ops::quantized::QuantizedOp::Quantize { mode, group_size, bits }) = prim {
        return ops::quantized::grad::quantize_vjp(*mode, *group_size, *bits, inputs, cotangents, needs);
    }
    if outputs.len() != 1 {
        return Err(unsupported(prim.name()));
    }
    let (Some(out), Some(cot)) = (&outputs[0], &cotangents[0]) else {
        return Ok(alloc::vec![None; inputs.len()]);
    };
    match prim {
        Primitive::Unary(op) => ops::unary::grad::vjp(*op, inputs, out, cot),
        Primitive::Binary(op) => ops::binary::grad::vjp(*op, inputs, out, cot, needs),
        Primitive::Select => ops::binary::grad::select_vjp(inputs, cot),
        Primitive::Cast(op) => ops::cast::vjp(op, inputs, cot),
        Primitive::Reduce(op) => ops::reduce::grad::vjp(op, inputs, out, cot),
        Primitive::Shape(op) => ops::shape::grad::vjp(op, inputs, out, cot, needs),
        Primitive::Index(op) => ops::index::grad::vjp(op, inputs, out, cot, needs),
        Primitive::Linalg(op) => ops::linalg::grad::vjp(op, inputs, cot, needs),
        Primitive::Fast(op) => ops::fast::grad::vjp(op, inputs, cot, needs),
        Primitive::Sort(op) => ops::sort::grad::vjp(op, inputs, cot),
        // Outputs of these carry no gradient back to float inputs (creation has no inputs;
        // random draws depend on their key only).
        Primitive::Creation(_) => Ok(alloc::vec![None; inputs.len()]),
        Primitive::Random(_) => Ok(alloc::vec![None; inputs.len()]),
        Primitive::Quantized(op) => ops::quantized::grad::vjp(op, inputs, cot, needs),
        Primitive::Fft(op) => ops::fft::grad::vjp(op, inputs, cot),
        Primitive::Custom(_) => Err(unsupported(prim.name())), // handled above (several outputs)
        // A fused chain differentiates as the ordinary ops it stands for.
        Primitive::Fused(op) => through(&|xs: &[Array]| Ok(alloc::vec![op.expand(xs)?]), inputs, needs, cot),
        Primitive::FusedReduce(op) => through(&|xs: &[Array]| Ok(alloc::vec![op.expand(xs)?]), inputs, needs, cot),
    }
}

/// Whether a gradient rule exists, per primitive name: `(family, name, vjp, jvp)`. `jvp` is
/// available wherever the vjp exists and is itself differentiable — it is computed by
/// transposing the vjp (see [`crate::transforms::jvp`]). `docs/GRAD.md` is generated from it.
pub fn table() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut t = Vec::new();
    for op in ops::unary::UnaryOp::ALL {
        t.push(("unary", op.name(), ops::unary::grad::status(*op)));
    }
    for op in ops::binary::BinaryOp::ALL {
        t.push(("binary", op.name(), ops::binary::grad::status(*op)));
    }
    t.push(("binary", "select (where)", "yes"));
    t.push(("cast", "astype", "yes (to floating inputs; none to integers)"));
    t.push(("cast", "view", "no: as MLX (`[Primitive::vjp] Not implemented for View int32.`)"));
    for (name, s) in ops::reduce::grad::STATUS {
        t.push(("reduce", name, s));
    }
    for (name, s) in ops::shape::grad::STATUS {
        t.push(("shape", name, s));
    }
    for (name, s) in ops::index::grad::STATUS {
        t.push(("index", name, s));
    }
    for (name, s) in ops::linalg::grad::STATUS {
        t.push(("linalg", name, s));
    }
    for (name, s) in ops::fast::grad::STATUS {
        t.push(("fast", name, s));
    }
    t.push(("creation", "arange …", "zero (no float inputs)"));
    t.push(("random", "bits …", "zero (depends on the key only)"));
    for (name, s) in ops::sort::grad::STATUS {
        t.push(("sort", name, s));
    }
    t.push(("fft", "fft, ifft, rfft, irfft (each axis)", "yes"));
    for (name, s) in ops::quantized::grad::STATUS {
        t.push(("quantized", name, s));
    }
    t.push(("fused", "compiled (elementwise chains fused by compile)", "yes (as the ops it fuses)"));
    t
}
