//! ggml's original 32-element block formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and the
//! activation format Q8_1.
//!
//! Quantizers follow ggml's `quantize_row_*_ref` (`ggml/src/ggml-quants.c`) operation by
//! operation, so the bytes are identical; dot products follow the portable
//! `ggml_vec_dot_*_generic` kernels (`ggml/src/ggml-cpu/quants.c`), integer sums per block
//! and the same float rounding order. Q4_0/Q5_0/Q8_0 weights pair with Q8_0 activations,
//! Q4_1/Q5_1 with Q8_1 (whose `s = d·Σq` carries the min term).

use super::block::{dequantize_blocks, ggml_block, quantize_blocks, zip_blocks, Block};
use super::util::{c_f32_to_i32, c_max, f16_to_f32, f32_to_f16, fabsf, le_u32};

/// Elements per block of every format in this file.
pub const QK: usize = 32;

ggml_block! {
    /// Q4_0: `x = d·(q − 8)`, q ∈ 0..16. Element j in the low nibble of `qs[j]`,
    /// element j+16 in its high nibble.
    BlockQ4_0 = Q4_0 {
        /// Scale, f16.
        d: 2,
        /// Packed 4-bit quants.
        qs: 16,
    }
}

ggml_block! {
    /// Q4_1: `x = d·q + m`, q ∈ 0..16; nibble order as Q4_0.
    BlockQ4_1 = Q4_1 {
        /// Scale, f16.
        d: 2,
        /// Minimum, f16.
        m: 2,
        /// Packed 4-bit quants.
        qs: 16,
    }
}

ggml_block! {
    /// Q5_0: `x = d·(q − 16)`, q ∈ 0..32; low 4 bits as Q4_0, bit 4 of element j in bit j
    /// of the little-endian `qh` word.
    BlockQ5_0 = Q5_0 {
        /// Scale, f16.
        d: 2,
        /// Fifth bits, a little-endian u32.
        qh: 4,
        /// Packed low nibbles.
        qs: 16,
    }
}

ggml_block! {
    /// Q5_1: `x = d·q + m`, q ∈ 0..32; bit layout as Q5_0.
    BlockQ5_1 = Q5_1 {
        /// Scale, f16.
        d: 2,
        /// Minimum, f16.
        m: 2,
        /// Fifth bits, a little-endian u32.
        qh: 4,
        /// Packed low nibbles.
        qs: 16,
    }
}

ggml_block! {
    /// Q8_0: `x = d·q`, q an i8.
    BlockQ8_0 = Q8_0 {
        /// Scale, f16.
        d: 2,
        /// Quants, i8 stored as bytes.
        qs: 32,
    }
}

ggml_block! {
    /// Q8_1: `x = d·q` plus `s = d·Σq` (f16) for the min term of Q4_1/Q5_1 dot products.
    BlockQ8_1 = Q8_1 {
        /// Scale, f16.
        d: 2,
        /// `d` times the sum of the quants, f16.
        s: 2,
        /// Quants, i8 stored as bytes.
        qs: 32,
    }
}

/// `(int8_t)(v)` then `MIN(hi, ·)` then stored as `uint8_t`, as ggml's C does.
#[inline]
fn c_i8_min(v: f32, hi: i32) -> u8 {
    let i = (c_f32_to_i32(v) as i8) as i32;
    (if hi < i { hi } else { i }) as u8
}

/// Absolute-max search of Q4_0/Q5_0: the signed value with the largest magnitude
/// (first one wins ties; NaN never wins).
#[inline]
fn signed_absmax(x: &[f32; QK]) -> f32 {
    let mut amax = 0.0f32;
    let mut max = 0.0f32;
    for &v in x {
        if amax < fabsf(v) {
            amax = fabsf(v);
            max = v;
        }
    }
    max
}

/// Min and max of Q4_1/Q5_1.
#[inline]
fn min_max(x: &[f32; QK]) -> (f32, f32) {
    let mut min = f32::MAX;
    let mut max = -f32::MAX;
    for &v in x {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
    }
    (min, max)
}

