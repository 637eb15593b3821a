//! Fused ops for the language models' decode step (`lm/src/model.rs`): internal to mlx-arm,
//! not MLX API (MLX has no such public ops; mlx-lm gets the same effect from `mx.compile`).
//! A decode step is a few hundred graph nodes of a few hundred elements each, and each node
//! costs a graph node, a scheduling step and an allocation beside its small kernel, so these
//! ops fold chains the model builds on every layer into one node:
//!
//! - [`add_rms_norm`]: the residual add and the next RMSNorm (two outputs: the sum, which the
//!   residual stream goes on with, and the normed sum);
//! - [`decode_heads`]: the query, key and value projections viewed as heads, with RoPE applied
//!   to queries and keys (five nodes at one position: three reshapes, two ropes);
//! - [`kv_write`]: a layer's new keys and values written into its KV-cache buffers, and the
//!   filled rows of each as views (four nodes: a `slice_update` and a `slice` of each buffer),
//!   in place where a buffer's only holder is the op, as `slice_update` writes.
//!
//! Each records its fused node where the op is recorded on the CPU (kernels in
//! `cpu/fast/lm.rs`) or on a device whose backend supports it (the Vulkan backend's
//! `lm_ops.rs`), and is otherwise exactly its `*_fallback` twin, the ordinary ops it stands
//! for, so a GPU backend without these primitives runs what it ran before. The fused
//! kernels compute what the fallbacks compute, bit for bit (tests in `core/tests/fast_lm.rs`).
//! Not differentiable or vmappable: the transforms refuse primitives of several outputs with
//! an error (the models never transform them; a user function can call the fallbacks).

use super::{rms_norm, rope, rope_args, FastOp, RopeOffset};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{add, reshape, slice, slice_update};
use crate::primitive::{Primitive, F64};
use alloc::vec::Vec;

/// Whether the fused node `prim` (inputs of `dtypes`) is recorded for the default device: on
/// the CPU (kernels in `cpu/fast/lm.rs`), and elsewhere where the device's backend runs it
/// (the Vulkan backend does); otherwise the ops it stands for are recorded.
fn fused_here(prim: &Primitive, dtypes: &[DType]) -> bool {
    let device = crate::device::default_stream_now().device;
    device.kind == crate::device::DeviceType::Cpu || crate::backend::for_device(device).is_some_and(|b| b.supports(prim, dtypes))
}

/// `[x + r, rms_norm(x + r, weight, eps)]` for `x`, `r` of one shape and float dtype and a 1-D
/// `weight` of their last dimension's size: one node on the CPU where the weight's dtype is
/// theirs (the model's case), else [`add_rms_norm_fallback`].
pub fn add_rms_norm(x: &Array, r: &Array, weight: &Array, eps: f32) -> Result<[Array; 2]> {
    const OP: &str = "add_rms_norm";
    if x.shape() != r.shape() || x.dtype() != r.dtype() {
        return Err(Error::invalid(OP, "the two summands must have one shape and dtype"));
    }
    let dt = x.dtype();
    let last = x.shape().last().copied();
    if x.ndim() == 0 || !dt.is_float() || weight.ndim() != 1 || Some(weight.size()) != last {
        return Err(Error::invalid(OP, "takes float arrays of at least one dimension and a 1-D weight of their last one"));
    }
    let op = FastOp::AddRmsNorm { eps: F64::new(eps as f64) };
    if weight.dtype() != dt || !fused_here(&Primitive::Fast(op.clone()), &[dt, dt, dt]) {
        return add_rms_norm_fallback(x, r, weight, eps);
    }
    let shape = x.shape().to_vec();
    let outs = Array::from_op_multi(Primitive::Fast(op), alloc::vec![x.clone(), r.clone(), weight.clone()], alloc::vec![(shape.clone(), dt), (shape, dt)]);
    pair(outs)
}

/// The ops [`add_rms_norm`] stands for: `add`, then `fast.rms_norm` of the sum.
pub fn add_rms_norm_fallback(x: &Array, r: &Array, weight: &Array, eps: f32) -> Result<[Array; 2]> {
    let s = add(x, r)?;
    let y = rms_norm(&s, Some(weight), eps)?;
    Ok([s, y])
}

