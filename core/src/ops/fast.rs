//! `mx.fast`: the fused LLM ops — rms_norm, layer_norm, rope, scaled_dot_product_attention —
//! and the fused last-axis softmax that `mx.softmax` records on the CPU.
//! Each public function validates like MLX 0.32 (`mlx/fast.cpp`, same messages) and records a
//! fused [`FastOp`] node (kernels in `cpu/fast.rs`); each also has a `*_fallback` twin built
//! from ordinary ops exactly as MLX's fallback lambdas build it. Real MLX evaluates the
//! fallback on its CPU, so the fallback is the semantic reference: the fused kernels reproduce
//! its arithmetic (f32 compute, rounding to the output dtype at the same steps) and tests check
//! fused == fallback tightly and both against MLX goldens.

pub(crate) mod grad;
pub mod lm;
pub mod custom_kernel;

use crate::array::Array;
use crate::dtype::{finfo, promote_types, result_type, DType};
use crate::error::{Error, Result};
use crate::ops::{
    add, arange, astype, concatenate, cos, exp, expand_dims, flatten, greater_equal, matmul, mean,
    multiply, reciprocal, reshape, rsqrt, sin, slice, softmax, square, subtract, swapaxes, unflatten, where_,
};
use crate::primitive::{Primitive, F64};
use crate::shape::fmt_shape;
use alloc::format;
use alloc::vec::Vec;

/// The fast family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FastOp {
    /// Inputs: x (output dtype), weight (1-D, or a scalar 1).
    RmsNorm {
        /// Added to the mean square.
        eps: F64,
    },
    /// Inputs: x, weight (1-D or scalar 1), bias (1-D or scalar 0).
    LayerNorm {
        /// Added to the variance.
        eps: F64,
    },
    /// Inputs: x, offset (int32 scalar or per-batch vector), optional freqs (float32).
    Rope {
        /// Leading feature dims rotated.
        dims: usize,
        /// Rotate adjacent pairs (true) or the two halves (false).
        traditional: bool,
        /// Frequency base (unused with freqs).
        base: F64,
        /// Position scale.
        scale: F64,
    },
    /// Softmax over the last axis of a float32 array (the CPU's one-pass kernel; other dtypes
    /// and axes stay composed, see `ops::softmax`). Input: x.
    Softmax,
    /// Inputs: q, k, v, optional mask broadcast to `[B, Hq, L, S]` (bool or the output dtype).
    Sdpa {
        /// Multiplies q.
        scale: F64,
        /// Causal masking (bottom-right aligned, as MLX).
        causal: bool,
    },
    /// Language-model decode only, not MLX API ([`lm`]): inputs x, r, weight (1-D); outputs
    /// `x + r` and `rms_norm(x + r, weight)`.
    AddRmsNorm {
        /// Added to the mean square.
        eps: F64,
    },
    /// Language-model decode only, not MLX API ([`lm`]): inputs q, k, v `(B, 1, H·head_dim)`,
    /// offset, optional freqs; outputs q and k rotated as [`FastOp::Rope`] does, and v, each as
    /// heads `(B, H, 1, head_dim)`.
    DecodeHeads {
        /// Features per head.
        head_dim: usize,
        /// Leading feature dims rotated.
        dims: usize,
        /// Rotate adjacent pairs (true) or the two halves (false).
        traditional: bool,
        /// Frequency base (unused with freqs).
        base: F64,
        /// Position scale.
        scale: F64,
    },
    /// Language-model decode only, not MLX API ([`lm`]): inputs the key and value cache buffers
    /// `(B, H, capacity, D)` and the new keys and values `(B, H, T, D)`; outputs both buffers
    /// with rows `at..at + T` written, and their rows `..at + T`.
    KvWrite {
        /// The first row written.
        at: usize,
    },
    /// A user's Metal kernel (`mx.fast.metal_kernel`), recorded only by an export trace and
    /// never run here: no Metal back-end ([`custom_kernel`]).
    MetalKernel(alloc::sync::Arc<custom_kernel::CustomKernel>),
}

impl FastOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            FastOp::RmsNorm { .. } => "rms_norm",
            FastOp::LayerNorm { .. } => "layer_norm",
            FastOp::Rope { .. } => "rope",
            FastOp::Softmax => "softmax",
            FastOp::Sdpa { .. } => "scaled_dot_product_attention",
            FastOp::AddRmsNorm { .. } => "add_rms_norm",
            FastOp::DecodeHeads { .. } => "decode_heads",
            FastOp::KvWrite { .. } => "kv_write",
            FastOp::MetalKernel(_) => "custom_kernel",
        }
    }
}

