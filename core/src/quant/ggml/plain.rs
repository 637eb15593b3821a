//! The unquantized GGML types F32, F16 and BF16 as byte rows (little-endian), with ggml's
//! conversions (round-to-nearest-even) and its portable dot products, which accumulate
//! `(float)(x·y)` in a `double` (`ggml_vec_dot_{f32,f16,bf16}` generic paths). Each is its own
//! activation partner.

use super::util::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// f32 → F32 bytes.
pub fn quantize_f32(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.iter().zip(dst.chunks_exact_mut(4)) {
        y.copy_from_slice(&x.to_le_bytes());
    }
}

/// f32 → F16 bytes.
pub fn quantize_f16(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.iter().zip(dst.chunks_exact_mut(2)) {
        y.copy_from_slice(&f32_to_f16(*x));
    }
}

/// f32 → BF16 bytes.
pub fn quantize_bf16(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.iter().zip(dst.chunks_exact_mut(2)) {
        y.copy_from_slice(&f32_to_bf16(*x));
    }
}

#[inline]
fn read_f32(b: &[u8]) -> f32 {
    match b {
        [a, b, c, d] => f32::from_le_bytes([*a, *b, *c, *d]),
        _ => 0.0,
    }
}

#[inline]
fn pair(b: &[u8]) -> [u8; 2] {
    match b {
        [a, b] => [*a, *b],
        _ => [0, 0],
    }
}

/// F32 bytes → f32.
pub fn dequantize_f32(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(4).zip(dst.iter_mut()) {
        *y = read_f32(x);
    }
}

/// F16 bytes → f32.
pub fn dequantize_f16(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(2).zip(dst.iter_mut()) {
        *y = f16_to_f32(pair(x));
    }
}

/// BF16 bytes → f32.
pub fn dequantize_bf16(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(2).zip(dst.iter_mut()) {
        *y = bf16_to_f32(pair(x));
    }
}

/// F32 · F32, products rounded to f32 and summed in f64.
pub fn vec_dot_f32(a: &[u8], b: &[u8]) -> f32 {
    let mut s = 0.0f64;
    for (x, y) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        s += (read_f32(x) * read_f32(y)) as f64;
    }
    s as f32
}

/// F16 · F16.
pub fn vec_dot_f16(a: &[u8], b: &[u8]) -> f32 {
    let mut s = 0.0f64;
    for (x, y) in a.chunks_exact(2).zip(b.chunks_exact(2)) {
        s += (f16_to_f32(pair(x)) * f16_to_f32(pair(y))) as f64;
    }
    s as f32
}

/// BF16 · BF16.
pub fn vec_dot_bf16(a: &[u8], b: &[u8]) -> f32 {
    let mut s = 0.0f64;
    for (x, y) in a.chunks_exact(2).zip(b.chunks_exact(2)) {
        s += (bf16_to_f32(pair(x)) * bf16_to_f32(pair(y))) as f64;
    }
    s as f32
}
