//! The quantized family: MLX's array-level quantization API (`quantize`, `dequantize`,
//! `quantized_matmul`, `gather_qmm`, `to_fp8`, `from_fp8`) with MLX 0.32's names, defaults,
//! checks and messages, plus GGUF block weights as arrays (`ggml_matmul`, `ggml_dequantize`,
//! `ggml_quantize`).
//!
//! These functions only validate and record nodes; the kernels (`cpu/quantized.rs`) call the
//! slice-level code in [`crate::quant::mlx`] and [`crate::quant::ggml`], which never expands a
//! quantized weight matrix for a product.
//!
//! A GGUF-quantized weight matrix is a `uint8` array of shape `(N, row_bytes)` whose bytes are
//! ggml's blocks unchanged (a mapped file can back it through [`Array::from_buffer`]); its
//! [`GgmlType`] and row length `K` travel as primitive parameters.

use crate::array::Array;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::astype;
use crate::primitive::Primitive;
use crate::quant::ggml;
use crate::quant::mlx::{validate_dequantize, validate_quantize, validate_quantized_matmul, QuantMode};
use crate::quant::GgmlType;
use crate::shape::broadcast_shapes;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

/// The quantized family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QuantizedOp {
    /// `mx.quantize`: inputs `w` [, `global_scale`]; outputs `wq`, `scales` [, `biases`].
    Quantize {
        /// Mode.
        mode: QuantMode,
        /// Elements per group.
        group_size: usize,
        /// Bits per element.
        bits: u32,
    },
    /// `mx.dequantize`: inputs `w`, `scales` [, `biases`] [, `global_scale`]. Affine produces
    /// the scales dtype (the op casts afterwards, as MLX does); fp modes produce the output dtype.
    Dequantize {
        /// Mode.
        mode: QuantMode,
        /// Elements per group.
        group_size: usize,
        /// Bits per element.
        bits: u32,
    },
    /// `mx.quantized_matmul`: inputs `x`, `w`, `scales` [, `biases`], already cast to the
    /// output dtype (affine) and batch-broadcast where MLX broadcasts.
    QuantizedMatmul {
        /// Mode.
        mode: QuantMode,
        /// Elements per group.
        group_size: usize,
        /// Bits per element.
        bits: u32,
        /// `x @ Wᵀ` (W stored `(N, K)`) when true, `x @ W` (W stored `(K, N)`) when false.
        transpose: bool,
    },
    /// `mx.gather_qmm`: inputs `x`, `w`, `scales` [, `biases`], `lhs_indices`, `rhs_indices`
    /// (uint32, broadcast to one shape).
    GatherQmm {
        /// Mode.
        mode: QuantMode,
        /// Elements per group.
        group_size: usize,
        /// Bits per element.
        bits: u32,
        /// As in [`QuantizedOp::QuantizedMatmul`].
        transpose: bool,
    },
    /// `mx.to_fp8`: float → E4M3 codes (`uint8`).
    ToFp8,
    /// `mx.from_fp8`: E4M3 codes → the output dtype.
    FromFp8,
    /// `x @ Wᵀ` with `W` as GGUF blocks: inputs `x` (`(..., K)` float), `w` (`(N, row_bytes)` uint8).
    GgmlMatmul {
        /// The weight's block type.
        ty: GgmlType,
        /// Elements per weight row.
        k: usize,
    },
    /// Several [`QuantizedOp::GgmlMatmul`]s of one `x`, one output each: inputs `x`, then the
    /// weights' blocks in the order of `tys`.
    GgmlMatmulMany {
        /// Each weight's block type.
        tys: Vec<GgmlType>,
        /// Elements per weight row (all weights).
        k: usize,
    },
    /// GGUF blocks `(N, row_bytes)` → float32 `(N, K)`.
    GgmlDequantize {
        /// The block type.
        ty: GgmlType,
        /// Elements per row.
        k: usize,
    },
    /// float `(N, K)` → GGUF blocks `(N, row_bytes)` (ggml's reference quantizers).
    GgmlQuantize {
        /// The block type.
        ty: GgmlType,
    },
}

