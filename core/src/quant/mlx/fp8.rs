//! E4M3 (`float8_e4m3fn`) conversion as MLX's `mx.to_fp8` / `mx.from_fp8` do it.
//!
//! Encoding: bias 7, round to nearest even, saturating: `|x| >= 464`, ±inf **and NaN** give
//! ±448 (`0x7E`/`0xFE`, sign kept), so the NaN code is never produced; subnormals go down to
//! 2^-9. Half inputs are widened to `f32` first. Decoding maps `0x7F`/`0xFF` to NaN.

use super::QFloat;
use crate::error::{Error, Result};

/// Encodes one `f32` to E4M3 bits (MLX's bit-level CPU algorithm).
pub fn to_fp8(x: f32) -> u8 {
    const SAT: u32 = 543 << 21; // 464.0: first value that rounds past 448
    const MIN_NORMAL: u32 = 121 << 23; // 2^-6
    const DENORM: u32 = 141 << 23; // 2^14: adding it rounds to a multiple of 2^-9
    let bits = x.to_bits();
    let sign = bits & 0x8000_0000;
    let a = bits ^ sign;
    let code: u8 = if a >= SAT {
        0x7E
    } else if a < MIN_NORMAL {
        // The f32 add rounds |x| to the subnormal grid (RNE); the low bits are the code.
        (f32::from_bits(a) + f32::from_bits(DENORM)).to_bits().wrapping_sub(DENORM) as u8
    } else {
        // Rebias the exponent (127 -> 7) and round the 20 dropped mantissa bits to even.
        let odd = (a >> 20) & 1;
        let r = a
            .wrapping_add((7u32.wrapping_sub(127) << 23).wrapping_add(0x7FFFF))
            .wrapping_add(odd);
        (r >> 20) as u8
    };
    code | (sign >> 24) as u8
}

/// Decodes E4M3 bits to `f32` (exact; `0x7F`/`0xFF` are NaN).
pub fn from_fp8(c: u8) -> f32 {
    let e = ((c >> 3) & 0xF) as i32;
    let m = (c & 7) as u32;
    let mag = if e == 15 && m == 7 {
        f32::NAN
    } else if e == 0 {
        m as f32 * f32::from_bits(118 << 23) // 2^-9
    } else {
        // (8 + m) * 2^(e - 10), built exactly from bits.
        f32::from_bits((((e + 127 - 7) as u32) << 23) | (m << 20))
    };
    if c & 0x80 != 0 {
        -mag
    } else {
        mag
    }
}

/// `mx.to_fp8` over a slice: `out[i] = to_fp8(x[i])`.
pub fn to_fp8_slice<T: QFloat>(x: &[T], out: &mut [u8]) -> Result<()> {
    if x.len() != out.len() {
        return Err(Error::invalid("to_fp8", "Input and output lengths differ."));
    }
    for (o, v) in out.iter_mut().zip(x) {
        *o = to_fp8(v.to_f32());
    }
    Ok(())
}

/// `mx.from_fp8(x, dtype=T)` over a slice (exact in every `T`).
pub fn from_fp8_slice<T: QFloat>(x: &[u8], out: &mut [T]) -> Result<()> {
    if x.len() != out.len() {
        return Err(Error::invalid("from_fp8", "Input and output lengths differ."));
    }
    for (o, c) in out.iter_mut().zip(x) {
        *o = T::from_f32(from_fp8(*c));
    }
    Ok(())
}
