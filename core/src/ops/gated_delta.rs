//! `mx.fast.gated_delta_update`: the gated delta rule (the linear-attention recurrence of
//! Qwen3-Next / Qwen3.5 "linear attention" layers), composed of ordinary ops one time step at a
//! time, which is how MLX 0.32.4 evaluates it on its CPU (its fused kernels are Metal/CUDA).
//! Being a composition it differentiates, vectorizes and compiles like any other graph.
//!
//! Shapes: `q`, `k` `(B, T, Hk, Dk)`; `v` `(B, T, Hv, Dv)` with `Hv` a multiple of `Hk` (each
//! query/key head serves `Hv / Hk` value heads); `g` (decay, linear space) `(B, T, Hv)` or per
//! key channel `(B, T, Hv, Dk)`; `beta` `(B, T, Hv)`; the state `(B, Hv, Dv, Dk)`, zeros when
//! none is given. Per step `t`, with the state `S`:
//!
//! ```text
//! S ← S · g_t
//! δ = (v_t − S k_t) · β_t
//! S ← S + δ k_tᵀ
//! y_t = S q_t
//! ```
//!
//! A `mask` `(B, T)` (any dtype, nonzero = keep) skips steps: a masked step leaves the state
//! as it was and outputs zeros. As in MLX, the state is carried and returned in float32 and `y`
//! has the promoted type of `q` and `k`.

use alloc::format;
use alloc::vec::Vec;

use crate::array::Array;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::{
    add, astype, expand_dims, multiply, not_equal, repeat, slice, squeeze, stack, subtract, sum, where_, zeros,
};
use crate::shape::fmt_shape;

const OP: &str = "gated_delta_update";

/// `mx.fast.gated_delta_update(q, k, v, g, beta, initial_state=None, mask=None)`: returns
/// `[y (B, T, Hv, Dv), final state (B, Hv, Dv, Dk)]`.
pub fn gated_delta_update(
    q: &Array,
    k: &Array,
    v: &Array,
    g: &Array,
    beta: &Array,
    initial_state: Option<&Array>,
    mask: Option<&Array>,
) -> Result<Vec<Array>> {
    let dims = check_shapes(q, k, v, g, beta, initial_state, mask)?;
    let Dims { b, t, hk, hv, dk, dv } = dims;
    let out_type = promote_types(q.dtype(), k.dtype());
    let mut state = match initial_state {
        Some(s) => astype(s, DType::Float32)?,
        None => zeros(&[b, hv, dv, dk], DType::Float32)?,
    };
    // Each query/key head serves `hv / hk` consecutive value heads.
    let (q, k) = if hv > hk {
        let r = (hv / hk) as isize;
        (repeat(q, r, Some(2))?, repeat(k, r, Some(2))?)
    } else {
        (q.clone(), k.clone())
    };
    let keep = mask.map(|m| not_equal(m, &Array::scalar(0.0f32)?)).transpose()?;
    let mut ys = Vec::with_capacity(t);
    for i in 0..t {
        let (qt, kt, vt, gt, bt) = (at(&q, i)?, at(&k, i)?, at(v, i)?, at(g, i)?, at(beta, i)?);
        // (B, Hv) → (B, Hv, 1, 1); per key channel (B, Hv, Dk) → (B, Hv, 1, Dk).
        let decay = if gt.ndim() == 2 { expand_dims(&gt, &[-1, -2])? } else { expand_dims(&gt, &[-2])? };
        let k_row = expand_dims(&kt, &[-2])?; // (B, Hv, 1, Dk)
        let decayed = multiply(&state, &decay)?;
        let kv_mem = sum(&multiply(&decayed, &k_row)?, Some(&[-1]), false)?; // (B, Hv, Dv)
        let delta = multiply(&subtract(&vt, &kv_mem)?, &expand_dims(&bt, &[-1])?)?;
        let updated = add(&decayed, &multiply(&k_row, &expand_dims(&delta, &[-1])?)?)?;
        let y = sum(&multiply(&updated, &expand_dims(&qt, &[-2])?)?, Some(&[-1]), false)?; // (B, Hv, Dv)
        let y = astype(&y, out_type)?;
        match &keep {
            Some(keep) => {
                let kt_mask = at(keep, i)?; // (B,)
                let step_kept = expand_dims(&kt_mask, &[-1, -2, -3])?;
                state = where_(&step_kept, &updated, &state)?;
                ys.push(where_(&expand_dims(&kt_mask, &[-1, -2])?, &y, &zeros(&[], out_type)?)?);
            }
            None => {
                state = updated;
                ys.push(y);
            }
        }
    }
    let y = if ys.is_empty() { zeros(&[b, 0, hv, dv], out_type)? } else { stack(&ys, 1)? };
    Ok(alloc::vec![y, state])
}

struct Dims {
    b: usize,
    t: usize,
    hk: usize,
    hv: usize,
    dk: usize,
    dv: usize,
}

/// Checks every shape against `q`'s and `v`'s, with a message that names the argument.
fn check_shapes(
    q: &Array,
    k: &Array,
    v: &Array,
    g: &Array,
    beta: &Array,
    state: Option<&Array>,
    mask: Option<&Array>,
) -> Result<Dims> {
    let want = |name: &str, a: &Array, shape: &[usize]| -> Result<()> {
        if a.shape() == shape {
            Ok(())
        } else {
            Err(Error::invalid(OP, format!("{name} must have shape {} but has shape {}.", fmt_shape(shape), fmt_shape(a.shape()))))
        }
    };
    if q.ndim() != 4 || v.ndim() != 4 {
        return Err(Error::invalid(
            OP,
            format!("q, k and v must be (B, T, H, D) arrays, got q {} and v {}.", fmt_shape(q.shape()), fmt_shape(v.shape())),
        ));
    }
    let (b, t, hk, dk) = (q.shape()[0], q.shape()[1], q.shape()[2], q.shape()[3]);
    let (hv, dv) = (v.shape()[2], v.shape()[3]);
    want("k", k, q.shape())?;
    want("v", v, &[b, t, hv, dv])?;
    if hk == 0 || hv % hk != 0 || hv < hk {
        return Err(Error::invalid(OP, format!("the value heads ({hv}) must be a positive multiple of the key heads ({hk}).")));
    }
    if g.ndim() == 4 {
        want("g", g, &[b, t, hv, dk])?;
    } else {
        want("g", g, &[b, t, hv])?;
    }
    want("beta", beta, &[b, t, hv])?;
    if let Some(s) = state {
        want("initial_state", s, &[b, hv, dv, dk])?;
    }
    if let Some(m) = mask {
        want("mask", m, &[b, t])?;
    }
    Ok(Dims { b, t, hk, hv, dk, dv })
}

/// `x[:, i]` (axis 1 dropped).
fn at(x: &Array, i: usize) -> Result<Array> {
    let mut start = alloc::vec![0isize; x.ndim()];
    let mut stop: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    start[1] = i as isize;
    stop[1] = i as isize + 1;
    squeeze(&slice(x, &start, &stop, &alloc::vec![1; x.ndim()])?, Some(&[1]))
}