impl QuantizedOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            QuantizedOp::Quantize { .. } => "quantize",
            QuantizedOp::Dequantize { .. } => "dequantize",
            QuantizedOp::QuantizedMatmul { .. } => "quantized_matmul",
            QuantizedOp::GatherQmm { .. } => "gather_qmm",
            QuantizedOp::ToFp8 => "to_fp8",
            QuantizedOp::FromFp8 => "from_fp8",
            QuantizedOp::GgmlMatmul { .. } => "ggml_matmul",
            QuantizedOp::GgmlMatmulMany { .. } => "ggml_matmul_many",
            QuantizedOp::GgmlDequantize { .. } => "ggml_dequantize",
            QuantizedOp::GgmlQuantize { .. } => "ggml_quantize",
        }
    }
}

fn q(op: QuantizedOp) -> Primitive {
    Primitive::Quantized(op)
}

/// Element types the quantization kernels compute in.
fn is_kernel_float(d: DType) -> bool {
    matches!(d, DType::Float32 | DType::Float16 | DType::Bfloat16)
}

/// `mx.quantize(w, group_size=None, bits=None, mode="affine", global_scale=None)`: quantizes
/// `w` (`(..., N, K)` float) along its last axis. Returns `[wq, scales, biases]` for affine and
/// `[wq, scales]` for the fp modes (`wq` uint32 `(..., N, K·bits/32)`, scales `(..., N,
/// K/group_size)`, in `w`'s dtype for affine and uint8 otherwise). Bit-identical with MLX.
pub fn quantize(
    w: &Array,
    group_size: Option<i64>,
    bits: Option<i64>,
    mode: &str,
    global_scale: Option<&Array>,
) -> Result<Vec<Array>> {
    let p = validate_quantize(
        mode,
        w.dtype(),
        w.shape(),
        group_size,
        bits,
        global_scale.map(|g| (g.dtype(), g.shape())),
    )?;
    if !is_kernel_float(w.dtype()) {
        // MLX reports this (float64) when the kernel runs.
        return Err(Error::runtime("fast::Quantize::eval_cpu", "Only supports floating point inputs"));
    }
    let nd = w.ndim();
    let k = w.shape()[nd - 1];
    let mut wq_shape = w.shape().to_vec();
    wq_shape[nd - 1] = p.words_per_row("quantize", k)?;
    let mut s_shape = w.shape().to_vec();
    s_shape[nd - 1] = k / p.group_size;
    let mut metas = vec![(wq_shape, DType::Uint32)];
    let mut inputs = vec![w.clone()];
    if p.mode == QuantMode::Affine {
        metas.push((s_shape.clone(), w.dtype()));
        metas.push((s_shape, w.dtype()));
    } else {
        metas.push((s_shape, DType::Uint8));
    }
    if let Some(g) = global_scale {
        inputs.push(g.clone());
    }
    let op = QuantizedOp::Quantize { mode: p.mode, group_size: p.group_size, bits: p.bits };
    Ok(Array::from_op_multi(q(op), inputs, metas))
}