fn scalar_of(v: f64, dtype: DType) -> Result<Array> {
    Array::from_value(crate::Value::F(v), dtype)
}

// ---- softmax -------------------------------------------------------------------------------

/// Softmax over the last axis of float32 `x` as one primitive, when the op is recorded on the
/// CPU (one pass per row there instead of five graph ops); elsewhere [`softmax_rows_fallback`],
/// which backends without the primitive run as ordinary ops.
pub(crate) fn softmax_rows(x: &Array) -> Result<Array> {
    if x.dtype() != DType::Float32 || x.ndim() == 0 {
        return Err(Error::invalid("softmax", format!("the fused softmax takes float32 rows, not {} of {} dimensions", x.dtype(), x.ndim())));
    }
    if crate::device::default_stream_now().device.kind != crate::device::DeviceType::Cpu {
        return softmax_rows_fallback(x);
    }
    Ok(Array::from_op(Primitive::Fast(FastOp::Softmax), alloc::vec![x.clone()], x.shape().to_vec(), DType::Float32))
}

/// The composed form of [`softmax_rows`]: `e^(x − max) / Σ e^(x − max)` over the last axis.
pub fn softmax_rows_fallback(x: &Array) -> Result<Array> {
    let m = crate::ops::max(x, Some(&[-1]), true)?;
    let ex = crate::ops::exp(&subtract(x, &m)?)?;
    crate::ops::divide(&ex, &crate::ops::sum(&ex, Some(&[-1]), true)?)
}

// ---- rms_norm ------------------------------------------------------------------------------

/// Validates and returns the output dtype plus the weight cast to it (or a scalar 1).
fn norm_args(op: &'static str, x: &Array, weight: Option<&Array>, bias: Option<&Array>) -> Result<(DType, Array, Array)> {
    if x.ndim() == 0 {
        return Err(Error::invalid(op, "Input must have at least 1 dimension but got input with 0 dimensions."));
    }
    let last = x.shape()[x.ndim() - 1];
    let wname = if op == "rms_norm" { "(*weight)" } else { "weight" };
    for (name, t) in [(wname, weight), ("bias", bias)] {
        if let Some(t) = t {
            if t.ndim() != 1 {
                return Err(Error::invalid(op, format!("{name} must have 1 dimension but has {} dimensions.", t.ndim())));
            }
            if t.size() != last {
                return Err(Error::invalid(
                    op,
                    format!("{name} must have the same size as the last dimension of x but has {} elements.", t.size()),
                ));
            }
        }
    }
    let mut dts = alloc::vec![x.dtype()];
    if let Some(w) = weight {
        dts.push(w.dtype());
        if let Some(b) = bias {
            dts.push(b.dtype());
        }
    }
    let out = result_type(&dts)?;
    if !out.is_float() {
        return Err(Error::invalid(op, format!("Received unsupported type {out}.")));
    }
    let w = match weight {
        Some(w) => astype(w, out)?,
        None => scalar_of(1.0, out)?,
    };
    let b = match bias {
        Some(b) => astype(b, out)?,
        None => scalar_of(0.0, out)?,
    };
    Ok((out, w, b))
}

/// `mx.fast.rms_norm(x, weight, eps)`: `x / sqrt(mean(x², -1) + eps) · weight`, computed in f32.
pub fn rms_norm(x: &Array, weight: Option<&Array>, eps: f32) -> Result<Array> {
    let (out, w, _) = norm_args("rms_norm", x, weight, None)?;
    let op = FastOp::RmsNorm { eps: F64::new(eps as f64) };
    Ok(Array::from_op(Primitive::Fast(op), alloc::vec![astype(x, out)?, w], x.shape().to_vec(), out))
}

/// The composed form of [`rms_norm`] (MLX's fallback).
pub fn rms_norm_fallback(x: &Array, weight: Option<&Array>, eps: f32) -> Result<Array> {
    let (out, w, _) = norm_args("rms_norm", x, weight, None)?;
    let xf = astype(x, DType::Float32)?;
    let ms = mean(&square(&xf)?, Some(&[-1]), true)?;
    let y = multiply(&xf, &rsqrt(&add(&ms, &Array::scalar(eps)?)?)?)?;
    let y = astype(&y, out)?;
    if weight.is_some() {
        multiply(&y, &w)
    } else {
        Ok(y)
    }
}

