//! Ternary formats for BitNet-style weights in {−1, 0, 1}·d, 256 elements per block.
//!
//! * TQ1_0 (1.6875 bpw): five trits per byte stored as a base-3 fixed-point fraction
//!   `ceil(t·256/243)` (t the 5-trit number, first element most significant), so trit n is
//!   recovered as `((q·3^n mod 256)·3) >> 8`. Bytes 0..32 hold elements 0..160 (trit n of
//!   byte m = element n·32 + m), bytes 32..48 hold elements 160..240 (n·16 + m), and the four
//!   `qh` bytes hold four trits each for elements 240..256 (trit n of byte j = element n·4 + j).
//! * TQ2_0 (2.0625 bpw): 2-bit codes `q = t + 1`; in each 32-byte group, bits 2l..2l+2 of
//!   byte m hold element l·32 + m of that 128-element half.
//!
//! Both scale by `d = max|x|` (f16) and pair with Q8_K activations; code follows ggml's
//! `quantize_row_tq{1,2}_0_ref` and `ggml_vec_dot_tq{1,2}_0_q8_K_generic`.

use super::block::{dequantize_blocks, ggml_block, quantize_blocks, zip_blocks, Block};
use super::k_quants::BlockQ8K;
use super::util::{c_lroundf, c_max, f16_to_f32, f32_to_f16, fabsf};

/// Elements per block.
pub const QK: usize = 256;

ggml_block! {
    /// TQ1_0: base-3 packed trits (see the module docs for the order).
    BlockTq1_0 = TQ1_0 {
        /// Five trits per byte.
        qs: 48,
        /// Four trits per byte.
        qh: 4,
        /// Scale, f16.
        d: 2,
    }
}

ggml_block! {
    /// TQ2_0: 2-bit codes `t + 1`.
    BlockTq2_0 = TQ2_0 {
        /// Four codes per byte.
        qs: 64,
        /// Scale, f16.
        d: 2,
    }
}

const POW3: [u8; 6] = [1, 3, 9, 27, 81, 243];

/// ggml's ternary scale: `max|x|` with the NaN-propagating `MAX`.
fn absmax(x: &[f32; QK]) -> f32 {
    let mut amax = 0.0f32;
    for &v in x {
        amax = c_max(amax, fabsf(v));
    }
    amax
}

/// `lroundf(v) + 1` as an `int` (0, 1, 2 for in-range inputs).
#[inline]
fn trit(v: f32) -> i32 {
    (c_lroundf(v) as i32).wrapping_add(1)
}

/// `ceil(q·256/243)` in `uint8_t` arithmetic.
#[inline]
fn to_fraction(q: u8) -> u8 {
    (q as u32 * 256).div_ceil(243) as u8
}

/// Trit `n` (0 = most significant) of a fraction byte, as ggml decodes it.
#[inline]
fn from_fraction(q: u8, n: usize) -> i32 {
    let q = q.wrapping_mul(POW3[n]);
    ((q as u16 * 3) >> 8) as i32
}

fn tq1_0_block(x: &[f32; QK]) -> BlockTq1_0 {
    let d = absmax(x);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut b = BlockTq1_0 {
        d: f32_to_f16(d),
        ..BlockTq1_0::ZERO
    };
    // Bytes 0..32: elements n·32 + m.
    for m in 0..32 {
        let mut q = 0u8;
        for n in 0..5 {
            q = q
                .wrapping_mul(3)
                .wrapping_add(trit(x[m + n * 32] * id) as u8);
        }
        b.qs[m] = to_fraction(q);
    }
    // Bytes 32..48: elements 160 + n·16 + m.
    for m in 0..16 {
        let mut q = 0u8;
        for n in 0..5 {
            q = q
                .wrapping_mul(3)
                .wrapping_add(trit(x[160 + m + n * 16] * id) as u8);
        }
        b.qs[32 + m] = to_fraction(q);
    }
    // qh: elements 240 + n·4 + j, four trits then a zero trit.
    for j in 0..4 {
        let mut q = 0u8;
        for n in 0..4 {
            q = q
                .wrapping_mul(3)
                .wrapping_add(trit(x[240 + j + n * 4] * id) as u8);
        }
        b.qh[j] = to_fraction(q.wrapping_mul(3));
    }
    b
}

