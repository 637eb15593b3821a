//! MXFP4 (OCP microscaling FP4): 32 E2M1 values sharing one E8M0 power-of-two scale.
//!
//! ggml stores the E2M1 codes as doubled integers (`kvalues_mxfp4` = 2·E2M1) and decodes the
//! scale at half value, so `x = kvalues[q] · 2^(e−128)`. Quantization picks, per element,
//! the code whose value is nearest (first wins ties) — ggml's `quantize_row_mxfp4_ref`.
//! Pairs with Q8_0 activations (ggml `ggml_vec_dot_mxfp4_q8_0_generic`).

use super::block::{dequantize_blocks, ggml_block, quantize_blocks, zip_blocks};
use super::legacy::BlockQ8_0;
use super::util::{c_f32_to_i32, e8m0_to_f32_half, f16_to_f32, fabsf};

/// Elements per block.
pub const QK: usize = 32;

/// E2M1 code → twice its value (ggml's `kvalues_mxfp4`).
pub const KVALUES: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

ggml_block! {
    /// MXFP4: `x = KVALUES[q] · 2^(e−128)`; element j in the low nibble of `qs[j]`,
    /// element j+16 in the high nibble.
    BlockMxfp4 = MXFP4 {
        /// E8M0 shared exponent.
        e: 1,
        /// Packed E2M1 codes.
        qs: 16,
    }
}

/// The code nearest to `x` at scale `e` (ggml `best_index_mxfp4`).
fn best_index(x: f32, e: f32) -> u8 {
    let mut best = 0u8;
    let mut best_err = fabsf(KVALUES[0] as f32 * e - x);
    for (i, &k) in KVALUES.iter().enumerate().skip(1) {
        let err = fabsf(k as f32 * e - x);
        if err < best_err {
            best = i as u8;
            best_err = err;
        }
    }
    best
}

/// `floorf(log2f(a))` for a finite or infinite positive `a`. log2 is evaluated in f64 and
/// rounded once to f32, which is the correctly rounded `log2f` that ggml's libm approximates.
fn floor_log2f(a: f32) -> f32 {
    libm::floorf(libm::log2(a as f64) as f32)
}

fn mxfp4_block(x: &[f32; QK]) -> BlockMxfp4 {
    let mut amax = 0.0f32;
    for &v in x {
        if amax < fabsf(v) {
            amax = fabsf(v);
        }
    }
    // `(uint8_t)(floorf(log2f(amax)) - 2 + 127)`: x86 converts to int32 and truncates.
    let e = if amax > 0.0 {
        c_f32_to_i32(floor_log2f(amax) - 2.0 + 127.0) as u8
    } else {
        0
    };
    let d = e8m0_to_f32_half(e);
    let mut b = BlockMxfp4 {
        e: [e],
        qs: [0; 16],
    };
    for j in 0..QK / 2 {
        b.qs[j] = best_index(x[j], d) | (best_index(x[j + QK / 2], d) << 4);
    }
    b
}

/// Quantizes whole MXFP4 blocks (ggml `quantize_row_mxfp4_ref`).
pub fn quantize_mxfp4(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, mxfp4_block);
}

/// Dequantizes MXFP4 blocks.
pub fn dequantize_mxfp4(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockMxfp4, y: &mut [f32; QK]| {
        let d = e8m0_to_f32_half(b.e[0]);
        for j in 0..QK / 2 {
            y[j] = KVALUES[(b.qs[j] & 0x0F) as usize] as f32 * d;
            y[j + QK / 2] = KVALUES[(b.qs[j] >> 4) as usize] as f32 * d;
        }
    });
}

/// MXFP4 · Q8_0 (ggml `ggml_vec_dot_mxfp4_q8_0_generic`).
pub fn vec_dot_mxfp4_q8_0(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockMxfp4, BlockQ8_0>(w, a) {
        let d = f16_to_f32(y.d) * e8m0_to_f32_half(x.e[0]);
        let mut s1 = 0i32;
        let mut s2 = 0i32;
        for j in 0..QK / 2 {
            s1 += (y.qs[j] as i8) as i32 * KVALUES[(x.qs[j] & 0x0F) as usize] as i32;
            s2 += (y.qs[j + QK / 2] as i8) as i32 * KVALUES[(x.qs[j] >> 4) as usize] as i32;
        }
        sumf += d * (s1 + s2) as f32;
    }
    sumf
}