/// `mx.dequantize(w, scales, biases=None, group_size=None, bits=None, mode="affine",
/// global_scale=None, dtype=None)`: the float weights `(..., N, K)`. The default dtype is the
/// scales' (affine) or bfloat16 (fp modes); with an nvfp4 `global_scale` the result is float32
/// as in MLX. Bit-identical with MLX.
#[allow(clippy::too_many_arguments)]
pub fn dequantize(
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    group_size: Option<i64>,
    bits: Option<i64>,
    mode: &str,
    global_scale: Option<&Array>,
    dtype: Option<DType>,
) -> Result<Array> {
    let (p, out) = validate_dequantize(
        mode,
        (w.dtype(), w.shape()),
        (scales.dtype(), scales.shape()),
        biases.map(|b| (b.dtype(), b.shape())),
        group_size,
        bits,
        global_scale.map(|g| (g.dtype(), g.shape())),
        dtype,
    )?;
    let nd = w.ndim();
    let mut shape = w.shape().to_vec();
    shape[nd - 1] = w.shape()[nd - 1] * 32 / p.bits as usize;
    let op = QuantizedOp::Dequantize { mode: p.mode, group_size: p.group_size, bits: p.bits };
    if p.mode == QuantMode::Affine {
        let b = biases.ok_or_else(|| Error::invalid("dequantize", "Biases must be provided for affine quantization."))?;
        // MLX computes `scales * q + biases` in the promoted type, then casts to `dtype`.
        let dt = promote_types(scales.dtype(), b.dtype());
        if !is_kernel_float(dt) {
            return Err(Error::runtime("dequantize", format!("Scales of type {dt} are not supported.")));
        }
        let s = astype(scales, dt)?;
        let b = astype(b, dt)?;
        let r = Array::from_op(q(op), vec![w.clone(), s, b], shape, dt);
        return astype(&r, out);
    }
    let mut inputs = vec![w.clone(), scales.clone()];
    // With a global scale the f32 scalar promotes MLX's result to float32 (or wider).
    let out = match global_scale {
        Some(g) => {
            inputs.push(g.clone());
            promote_types(out, DType::Float32)
        }
        None => out,
    };
    // float64 is computed in float32 and widened (exact except for E8M0 code 255 = 2^128).
    let kernel_out = if out == DType::Float64 { DType::Float32 } else { out };
    let r = Array::from_op(q(op), inputs, shape, kernel_out);
    astype(&r, out)
}

/// The prepared operands of a quantized product.
struct QmmArgs {
    p: crate::quant::mlx::QuantParams,
    out: DType,
    outer: usize,
    inputs: Vec<Array>,
}

#[allow(clippy::too_many_arguments)]
fn prepare_qmm(
    op: &'static str,
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    transpose: bool,
    group_size: Option<i64>,
    bits: Option<i64>,
    mode: &str,
) -> Result<QmmArgs> {
    let (p, out, _inner, outer) = validate_quantized_matmul(
        mode,
        (x.dtype(), x.shape()),
        (w.dtype(), w.shape()),
        (scales.dtype(), scales.shape()),
        biases.map(|b| (b.dtype(), b.shape())),
        transpose,
        group_size,
        bits,
    )
    .map_err(|e| retag(e, op))?;
    if !is_kernel_float(out) {
        return Err(Error::runtime(op, "only floating types are supported"));
    }
    let inputs = if p.mode == QuantMode::Affine {
        let b = biases.ok_or_else(|| Error::invalid(op, "Biases must be provided for affine quantization."))?;
        vec![astype(x, out)?, w.clone(), astype(scales, out)?, astype(b, out)?]
    } else {
        vec![x.clone(), w.clone(), scales.clone()]
    };
    Ok(QmmArgs { p, out, outer, inputs })
}

/// Broadcasts two batch shapes with MLX's message on failure.
fn bshapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    broadcast_shapes(a, b, "broadcast_shapes").map_err(|_| {
        Error::invalid(
            "broadcast_shapes",
            format!(
                "Shapes {} and {} cannot be broadcast.",
                crate::ops::linalg::fmt_shape(a),
                crate::ops::linalg::fmt_shape(b)
            ),
        )
    })
}

/// Re-tags an error raised by the shared `quantized_matmul` checks with `op`.
fn retag(e: Error, op: &'static str) -> Error {
    if e.op == "quantized_matmul" && op != "quantized_matmul" {
        Error::new(e.kind, op, e.msg)
    } else {
        e
    }
}

