//! Attention of a block's queries over the keys and values cached so far. Plain layers use
//! the fused `scaled_dot_product_attention`; a sliding-window layer first drops the cached
//! positions no query of this step may see (so its cost stays bounded by the window however
//! long the context grows) and masks the rest of the window when several queries run at once;
//! Gemma 2's soft-capped logits are computed step by step, in mlx-lm's order of operations.

use alloc::vec::Vec;

use mlx_arm_core::ops::{self, SdpaMask};
use mlx_arm_core::{Array, Error, Result};

/// How one layer attends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionSpec {
    /// Factor applied to the queries before `q·k`.
    pub scale: f32,
    /// Logits become `cap · tanh(logits / cap)` before masking and softmax.
    pub softcap: Option<f32>,
    /// Each query sees only the last `window` positions, its own included.
    pub window: Option<usize>,
}

/// Attention of `q` `(B, Hq, T, D)` at positions `offset..offset+T` over `keys`, `values`
/// `(B, Hkv, S, D)` holding positions `first..offset+T` (all positions so far, or what a
/// sliding-window cache kept), causal: `(B, Hq, T, D)`.
pub fn attend(q: &Array, keys: &Array, values: &Array, first: usize, offset: usize, spec: &AttentionSpec) -> Result<Array> {
    if q.ndim() != 4 || keys.ndim() != 4 || values.ndim() != 4 {
        return Err(Error::invalid("attention", "queries, keys and values must be (B, heads, T, head_dim)"));
    }
    let t = q.shape()[2];
    let end = offset + t;
    if first + keys.shape()[2] != end {
        return Err(Error::invalid("attention", "the keys do not cover the positions before the queries"));
    }
    // The first query (position `offset`) sees keys from `offset + 1 - window` on; later
    // queries see fewer of the early ones, which the mask below hides.
    let start = spec.window.map_or(0, |w| (offset + 1).saturating_sub(w));
    if start < first {
        return Err(Error::invalid("attention", "the cache dropped positions the queries still see"));
    }
    let (keys, values) =
        if start > first { (from_row(keys, start - first)?, from_row(values, start - first)?) } else { (keys.clone(), values.clone()) };
    let windowed = spec.window.filter(|&w| t > 1 && end > w);
    let mask = match windowed {
        Some(w) => Some(visibility(offset, t, start, end, Some(w))?),
        // The step-by-step path needs the causal mask as an array; the fused one takes "causal".
        None if t > 1 && spec.softcap.is_some() => Some(visibility(offset, t, start, end, None)?),
        None => None,
    };
    match spec.softcap {
        None => {
            let m = match (&mask, t > 1) {
                (Some(m), _) => SdpaMask::Array(m),
                (None, true) => SdpaMask::Causal,
                (None, false) => SdpaMask::None,
            };
            ops::scaled_dot_product_attention(q, &keys, &values, spec.scale, m)
        }
        Some(cap) => softcapped(q, &keys, &values, spec.scale, cap, mask.as_ref()),
    }
}

/// Rows `row..` of a `(B, H, S, D)` array.
fn from_row(a: &Array, row: usize) -> Result<Array> {
    let s: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
    ops::slice(a, &[0, 0, row as isize, 0], &s, &[1, 1, 1, 1])
}

/// `(T, S)` booleans: query `offset + i` sees key `start + j` (keys up to position `end`) when
/// it is not later and, with a window, less than `window` positions earlier (mlx-lm's
/// `create_causal_mask`).
fn visibility(offset: usize, t: usize, start: usize, end: usize, window: Option<usize>) -> Result<Array> {
    let s = end - start;
    let mut keep = Vec::with_capacity(t * s);
    for i in 0..t {
        let qp = offset + i;
        for j in 0..s {
            let kp = start + j;
            keep.push(kp <= qp && window.is_none_or(|w| qp - kp < w));
        }
    }
    Array::from_slice(&keep, &[t, s])
}

/// mlx-lm's Gemma 2 attention: `softmax(cap · tanh((q·scale)·kᵀ / cap))·v`, the query heads
/// grouped over their shared KV head.
fn softcapped(q: &Array, keys: &Array, values: &Array, scale: f32, cap: f32, mask: Option<&Array>) -> Result<Array> {
    let (b, hq, t, d) = (q.shape()[0], q.shape()[1], q.shape()[2], q.shape()[3]);
    let hkv = keys.shape()[1];
    if hkv == 0 || hq % hkv != 0 || keys.shape()[3] != d || values.shape()[1] != hkv {
        return Err(Error::invalid("attention", "query heads must be a multiple of the key/value heads"));
    }
    let q = ops::multiply(q, &Array::scalar(scale)?)?;
    let q = ops::reshape(&q, &[b as isize, hkv as isize, (hq / hkv) as isize, t as isize, d as isize])?;
    let k = ops::expand_dims(keys, &[2])?;
    let v = ops::expand_dims(values, &[2])?;
    let scores = ops::matmul(&q, &ops::swapaxes(&k, -1, -2)?)?;
    let cap = Array::scalar(cap)?;
    let scores = ops::multiply(&ops::tanh(&ops::divide(&scores, &cap)?)?, &cap)?;
    let scores = match mask {
        Some(m) => ops::where_(m, &scores, &Array::scalar(f32::MIN)?)?,
        None => scores,
    };
    let p = ops::softmax(&scores, Some(&[-1]), true)?;
    let o = ops::matmul(&p, &v)?;
    ops::reshape(&o, &[b as isize, hq as isize, t as isize, d as isize])
}