// ---- layer_norm ----------------------------------------------------------------------------

/// `mx.fast.layer_norm(x, weight, bias, eps)`: normalizes the last axis (f32 compute), then
/// scales and shifts in the output dtype.
pub fn layer_norm(x: &Array, weight: Option<&Array>, bias: Option<&Array>, eps: f32) -> Result<Array> {
    let (out, w, b) = norm_args("layer_norm", x, weight, bias)?;
    let op = FastOp::LayerNorm { eps: F64::new(eps as f64) };
    Ok(Array::from_op(Primitive::Fast(op), alloc::vec![astype(x, out)?, w, b], x.shape().to_vec(), out))
}

/// The composed form of [`layer_norm`] (MLX's fallback).
pub fn layer_norm_fallback(x: &Array, weight: Option<&Array>, bias: Option<&Array>, eps: f32) -> Result<Array> {
    let (out, w, b) = norm_args("layer_norm", x, weight, bias)?;
    let xf = astype(x, DType::Float32)?;
    let mu = mean(&xf, Some(&[-1]), true)?;
    let xc = subtract(&xf, &mu)?;
    let v = mean(&square(&xc)?, Some(&[-1]), true)?;
    let y = astype(&multiply(&xc, &rsqrt(&add(&v, &Array::scalar(eps)?)?)?)?, out)?;
    let y = if weight.is_some() { multiply(&y, &w)? } else { y };
    if bias.is_some() {
        add(&y, &b)
    } else {
        Ok(y)
    }
}

// ---- rope ----------------------------------------------------------------------------------

/// The `offset` argument of rope: a position, or one per batch item (`x.shape[0]`).
#[derive(Clone, Debug)]
pub enum RopeOffset<'a> {
    /// One offset for every sequence.
    Int(i32),
    /// An integer array, scalar or of shape `[B]`.
    Array(&'a Array),
}

/// Validates rope's arguments; returns the int32 offset and the float32 freqs.
#[allow(clippy::too_many_arguments)]
fn rope_args(x: &Array, dims: isize, base: Option<f32>, offset: &RopeOffset<'_>, freqs: Option<&Array>) -> Result<(Array, Option<Array>)> {
    const OP: &str = "rope";
    if x.ndim() < 3 {
        return Err(Error::invalid(OP, format!("Input must have at least 3 dimensions but got input with {} dimensions.", x.ndim())));
    }
    if !x.dtype().is_float() {
        return Err(Error::invalid(OP, format!("Input must be a floating type but got {}.", x.dtype())));
    }
    let offset = match offset {
        RopeOffset::Int(o) => Array::scalar(*o)?,
        RopeOffset::Array(a) => (*a).clone(),
    };
    if offset.ndim() > 1 {
        return Err(Error::invalid(
            OP,
            format!("offset must have at most one dimension but has shape {}.", crate::ops::linalg::fmt_shape(offset.shape())),
        ));
    }
    if offset.size() != 1 && offset.size() != x.shape()[0] {
        return Err(Error::invalid(
            OP,
            format!(
                "offset must be a scalar or vector with {} elements but has shape {}.",
                x.shape()[0],
                crate::ops::linalg::fmt_shape(offset.shape())
            ),
        ));
    }
    if !offset.dtype().is_integer() {
        return Err(Error::invalid(OP, format!("offset must be an integer but got type {}.", offset.dtype())));
    }
    let offset = astype(&offset, DType::Int32)?;
    if dims <= 0 {
        return Err(Error::invalid(OP, format!("dims must be positive but got {dims}.")));
    }
    if dims % 2 != 0 {
        return Err(Error::invalid(OP, format!("dims must be even but got {dims}.")));
    }
    let last = x.shape()[x.ndim() - 1];
    if dims as usize > last {
        return Err(Error::invalid(OP, format!("dims must not exceed the input's last dimension ({last}) but got {dims}.")));
    }
    let freqs = match freqs {
        Some(f) => {
            if base.is_some() {
                return Err(Error::invalid(OP, "Only one of base or freqs can have a value."));
            }
            if f.ndim() != 1 || f.shape()[0] != dims as usize / 2 {
                return Err(Error::invalid(
                    OP,
                    format!(
                        "freqs must be one dimensional with size {} but got shape {}.",
                        dims / 2,
                        crate::ops::linalg::fmt_shape(f.shape())
                    ),
                ));
            }
            Some(astype(f, DType::Float32)?)
        }
        None => {
            if base.is_none() {
                return Err(Error::invalid(OP, "Neither base nor freqs has a value."));
            }
            None
        }
    };
    Ok((offset, freqs))
}