/// `mx.quantized_matmul(x, w, scales, biases=None, transpose=True, group_size=None,
/// bits=None, mode="affine")`: `x @ dequantize(w).T` (or `x @ dequantize(w)` when
/// `transpose` is false) without expanding `w`. `x` is `(..., K)`; when both `x` and `w` have
/// batch dimensions they broadcast (MLX's rule); a 2-D `w` serves every batch of `x`; a
/// batched `w` with a 1-D/2-D `x` uses `w`'s first matrix, as MLX's CPU kernel does. f32 is
/// bit-identical with MLX; f16/bf16 accumulate in f32 (MLX accumulates in half precision).
#[allow(clippy::too_many_arguments)]
pub fn quantized_matmul(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    transpose: bool,
    group_size: Option<i64>,
    bits: Option<i64>,
    mode: &str,
) -> Result<Array> {
    const OP: &str = "quantized_matmul";
    let a = prepare_qmm(OP, x, w, scales, biases, transpose, group_size, bits, mode)?;
    let mut inputs = a.inputs;
    let out_shape = if x.ndim() > 2 && w.ndim() > 2 {
        let batch = bshapes(&x.shape()[..x.ndim() - 2], &w.shape()[..w.ndim() - 2])?;
        for arr in inputs.iter_mut() {
            let nd = arr.ndim();
            let mut s = batch.clone();
            s.extend_from_slice(&arr.shape()[nd - 2..]);
            *arr = crate::ops::shape::broadcast_operand(arr, &s)?;
        }
        let mut s = inputs[0].shape().to_vec();
        if let Some(l) = s.last_mut() {
            *l = a.outer;
        }
        s
    } else {
        let mut s = x.shape().to_vec();
        if let Some(l) = s.last_mut() {
            *l = a.outer;
        }
        s
    };
    let op = QuantizedOp::QuantizedMatmul { mode: a.p.mode, group_size: a.p.group_size, bits: a.p.bits, transpose };
    Ok(Array::from_op(q(op), inputs, out_shape, a.out))
}

/// `mx.gather_qmm(x, w, scales, biases=None, lhs_indices=None, rhs_indices=None,
/// transpose=True, group_size=None, bits=None, mode="affine", sorted_indices=False)`: for each
/// position of the broadcast index arrays, `x[lhs] @ dequantize(w[rhs]).T` (indices count the
/// matrices of `x`'s and `w`'s batch dimensions, flattened). Output `(*indices.shape, M, N)`.
/// Without indices it is [`quantized_matmul`]. An index outside the batch is an error (MLX
/// reads out of bounds). `sorted_indices` is a speed hint and does not change results.
#[allow(clippy::too_many_arguments)]
pub fn gather_qmm(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    transpose: bool,
    group_size: Option<i64>,
    bits: Option<i64>,
    mode: &str,
    sorted_indices: bool,
) -> Result<Array> {
    const OP: &str = "gather_qmm";
    let _ = sorted_indices;
    if lhs_indices.is_none() && rhs_indices.is_none() {
        return quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode);
    }
    let a = prepare_qmm(OP, x, w, scales, biases, transpose, group_size, bits, mode)?;
    let lhs = indices_or_default(OP, lhs_indices, x)?;
    let rhs = indices_or_default(OP, rhs_indices, w)?;
    let ishape = bshapes(lhs.shape(), rhs.shape())?;
    let lhs = crate::ops::shape::broadcast_operand(&lhs, &ishape)?;
    let rhs = crate::ops::shape::broadcast_operand(&rhs, &ishape)?;
    let mut out_shape = ishape;
    out_shape.push(x.shape()[x.ndim() - 2]);
    out_shape.push(a.outer);
    let mut inputs = a.inputs;
    inputs.push(lhs);
    inputs.push(rhs);
    let op = QuantizedOp::GatherQmm { mode: a.p.mode, group_size: a.p.group_size, bits: a.p.bits, transpose };
    Ok(Array::from_op(q(op), inputs, out_shape, a.out))
}

/// MLX's `indices_or_default`: the given integer indices as uint32, or `arange` over the
/// batch of `a` shaped like it.
pub(crate) fn indices_or_default(op: &'static str, indices: Option<&Array>, a: &Array) -> Result<Array> {
    if a.ndim() < 2 {
        return Err(Error::invalid(
            op,
            format!(
                "Input must have at least two dimensions but got input with shape {}.",
                crate::ops::linalg::fmt_shape(a.shape())
            ),
        ));
    }
    match indices {
        Some(i) => {
            if !i.dtype().is_integer() {
                return Err(Error::invalid(op, "Got indices with invalid dtype. Indices must be integral."));
            }
            astype(i, DType::Uint32)
        }
        None => {
            let batch = &a.shape()[..a.ndim() - 2];
            let total: usize = batch.iter().product();
            let total_u32 = u32::try_from(total).map_err(|_| Error::invalid(op, "Too many matrices to index."))?;
            let v: Vec<u32> = (0..total_u32).collect();
            Array::from_slice(&v, batch)
        }
    }
}

