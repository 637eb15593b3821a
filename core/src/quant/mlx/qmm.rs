//! Quantized matrix multiply (`mx.quantized_matmul`) that decodes one group of weights at a
//! time and never materialises the dequantized matrix.
//!
//! Weights are decoded to exactly the values `mx.dequantize` would give in `T` (affine:
//! `T(T(scale*q) + bias)`; fp modes: the table/E4M3 value times the scale as MLX's qmm kernel
//! decodes it). Products and sums are accumulated in **f32** and rounded to `T` once per
//! output. MLX's Linux CPU kernel accumulates in `T` itself, so for `f16`/`bf16` the two agree
//! only within rounding error; for `f32` the summation order below is the same as MLX's scalar
//! kernels (`_qmm_t`/`_qmm`/`fp_qmm_t`/`fp_qmm`), which makes `f32` results bit-identical.

use core::ops::Range;

use super::fp::element_value;
use super::fp8::from_fp8;
use super::params::{QuantMode, QuantParams};
use super::{affine::dequant_one, pack, rt, try_zeroed, QFloat};
use crate::error::{Error, Result};

const OP: &str = "quantized_matmul";

/// The per-group parameters of a quantized weight.
#[derive(Clone, Copy, Debug)]
pub enum QScales<'a, T> {
    /// Affine: one scale and one bias per group, in the weight dtype.
    Affine {
        /// Scales, one per group.
        scales: &'a [T],
        /// Biases, one per group.
        biases: &'a [T],
    },
    /// Fp modes: one `uint8` scale code per group (E8M0 for mx, E4M3 for nvfp4).
    Fp(&'a [u8]),
}

/// A decoded group scale as MLX's qmm kernel sees it (`dequantize_scale`): E8M0 becomes the
/// bfloat16 with bits `code << 7` (code 0 → `0x0040` = 2^-127), E4M3 goes through `from_fp8`;
/// both are then converted to `T`.
#[inline]
pub(crate) fn fp_scale<T: QFloat>(mode: QuantMode, code: u8) -> f32 {
    if mode == QuantMode::Nvfp4 {
        rt::<T>(from_fp8(code))
    } else {
        let b = if code == 0 { 0x40u16 } else { (code as u16) << 7 };
        rt::<T>(half::bf16::from_bits(b).to_f32())
    }
}

fn dims_err(msg: &'static str) -> Error {
    Error::invalid(OP, msg)
}

/// Computes output rows `rows` of `x (m×k) @ W^T` (`transpose = true`, `W` stored `(n, k)`
/// quantized along `k`, like `nn.Linear.weight`) or `x @ W` (`transpose = false`, `W` stored
/// `(k, n)` quantized along `n`). `out` holds just those rows: `rows.len() * n` elements, so
/// disjoint row ranges can be computed in parallel.
#[allow(clippy::too_many_arguments)]
pub fn qmm<T: QFloat>(
    x: &[T],
    m: usize,
    k: usize,
    w: &[u32],
    scales: QScales<'_, T>,
    n: usize,
    p: &QuantParams,
    transpose: bool,
    out: &mut [T],
    rows: Range<usize>,
) -> Result<()> {
    let (wpr, gpr) = check_dims(x.len(), m, k, w.len(), scales, n, p, transpose, out.len(), &rows)?;
    if transpose {
        qmm_t(x, k, w, scales, n, p, wpr, gpr, out, rows);
        Ok(())
    } else {
        qmm_n(x, k, w, scales, n, p, wpr, gpr, out, rows)
    }
}

/// The shape checks of [`qmm`] (shared with the SIMD driver `cpu::affine`): returns the words
/// and groups per row of the quantized axis.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_dims<T>(
    x_len: usize,
    m: usize,
    k: usize,
    w_len: usize,
    scales: QScales<'_, T>,
    n: usize,
    p: &QuantParams,
    transpose: bool,
    out_len: usize,
    rows: &Range<usize>,
) -> Result<(usize, usize)> {
    if Some(x_len) != m.checked_mul(k) {
        return Err(dims_err("x does not hold m*k elements."));
    }
    if rows.start > rows.end || rows.end > m {
        return Err(dims_err("Row range out of bounds."));
    }
    if Some(out_len) != (rows.end - rows.start).checked_mul(n) {
        return Err(dims_err("Output does not hold rows*n elements."));
    }
    // The quantized axis and the other one.
    let (q_len, other) = if transpose { (k, n) } else { (n, k) };
    let wpr = p.words_per_row(OP, q_len)?;
    let gpr = q_len / p.group_size;
    let n_scales = other.checked_mul(gpr).ok_or_else(|| dims_err("Too many groups."))?;
    if Some(w_len) != other.checked_mul(wpr) {
        return Err(dims_err("The weight does not match the expanded shape."));
    }
    match scales {
        QScales::Affine { scales, biases } => {
            if p.mode != QuantMode::Affine || scales.len() != n_scales || biases.len() != n_scales {
                return Err(dims_err("Scales and biases do not match the weight and mode."));
            }
        }
        QScales::Fp(s) => {
            if !p.mode.is_fp() || s.len() != n_scales {
                return Err(dims_err("Scales do not match the weight and mode."));
            }
        }
    }
    Ok((wpr, gpr))
}

