//! The floating-point modes `mxfp4`, `mxfp8` (E8M0 scales, group 32) and `nvfp4` (E4M3
//! scales, group 16, optional global scale), as MLX's CPU graph fallback (`fp_quantize`,
//! `fp_dequantize` in `ops.cpp`) computes them, including which steps round to the weight
//! dtype `T` and which run in `f32`.

use alloc::vec::Vec;

use super::fp8::{from_fp8, to_fp8};
use super::params::{QuantMode, QuantParams};
use super::{pack, rows_of, rt, try_zeroed, QFloat};
use crate::error::{Error, Result};

const OP_Q: &str = "quantize";
const OP_DQ: &str = "dequantize";

/// FP4 E2M1 values by code: half of ggml's doubled levels (`quant::ggml::mxfp4::KVALUES`, the
/// one table of E2M1 values), with code 8 as −0.0 (MLX's table has it, `mx.dequantize` shows it).
pub const FP4_LUT: [f32; 16] = fp4_lut();

const fn fp4_lut() -> [f32; 16] {
    let mut t = [0f32; 16];
    let mut c = 0;
    while c < 16 {
        let mag = crate::quant::ggml::mxfp4::KVALUES[c & 7] as f32 * 0.5;
        t[c] = if c & 8 != 0 { -mag } else { mag };
        c += 1;
    }
    t
}

/// `448 * 6`: the nvfp4 global-scale normaliser.
const NV_NORM: f32 = 2688.0;

/// Exact `2^e` as `f32` (0 below 2^-149, inf from 2^128).
pub(crate) fn pow2(e: i64) -> f32 {
    if e >= 128 {
        f32::INFINITY
    } else if e >= -126 {
        f32::from_bits(((e + 127) as u32) << 23)
    } else if e >= -149 {
        f32::from_bits(1u32 << (e + 149))
    } else {
        0.0
    }
}

/// Smallest `e` with `2^e >= s`, for positive finite `s`.
fn ceil_log2(s: f32) -> i64 {
    let b = s.to_bits();
    let exp = ((b >> 23) & 0xFF) as i64;
    let man = b & 0x7F_FFFF;
    if exp == 0 {
        // Subnormal: s = man * 2^-149.
        (32 - (man - 1).leading_zeros()) as i64 - 149
    } else {
        exp - 127 + (man != 0) as i64
    }
}

/// MLX 0.32.4's E8M0 exponent for a block scale `s` (already rounded to the weight dtype):
/// `e = rint(log2 s)`, bumped by one when `2^e < s` — the smallest power of two `>= s`; `s == 0`
/// gives 0. Non-finite `s` reproduces x86's float-to-int conversion (`INT_MIN`), as MLX does.
fn e8m0_exponent(s: f32) -> i64 {
    if s == 0.0 {
        0
    } else if s.is_nan() {
        i32::MIN as i64
    } else if s.is_infinite() {
        i32::MIN as i64 + 1
    } else {
        ceil_log2(s)
    }
}

/// Index of the first minimum of `d` (MLX's `argmin`: a strict `<` scan from element 0).
#[inline]
fn argmin16(d: &[f32; 16]) -> u32 {
    let (mut best, mut bi) = (d[0], 0u32);
    for (j, &v) in d.iter().enumerate().skip(1) {
        if v < best {
            best = v;
            bi = j as u32;
        }
    }
    bi
}

fn check_fp(op: &'static str, p: &QuantParams) -> Result<()> {
    if !p.mode.is_fp() {
        return Err(Error::invalid(op, "Expected an fp quantization mode (mxfp4, mxfp8, nvfp4)."));
    }
    Ok(())
}