/// `mx.fast.rope(x, dims, traditional=, base=, scale=, offset=, freqs=)`: rotary position
/// embedding of the first `dims` features of the last axis; positions run along axis -2.
pub fn rope(
    x: &Array,
    dims: isize,
    traditional: bool,
    base: Option<f32>,
    scale: f32,
    offset: RopeOffset<'_>,
    freqs: Option<&Array>,
) -> Result<Array> {
    let (offset, freqs) = rope_args(x, dims, base, &offset, freqs)?;
    let op = FastOp::Rope {
        dims: dims as usize,
        traditional,
        base: F64::new(base.unwrap_or(1.0) as f64),
        scale: F64::new(scale as f64),
    };
    let mut inputs = alloc::vec![x.clone(), offset];
    inputs.extend(freqs);
    Ok(Array::from_op(Primitive::Fast(op), inputs, x.shape().to_vec(), x.dtype()))
}

/// The composed form of [`rope`] (MLX's fallback).
pub fn rope_fallback(
    x: &Array,
    dims: isize,
    traditional: bool,
    base: Option<f32>,
    scale: f32,
    offset: RopeOffset<'_>,
    freqs: Option<&Array>,
) -> Result<Array> {
    let (offset, freqs) = rope_args(x, dims, base, &offset, freqs)?;
    let shape: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    let nd = x.ndim();
    let x = if nd == 3 {
        expand_dims(x, &[1])?
    } else if nd > 4 {
        flatten(x, 1, 1 + (nd as isize - 4))?
    } else {
        x.clone()
    };
    let (b, n, t) = (x.shape()[0] as isize, x.shape()[1] as isize, x.shape()[2] as isize);
    let d_all = x.shape()[3] as isize;
    let dt = x.dtype();
    let half = dims / 2;
    let offset = if offset.size() > 1 { expand_dims(&offset, &[-1, -2])? } else { offset };
    let positions = multiply(&add(&arange(0.0, t as f64, 1.0, DType::Float32)?, &offset)?, &Array::scalar(scale)?)?;
    let inv_freqs = match freqs {
        Some(f) => reciprocal(&f)?,
        None => {
            let c = libm::logf(base.unwrap_or(1.0)) / half as f32;
            exp(&multiply(&arange(0.0, -(half as f64), -1.0, DType::Float32)?, &Array::scalar(c)?)?)?
        }
    };
    let theta = multiply(&expand_dims(&positions, &[-1])?, &inv_freqs)?;
    let coss = astype(&cos(&theta)?, dt)?;
    let sins = astype(&sin(&theta)?, dt)?;
    let rot = |x1: &Array, x2: &Array| -> Result<[Array; 2]> {
        Ok([
            subtract(&multiply(x1, &coss)?, &multiply(x2, &sins)?)?,
            add(&multiply(x1, &sins)?, &multiply(x2, &coss)?)?,
        ])
    };
    let out = if traditional {
        let x1 = slice(&x, &[0, 0, 0, 0], &[b, n, t, dims], &[1, 1, 1, 2])?;
        let x2 = slice(&x, &[0, 0, 0, 1], &[b, n, t, dims], &[1, 1, 1, 2])?;
        let [o1, o2] = rot(&x1, &x2)?;
        let outs = [expand_dims(&o1, &[-1])?, expand_dims(&o2, &[-1])?];
        let mut out = reshape(&concatenate(&outs, Some(-1))?, &[b, n, t, dims])?;
        if dims < d_all {
            out = concatenate(&[out, slice(&x, &[0, 0, 0, dims], &[b, n, t, d_all], &[1, 1, 1, 1])?], Some(-1))?;
        }
        out
    } else {
        let x1 = slice(&x, &[0, 0, 0, 0], &[b, n, t, half], &[1, 1, 1, 1])?;
        let x2 = slice(&x, &[0, 0, 0, half], &[b, n, t, dims], &[1, 1, 1, 1])?;
        let [o1, o2] = rot(&x1, &x2)?;
        let mut outs = alloc::vec![o1, o2];
        if dims < d_all {
            outs.push(slice(&x, &[0, 0, 0, dims], &[b, n, t, d_all], &[1, 1, 1, 1])?);
        }
        concatenate(&outs, Some(-1))?
    };
    reshape(&out, &shape)
}

// ---- scaled_dot_product_attention ----------------------------------------------------------