/// `mx.to_fp8(x)`: E4M3 codes (`uint8`, round to nearest even, saturating at ±448).
pub fn to_fp8(x: &Array) -> Result<Array> {
    if !x.dtype().is_float() {
        return Err(Error::invalid(
            "to_fp8",
            format!("Only real floating types are supported but x.dtype() == {}.", x.dtype()),
        ));
    }
    // float64 values go through float32, as MLX's kernel does for its half types.
    let x = if x.dtype() == DType::Float64 { astype(x, DType::Float32)? } else { x.clone() };
    let shape = x.shape().to_vec();
    Ok(Array::from_op(q(QuantizedOp::ToFp8), vec![x], shape, DType::Uint8))
}

/// `mx.from_fp8(x, dtype=bfloat16)`: decodes E4M3 codes (exact in every float dtype).
pub fn from_fp8(x: &Array, dtype: DType) -> Result<Array> {
    if x.dtype() != DType::Uint8 {
        return Err(Error::invalid(
            "from_fp8",
            format!("Input must have type uint8 but x.dtype() == {}.", x.dtype()),
        ));
    }
    if !dtype.is_float() {
        return Err(Error::invalid(
            "from_fp8",
            format!("Only real floating types are supported but dtype == {dtype}."),
        ));
    }
    let shape = x.shape().to_vec();
    if dtype == DType::Float64 {
        let r = Array::from_op(q(QuantizedOp::FromFp8), vec![x.clone()], shape, DType::Float32);
        return astype(&r, DType::Float64);
    }
    Ok(Array::from_op(q(QuantizedOp::FromFp8), vec![x.clone()], shape, dtype))
}

/// Checks a GGUF weight array against `ty` and `k`; returns `N`.
fn check_blocks(op: &'static str, w: &Array, ty: GgmlType, k: usize) -> Result<usize> {
    if w.dtype() != DType::Uint8 {
        return Err(Error::invalid(op, format!("GGUF blocks must be a uint8 array but got {}.", w.dtype())));
    }
    if w.ndim() != 2 {
        return Err(Error::invalid(
            op,
            format!("GGUF blocks must be a 2-D array (N, row_bytes) but got {} dimensions.", w.ndim()),
        ));
    }
    if !ggml::is_supported(ty) {
        return Err(Error::unsupported(op, format!("GGML type {} is not implemented.", ty.name())));
    }
    let rb = ggml::row_bytes(op, ty, k)?;
    if w.shape()[1] != rb {
        return Err(Error::invalid(
            op,
            format!(
                "A row of {k} {} elements takes {rb} bytes but the blocks array has rows of {}.",
                ty.name(),
                w.shape()[1]
            ),
        ));
    }
    Ok(w.shape()[0])
}

/// `x @ Wᵀ` where `W` (`N × K`) is GGUF blocks of type `ty`: `w_blocks` is a uint8 array
/// `(N, row_bytes(K))` holding the blocks unchanged. `x` is `(..., K)` float (any batch
/// shape); the result is `(..., N)` in `x`'s dtype. Like ggml's CPU `mul_mat`, each row of `x`
/// is quantized once to the weight's partner type (Q8_0, Q8_K …) and every output is one
/// block-wise dot product: `W` is never expanded. f32 results equal ggml's portable kernels.
pub fn ggml_matmul(x: &Array, w_blocks: &Array, ty: GgmlType, k: usize) -> Result<Array> {
    let n = check_matmul_weight("ggml_matmul", w_blocks, ty, k)?;
    let shape = check_matmul_x("ggml_matmul", x, k, n)?;
    let op = QuantizedOp::GgmlMatmul { ty, k };
    Ok(Array::from_op(q(op), vec![x.clone(), w_blocks.clone()], shape, x.dtype()))
}