/// `x @ W^T`: one dot product per output, decoding each weight row group by group.
#[allow(clippy::too_many_arguments)]
fn qmm_t<T: QFloat>(
    x: &[T],
    k: usize,
    w: &[u32],
    scales: QScales<'_, T>,
    n: usize,
    p: &QuantParams,
    wpr: usize,
    gpr: usize,
    out: &mut [T],
    rows: Range<usize>,
) {
    let gs = p.group_size;
    let mut codes = [0u32; 128];
    for (mi, orow) in rows.zip(out.chunks_exact_mut(n.max(1))) {
        let xr = &x[mi * k..(mi + 1) * k];
        for (ni, o) in orow.iter_mut().enumerate() {
            let wrow = &w[ni * wpr..(ni + 1) * wpr];
            let mut sum = 0f32;
            for g in 0..gpr {
                let c = &mut codes[..gs];
                pack::get_run(wrow, g * gs, p.bits, c);
                let xg = &xr[g * gs..(g + 1) * gs];
                let si = ni * gpr + g;
                match scales {
                    QScales::Affine { scales, biases } => {
                        let (s, b) = (scales[si].to_f32(), biases[si].to_f32());
                        for (xv, &q) in xg.iter().zip(c.iter()) {
                            sum += xv.to_f32() * dequant_one::<T>(s, b, q);
                        }
                    }
                    QScales::Fp(sc) => {
                        let s = fp_scale::<T>(p.mode, sc[si]);
                        let mut gsum = 0f32;
                        for (xv, &q) in xg.iter().zip(c.iter()) {
                            gsum += xv.to_f32() * element_value(p.bits, q);
                        }
                        sum += s * gsum;
                    }
                }
            }
            *o = T::from_f32(sum);
        }
    }
}

/// `x @ W` with `W` stored `(k, n)`: accumulates `x[m,k] * W[k, :]` into an f32 row.
#[allow(clippy::too_many_arguments)]
fn qmm_n<T: QFloat>(
    x: &[T],
    k: usize,
    w: &[u32],
    scales: QScales<'_, T>,
    n: usize,
    p: &QuantParams,
    wpr: usize,
    gpr: usize,
    out: &mut [T],
    rows: Range<usize>,
) -> Result<()> {
    let gs = p.group_size;
    let mut acc = try_zeroed(OP, n, 0f32)?;
    let mut codes = [0u32; 128];
    for (mi, orow) in rows.zip(out.chunks_exact_mut(n.max(1))) {
        acc.iter_mut().for_each(|a| *a = 0.0);
        for ki in 0..k {
            let xv = x[mi * k + ki].to_f32();
            let wrow = &w[ki * wpr..(ki + 1) * wpr];
            for g in 0..gpr {
                let c = &mut codes[..gs];
                pack::get_run(wrow, g * gs, p.bits, c);
                let a = &mut acc[g * gs..(g + 1) * gs];
                let si = ki * gpr + g;
                match scales {
                    QScales::Affine { scales, biases } => {
                        let (s, b) = (scales[si].to_f32(), biases[si].to_f32());
                        for (av, &q) in a.iter_mut().zip(c.iter()) {
                            *av += xv * dequant_one::<T>(s, b, q);
                        }
                    }
                    QScales::Fp(sc) => {
                        let xs = xv * fp_scale::<T>(p.mode, sc[si]);
                        for (av, &q) in a.iter_mut().zip(c.iter()) {
                            *av += xs * element_value(p.bits, q);
                        }
                    }
                }
            }
        }
        for (o, a) in orow.iter_mut().zip(&acc) {
            *o = T::from_f32(*a);
        }
    }
    Ok(())
}