fn tq2_0_block(x: &[f32; QK]) -> BlockTq2_0 {
    let d = absmax(x);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut b = BlockTq2_0 {
        qs: [0; 64],
        d: f32_to_f16(d),
    };
    for half in 0..2 {
        for m in 0..32 {
            let mut q = 0u8;
            for n in 0..4 {
                let t = trit(x[half * 128 + m + n * 32] * id);
                q = q.wrapping_add(((t & 3) << (2 * n)) as u8);
            }
            b.qs[half * 32 + m] = q;
        }
    }
    b
}

/// The 256 trits (−1, 0, 1) of a TQ1_0 block in element order.
fn tq1_0_trits(b: &BlockTq1_0) -> [i32; QK] {
    let mut t = [0i32; QK];
    for n in 0..5 {
        for m in 0..32 {
            t[n * 32 + m] = from_fraction(b.qs[m], n) - 1;
        }
        for m in 0..16 {
            t[160 + n * 16 + m] = from_fraction(b.qs[32 + m], n) - 1;
        }
    }
    for n in 0..4 {
        for j in 0..4 {
            t[240 + n * 4 + j] = from_fraction(b.qh[j], n) - 1;
        }
    }
    t
}

/// The 256 codes minus one of a TQ2_0 block in element order (−1..=2; 2 only for the
/// unused code 3, which ggml decodes the same way).
fn tq2_0_trits(b: &BlockTq2_0) -> [i32; QK] {
    let mut t = [0i32; QK];
    for half in 0..2 {
        for l in 0..4 {
            for m in 0..32 {
                t[half * 128 + l * 32 + m] = ((b.qs[half * 32 + m] >> (2 * l)) & 3) as i32 - 1;
            }
        }
    }
    t
}

/// Quantizes whole TQ1_0 blocks (ggml `quantize_row_tq1_0_ref`).
pub fn quantize_tq1_0(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, tq1_0_block);
}

/// Quantizes whole TQ2_0 blocks (ggml `quantize_row_tq2_0_ref`).
pub fn quantize_tq2_0(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, tq2_0_block);
}

/// Dequantizes TQ1_0 blocks.
pub fn dequantize_tq1_0(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockTq1_0, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        for (o, t) in y.iter_mut().zip(tq1_0_trits(b)) {
            *o = t as f32 * d;
        }
    });
}

/// Dequantizes TQ2_0 blocks.
pub fn dequantize_tq2_0(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockTq2_0, y: &mut [f32; QK]| {
        let d = f16_to_f32(b.d);
        for (o, t) in y.iter_mut().zip(tq2_0_trits(b)) {
            *o = t as f32 * d;
        }
    });
}

/// Σ t·q over a block (exact in i32).
#[inline]
fn tsum(t: &[i32; QK], y: &BlockQ8K) -> i32 {
    t.iter()
        .zip(&y.qs)
        .map(|(&t, &q)| t * (q as i8) as i32)
        .sum()
}

/// TQ1_0 · Q8_K (ggml `ggml_vec_dot_tq1_0_q8_K_generic`).
pub fn vec_dot_tq1_0_q8_k(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockTq1_0, BlockQ8K>(w, a) {
        let s = tsum(&tq1_0_trits(&x), &y);
        sumf += s as f32 * (f16_to_f32(x.d) * y.d_f32());
    }
    sumf
}

/// TQ2_0 · Q8_K (ggml `ggml_vec_dot_tq2_0_q8_K_generic`).
pub fn vec_dot_tq2_0_q8_k(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockTq2_0, BlockQ8K>(w, a) {
        let s = tsum(&tq2_0_trits(&x), &y);
        let d = y.d_f32() * f16_to_f32(x.d);
        sumf += s as f32 * d;
    }
    sumf
}
