//! ggml's 4-bit non-linear formats: IQ4_NL (32-element blocks) and IQ4_XS (256-element
//! super-blocks of eight 32-element sub-blocks with 6-bit scales).
//!
//! Both store 4-bit indices into one fixed, non-uniform table of 16 signed levels
//! ([`KVALUES`], denser near zero, like a normal distribution's quantiles), so a weight is
//! `d · KVALUES[q]` (IQ4_XS: `d · (ls − 32) · KVALUES[q]` with a 6-bit sub-block scale `ls`).
//! Nibble order is the legacy one: element j in the low nibble of byte j, element j+16 in its
//! high nibble (per 32 elements).
//!
//! The quantizer is ggml's `quantize_row_iq4_nl_impl` without importance weights, operation by
//! operation: per 32 elements a least-squares scale searched over 15 candidate grids, then
//! (IQ4_XS) the sub-block scales rounded to 6 bits under one f16 super-scale and the indices
//! re-picked. IQ4_NL follows `quantize_iq4_nl` (what `ggml_quantize_chunk` and llama-quantize
//! run), not `quantize_row_iq4_nl_ref`: the latter skips the search and leaves all-zero
//! blocks with the indices of the previous block (uninitialized memory for the first).
//! IQ4_NL pairs with Q8_0 activations, IQ4_XS with Q8_K (ggml's `vec_dot_type`).

use super::block::{dequantize_blocks, ggml_block, quantize_blocks, zip_blocks, Block};
use super::k_quants::BlockQ8K;
use super::legacy::BlockQ8_0;
use super::util::{f16_to_f32, f32_to_f16, fabsf, nearest_int};

/// Elements per IQ4_NL block and per IQ4_XS sub-block.
pub const QK4_NL: usize = 32;
/// Elements per IQ4_XS super-block.
pub const QK_K: usize = 256;

/// The 16 levels a 4-bit index selects (ggml's `kvalues_iq4nl`).
pub const KVALUES: [i8; 16] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];

ggml_block! {
    /// IQ4_NL: `x = d · KVALUES[q]`.
    BlockIq4Nl = IQ4_NL {
        /// Scale, f16.
        d: 2,
        /// Packed 4-bit indices.
        qs: 16,
    }
}

ggml_block! {
    /// IQ4_XS: sub-block `s` (32 elements) is `d · (ls_s − 32) · KVALUES[q]`, `ls_s` = low
    /// nibble `s mod 2` of `scales_l[s / 2]` | bits `2s..2s+2` of `scales_h` shifted left by 4.
    BlockIq4Xs = IQ4_XS {
        /// Super-scale, f16.
        d: 2,
        /// High two bits of the eight 6-bit sub-block scales, a little-endian u16.
        scales_h: 2,
        /// Low four bits of the sub-block scales, two per byte.
        scales_l: 4,
        /// Packed 4-bit indices, 16 bytes per sub-block.
        qs: 128,
    }
}

impl BlockIq4Xs {
    /// The 6-bit scale of sub-block `s` (0..8), before the −32 offset.
    #[inline]
    pub fn sub_scale(&self, s: usize) -> i32 {
        xs_sub_scale(u16::from_le_bytes(self.scales_h), self.scales_l[s / 2], s)
    }
}

/// IQ4_XS sub-block `s`'s 6-bit scale from the block's `scales_h` word and its `scales_l` byte
/// `s / 2` (the SIMD kernels read both straight from the block bytes).
#[inline]
pub fn xs_sub_scale(scales_h: u16, scales_l_byte: u8, s: usize) -> i32 {
    let lo = (scales_l_byte >> (4 * (s % 2))) & 0x0F;
    (lo | ((((scales_h >> (2 * s)) & 3) as u8) << 4)) as i32
}

