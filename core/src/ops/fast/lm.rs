//! Fused ops for the language models' decode step (`lm/src/model.rs`): internal to mlx-arm,
//! not MLX API (MLX has no such public ops; mlx-lm gets the same effect from `mx.compile`).
//! A decode step is a few hundred graph nodes of a few hundred elements each, and each node
//! costs a graph node, a scheduling step and an allocation beside its small kernel, so these
//! ops fold chains the model builds on every layer into one node:
//!
//! - [`add_rms_norm`]: the residual add and the next RMSNorm (two outputs: the sum, which the
//!   residual stream goes on with, and the normed sum);
//! - [`decode_heads`]: the query, key and value projections viewed as heads, with RoPE applied
//!   to queries and keys (five nodes at one position: three reshapes, two ropes).
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
use crate::ops::{add, reshape};
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
