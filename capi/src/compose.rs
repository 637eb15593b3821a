//! mlx-c overloads that core spells differently, composed from core ops (as MLX composes them).

use crate::prelude::*;
use mlx_arm_core::shape::normalize_axis;
use mlx_arm_core::{ops, Array, DType, Error, Result, Value};

/// `mlx.core.round(a, decimals)`: `round(a * 10^d) / 10^d` in a floating dtype, cast back.
pub fn round(a: &Array, decimals: i32) -> Result<Array> {
    if decimals == 0 {
        return ops::round(a);
    }
    let dtype = if a.dtype().is_inexact() { a.dtype() } else { DType::Float32 };
    // f64::powi needs std; libm's pow gives the same powers of ten without it.
    #[cfg(feature = "std")]
    let p = 10f64.powi(decimals);
    #[cfg(not(feature = "std"))]
    let p = libm::pow(10.0, decimals as f64);
    let scale = Array::from_value(Value::F(p), dtype)?;
    let x = ops::round(&ops::multiply(&ops::astype(a, dtype)?, &scale)?)?;
    ops::astype(&ops::divide(&x, &scale)?, a.dtype())
}

/// `mlx_full(shape, vals, dtype)`.
pub fn full(shape: &[usize], vals: &Array, dtype: DType) -> Result<Array> {
    ops::full_array(shape, vals, dtype)
}

/// `mlx_full_like(a, vals, dtype)`: as C++ `full_like`, `a` and `vals` broadcast together.
pub fn full_like(a: &Array, vals: &Array, dtype: DType) -> Result<Array> {
    let shape = mlx_arm_core::shape::broadcast_shapes(a.shape(), vals.shape(), "full_like")?;
    ops::full_array(&shape, vals, dtype)
}

/// Integer positions held by an array (the `start` of `slice_dynamic`/`slice_update_dynamic`):
/// core slices at positions known when the graph is built, so the array is evaluated here.
pub fn index_values(a: &Array, op: &'static str) -> Result<Vec<isize>> {
    if !a.dtype().is_integer() {
        return Err(Error::invalid(op, format!("Start indices must be integers, got type {}.", a.dtype())));
    }
    let v = ops::astype(&ops::reshape(a, &[-1])?, DType::Int64)?.to_vec::<i64>()?;
    v.into_iter()
        .map(|x| isize::try_from(x).map_err(|_| Error::invalid(op, format!("start index {x} is out of range"))))
        .collect()
}

/// `mlx_random_split(res_0, res_1, key)`: the two halves of `split(key, 2)`, as MLX's C++
/// `random::split(key)` returns them.
pub fn split_key(key: &Array) -> Result<(Array, Array)> {
    let keys = ops::random::split(key, 2)?;
    let row = |i: i32| ops::take(&keys, &Array::scalar(i)?, Some(0));
    Ok((row(0)?, row(1)?))
}

/// `mlx_pad(a, axes, low, high, pad_value, mode)`: MLX's C++ overload that pads listed axes.
pub fn pad(a: &Array, axes: &[isize], low: &[usize], high: &[usize], value: &Array, mode: &str) -> Result<Array> {
    const OP: &str = "pad";
    if axes.len() != low.len() || axes.len() != high.len() {
        return Err(Error::invalid(
            OP,
            format!("Invalid number of padding sizes passed to pad with axes of size {}", axes.len()),
        ));
    }
    // MLX's Pad primitive has no batching rule for its value; here pad is composed of ops
    // that would batch it, so the refusal is made here.
    if mlx_arm_core::transforms::vmap_is_mapped(value) {
        return Err(Error::invalid("Pad::vmap", "Vmap over padding value is not supported."));
    }
    let mut widths = vec![(0usize, 0usize); a.ndim()];
    for ((&ax, &lo), &hi) in axes.iter().zip(low).zip(high) {
        let i = normalize_axis(ax, a.ndim(), OP)?;
        widths[i] = (lo, hi);
    }
    ops::pad(a, &widths, ops::PadMode::from_name(mode)?, value)
}

/// `mlx_pad_symmetric(a, pad_width, pad_value, mode)`: the same width on both sides of every axis.
pub fn pad_symmetric(a: &Array, width: usize, value: &Array, mode: &str) -> Result<Array> {
    if mlx_arm_core::transforms::vmap_is_mapped(value) {
        return Err(Error::invalid("Pad::vmap", "Vmap over padding value is not supported."));
    }
    ops::pad(a, &vec![(width, width); a.ndim()], ops::PadMode::from_name(mode)?, value)
}

/// `mlx_fast_scaled_dot_product_attention`'s `mask_mode`/`mask_arr` pair as MLX reads them:
/// `""` (no mask, or `mask_arr` if given), `"array"` (needs `mask_arr`) or `"causal"`.
/// With `sinks`, the sink-logit form of the core op.
pub fn sdpa(q: &Array, k: &Array, v: &Array, scale: f32, mode: &str, mask: Option<&Array>, sinks: Option<&Array>) -> Result<Array> {
    const OP: &str = "scaled_dot_product_attention";
    let m = match (mode, mask) {
        ("", None) => ops::SdpaMask::None,
        ("" | "array", Some(m)) => ops::SdpaMask::Array(m),
        ("causal", None) => ops::SdpaMask::Causal,
        ("array", None) => return Err(Error::invalid(OP, "Invalid mask_arr for mask_mode 'array'.")),
        ("causal", Some(_)) => return Err(Error::invalid(OP, "Invalid mask_arr for mask_mode 'causal'.")),
        (other, _) => {
            return Err(Error::invalid(OP, format!("Invalid mask_mode {other}. mask_mode must be 'causal', 'array' or ''.")))
        }
    };
    match sinks {
        Some(s) => ops::fast::scaled_dot_product_attention_sinks(q, k, v, scale, m, s),
        None => ops::scaled_dot_product_attention(q, k, v, scale, m),
    }
}

/// The string `ord` of `mlx_linalg_norm_matrix`: `"fro"`/`"f"` or `"nuc"`.
pub fn matrix_ord(ord: &str) -> Result<ops::NormOrd> {
    match ord {
        "fro" | "f" => Ok(ops::NormOrd::Fro),
        "nuc" => Ok(ops::NormOrd::Nuc),
        _ => Err(Error::invalid("linalg::norm", format!("Invalid ord {ord} for matrix norm."))),
    }
}

/// A GGML block type from ggml's name (`"q4_0"`, `"q8_0"`, `"f16"`, ... as in GGUF files).
pub fn ggml_type(name: &str) -> Result<mlx_arm_core::quant::GgmlType> {
    (0u32..64)
        .filter_map(mlx_arm_core::quant::GgmlType::from_id)
        .find(|t| t.name() == name)
        .ok_or_else(|| Error::invalid("ggml", format!("unknown GGML type '{name}'")))
}