/// The index of the level nearest `x` (ggml `best_index_int8`: binary search, the lower level
/// on ties lost — `x − lo < hi − x` picks lo). NaN lands on the last level, as in C.
#[inline]
fn best_index(x: f32) -> u8 {
    let v = |i: usize| KVALUES[i] as f32;
    if x <= v(0) {
        return 0;
    }
    if x >= v(15) {
        return 15;
    }
    let (mut ml, mut mu) = (0usize, 15usize);
    while mu - ml > 1 {
        let mav = (ml + mu) / 2;
        if x < v(mav) {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    if x - v(mu - 1) < v(mu) - x {
        (mu - 1) as u8
    } else {
        mu as u8
    }
}

/// Below this magnitude a 32-element group is all zero (ggml `GROUP_MAX_EPS`).
const GROUP_MAX_EPS: f32 = 1e-15;
/// Candidate grids tried on each side of the first guess (`ntry` of ggml's callers).
const NTRY: i32 = 7;

/// The least-squares scale of one 32-element group and its indices in `l` (ggml's per-block
/// loop of `quantize_row_iq4_nl_impl` with unit weights `x²`); None for an all-zero group,
/// whose `l` is left untouched.
fn group_scale(xb: &[f32], l: &mut [u8]) -> Option<f32> {
    let mut amax = 0.0f32;
    let mut max = 0.0f32;
    for &v in xb {
        if fabsf(v) > amax {
            amax = fabsf(v);
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        return None;
    }
    let v0 = KVALUES[0] as f32;
    // Σ w·q·x and Σ w·q² for the indices `pick` gives at inverse scale `id` (w = x²).
    let sums = |id: f32, mut keep: Option<&mut [u8]>| {
        let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
        for (j, &x) in xb.iter().enumerate() {
            let idx = best_index(id * x);
            if let Some(l) = keep.as_deref_mut() {
                l[j] = idx;
            }
            let q = KVALUES[idx as usize] as f32;
            let w = x * x;
            sumqx += w * q * x;
            sumq2 += w * q * q;
        }
        (sumqx, sumq2)
    };
    let d0 = -max / v0;
    let (sumqx, sumq2) = sums(1.0 / d0, Some(l));
    let mut d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
    let mut best = d * sumqx;
    for itry in -NTRY..=NTRY {
        let id = (itry + KVALUES[0] as i32) as f32 / max;
        let (sumqx, sumq2) = sums(id, None);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    Some(d)
}

/// Packs 32 indices into 16 bytes in nibble order.
fn pack(l: &[u8], q4: &mut [u8]) {
    for j in 0..16 {
        q4[j] = l[j] | (l[16 + j] << 4);
    }
}

fn iq4_nl_block(x: &[f32; QK4_NL]) -> BlockIq4Nl {
    let mut l = [0u8; QK4_NL];
    let d = group_scale(x, &mut l).unwrap_or(0.0);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    for (o, &v) in l.iter_mut().zip(x) {
        *o = best_index(id * v);
    }
    let mut b = BlockIq4Nl { d: f32_to_f16(d), ..BlockIq4Nl::ZERO };
    pack(&l, &mut b.qs);
    b
}

fn iq4_xs_block(x: &[f32; QK_K]) -> BlockIq4Xs {
    let mut l = [0u8; QK_K];
    let mut scales = [0.0f32; QK_K / QK4_NL];
    let (mut max_scale, mut amax_scale) = (0.0f32, 0.0f32);
    for (ib, s) in scales.iter_mut().enumerate() {
        let r = ib * QK4_NL..(ib + 1) * QK4_NL;
        *s = group_scale(&x[r.clone()], &mut l[r]).unwrap_or(0.0);
        if fabsf(*s) > amax_scale {
            amax_scale = fabsf(*s);
            max_scale = *s;
        }
    }
    let d = -max_scale / 32.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut b = BlockIq4Xs { d: f32_to_f16(d), ..BlockIq4Xs::ZERO };
    let mut scales_h = 0u16;
    for (ib, &s) in scales.iter().enumerate() {
        let ls = nearest_int(id * s).clamp(-32, 31);
        let dl = d * ls as f32;
        let idl = if dl != 0.0 { 1.0 / dl } else { 0.0 };
        let r = ib * QK4_NL..(ib + 1) * QK4_NL;
        for (o, &v) in l[r.clone()].iter_mut().zip(&x[r]) {
            *o = best_index(idl * v);
        }
        let u = (ls + 32) as u8;
        b.scales_l[ib / 2] |= (u & 0x0F) << (4 * (ib % 2));
        scales_h |= ((u >> 4) as u16) << (2 * ib);
    }
    b.scales_h = scales_h.to_le_bytes();
    for (lc, qc) in l.chunks_exact(QK4_NL).zip(b.qs.chunks_exact_mut(16)) {
        pack(lc, qc);
    }
    b
}

/// Quantizes whole IQ4_NL blocks (ggml `quantize_iq4_nl` without importance weights).
pub fn quantize_iq4_nl(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, iq4_nl_block);
}

/// Quantizes whole IQ4_XS super-blocks (ggml `quantize_row_iq4_xs_ref`).
pub fn quantize_iq4_xs(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, iq4_xs_block);
}

/// `d · KVALUES[q]` for the 32 indices of `qs` (nibble order).
#[inline]
fn levels(qs: &[u8], d: f32, y: &mut [f32]) {
    for j in 0..16 {
        y[j] = d * KVALUES[(qs[j] & 0x0F) as usize] as f32;
        y[j + 16] = d * KVALUES[(qs[j] >> 4) as usize] as f32;
    }
}

/// Dequantizes IQ4_NL blocks.
pub fn dequantize_iq4_nl(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockIq4Nl, y: &mut [f32; QK4_NL]| levels(&b.qs, f16_to_f32(b.d), y));
}

/// Dequantizes IQ4_XS super-blocks.
pub fn dequantize_iq4_xs(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockIq4Xs, y: &mut [f32; QK_K]| {
        let d = f16_to_f32(b.d);
        for (s, (qs, ys)) in b.qs.chunks_exact(16).zip(y.chunks_exact_mut(QK4_NL)).enumerate() {
            levels(qs, d * (b.sub_scale(s) - 32) as f32, ys);
        }
    });
}

