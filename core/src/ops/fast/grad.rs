//! vjp rules of the fast family: each fused op is differentiated through its composed form
//! (the `*_fallback` of ordinary ops, MLX's semantic reference) — the rule traces the
//! fallback on the op's inputs and takes that graph's vjp.

use super::{
    layer_norm_fallback, rms_norm_fallback, rope_fallback, scaled_dot_product_attention_fallback, softmax_rows_fallback, FastOp,
    RopeOffset, SdpaMask,
};
use crate::array::Array;
use crate::error::Result;
use crate::transforms::rules::Grads;
use alloc::vec;
use alloc::vec::Vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("rms_norm", "yes (through the fallback)"),
    ("layer_norm", "yes (through the fallback)"),
    ("rope", "yes (to x; through the fallback)"),
    ("scaled_dot_product_attention", "yes (to q, k, v; through the fallback)"),
    ("softmax", "yes (through the fallback)"),
];

/// A norm's weight or bias input as the caller gave it: the op stores an absent one as a 0-d
/// constant (1 or 0), which the fallback must see as absent (it checks a given one is 1-D).
fn given(t: &Array) -> Option<&Array> {
    (t.ndim() == 1).then_some(t)
}

/// A fast op's composed form over its recorded inputs, and which inputs are differentiable.
type Fallback = (alloc::boxed::Box<dyn Fn(&[Array]) -> Result<Vec<Array>>>, Vec<usize>);

pub(crate) fn vjp(op: &FastOp, inputs: &[Array], g: &Array, needs: &[bool]) -> Result<Grads> {
    let (fun, argnums) = fallback(op)?;
    // Only the differentiable inputs (not rope's offset or freqs).
    let needs: Vec<bool> = (0..inputs.len()).map(|i| needs[i] && argnums.contains(&i)).collect();
    crate::transforms::rules::through(&*fun, inputs, &needs, g)
}

/// The vmap rule: rope stays one fused node over the batch (its positions run along axis −2,
/// untouched by a new leading axis); the others are vectorized through their fallback.
/// `b[i]` is input `i` batched (batch axis first) where mapped.
pub(crate) fn vmap(op: &FastOp, inputs: &[Array], b: &[Option<Array>], n: usize) -> Result<Vec<Array>> {
    if let FastOp::Rope { .. } = op {
        if b[1..].iter().all(Option::is_none) {
            let x = b[0].clone().ok_or_else(|| crate::error::Error::runtime("rope", "vmap with nothing mapped"))?;
            let mut ins = inputs.to_vec();
            // One offset per sequence (x's axis 0) repeats for every example: the batch joins
            // that axis.
            let per_seq = ins[1].size() > 1;
            let x = if per_seq { crate::ops::flatten(&x, 0, 1)? } else { x };
            if per_seq {
                let mut shape = vec![n];
                shape.extend_from_slice(ins[1].shape());
                ins[1] = crate::ops::flatten(&crate::ops::broadcast_to(&crate::ops::expand_dims(&ins[1], &[0])?, &shape)?, 0, 1)?;
            }
            let shape = x.shape().to_vec();
            let dtype = x.dtype();
            ins[0] = x;
            let y = Array::from_op(crate::primitive::Primitive::Fast(op.clone()), ins, shape, dtype);
            let mut out: Vec<isize> = vec![n as isize];
            out.extend(inputs[0].shape().iter().map(|&d| d as isize));
            return Ok(vec![crate::ops::reshape(&y, &out)?]);
        }
    }
    let (fun, _) = fallback(op)?;
    let ins: Vec<Array> = inputs.iter().zip(b).map(|(x, bx)| bx.clone().unwrap_or_else(|| x.clone())).collect();
    let axes: Vec<i32> = b.iter().map(|bx| if bx.is_some() { 0 } else { -1 }).collect();
    crate::transforms::vmap(&*fun, &ins, &axes, &[])
}

fn fallback(op: &FastOp) -> Result<Fallback> {
    Ok(match op {
        FastOp::RmsNorm { eps } => {
            let eps = eps.get() as f32;
            (alloc::boxed::Box::new(move |v: &[Array]| Ok(vec![rms_norm_fallback(&v[0], given(&v[1]), eps)?])), vec![0, 1])
        }
        FastOp::LayerNorm { eps } => {
            let eps = eps.get() as f32;
            (
                alloc::boxed::Box::new(move |v: &[Array]| Ok(vec![layer_norm_fallback(&v[0], given(&v[1]), given(&v[2]), eps)?])),
                vec![0, 1, 2],
            )
        }
        FastOp::Rope { dims, traditional, base, scale } => {
            let (dims, traditional, base, scale) = (*dims as isize, *traditional, base.get() as f32, scale.get() as f32);
            (
                alloc::boxed::Box::new(move |v: &[Array]| {
                    let freqs = v.get(2);
                    let base = if freqs.is_some() { None } else { Some(base) };
                    Ok(vec![rope_fallback(&v[0], dims, traditional, base, scale, RopeOffset::Array(&v[1]), freqs)?])
                }),
                vec![0],
            )
        }
        FastOp::Softmax => (alloc::boxed::Box::new(|v: &[Array]| Ok(vec![softmax_rows_fallback(&v[0])?])), vec![0]),
        // Several outputs: the transforms refuse these before asking here; the composed ops
        // should that change.
        FastOp::AddRmsNorm { eps } => {
            let eps = eps.get() as f32;
            (alloc::boxed::Box::new(move |v: &[Array]| Ok(super::lm::add_rms_norm_fallback(&v[0], &v[1], &v[2], eps)?.to_vec())), vec![0, 1, 2])
        }
        FastOp::DecodeHeads { head_dim, dims, traditional, base, scale } => {
            let (head_dim, dims, traditional, base, scale) = (*head_dim, *dims, *traditional, base.get() as f32, scale.get() as f32);
            (
                alloc::boxed::Box::new(move |v: &[Array]| {
                    let freqs = v.get(4);
                    let base = if freqs.is_some() { None } else { Some(base) };
                    let r = super::lm::HeadsRope { dims, traditional, base, scale, offset: &v[3], freqs };
                    Ok(super::lm::decode_heads_fallback(&v[0], &v[1], &v[2], head_dim, &r)?.to_vec())
                }),
                vec![0, 1, 2],
            )
        }
        FastOp::KvWrite { at } => {
            let at = *at;
            (alloc::boxed::Box::new(move |v: &[Array]| Ok(super::lm::kv_write_fallback(&v[0], &v[1], &v[2], &v[3], at)?.to_vec())), vec![0, 1, 2, 3])
        }
        FastOp::Sdpa { scale, causal } => {
            let (scale, causal) = (scale.get() as f32, *causal);
            (
                alloc::boxed::Box::new(move |v: &[Array]| {
                    let mask = if causal {
                        SdpaMask::Causal
                    } else if let Some(m) = v.get(3) {
                        SdpaMask::Array(m)
                    } else {
                        SdpaMask::None
                    };
                    Ok(vec![scaled_dot_product_attention_fallback(&v[0], &v[1], &v[2], scale, mask)?])
                }),
                vec![0, 1, 2],
            )
        }
        // No composed form: the kernel is Metal source (and never runs here).
        FastOp::MetalKernel(_) => return Err(super::custom_kernel::eval_refused()),
    })
}