#[inline]
fn inv(d: f32) -> f32 {
    if d != 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

fn q4_0_block(x: &[f32; QK]) -> BlockQ4_0 {
    let d = signed_absmax(x) / -8.0;
    let id = inv(d);
    let mut b = BlockQ4_0 {
        d: f32_to_f16(d),
        ..BlockQ4_0::ZERO
    };
    for j in 0..QK / 2 {
        let lo = c_i8_min(x[j] * id + 8.5, 15);
        let hi = c_i8_min(x[j + QK / 2] * id + 8.5, 15);
        b.qs[j] = lo | (hi << 4);
    }
    b
}

fn q4_1_block(x: &[f32; QK]) -> BlockQ4_1 {
    let (min, max) = min_max(x);
    let d = (max - min) / 15.0;
    let id = inv(d);
    let mut b = BlockQ4_1 {
        d: f32_to_f16(d),
        m: f32_to_f16(min),
        ..BlockQ4_1::ZERO
    };
    for j in 0..QK / 2 {
        let lo = c_i8_min((x[j] - min) * id + 0.5, 15);
        let hi = c_i8_min((x[j + QK / 2] - min) * id + 0.5, 15);
        b.qs[j] = lo | (hi << 4);
    }
    b
}

fn q5_0_block(x: &[f32; QK]) -> BlockQ5_0 {
    let d = signed_absmax(x) / -16.0;
    let id = inv(d);
    let mut b = BlockQ5_0 {
        d: f32_to_f16(d),
        ..BlockQ5_0::ZERO
    };
    let mut qh = 0u32;
    for j in 0..QK / 2 {
        let lo = c_i8_min(x[j] * id + 16.5, 31);
        let hi = c_i8_min(x[j + QK / 2] * id + 16.5, 31);
        b.qs[j] = (lo & 0x0F) | ((hi & 0x0F) << 4);
        qh |= (((lo & 0x10) >> 4) as u32) << j;
        qh |= (((hi & 0x10) >> 4) as u32) << (j + QK / 2);
    }
    b.qh = qh.to_le_bytes();
    b
}

fn q5_1_block(x: &[f32; QK]) -> BlockQ5_1 {
    let (min, max) = min_max(x);
    let d = (max - min) / 31.0;
    let id = inv(d);
    let mut b = BlockQ5_1 {
        d: f32_to_f16(d),
        m: f32_to_f16(min),
        ..BlockQ5_1::ZERO
    };
    let mut qh = 0u32;
    for j in 0..QK / 2 {
        // ggml casts straight to uint8_t here (no MIN clamp).
        let lo = c_f32_to_i32((x[j] - min) * id + 0.5) as u8;
        let hi = c_f32_to_i32((x[j + QK / 2] - min) * id + 0.5) as u8;
        b.qs[j] = (lo & 0x0F) | ((hi & 0x0F) << 4);
        qh |= (((lo & 0x10) >> 4) as u32) << j;
        qh |= (((hi & 0x10) >> 4) as u32) << (j + QK / 2);
    }
    b.qh = qh.to_le_bytes();
    b
}

/// Q8_0/Q8_1 scale: `amax / 127` with ggml's NaN-propagating `MAX`.
#[inline]
fn q8_scale(x: &[f32; QK]) -> f32 {
    let mut amax = 0.0f32;
    for &v in x {
        amax = c_max(amax, fabsf(v));
    }
    amax / 127.0
}

/// `roundf(v)` stored into an `int8_t`.
#[inline]
fn round_i8(v: f32) -> i8 {
    c_f32_to_i32(libm::roundf(v)) as i8
}

fn q8_0_block(x: &[f32; QK]) -> BlockQ8_0 {
    let d = q8_scale(x);
    let id = inv(d);
    let mut b = BlockQ8_0 {
        d: f32_to_f16(d),
        ..BlockQ8_0::ZERO
    };
    for (q, &v) in b.qs.iter_mut().zip(x) {
        *q = round_i8(v * id) as u8;
    }
    b
}

fn q8_1_block(x: &[f32; QK]) -> BlockQ8_1 {
    let d = q8_scale(x);
    let id = inv(d);
    let mut b = BlockQ8_1 {
        d: f32_to_f16(d),
        ..BlockQ8_1::ZERO
    };
    let mut sum = 0i32;
    for (q, &v) in b.qs.iter_mut().zip(x) {
        let qi = round_i8(v * id);
        *q = qi as u8;
        sum += qi as i32;
    }
    b.s = f32_to_f16(sum as f32 * d);
    b
}

/// Quantizes whole Q4_0 blocks (ggml `quantize_row_q4_0_ref`).
pub fn quantize_q4_0(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q4_0_block);
}
/// Quantizes whole Q4_1 blocks (ggml `quantize_row_q4_1_ref`).
pub fn quantize_q4_1(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q4_1_block);
}
/// Quantizes whole Q5_0 blocks (ggml `quantize_row_q5_0_ref`).
pub fn quantize_q5_0(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q5_0_block);
}
/// Quantizes whole Q5_1 blocks (ggml `quantize_row_q5_1_ref`).
pub fn quantize_q5_1(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q5_1_block);
}
/// Quantizes whole Q8_0 blocks (ggml `quantize_row_q8_0_ref`).
pub fn quantize_q8_0(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q8_0_block);
}
/// Quantizes whole Q8_1 blocks (ggml `quantize_row_q8_1_ref`).
pub fn quantize_q8_1(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q8_1_block);
}

/// Dequantizes Q4_0 blocks.
pub fn dequantize_q4_0(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ4_0, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        for j in 0..QK / 2 {
            y[j] = ((b.qs[j] & 0x0F) as i32 - 8) as f32 * d;
            y[j + QK / 2] = ((b.qs[j] >> 4) as i32 - 8) as f32 * d;
        }
    });
}

/// Dequantizes Q4_1 blocks.
pub fn dequantize_q4_1(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ4_1, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        let m = f16_to_f32(b.m);
        for j in 0..QK / 2 {
            y[j] = (b.qs[j] & 0x0F) as f32 * d + m;
            y[j + QK / 2] = (b.qs[j] >> 4) as f32 * d + m;
        }
    });
}