/// Σ `KVALUES[q_j] · a_j` over 32 elements (indices in nibble order, `a` i8 activations).
#[inline]
fn isum(qs: &[u8], a: &[u8]) -> i32 {
    let mut s = 0i32;
    for j in 0..16 {
        s += (a[j] as i8) as i32 * KVALUES[(qs[j] & 0x0F) as usize] as i32;
        s += (a[j + 16] as i8) as i32 * KVALUES[(qs[j] >> 4) as usize] as i32;
    }
    s
}

/// IQ4_NL · Q8_0 (ggml `ggml_vec_dot_iq4_nl_q8_0_generic`).
pub fn vec_dot_iq4_nl_q8_0(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockIq4Nl, BlockQ8_0>(w, a) {
        let d = f16_to_f32(y.d) * f16_to_f32(x.d);
        sumf += d * isum(&x.qs, &y.qs) as f32;
    }
    sumf
}

/// IQ4_XS · Q8_K (ggml `ggml_vec_dot_iq4_xs_q8_K_generic`).
pub fn vec_dot_iq4_xs_q8_k(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockIq4Xs, BlockQ8K>(w, a) {
        let d4d8 = f16_to_f32(x.d) * y.d_f32();
        for (s, (qs, q8)) in x.qs.chunks_exact(16).zip(y.qs.chunks_exact(QK4_NL)).enumerate() {
            let dl = d4d8 * (x.sub_scale(s) - 32) as f32;
            sumf += dl * isum(qs, q8) as f32;
        }
    }
    sumf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_index_picks_nearest_level() {
        assert_eq!(best_index(-1000.0), 0);
        assert_eq!(best_index(1000.0), 15);
        assert_eq!(best_index(0.0), 8); // |0 − (−10)| = 10 > |1 − 0|
        assert_eq!(best_index(-4.5), 8); // −4.5 is 5.5 from −10, 5.5 from 1: tie goes up
        assert_eq!(best_index(-4.6), 7);
        assert_eq!(best_index(100.0), 14); // 89 is 11 away, 113 is 13
        for (i, &k) in KVALUES.iter().enumerate() {
            assert_eq!(best_index(k as f32) as usize, i);
        }
    }

    #[test]
    fn sub_scales_unpack_six_bits() {
        let mut b = BlockIq4Xs::ZERO;
        b.scales_l = [0x21, 0x43, 0x65, 0x87];
        b.scales_h = 0b11_10_01_00_11_10_01_00u16.to_le_bytes();
        let got: [i32; 8] = core::array::from_fn(|s| b.sub_scale(s));
        assert_eq!(got, [0x01, 0x12, 0x23, 0x34, 0x05, 0x16, 0x27, 0x38]);
    }
}