fn pair(v: Vec<Array>) -> Result<[Array; 2]> {
    v.try_into().map_err(|_| Error::runtime("add_rms_norm", "wrong number of outputs"))
}

/// RoPE settings of [`decode_heads`], as `fast.rope` takes them.
#[derive(Clone, Copy, Debug)]
pub struct HeadsRope<'a> {
    /// Leading features of each head rotated (even, at most `head_dim`).
    pub dims: usize,
    /// Rotate adjacent pairs (true) or the two halves (false).
    pub traditional: bool,
    /// Frequency base; `None` with `freqs`.
    pub base: Option<f32>,
    /// Position scale.
    pub scale: f32,
    /// The position: an integer scalar, or one per batch entry.
    pub offset: &'a Array,
    /// Per-frequency divisors instead of `base`.
    pub freqs: Option<&'a Array>,
}

/// Queries, keys and values of one position, `(B, 1, H·head_dim)` each (the projections'
/// outputs), as heads `(B, H, 1, head_dim)`, with queries and keys rotated by `fast.rope`:
/// one node on the CPU, else [`decode_heads_fallback`].
pub fn decode_heads(q: &Array, k: &Array, v: &Array, head_dim: usize, rope_: &HeadsRope<'_>) -> Result<[Array; 3]> {
    let shapes = heads_shapes(q, k, v, head_dim, rope_.dims)?;
    let (offset, freqs) = rope_args(q, rope_.dims as isize, rope_.base, &RopeOffset::Array(rope_.offset), rope_.freqs)?;
    let op = FastOp::DecodeHeads {
        head_dim,
        dims: rope_.dims,
        traditional: rope_.traditional,
        base: F64::new(rope_.base.unwrap_or(1.0) as f64),
        scale: F64::new(rope_.scale as f64),
    };
    let mut inputs = alloc::vec![q.clone(), k.clone(), v.clone(), offset];
    inputs.extend(freqs);
    let dtypes: Vec<DType> = inputs.iter().map(|a| a.dtype()).collect();
    if !fused_here(&Primitive::Fast(op.clone()), &dtypes) {
        return decode_heads_fallback(q, k, v, head_dim, rope_);
    }
    let dt = q.dtype();
    let outs = Array::from_op_multi(Primitive::Fast(op), inputs, shapes.into_iter().map(|s| (s, dt)).collect());
    outs.try_into().map_err(|_| Error::runtime("decode_heads", "wrong number of outputs"))
}

/// The ops [`decode_heads`] stands for: a reshape of each to heads, then `fast.rope` of the
/// queries and of the keys.
pub fn decode_heads_fallback(q: &Array, k: &Array, v: &Array, head_dim: usize, rope_: &HeadsRope<'_>) -> Result<[Array; 3]> {
    let shapes = heads_shapes(q, k, v, head_dim, rope_.dims)?;
    let view = |a: &Array, s: &[usize]| reshape(a, &s.iter().map(|&d| d as isize).collect::<Vec<_>>());
    let offset = RopeOffset::Array(rope_.offset);
    let rot = |a: &Array| rope(a, rope_.dims as isize, rope_.traditional, rope_.base, rope_.scale, offset.clone(), rope_.freqs);
    Ok([rot(&view(q, &shapes[0])?)?, rot(&view(k, &shapes[1])?)?, view(v, &shapes[2])?])
}

/// Checks [`decode_heads`]' arguments; the three outputs' shapes.
fn heads_shapes(q: &Array, k: &Array, v: &Array, head_dim: usize, dims: usize) -> Result<[Vec<usize>; 3]> {
    const OP: &str = "decode_heads";
    let mut out: [Vec<usize>; 3] = Default::default();
    for (o, a) in out.iter_mut().zip([q, k, v]) {
        let s = a.shape();
        if a.ndim() != 3 || s[1] != 1 || head_dim == 0 || s[2] % head_dim != 0 || s[0] != q.shape()[0] {
            return Err(Error::invalid(OP, "takes (batch, 1, heads·head_dim) arrays of one batch"));
        }
        if a.dtype() != q.dtype() || !matches!(a.dtype(), DType::Float16 | DType::Bfloat16 | DType::Float32 | DType::Float64) {
            return Err(Error::invalid(OP, "queries, keys and values must share one float dtype"));
        }
        *o = alloc::vec![s[0], s[2] / head_dim, 1, head_dim];
    }
    if dims > head_dim {
        return Err(Error::invalid(OP, "dims must not exceed head_dim"));
    }
    Ok(out)
}

