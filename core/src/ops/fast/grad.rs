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

pub(crate) fn vjp(op: &FastOp, inputs: &[Array], g: &Array, needs: &[bool]) -> Result<Grads> {
    let (fun, argnums): (alloc::boxed::Box<dyn Fn(&[Array]) -> Result<Vec<Array>>>, Vec<usize>) = match op {
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
    };
    let argnums: Vec<usize> = argnums.into_iter().filter(|&i| needs[i]).collect();
    let mut out = vec![None; inputs.len()];
    if argnums.is_empty() {
        return Ok(out);
    }
    let grads = crate::transforms::vjp_argnums(&*fun, inputs, &argnums, core::slice::from_ref(g))?;
    for (i, d) in argnums.into_iter().zip(grads) {
        out[i] = Some(d);
    }
    Ok(out)
}
