//! Affine quantization (`mode="affine"`): per group of `group_size` weights,
//! `w ≈ scale * q + bias` with `q` in `0..2^bits`.
//!
//! The algorithm is MLX's CPU kernel (`quantize<T,U>` in `backend/cpu/quantized.cpp`), not its
//! docstring: everything runs in `f32`; for bits >= 2 the larger-magnitude edge of the group is
//! pinned exactly (so about half the scales are negative and the bias is then the group max);
//! scales and biases are rounded to the weight dtype only when stored.

use alloc::vec::Vec;

use super::params::{QuantMode, QuantParams};
use super::{pack, rows_of, rt, try_zeroed, QFloat};
use crate::error::{Error, Result};

const OP_Q: &str = "quantize";
const OP_DQ: &str = "dequantize";

/// `std::max(a, b)` as C++ defines it (`a < b ? b : a`): a NaN in `b` is ignored.
#[inline]
fn cmax(a: f32, b: f32) -> f32 {
    if a < b { b } else { a }
}
/// `std::min(a, b)` (`b < a ? b : a`).
#[inline]
fn cmin(a: f32, b: f32) -> f32 {
    if b < a { b } else { a }
}

fn check_affine(op: &'static str, p: &QuantParams) -> Result<()> {
    if p.mode != QuantMode::Affine {
        return Err(Error::invalid(op, "Expected affine quantization parameters."));
    }
    Ok(())
}

/// Scale and bias (in `f32`, before rounding to `T`) of one group.
fn group_scale_bias(g: &[f32], bits: u32) -> (f32, f32) {
    let n_bins = ((1u32 << bits) - 1) as f32;
    let eps = 1e-7f32;
    let mut w_min = f32::INFINITY;
    let mut w_max = -f32::INFINITY;
    for &v in g {
        w_max = cmax(w_max, v);
        w_min = cmin(w_min, v);
    }
    if bits == 1 {
        return (cmax(w_max - w_min, eps), w_min);
    }
    let mask = w_min.abs() > w_max.abs();
    let mut scale = cmax((w_max - w_min) / n_bins, eps);
    if !mask {
        scale = -scale;
    }
    let edge = if mask { w_min } else { w_max };
    let q0 = libm::rintf(edge / scale);
    if q0 != 0.0 {
        (edge / q0, edge)
    } else {
        (scale, 0.0)
    }
}

/// Quantizes rows of `k` weights (`w.len()` a multiple of `k`) like `mx.quantize(w,
/// group_size, bits)`. Returns `(wq, scales, biases)`: `rows * k*bits/32` words and
/// `rows * k/group_size` scales and biases in `T`.
pub fn affine_quantize<T: QFloat>(w: &[T], k: usize, p: &QuantParams) -> Result<(Vec<u32>, Vec<T>, Vec<T>)> {
    check_affine(OP_Q, p)?;
    let wpr = p.words_per_row(OP_Q, k)?;
    let rows = rows_of(OP_Q, w.len(), k)?;
    let gs = p.group_size;
    let n_groups = w.len() / gs;
    let n_words = rows.checked_mul(wpr).ok_or_else(|| Error::invalid(OP_Q, "Too many words."))?;
    let mut wq = try_zeroed(OP_Q, n_words, 0u32)?;
    let mut scales = try_zeroed(OP_Q, n_groups, T::from_f32(0.0))?;
    let mut biases = try_zeroed(OP_Q, n_groups, T::from_f32(0.0))?;
    let n_bins = ((1u32 << p.bits) - 1) as f32;
    let gpr = k / gs;
    let mut buf = [0f32; 128];
    for gi in 0..n_groups {
        let g = &mut buf[..gs];
        for (b, v) in g.iter_mut().zip(&w[gi * gs..(gi + 1) * gs]) {
            *b = v.to_f32();
        }
        let (scale, bias) = group_scale_bias(g, p.bits);
        let (row, col0) = (gi / gpr, (gi % gpr) * gs);
        let row_words = &mut wq[row * wpr..(row + 1) * wpr];
        for (j, &v) in g.iter().enumerate() {
            let q = cmin(cmax(libm::rintf((v - bias) / scale), 0.0), n_bins);
            // NaN weights (undefined in MLX) become code 0.
            pack::put(row_words, col0 + j, p.bits, q as u32);
        }
        scales[gi] = T::from_f32(scale);
        biases[gi] = T::from_f32(bias);
    }
    Ok((wq, scales, biases))
}

/// Dequantizes like `mx.dequantize(wq, scales, biases, group_size, bits)`: `scale * q` then
/// `+ bias`, each rounded to `T` (the scales dtype, no fused multiply-add), then converted to
/// the output type `O` (MLX's `astype` when a `dtype` is requested). `k` is the unpacked row
/// length; `out.len()` must be `rows * k`.
pub fn affine_dequantize<T: QFloat, O: QFloat>(
    wq: &[u32],
    scales: &[T],
    biases: &[T],
    k: usize,
    p: &QuantParams,
    out: &mut [O],
) -> Result<()> {
    check_affine(OP_DQ, p)?;
    let wpr = p.words_per_row(OP_DQ, k)?;
    let gpr = k / p.group_size;
    let rows = rows_of(OP_DQ, out.len(), k)?;
    if Some(wq.len()) != rows.checked_mul(wpr)
        || Some(scales.len()) != rows.checked_mul(gpr)
        || biases.len() != scales.len()
    {
        return Err(Error::invalid(OP_DQ, "Shape of scales and biases does not match the matrix"));
    }
    let gs = p.group_size;
    let mut codes = [0u32; 128];
    for (gi, o) in out.chunks_exact_mut(gs).enumerate() {
        let (row, col0) = (gi / gpr, (gi % gpr) * gs);
        pack::get_run(&wq[row * wpr..(row + 1) * wpr], col0, p.bits, &mut codes[..gs]);
        let (s, b) = (scales[gi].to_f32(), biases[gi].to_f32());
        for (dst, &q) in o.iter_mut().zip(&codes[..gs]) {
            *dst = O::from_f32(dequant_one::<T>(s, b, q));
        }
    }
    Ok(())
}

/// One affine weight exactly as `mx.dequantize` computes it in `T`.
#[inline]
pub(crate) fn dequant_one<T: QFloat>(s: f32, b: f32, q: u32) -> f32 {
    rt::<T>(rt::<T>(s * q as f32) + b)
}