/// `[keys', values', keys'[.., ..end, ..], values'[.., ..end, ..]]` with `end = at + T`:
/// `k`, `v` `(B, H, T, D)` written over rows `at..end` of the cache buffers `kbuf`, `vbuf`
/// `(B, H, capacity, D)` of their dtypes, then each buffer's rows `..end` (what attention
/// reads). One node where [`fused_here`] says so (on the CPU a buffer the op alone holds is
/// written in place), else [`kv_write_fallback`].
pub fn kv_write(kbuf: &Array, vbuf: &Array, k: &Array, v: &Array, at: usize) -> Result<[Array; 4]> {
    let end = kv_check(kbuf, vbuf, k, v, at)?;
    let op = FastOp::KvWrite { at };
    if !fused_here(&Primitive::Fast(op.clone()), &[kbuf.dtype(), vbuf.dtype(), k.dtype(), v.dtype()]) {
        return kv_write_fallback(kbuf, vbuf, k, v, at);
    }
    let filled = |b: &Array| {
        let mut s = b.shape().to_vec();
        s[2] = end;
        (s, b.dtype())
    };
    let metas = alloc::vec![(kbuf.shape().to_vec(), kbuf.dtype()), (vbuf.shape().to_vec(), vbuf.dtype()), filled(kbuf), filled(vbuf)];
    let outs = Array::from_op_multi(Primitive::Fast(op), alloc::vec![kbuf.clone(), vbuf.clone(), k.clone(), v.clone()], metas);
    outs.try_into().map_err(|_| Error::runtime("kv_write", "wrong number of outputs"))
}

/// The ops [`kv_write`] stands for: `slice_update` of each buffer at row `at`, then the
/// `slice` of its rows `..at + T`.
pub fn kv_write_fallback(kbuf: &Array, vbuf: &Array, k: &Array, v: &Array, at: usize) -> Result<[Array; 4]> {
    let end = kv_check(kbuf, vbuf, k, v, at)? as isize;
    let write = |buf: &Array, x: &Array| -> Result<[Array; 2]> {
        let (b, h, d) = (buf.shape()[0] as isize, buf.shape()[1] as isize, buf.shape()[3] as isize);
        let updated = slice_update(buf, x, &[0, 0, at as isize, 0], &[b, h, end, d], &[1, 1, 1, 1])?;
        let filled = slice(&updated, &[0, 0, 0, 0], &[b, h, end, d], &[1, 1, 1, 1])?;
        Ok([updated, filled])
    };
    let ([ku, kf], [vu, vf]) = (write(kbuf, k)?, write(vbuf, v)?);
    Ok([ku, vu, kf, vf])
}

/// Checks [`kv_write`]'s arguments; the end of the written rows.
fn kv_check(kbuf: &Array, vbuf: &Array, k: &Array, v: &Array, at: usize) -> Result<usize> {
    const OP: &str = "kv_write";
    let t = k.shape().get(2).copied().unwrap_or(0);
    for (buf, x) in [(kbuf, k), (vbuf, v)] {
        let (bs, xs) = (buf.shape(), x.shape());
        if buf.ndim() != 4 || x.ndim() != 4 || bs[0] != xs[0] || bs[1] != xs[1] || bs[3] != xs[3] || xs[2] != t {
            return Err(Error::invalid(OP, "takes (B, H, capacity, D) buffers and (B, H, T, D) keys and values of one T"));
        }
        if buf.dtype() != x.dtype() {
            return Err(Error::invalid(OP, "the keys and values must have their buffers' dtypes"));
        }
        if at.checked_add(t).is_none_or(|e| e > bs[2]) {
            return Err(Error::invalid(OP, alloc::format!("rows {at}..{} lie outside a buffer of {}", at.saturating_add(t), bs[2])));
        }
    }
    Ok(at + t)
}