/// The 5-bit values of a Q5_0/Q5_1 block, element order.
#[inline]
fn q5_values(qh: [u8; 4], qs: &[u8; 16]) -> [u8; QK] {
    let qh = le_u32(qh);
    let mut v = [0u8; QK];
    for j in 0..QK / 2 {
        let h0 = (((qh >> j) << 4) & 0x10) as u8;
        let h1 = ((qh >> (j + 12)) & 0x10) as u8;
        v[j] = (qs[j] & 0x0F) | h0;
        v[j + QK / 2] = (qs[j] >> 4) | h1;
    }
    v
}

/// Dequantizes Q5_0 blocks.
pub fn dequantize_q5_0(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ5_0, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        for (o, q) in y.iter_mut().zip(q5_values(b.qh, &b.qs)) {
            *o = (q as i32 - 16) as f32 * d;
        }
    });
}

/// Dequantizes Q5_1 blocks.
pub fn dequantize_q5_1(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ5_1, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        let m = f16_to_f32(b.m);
        for (o, q) in y.iter_mut().zip(q5_values(b.qh, &b.qs)) {
            *o = q as f32 * d + m;
        }
    });
}

/// Dequantizes Q8_0 blocks.
pub fn dequantize_q8_0(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ8_0, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        for (o, &q) in y.iter_mut().zip(&b.qs) {
            *o = (q as i8) as f32 * d;
        }
    });
}

/// Dequantizes Q8_1 blocks (`d·q`; ggml itself has no Q8_1 `to_float`).
pub fn dequantize_q8_1(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ8_1, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        for (o, &q) in y.iter_mut().zip(&b.qs) {
            *o = (q as i8) as f32 * d;
        }
    });
}

/// Σ over a block of `w[j]·a[j]` with `a` the i8 activation quants, split in halves as
/// ggml's generic kernels do (exact in i32 either way).
#[inline]
fn isum(w: &[i32; QK], a: &[u8; QK]) -> i32 {
    w.iter().zip(a).map(|(&w, &a)| w * (a as i8) as i32).sum()
}

#[inline]
fn nibbles(qs: &[u8; 16], offset: i32) -> [i32; QK] {
    let mut v = [0i32; QK];
    for j in 0..QK / 2 {
        v[j] = (qs[j] & 0x0F) as i32 - offset;
        v[j + QK / 2] = (qs[j] >> 4) as i32 - offset;
    }
    v
}

/// Q4_0 · Q8_0 (ggml `ggml_vec_dot_q4_0_q8_0_generic`).
pub fn vec_dot_q4_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockQ4_0, BlockQ8_0>(w, a) {
        let s = isum(&nibbles(&x.qs, 8), &y.qs);
        sumf += s as f32 * f16_to_f32(x.d) * f16_to_f32(y.d);
    }
    sumf
}

/// Q4_1 · Q8_1 (ggml `ggml_vec_dot_q4_1_q8_1_generic`).
pub fn vec_dot_q4_1_q8_1(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockQ4_1, BlockQ8_1>(w, a) {
        let s = isum(&nibbles(&x.qs, 0), &y.qs);
        sumf += (f16_to_f32(x.d) * f16_to_f32(y.d)) * s as f32 + f16_to_f32(x.m) * f16_to_f32(y.s);
    }
    sumf
}

#[inline]
fn q5_signed(qh: [u8; 4], qs: &[u8; 16], offset: i32) -> [i32; QK] {
    let mut v = [0i32; QK];
    for (o, q) in v.iter_mut().zip(q5_values(qh, qs)) {
        *o = q as i32 - offset;
    }
    v
}

/// Q5_0 · Q8_0 (ggml `ggml_vec_dot_q5_0_q8_0_generic`).
pub fn vec_dot_q5_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockQ5_0, BlockQ8_0>(w, a) {
        let s = isum(&q5_signed(x.qh, &x.qs, 16), &y.qs);
        sumf += (f16_to_f32(x.d) * f16_to_f32(y.d)) * s as f32;
    }
    sumf
}

/// Q5_1 · Q8_1 (ggml `ggml_vec_dot_q5_1_q8_1_generic`).
pub fn vec_dot_q5_1_q8_1(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockQ5_1, BlockQ8_1>(w, a) {
        let s = isum(&q5_signed(x.qh, &x.qs, 0), &y.qs);
        sumf += (f16_to_f32(x.d) * f16_to_f32(y.d)) * s as f32 + f16_to_f32(x.m) * f16_to_f32(y.s);
    }
    sumf
}

/// Q8_0 · Q8_0 (ggml `ggml_vec_dot_q8_0_q8_0_generic`).
pub fn vec_dot_q8_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockQ8_0, BlockQ8_0>(w, a) {
        let s: i32 =
            x.qs.iter()
                .zip(&y.qs)
                .map(|(&p, &q)| (p as i8) as i32 * (q as i8) as i32)
                .sum();
        sumf += s as f32 * (f16_to_f32(x.d) * f16_to_f32(y.d));
    }
    sumf
}