/// [`ggml_matmul`] of one `x` by several weights of `k` columns (`weights`: each one's blocks
/// and type), as one op: `x` is quantized once per activation type and one parallel pass
/// covers every weight's rows, so a decode step's Q/K/V or gate/up projections cost one
/// wake-up of the thread pool instead of one each. Each result equals `ggml_matmul`'s.
pub fn ggml_matmul_many(x: &Array, weights: &[(&Array, GgmlType)], k: usize) -> Result<Vec<Array>> {
    const OP: &str = "ggml_matmul_many";
    if weights.is_empty() {
        return Err(Error::invalid(OP, "No weights given."));
    }
    let mut metas = Vec::with_capacity(weights.len());
    let mut inputs = Vec::with_capacity(weights.len() + 1);
    inputs.push(x.clone());
    for &(w, ty) in weights {
        let n = check_matmul_weight(OP, w, ty, k)?;
        metas.push((check_matmul_x(OP, x, k, n)?, x.dtype()));
        inputs.push(w.clone());
    }
    let op = QuantizedOp::GgmlMatmulMany { tys: weights.iter().map(|&(_, ty)| ty).collect(), k };
    Ok(Array::from_op_multi(q(op), inputs, metas))
}

/// The rows `N` of a `ggml_matmul` weight, checked.
fn check_matmul_weight(op: &'static str, w_blocks: &Array, ty: GgmlType, k: usize) -> Result<usize> {
    let n = check_blocks(op, w_blocks, ty, k)?;
    if ggml::vec_dot_type(ty).is_none() {
        return Err(Error::unsupported(op, format!("GGML type {} has no matmul kernel.", ty.name())));
    }
    Ok(n)
}

/// The shape of `x @ Wᵀ` for a `ggml_matmul` weight of `n` rows of `k`, with `x` checked.
fn check_matmul_x(op: &'static str, x: &Array, k: usize, n: usize) -> Result<Vec<usize>> {
    if !is_kernel_float(x.dtype()) {
        return Err(Error::invalid(
            op,
            format!("x must be float32, float16 or bfloat16 but got {}.", x.dtype()),
        ));
    }
    if x.ndim() == 0 || x.shape()[x.ndim() - 1] != k {
        return Err(Error::invalid(
            op,
            format!(
                "Last dimension of x with shape {} does not match the weight's {k} elements per row.",
                crate::ops::linalg::fmt_shape(x.shape())
            ),
        ));
    }
    let mut shape = x.shape().to_vec();
    let nd = shape.len();
    shape[nd - 1] = n;
    Ok(shape)
}

/// The float32 `(N, K)` matrix that GGUF blocks `(N, row_bytes(K))` of type `ty` encode
/// (ggml's `dequantize_row_*`). For users who ask; [`ggml_matmul`] does not need it.
pub fn ggml_dequantize(w_blocks: &Array, ty: GgmlType, k: usize) -> Result<Array> {
    let n = check_blocks("ggml_dequantize", w_blocks, ty, k)?;
    let op = QuantizedOp::GgmlDequantize { ty, k };
    Ok(Array::from_op(q(op), vec![w_blocks.clone()], vec![n, k], DType::Float32))
}

/// Quantizes a float `(N, K)` matrix to GGUF blocks of type `ty`, returned as uint8 `(N,
/// row_bytes(K))` (ggml's reference quantizers, `quantize_row_*_ref`).
pub fn ggml_quantize(w: &Array, ty: GgmlType) -> Result<Array> {
    const OP: &str = "ggml_quantize";
    if !w.dtype().is_float() {
        return Err(Error::invalid(OP, format!("Only real floating types can be quantized but w has type {}.", w.dtype())));
    }
    if w.ndim() != 2 {
        return Err(Error::invalid(OP, format!("Expected a 2-D matrix but got {} dimensions.", w.ndim())));
    }
    if !ggml::is_supported(ty) {
        return Err(Error::unsupported(OP, format!("GGML type {} is not implemented.", ty.name())));
    }
    let rb = ggml::row_bytes(OP, ty, w.shape()[1])?;
    let w = astype(w, DType::Float32)?;
    let shape = vec![w.shape()[0], rb];
    Ok(Array::from_op(q(QuantizedOp::GgmlQuantize { ty }), vec![w], shape, DType::Uint8))
}

pub(crate) mod grad;