/// The `mask` argument of attention.
#[derive(Clone, Debug)]
pub enum SdpaMask<'a> {
    /// No mask.
    None,
    /// `"causal"`: query `i` sees keys `j ≤ i + (S − L)`.
    Causal,
    /// A boolean (keep where true) or additive mask broadcastable to `[B, Hq, L, S]`.
    Array(&'a Array),
}

/// Validated attention inputs: q, k, v in the output dtype, and the broadcast mask.
struct SdpaArgs {
    q: Array,
    k: Array,
    v: Array,
    mask: Option<Array>,
    dtype: DType,
}

fn sdpa_args(q: &Array, k: &Array, v: &Array, mask: &SdpaMask<'_>) -> Result<SdpaArgs> {
    const OP: &str = "scaled_dot_product_attention";
    let fs = crate::ops::linalg::fmt_shape;
    for t in [q, k, v] {
        if t.ndim() != 4 {
            return Err(Error::invalid(OP, format!("input with shape {} expected to be rank 4", fs(t.shape()))));
        }
    }
    if let SdpaMask::Array(m) = mask {
        if m.ndim() > 4 {
            return Err(Error::invalid(OP, format!("the mask with shape {} expected to have at most rank 4.", fs(m.shape()))));
        }
    }
    for t in [k, v] {
        if t.shape()[0] != q.shape()[0] {
            return Err(Error::invalid(OP, format!("mismatching batch dimension for input with shape {}.", fs(t.shape()))));
        }
    }
    if q.shape()[3] != k.shape()[3] {
        return Err(Error::invalid(
            OP,
            format!(
                "query, keys expected to have matching last dimension; found query shape {} for keys shape {}.",
                fs(q.shape()),
                fs(k.shape())
            ),
        ));
    }
    let (hq, hkv) = (q.shape()[1], k.shape()[1]);
    if k.shape()[1] != v.shape()[1] {
        return Err(Error::invalid(
            OP,
            format!(
                "keys, values expected to have matching n_kv_heads; found keys with n_heads {} for values with n_heads {}.",
                k.shape()[1],
                v.shape()[1]
            ),
        ));
    }
    if hkv == 0 || hq % hkv != 0 {
        return Err(Error::invalid(
            OP,
            format!("n_heads must be a multiple of n_kv_heads, found n_heads {hq} for n_kv_heads {hkv}."),
        ));
    }
    if k.shape()[2] != v.shape()[2] {
        return Err(Error::invalid(OP, "keys and values must have the same sequence length."));
    }
    let dtype = result_type(&[q.dtype(), k.dtype(), v.dtype()])?;
    if !dtype.is_float() {
        return Err(Error::invalid(OP, format!("Received unsupported type {dtype}.")));
    }
    let mask = match mask {
        SdpaMask::Array(m) => {
            if promote_types(m.dtype(), dtype) != dtype {
                return Err(Error::invalid(OP, format!("Mask type must promote to output type {dtype}.")));
            }
            let m = if m.dtype() == DType::Bool { (*m).clone() } else { astype(m, dtype)? };
            let shape = [q.shape()[0], hq, q.shape()[2], k.shape()[2]];
            Some(crate::ops::shape::broadcast_operand(&m, &shape)?)
        }
        _ => None,
    };
    Ok(SdpaArgs { q: astype(q, dtype)?, k: astype(k, dtype)?, v: astype(v, dtype)?, mask, dtype })
}

/// `mx.fast.scaled_dot_product_attention(q, k, v, scale=, mask=)`: `softmax(scale·q·kᵀ + mask)·v`
/// with q `[B, Hq, L, D]`, k `[B, Hkv, S, D]`, v `[B, Hkv, S, Dv]`; `Hq` a multiple of `Hkv`
/// (grouped-query attention).
pub fn scaled_dot_product_attention(q: &Array, k: &Array, v: &Array, scale: f32, mask: SdpaMask<'_>) -> Result<Array> {
    let causal = matches!(mask, SdpaMask::Causal);
    let a = sdpa_args(q, k, v, &mask)?;
    let shape = alloc::vec![a.q.shape()[0], a.q.shape()[1], a.q.shape()[2], a.v.shape()[3]];
    let op = FastOp::Sdpa { scale: F64::new(scale as f64), causal };
    let mut inputs = alloc::vec![a.q, a.k, a.v];
    inputs.extend(a.mask);
    Ok(Array::from_op(Primitive::Fast(op), inputs, shape, a.dtype))
}