/// Quantizes rows of `k` weights like `mx.quantize(w, mode=...)` for `mxfp4`, `mxfp8` or
/// `nvfp4` (`global_scale` only for nvfp4). Returns `(wq, scales)` with `uint8` scales.
pub fn fp_quantize<T: QFloat>(
    w: &[T],
    k: usize,
    p: &QuantParams,
    global_scale: Option<f32>,
) -> Result<(Vec<u32>, Vec<u8>)> {
    check_fp(OP_Q, p)?;
    if global_scale.is_some() && p.mode != QuantMode::Nvfp4 {
        return Err(Error::invalid(OP_Q, "Global scale is only supported for 'nvfp4' quantization mode."));
    }
    let wpr = p.words_per_row(OP_Q, k)?;
    let rows = rows_of(OP_Q, w.len(), k)?;
    let gs = p.group_size;
    let n_groups = w.len() / gs;
    let n_words = rows.checked_mul(wpr).ok_or_else(|| Error::invalid(OP_Q, "Too many words."))?;
    let mut wq = try_zeroed(OP_Q, n_words, 0u32)?;
    let mut scales = try_zeroed(OP_Q, n_groups, 0u8)?;
    let maxval = if p.bits == 4 { 6.0f32 } else { 448.0 };
    let lut_t: [f32; 16] = core::array::from_fn(|j| rt::<T>(FP4_LUT[j]));
    let gpr = k / gs;
    for gi in 0..n_groups {
        let g = &w[gi * gs..(gi + 1) * gs];
        let (row, col0) = (gi / gpr, (gi % gpr) * gs);
        let row_words = &mut wq[row * wpr..(row + 1) * wpr];
        // amax = max|w| in T (exact), then s = amax / maxval rounded to T.
        let mut amax = g.first().map(|v| v.to_f32().abs()).unwrap_or(0.0);
        for v in g {
            let a = v.to_f32().abs();
            if a > amax {
                amax = a;
            }
        }
        let s = rt::<T>(amax / maxval);
        if p.mode == QuantMode::Nvfp4 {
            // Scale encode in f32 (the graph promotes T * f32 to f32).
            let enc = global_scale.map(|gsc| NV_NORM / gsc).unwrap_or(1.0);
            let code = to_fp8(s * enc);
            scales[gi] = code;
            let dec = rt::<T>(from_fp8(code));
            for (j, v) in g.iter().enumerate() {
                let wn = rt::<T>(v.to_f32() / dec) * enc;
                let d: [f32; 16] = core::array::from_fn(|i| (wn - lut_t[i]).abs());
                pack::put(row_words, col0 + j, 4, argmin16(&d));
            }
        } else {
            let e = e8m0_exponent(s);
            scales[gi] = (e + 127) as u8; // int32 -> uint8 wraps, as in MLX
            let div = rt::<T>(pow2(e));
            for (j, v) in g.iter().enumerate() {
                let wn = rt::<T>(v.to_f32() / div);
                let code = if p.bits == 4 {
                    // The subtraction runs in T here.
                    let d: [f32; 16] = core::array::from_fn(|i| rt::<T>(wn - lut_t[i]).abs());
                    argmin16(&d)
                } else {
                    to_fp8(wn) as u32
                };
                pack::put(row_words, col0 + j, p.bits, code);
            }
        }
    }
    Ok((wq, scales))
}

/// The decoded element value of code `c` (FP4 table or E4M3), exact in every dtype.
#[inline]
pub(crate) fn element_value(bits: u32, c: u32) -> f32 {
    if bits == 4 {
        FP4_LUT[(c & 15) as usize]
    } else {
        from_fp8(c as u8)
    }
}

/// Dequantizes like `mx.dequantize(wq, scales, mode=..., global_scale, dtype=O)` (MLX's
/// default `O` is `bfloat16`): element value times the decoded scale, one multiply in `O`.
///
/// With a nvfp4 `global_scale`, MLX computes the scale `from_fp8(code) * (g / 2688)` and the
/// product in `f32` and returns a **float32** array whatever `dtype` says; here the `f32`
/// value is rounded to `O`, so pass `O = f32` to match MLX's result exactly.
pub fn fp_dequantize<O: QFloat>(
    wq: &[u32],
    scales: &[u8],
    k: usize,
    p: &QuantParams,
    global_scale: Option<f32>,
    out: &mut [O],
) -> Result<()> {
    check_fp(OP_DQ, p)?;
    if global_scale.is_some() && p.mode != QuantMode::Nvfp4 {
        return Err(Error::invalid(OP_DQ, "Global scale is only supported for 'nvfp4' quantization mode."));
    }
    let wpr = p.words_per_row(OP_DQ, k)?;
    let gpr = k / p.group_size;
    let rows = rows_of(OP_DQ, out.len(), k)?;
    if Some(wq.len()) != rows.checked_mul(wpr) || Some(scales.len()) != rows.checked_mul(gpr) {
        return Err(Error::invalid(OP_DQ, "Shape of scales does not match the matrix"));
    }
    let gs = p.group_size;
    let mut codes = [0u32; 32];
    for (gi, o) in out.chunks_exact_mut(gs).enumerate() {
        let (row, col0) = (gi / gpr, (gi % gpr) * gs);
        pack::get_run(&wq[row * wpr..(row + 1) * wpr], col0, p.bits, &mut codes[..gs]);
        let sc = scales[gi];
        match (p.mode, global_scale) {
            (QuantMode::Nvfp4, Some(gsc)) => {
                let scale = rt::<O>(from_fp8(sc)) * (gsc / NV_NORM);
                for (dst, &c) in o.iter_mut().zip(&codes[..gs]) {
                    *dst = O::from_f32(element_value(p.bits, c) * scale);
                }
            }
            _ => {
                let scale = if p.mode == QuantMode::Nvfp4 {
                    rt::<O>(from_fp8(sc))
                } else {
                    rt::<O>(pow2(sc as i64 - 127))
                };
                for (dst, &c) in o.iter_mut().zip(&codes[..gs]) {
                    *dst = O::from_f32(rt::<O>(element_value(p.bits, c)) * scale);
                }
            }
        }
    }
    Ok(())
}