/// [`scaled_dot_product_attention`] with attention sinks (`mx.fast.scaled_dot_product_attention(...,
/// sinks=)`): one learned logit per query head that joins every row's softmax and takes no value,
/// as in MLX. Computed by the composed form (MLX's fallback), checked as MLX checks `sinks`.
pub fn scaled_dot_product_attention_sinks(
    q: &Array,
    k: &Array,
    v: &Array,
    scale: f32,
    mask: SdpaMask<'_>,
    sinks: &Array,
) -> Result<Array> {
    const OP: &str = "scaled_dot_product_attention";
    let a = sdpa_args(q, k, v, &mask)?;
    if promote_types(sinks.dtype(), a.dtype) != a.dtype {
        return Err(Error::invalid(OP, format!("[{OP}] Type of sinks must promote to output type {}.", a.dtype)));
    }
    if sinks.ndim() != 1 || sinks.shape()[0] != a.q.shape()[1] {
        return Err(Error::invalid(OP, format!("[{OP}] Received invalid shape for sinks {}.", fmt_shape(sinks.shape()))));
    }
    let sinks = astype(sinks, a.dtype)?;
    sdpa_composed(a, scale, matches!(mask, SdpaMask::Causal), Some(&sinks))
}

/// The composed form of [`scaled_dot_product_attention`] (MLX's fallback).
pub fn scaled_dot_product_attention_fallback(q: &Array, k: &Array, v: &Array, scale: f32, mask: SdpaMask<'_>) -> Result<Array> {
    let causal = matches!(mask, SdpaMask::Causal);
    sdpa_composed(sdpa_args(q, k, v, &mask)?, scale, causal, None)
}

fn sdpa_composed(a: SdpaArgs, scale: f32, causal: bool, sinks: Option<&Array>) -> Result<Array> {
    let (hq, hkv) = (a.q.shape()[1] as isize, a.k.shape()[1] as isize);
    let reps = hq / hkv;
    let mut q = multiply(&scalar_of(scale as f64, a.dtype)?, &a.q)?;
    let (mut k, mut v) = (a.k, a.v);
    if reps > 1 {
        q = unflatten(&q, 1, &[hkv, reps])?;
        k = expand_dims(&k, &[2])?;
        v = expand_dims(&v, &[2])?;
    }
    let mut scores = matmul(&q, &swapaxes(&k, -1, -2)?)?;
    let mask = if causal {
        let (kl, ql) = (k.shape()[k.ndim() - 2] as f64, q.shape()[q.ndim() - 2] as f64);
        let off = kl - ql;
        let qi = expand_dims(&arange(off, ql + off, 1.0, DType::Int32)?, &[1])?;
        let ki = expand_dims(&arange(0.0, kl, 1.0, DType::Int32)?, &[0])?;
        Some(greater_equal(&qi, &ki)?)
    } else {
        a.mask
    };
    if let Some(mut m) = mask {
        if reps > 1 && m.ndim() >= 3 {
            m = if m.shape()[m.ndim() - 3] == 1 { expand_dims(&m, &[-3])? } else { unflatten(&m, -3, &[hkv, reps])? };
        }
        scores = if m.dtype() == DType::Bool {
            let lowest = scalar_of(finfo(scores.dtype())?.min, scores.dtype())?;
            where_(&m, &scores, &lowest)?
        } else {
            add(&scores, &m)?
        };
    }
    if let Some(sinks) = sinks {
        // scores: (B, H, Lq, Lk), or (B, Hkv, reps, Lq, Lk) with grouped heads; one sink column first.
        let mut s = expand_dims(sinks, &[0, 2, 3])?;
        if reps > 1 {
            s = unflatten(&s, 1, &[hkv, reps])?;
        }
        let mut col = scores.shape().to_vec();
        if let Some(last) = col.last_mut() {
            *last = 1;
        }
        scores = concatenate(&[crate::ops::shape::broadcast_operand(&s, &col)?, scores], Some(-1))?;
    }
    let mut p = softmax(&scores, Some(&[-1]), true)?;
    if sinks.is_some() {
        let nd = p.ndim();
        let mut start = alloc::vec![0isize; nd];
        start[nd - 1] = 1;
        let stop: Vec<isize> = p.shape().iter().map(|&d| d as isize).collect();
        p = slice(&p, &start, &stop, &alloc::vec![1; nd])?;
    }
    let out = matmul(&p, &v)?;
    if reps > 1 {
        flatten(&out, 1, 2)
    } else {
        Ok(out)
    }
}
