//! ggml's "K-quants": 256-element super-blocks split into 16 or 8 sub-blocks whose own
//! scales (and mins) are quantized to 4, 6 or 8 bits under an f16 super-scale.
//!
//! | type | sub-blocks | element                     | sub-scale bits      |
//! |------|------------|-----------------------------|---------------------|
//! | Q2_K | 16 × 16    | `d·sc·q − dmin·m`, q 2-bit  | 4 (scale), 4 (min)  |
//! | Q3_K | 16 × 16    | `d·(sc−32)·(q−4)`, q 3-bit  | 6                   |
//! | Q4_K |  8 × 32    | `d·sc·q − dmin·m`, q 4-bit  | 6 (scale), 6 (min)  |
//! | Q5_K |  8 × 32    | `d·sc·q − dmin·m`, q 5-bit  | 6 (scale), 6 (min)  |
//! | Q6_K | 16 × 16    | `d·sc·(q−32)`, q 6-bit      | 8 (signed)          |
//! | Q8_K |  —         | `d·q`, f32 `d`, i8 q        | + 16 i16 group sums |
//!
//! Q8_K is the activation partner of every K-quant (and of TQ1_0/TQ2_0); its `bsums` let the
//! min terms be computed per sub-block without touching the quants.
//!
//! Quantizers follow ggml's `quantize_row_q*_K_ref` with their search helpers
//! (`make_qx_quants`, `make_q3_quants`, `make_qkx2_quants`) operation by operation, so the
//! bytes are identical (checked against ggml's C in the tests); dot products follow
//! `ggml_vec_dot_q*_K_q8_K_generic`, including its eight float lanes.

use super::block::{dequantize_blocks, ggml_block, quantize_blocks, zip_blocks, Block};
use super::util::{f16_to_f32, f32_to_f16, fabsf, nearest_int};

/// Elements per super-block.
pub const QK_K: usize = 256;

/// ggml's `GROUP_MAX_EPS`: below this absolute maximum a group counts as all zero.
const GROUP_MAX_EPS: f32 = 1e-15;

ggml_block! {
    /// Q2_K: 16 sub-blocks of 16. `scales[s]` holds the 4-bit scale (low nibble) and min
    /// (high nibble) of sub-block s; byte `32·h + l` of `qs` holds bits 2j..2j+2 = element
    /// `128·h + 32·j + l`.
    BlockQ2K = Q2_K {
        /// Sub-block scales and mins, 4 bits each.
        scales: 16,
        /// 2-bit quants.
        qs: 64,
        /// Super-scale for the scales, f16.
        d: 2,
        /// Super-scale for the mins, f16.
        dmin: 2,
    }
}

ggml_block! {
    /// Q3_K: 16 sub-blocks of 16. Low 2 bits as in Q2_K; the high bit of element e is bit
    /// e/32 of `hmask[e % 32]` (set means "no −4"). The 6-bit scale of sub-block s is
    /// `scales[s % 8]` (low nibble for s < 8, high for s ≥ 8) plus 2 bits from
    /// `scales[8 + s % 4] >> 2·(s / 4)`, offset by 32.
    BlockQ3K = Q3_K {
        /// High bits.
        hmask: 32,
        /// Low 2 bits.
        qs: 64,
        /// Packed 6-bit scales.
        scales: 12,
        /// Super-scale, f16.
        d: 2,
    }
}

ggml_block! {
    /// Q4_K: 8 sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes
    /// (see [`scale_min_k4`]); byte `32·h + l` of `qs` holds element `64·h + l` (low nibble)
    /// and `64·h + 32 + l` (high nibble).
    BlockQ4K = Q4_K {
        /// Super-scale for the scales, f16.
        d: 2,
        /// Super-scale for the mins, f16.
        dmin: 2,
        /// Packed 6-bit scales and mins.
        scales: 12,
        /// 4-bit quants.
        qs: 128,
    }
}

ggml_block! {
    /// Q5_K: Q4_K plus a fifth bit: element `64·h + l` (`+32`) takes bit 2h (2h+1) of `qh[l]`.
    BlockQ5K = Q5_K {
        /// Super-scale for the scales, f16.
        d: 2,
        /// Super-scale for the mins, f16.
        dmin: 2,
        /// Packed 6-bit scales and mins.
        scales: 12,
        /// Fifth bits.
        qh: 32,
        /// Low 4 bits.
        qs: 128,
    }
}

ggml_block! {
    /// Q6_K: 16 sub-blocks of 16 with i8 scales. In each 128-element half h, element
    /// `l + 32·k` (k = 0..4) has its low nibble in `ql[64h + l + 32·(k & 1)]` (high nibble when
    /// k ≥ 2) and its top 2 bits at bits 2k..2k+2 of `qh[32h + l]`.
    BlockQ6K = Q6_K {
        /// Low 4 bits.
        ql: 128,
        /// High 2 bits.
        qh: 64,
        /// Sub-block scales, i8.
        scales: 16,
        /// Super-scale, f16.
        d: 2,
    }
}

ggml_block! {
    /// Q8_K: activations for K-quant dot products. `d` is an f32; `bsums[g]` (i16) is the
    /// sum of quants 16g..16g+16.
    BlockQ8K = Q8_K {
        /// Scale, f32 little-endian.
        d: 4,
        /// Quants, i8.
        qs: 256,
        /// Sums of 16 quants, i16 little-endian.
        bsums: 32,
    }
}

impl BlockQ8K {
    /// The f32 scale.
    #[inline]
    pub fn d_f32(&self) -> f32 {
        f32::from_le_bytes(self.d)
    }
    /// Group sum `g` (0..16).
    #[inline]
    pub fn bsum(&self, g: usize) -> i32 {
        match self.bsums.get(2 * g..2 * g + 2) {
            Some(&[a, b]) => i16::from_le_bytes([a, b]) as i32,
            _ => 0,
        }
    }
}

/// 6-bit scale and min `j` (0..8) of a Q4_K/Q5_K block (ggml `get_scale_min_k4`).
#[inline]
pub fn scale_min_k4(j: usize, q: &[u8; 12]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

/// 6-bit scale of Q3_K sub-block `s` (0..16), minus 32.
#[inline]
fn q3_scale(sc: &[u8; 12], s: usize) -> i32 {
    let lo = if s < 8 { sc[s] & 0xF } else { sc[s - 8] >> 4 };
    let hi = (sc[8 + s % 4] >> (2 * (s / 4))) & 3;
    (lo | (hi << 4)) as i32 - 32
}

// ---------------------------------------------------------------- search helpers

/// ggml `make_qx_quants` with `rmse_type = 1` (weights x²) and no importance weights:
/// signed levels −nmax..nmax−1 stored in `l` offset by nmax; returns the scale.
fn make_qx_quants(x: &[f32], nmax: i32, l: &mut [i8]) -> f32 {
    let mut max = 0.0f32;
    let mut amax = 0.0f32;
    for &v in x {
        let ax = fabsf(v);
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        l.iter_mut().for_each(|q| *q = 0);
        return 0.0;
    }
    let clamp = |q: i32| q.clamp(-nmax, nmax - 1);
    let mut iscale = -(nmax as f32) / max;
    let mut sumlx = 0.0f32;
    let mut suml2 = 0.0f32;
    for (q, &v) in l.iter_mut().zip(x) {
        let li = clamp(nearest_int(iscale * v));
        *q = (li + nmax) as i8;
        let w = v * v;
        sumlx += w * v * li as f32;
        suml2 += w * li as f32 * li as f32;
    }
    let mut scale = if suml2 != 0.0 { sumlx / suml2 } else { 0.0 };
    let mut best = scale * sumlx;
    for is in -9..=9 {
        if is == 0 {
            continue;
        }
        iscale = -(nmax as f32 + 0.1 * is as f32) / max;
        sumlx = 0.0;
        suml2 = 0.0;
        for &v in x {
            let li = clamp(nearest_int(iscale * v));
            let w = v * v;
            sumlx += w * v * li as f32;
            suml2 += w * li as f32 * li as f32;
        }
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            for (q, &v) in l.iter_mut().zip(x) {
                *q = (nmax + clamp(nearest_int(iscale * v))) as i8;
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    scale
}

/// ggml `make_q3_quants` with `do_rmse = true`: levels −nmax..nmax−1 refined by coordinate
/// descent, stored offset by nmax; returns the scale.
fn make_q3_quants(x: &[f32], nmax: i32, l: &mut [i8]) -> f32 {
    let mut max = 0.0f32;
    let mut amax = 0.0f32;
    for &v in x {
        let ax = fabsf(v);
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        l.iter_mut().for_each(|q| *q = 0);
        return 0.0;
    }
    let clamp = |q: i32| q.clamp(-nmax, nmax - 1);
    let iscale = -(nmax as f32) / max;
    let mut sumlx = 0.0f32;
    let mut suml2 = 0.0f32;
    for (q, &v) in l.iter_mut().zip(x) {
        let li = clamp(nearest_int(iscale * v));
        *q = li as i8;
        let w = v * v;
        sumlx += w * v * li as f32;
        suml2 += w * li as f32 * li as f32;
    }
    for _ in 0..5 {
        let mut changed = 0;
        for (q, &v) in l.iter_mut().zip(x) {
            let w = v * v;
            let cur = *q as f32;
            let mut slx = sumlx - w * v * cur;
            if slx > 0.0 {
                let mut sl2 = suml2 - w * cur * cur;
                let new_l = clamp(nearest_int(v * sl2 / slx));
                if new_l != *q as i32 {
                    slx += w * v * new_l as f32;
                    sl2 += w * new_l as f32 * new_l as f32;
                    if sl2 > 0.0 && slx * slx * suml2 > sumlx * sumlx * sl2 {
                        *q = new_l as i8;
                        sumlx = slx;
                        suml2 = sl2;
                        changed += 1;
                    }
                }
            }
        }
        if changed == 0 {
            break;
        }
    }
    for q in l.iter_mut() {
        *q = (*q as i32 + nmax) as i8;
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// Parameters of ggml's `make_qkx2_quants` grid search.
struct Qkx2 {
    nmax: i32,
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    use_mad: bool,
}

/// ggml `make_qkx2_quants`: asymmetric levels 0..=nmax with a min, weighted least squares over
/// a grid of candidate scales. Returns `(scale, the_min)` (`the_min` ≥ 0 is subtracted).
fn make_qkx2_quants(x: &[f32], weights: &[f32], l: &mut [u8], p: &Qkx2) -> (f32, f32) {
    let (Some(&x0), Some(&w0)) = (x.first(), weights.first()) else {
        return (0.0, 0.0);
    };
    let mut min = x0;
    let mut max = x0;
    let mut sum_w = w0;
    let mut sum_x = sum_w * x0;
    for (&v, &w) in x.iter().zip(weights).skip(1) {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
        sum_w += w;
        sum_x += w * v;
    }
    if min > 0.0 {
        min = 0.0;
    }
    if max == min {
        l.iter_mut().for_each(|q| *q = 0);
        return (0.0, -min);
    }
    let nmax_f = p.nmax as f32;
    let err = |diff: f32| if p.use_mad { fabsf(diff) } else { diff * diff };
    let mut iscale = nmax_f / (max - min);
    let mut scale = 1.0 / iscale;
    let mut best_error = 0.0f32;
    for ((q, &v), &w) in l.iter_mut().zip(x).zip(weights) {
        *q = nearest_int(iscale * (v - min)).clamp(0, p.nmax) as u8;
        let diff = scale * *q as f32 + min - v;
        best_error += w * err(diff);
    }
    if p.nstep < 1 {
        return (scale, -min);
    }
    let mut laux = [0u8; 32];
    for is in 0..=p.nstep {
        iscale = (p.rmin + p.rdelta * is as f32 + nmax_f) / (max - min);
        let (mut sum_l, mut sum_l2, mut sum_xl) = (0.0f32, 0.0f32, 0.0f32);
        for ((q, &v), &w) in laux.iter_mut().zip(x).zip(weights) {
            let li = nearest_int(iscale * (v - min)).clamp(0, p.nmax);
            *q = li as u8;
            let lf = li as f32;
            sum_l += w * lf;
            sum_l2 += w * lf * lf;
            sum_xl += w * lf * v;
        }
        let det = sum_w * sum_l2 - sum_l * sum_l;
        if det > 0.0 {
            let mut this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
            let mut this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
            if this_min > 0.0 {
                this_min = 0.0;
                this_scale = sum_xl / sum_l2;
            }
            let mut cur_error = 0.0f32;
            for ((&q, &v), &w) in laux.iter().zip(x).zip(weights) {
                let diff = this_scale * q as f32 + this_min - v;
                cur_error += w * err(diff);
            }
            if cur_error < best_error {
                for (d, &s) in l.iter_mut().zip(&laux) {
                    *d = s;
                }
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    (scale, -min)
}

/// Packs 2-bit levels: byte `32·h + l` gets elements `128h + l + 32j` at bits 2j.
fn pack_2bit(levels: &[u8; QK_K], qs: &mut [u8; 64]) {
    for h in 0..2 {
        for l in 0..32 {
            let e = 128 * h + l;
            qs[32 * h + l] =
                levels[e] | (levels[e + 32] << 2) | (levels[e + 64] << 4) | (levels[e + 96] << 6);
        }
    }
}

// ---------------------------------------------------------------- quantizers

fn q2_k_block(x: &[f32; QK_K]) -> BlockQ2K {
    const Q4SCALE: f32 = 15.0;
    let params = Qkx2 {
        nmax: 3,
        rmin: -0.5,
        rdelta: 0.1,
        nstep: 15,
        use_mad: true,
    };
    let mut levels = [0u8; QK_K];
    let mut scales = [0.0f32; 16];
    let mut mins = [0.0f32; 16];
    let mut max_scale = 0.0f32;
    let mut max_min = 0.0f32;
    for j in 0..16 {
        let xs = &x[16 * j..16 * j + 16];
        let mut weights = [0.0f32; 16];
        for (w, &v) in weights.iter_mut().zip(xs) {
            *w = fabsf(v);
        }
        let (s, m) = make_qkx2_quants(xs, &weights, &mut levels[16 * j..16 * j + 16], &params);
        scales[j] = s;
        mins[j] = m;
        if s > max_scale {
            max_scale = s;
        }
        if m > max_min {
            max_min = m;
        }
    }
    let mut b = BlockQ2K::ZERO;
    if max_scale > 0.0 {
        let iscale = Q4SCALE / max_scale;
        for (q, &s) in b.scales.iter_mut().zip(&scales) {
            *q = nearest_int(iscale * s) as u8;
        }
        b.d = f32_to_f16(max_scale / Q4SCALE);
    } else {
        b.d = f32_to_f16(0.0);
    }
    if max_min > 0.0 {
        let iscale = Q4SCALE / max_min;
        for (q, &m) in b.scales.iter_mut().zip(&mins) {
            *q |= (nearest_int(iscale * m) << 4) as u8;
        }
        b.dmin = f32_to_f16(max_min / Q4SCALE);
    } else {
        b.dmin = f32_to_f16(0.0);
    }
    let dall = f16_to_f32(b.d);
    let dmin = f16_to_f32(b.dmin);
    for j in 0..16 {
        let d = dall * (b.scales[j] & 0xF) as f32;
        if d == 0.0 {
            continue;
        }
        let dm = dmin * (b.scales[j] >> 4) as f32;
        for ii in 0..16 {
            levels[16 * j + ii] = nearest_int((x[16 * j + ii] + dm) / d).clamp(0, 3) as u8;
        }
    }
    pack_2bit(&levels, &mut b.qs);
    b
}

fn q3_k_block(x: &[f32; QK_K]) -> BlockQ3K {
    let mut levels = [0i8; QK_K];
    let mut scales = [0.0f32; 16];
    let mut max_scale = 0.0f32;
    let mut amax = 0.0f32;
    for j in 0..16 {
        let s = make_q3_quants(&x[16 * j..16 * j + 16], 4, &mut levels[16 * j..16 * j + 16]);
        scales[j] = s;
        if fabsf(s) > amax {
            amax = fabsf(s);
            max_scale = s;
        }
    }
    let mut b = BlockQ3K::ZERO;
    if max_scale != 0.0 {
        let iscale = -32.0 / max_scale;
        for (j, &s) in scales.iter().enumerate() {
            let l = ((nearest_int(iscale * s) as i8) as i32).clamp(-32, 31) + 32;
            if j < 8 {
                b.scales[j] = (l & 0xF) as u8;
            } else {
                b.scales[j - 8] |= ((l & 0xF) << 4) as u8;
            }
            b.scales[j % 4 + 8] |= ((l >> 4) << (2 * (j / 4))) as u8;
        }
        b.d = f32_to_f16(1.0 / iscale);
    } else {
        b.d = f32_to_f16(0.0);
    }
    let dall = f16_to_f32(b.d);
    for j in 0..16 {
        let d = dall * q3_scale(&b.scales, j) as f32;
        if d == 0.0 {
            continue;
        }
        for ii in 0..16 {
            levels[16 * j + ii] = (nearest_int(x[16 * j + ii] / d).clamp(-4, 3) + 4) as i8;
        }
    }
    let mut low = [0u8; QK_K];
    for (e, (&lv, lo)) in levels.iter().zip(low.iter_mut()).enumerate() {
        let mut lv = lv;
        if lv > 3 {
            b.hmask[e % 32] |= 1 << (e / 32);
            lv -= 4;
        }
        *lo = lv as u8;
    }
    pack_2bit(&low, &mut b.qs);
    b
}

/// Shared search of Q4_K and Q5_K: per-32 scales and mins (`make_qkx2_quants` with weights
/// `rms + |x|`), quantized to 6 bits, then levels recomputed from the stored scales.
fn k4_scales_and_levels(
    x: &[f32; QK_K],
    params: &Qkx2,
    d_out: &mut [u8; 2],
    dmin_out: &mut [u8; 2],
    packed: &mut [u8; 12],
) -> [u8; QK_K] {
    let mut levels = [0u8; QK_K];
    let mut scales = [0.0f32; 8];
    let mut mins = [0.0f32; 8];
    let mut max_scale = 0.0f32;
    let mut max_min = 0.0f32;
    for j in 0..8 {
        let xs = &x[32 * j..32 * j + 32];
        let mut sum_x2 = 0.0f32;
        for &v in xs {
            sum_x2 += v * v;
        }
        let av_x = libm::sqrtf(sum_x2 / 32.0);
        let mut weights = [0.0f32; 32];
        for (w, &v) in weights.iter_mut().zip(xs) {
            *w = av_x + fabsf(v);
        }
        let (s, m) = make_qkx2_quants(xs, &weights, &mut levels[32 * j..32 * j + 32], params);
        scales[j] = s;
        mins[j] = m;
        if s > max_scale {
            max_scale = s;
        }
        if m > max_min {
            max_min = m;
        }
    }
    let inv_scale = if max_scale > 0.0 {
        63.0 / max_scale
    } else {
        0.0
    };
    let inv_min = if max_min > 0.0 { 63.0 / max_min } else { 0.0 };
    for j in 0..8 {
        let ls = (nearest_int(inv_scale * scales[j]) as u8).min(63);
        let lm = (nearest_int(inv_min * mins[j]) as u8).min(63);
        if j < 4 {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = (ls & 0xF) | ((lm & 0xF) << 4);
            packed[j - 4] |= (ls >> 4) << 6;
            packed[j] |= (lm >> 4) << 6;
        }
    }
    *d_out = f32_to_f16(max_scale / 63.0);
    *dmin_out = f32_to_f16(max_min / 63.0);
    let dall = f16_to_f32(*d_out);
    let dmin = f16_to_f32(*dmin_out);
    for j in 0..8 {
        let (sc, m) = scale_min_k4(j, packed);
        let d = dall * sc as f32;
        if d == 0.0 {
            continue;
        }
        let dm = dmin * m as f32;
        for ii in 0..32 {
            levels[32 * j + ii] =
                nearest_int((x[32 * j + ii] + dm) / d).clamp(0, params.nmax) as u8;
        }
    }
    levels
}

fn q4_k_block(x: &[f32; QK_K]) -> BlockQ4K {
    let params = Qkx2 {
        nmax: 15,
        rmin: -1.0,
        rdelta: 0.1,
        nstep: 20,
        use_mad: false,
    };
    let mut b = BlockQ4K::ZERO;
    let levels = k4_scales_and_levels(x, &params, &mut b.d, &mut b.dmin, &mut b.scales);
    for h in 0..4 {
        for l in 0..32 {
            b.qs[32 * h + l] = levels[64 * h + l] | (levels[64 * h + l + 32] << 4);
        }
    }
    b
}

fn q5_k_block(x: &[f32; QK_K]) -> BlockQ5K {
    let params = Qkx2 {
        nmax: 31,
        rmin: -0.5,
        rdelta: 0.1,
        nstep: 15,
        use_mad: false,
    };
    let mut b = BlockQ5K::ZERO;
    let levels = k4_scales_and_levels(x, &params, &mut b.d, &mut b.dmin, &mut b.scales);
    for h in 0..4 {
        for l in 0..32 {
            let mut l1 = levels[64 * h + l];
            let mut l2 = levels[64 * h + l + 32];
            if l1 > 15 {
                l1 -= 16;
                b.qh[l] |= 1 << (2 * h);
            }
            if l2 > 15 {
                l2 -= 16;
                b.qh[l] |= 2 << (2 * h);
            }
            b.qs[32 * h + l] = l1 | (l2 << 4);
        }
    }
    b
}

fn q6_k_block(x: &[f32; QK_K]) -> BlockQ6K {
    let mut levels = [0i8; QK_K];
    let mut scales = [0.0f32; 16];
    let mut max_scale = 0.0f32;
    let mut max_abs_scale = 0.0f32;
    for ib in 0..16 {
        let s = make_qx_quants(
            &x[16 * ib..16 * ib + 16],
            32,
            &mut levels[16 * ib..16 * ib + 16],
        );
        scales[ib] = s;
        if fabsf(s) > max_abs_scale {
            max_abs_scale = fabsf(s);
            max_scale = s;
        }
    }
    let mut b = BlockQ6K::ZERO;
    if max_abs_scale < GROUP_MAX_EPS {
        b.d = f32_to_f16(0.0);
        return b;
    }
    let iscale = -128.0 / max_scale;
    b.d = f32_to_f16(1.0 / iscale);
    for (q, &s) in b.scales.iter_mut().zip(&scales) {
        *q = nearest_int(iscale * s).min(127) as i8 as u8;
    }
    let dall = f16_to_f32(b.d);
    for j in 0..16 {
        let d = dall * (b.scales[j] as i8) as f32;
        if d == 0.0 {
            continue;
        }
        for ii in 0..16 {
            levels[16 * j + ii] = (nearest_int(x[16 * j + ii] / d).clamp(-32, 31) + 32) as i8;
        }
    }
    for h in 0..2 {
        for l in 0..32 {
            let e = 128 * h + l;
            let lv = |k: usize| levels[e + 32 * k] as u8;
            b.ql[64 * h + l] = (lv(0) & 0xF) | ((lv(2) & 0xF) << 4);
            b.ql[64 * h + l + 32] = (lv(1) & 0xF) | ((lv(3) & 0xF) << 4);
            b.qh[32 * h + l] =
                (lv(0) >> 4) | ((lv(1) >> 4) << 2) | ((lv(2) >> 4) << 4) | ((lv(3) >> 4) << 6);
        }
    }
    b
}

fn q8_k_block(x: &[f32; QK_K]) -> BlockQ8K {
    let mut max = 0.0f32;
    let mut amax = 0.0f32;
    for &v in x {
        let ax = fabsf(v);
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    let mut b = BlockQ8K::ZERO;
    if amax == 0.0 {
        // ggml leaves `bsums` untouched here; we zero them (they are all-zero sums anyway).
        return b;
    }
    let iscale = -127.0 / max;
    for (q, &v) in b.qs.iter_mut().zip(x) {
        *q = nearest_int(iscale * v).min(127) as i8 as u8;
    }
    for g in 0..16 {
        let s: i32 = b.qs[16 * g..16 * g + 16]
            .iter()
            .map(|&q| (q as i8) as i32)
            .sum();
        b.bsums[2 * g..2 * g + 2].copy_from_slice(&(s as i16).to_le_bytes());
    }
    b.d = (1.0 / iscale).to_le_bytes();
    b
}

/// Quantizes whole Q2_K blocks (ggml `quantize_row_q2_K_ref`).
pub fn quantize_q2_k(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q2_k_block);
}
/// Quantizes whole Q3_K blocks (ggml `quantize_row_q3_K_ref`).
pub fn quantize_q3_k(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q3_k_block);
}
/// Quantizes whole Q4_K blocks (ggml `quantize_row_q4_K_ref`).
pub fn quantize_q4_k(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q4_k_block);
}
/// Quantizes whole Q5_K blocks (ggml `quantize_row_q5_K_ref`).
pub fn quantize_q5_k(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q5_k_block);
}
/// Quantizes whole Q6_K blocks (ggml `quantize_row_q6_K_ref`).
pub fn quantize_q6_k(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q6_k_block);
}
/// Quantizes whole Q8_K blocks (ggml `quantize_row_q8_K_ref`).
pub fn quantize_q8_k(src: &[f32], dst: &mut [u8]) {
    quantize_blocks(src, dst, q8_k_block);
}

// ---------------------------------------------------------------- unpacking

/// Q2_K levels 0..3 in element order.
fn q2_k_levels(b: &BlockQ2K) -> [i32; QK_K] {
    let mut v = [0i32; QK_K];
    for (e, o) in v.iter_mut().enumerate() {
        let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
        *o = ((b.qs[32 * h + l] >> (2 * j)) & 3) as i32;
    }
    v
}

/// Q3_K signed levels −4..3 in element order.
fn q3_k_levels(b: &BlockQ3K) -> [i32; QK_K] {
    let mut v = [0i32; QK_K];
    for (e, o) in v.iter_mut().enumerate() {
        let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
        let low = ((b.qs[32 * h + l] >> (2 * j)) & 3) as i32;
        let high = (b.hmask[l] >> (e / 32)) & 1;
        *o = low - if high != 0 { 0 } else { 4 };
    }
    v
}

/// Q4_K (`qh = None`) or Q5_K levels in element order.
fn k4_levels(qs: &[u8; 128], qh: Option<&[u8; 32]>) -> [i32; QK_K] {
    let mut v = [0i32; QK_K];
    for (e, o) in v.iter_mut().enumerate() {
        let (h, upper, l) = (e / 64, (e % 64) / 32, e % 32);
        let byte = qs[32 * h + l];
        let mut q = if upper == 0 { byte & 0xF } else { byte >> 4 } as i32;
        if let Some(qh) = qh {
            if (qh[l] >> (2 * h + upper)) & 1 != 0 {
                q += 16;
            }
        }
        *o = q;
    }
    v
}

/// Q6_K signed levels −32..31 in element order.
fn q6_k_levels(b: &BlockQ6K) -> [i32; QK_K] {
    let mut v = [0i32; QK_K];
    for (e, o) in v.iter_mut().enumerate() {
        let (h, k, l) = (e / 128, (e % 128) / 32, e % 32);
        let lo_byte = b.ql[64 * h + l + 32 * (k & 1)];
        let lo = if k < 2 { lo_byte & 0xF } else { lo_byte >> 4 };
        let hi = (b.qh[32 * h + l] >> (2 * k)) & 3;
        *o = (lo | (hi << 4)) as i32 - 32;
    }
    v
}

// ---------------------------------------------------------------- dequantizers

/// Dequantizes Q2_K blocks.
pub fn dequantize_q2_k(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ2K, y: &mut [f32; QK_K]| {
        let d = f16_to_f32(b.d);
        let min = f16_to_f32(b.dmin);
        let lv = q2_k_levels(b);
        for (e, o) in y.iter_mut().enumerate() {
            let sc = b.scales[e / 16];
            let dl = d * (sc & 0xF) as f32;
            let ml = min * (sc >> 4) as f32;
            *o = dl * lv[e] as f32 - ml;
        }
    });
}

/// Dequantizes Q3_K blocks.
pub fn dequantize_q3_k(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ3K, y: &mut [f32; QK_K]| {
        let d_all = f16_to_f32(b.d);
        let lv = q3_k_levels(b);
        for (e, o) in y.iter_mut().enumerate() {
            let dl = d_all * q3_scale(&b.scales, e / 16) as f32;
            *o = dl * lv[e] as f32;
        }
    });
}

fn dequantize_k4(d: f32, min: f32, scales: &[u8; 12], lv: &[i32; QK_K], y: &mut [f32; QK_K]) {
    for (e, o) in y.iter_mut().enumerate() {
        let (sc, m) = scale_min_k4(e / 32, scales);
        *o = (d * sc as f32) * lv[e] as f32 - min * m as f32;
    }
}

/// Dequantizes Q4_K blocks.
pub fn dequantize_q4_k(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ4K, y: &mut [f32; QK_K]| {
        let lv = k4_levels(&b.qs, None);
        dequantize_k4(f16_to_f32(b.d), f16_to_f32(b.dmin), &b.scales, &lv, y);
    });
}

/// Dequantizes Q5_K blocks.
pub fn dequantize_q5_k(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ5K, y: &mut [f32; QK_K]| {
        let lv = k4_levels(&b.qs, Some(&b.qh));
        dequantize_k4(f16_to_f32(b.d), f16_to_f32(b.dmin), &b.scales, &lv, y);
    });
}

/// Dequantizes Q6_K blocks.
pub fn dequantize_q6_k(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ6K, y: &mut [f32; QK_K]| {
        let d = f16_to_f32(b.d);
        let lv = q6_k_levels(b);
        for (e, o) in y.iter_mut().enumerate() {
            *o = d * (b.scales[e / 16] as i8) as f32 * lv[e] as f32;
        }
    });
}

/// Dequantizes Q8_K blocks.
pub fn dequantize_q8_k(src: &[u8], dst: &mut [f32]) {
    dequantize_blocks(src, dst, |b: &BlockQ8K, y: &mut [f32; QK_K]| {
        let d = b.d_f32();
        for (o, &q) in y.iter_mut().zip(&b.qs) {
            *o = d * (q as i8) as f32;
        }
    });
}

// ---------------------------------------------------------------- dot products

/// ggml's eight integer lanes: `lane[e % 8] += scale(e / group) · level[e] · q8[e]`.
#[inline]
fn lanes(
    lv: &[i32; QK_K],
    q8: &[u8; QK_K],
    group: usize,
    scale: impl Fn(usize) -> i32,
) -> [i32; 8] {
    let mut aux = [0i32; 8];
    for (e, (&l, &q)) in lv.iter().zip(q8).enumerate() {
        aux[e % 8] += scale(e / group) * (l * (q as i8) as i32);
    }
    aux
}

/// Q2_K · Q8_K (ggml `ggml_vec_dot_q2_K_q8_K_generic`).
pub fn vec_dot_q2_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
    let mut sumf = 0.0f32;
    for (x, y) in zip_blocks::<BlockQ2K, BlockQ8K>(w, a) {
        let summs: i32 = (0..16).map(|j| y.bsum(j) * (x.scales[j] >> 4) as i32).sum();
        let dall = y.d_f32() * f16_to_f32(x.d);
        let dmin = y.d_f32() * f16_to_f32(x.dmin);
        let lv = q2_k_levels(&x);
        let mut isum = 0i32;
        for (s, (lvs, qs)) in lv.chunks_exact(16).zip(y.qs.chunks_exact(16)).enumerate() {
            let isuml: i32 = lvs
                .iter()
                .zip(qs)
                .map(|(&l, &q)| (q as i8) as i32 * l)
                .sum();
            isum += (x.scales[s] & 0xF) as i32 * isuml;
        }
        sumf += dall * isum as f32 - dmin * summs as f32;
    }
    sumf
}

/// Q3_K · Q8_K (ggml `ggml_vec_dot_q3_K_q8_K_generic`).
pub fn vec_dot_q3_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
    let mut sums = [0.0f32; 8];
    for (x, y) in zip_blocks::<BlockQ3K, BlockQ8K>(w, a) {
        let aux = lanes(&q3_k_levels(&x), &y.qs, 16, |s| q3_scale(&x.scales, s));
        let d = f16_to_f32(x.d) * y.d_f32();
        for (s, &v) in sums.iter_mut().zip(&aux) {
            *s += d * v as f32;
        }
    }
    sums.iter().fold(0.0f32, |acc, &s| acc + s)
}

fn vec_dot_k4(w: &[u8], a: &[u8], five_bit: bool) -> f32 {
    let mut sums = [0.0f32; 8];
    let mut sumf = 0.0f32;
    let bytes = if five_bit {
        BlockQ5K::BYTES
    } else {
        BlockQ4K::BYTES
    };
    for (xb, yb) in w.chunks_exact(bytes).zip(a.chunks_exact(BlockQ8K::BYTES)) {
        let y = BlockQ8K::read(yb);
        let (d, dmin, scales, lv) = if five_bit {
            let x = BlockQ5K::read(xb);
            (x.d, x.dmin, x.scales, k4_levels(&x.qs, Some(&x.qh)))
        } else {
            let x = BlockQ4K::read(xb);
            (x.d, x.dmin, x.scales, k4_levels(&x.qs, None))
        };
        let sumi: i32 = (0..16)
            .map(|j| y.bsum(j) * scale_min_k4(j / 2, &scales).1 as i32)
            .sum();
        let aux = lanes(&lv, &y.qs, 32, |s| scale_min_k4(s, &scales).0 as i32);
        let df = f16_to_f32(d) * y.d_f32();
        for (s, &v) in sums.iter_mut().zip(&aux) {
            *s += df * v as f32;
        }
        let dm = f16_to_f32(dmin) * y.d_f32();
        sumf -= dm * sumi as f32;
    }
    sums.iter().fold(sumf, |acc, &s| acc + s)
}

/// Q4_K · Q8_K (ggml `ggml_vec_dot_q4_K_q8_K_generic`).
pub fn vec_dot_q4_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
    vec_dot_k4(w, a, false)
}

/// Q5_K · Q8_K (ggml `ggml_vec_dot_q5_K_q8_K_generic`).
pub fn vec_dot_q5_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
    vec_dot_k4(w, a, true)
}

/// Q6_K · Q8_K (ggml `ggml_vec_dot_q6_K_q8_K_generic`).
pub fn vec_dot_q6_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
    let mut sums = [0.0f32; 8];
    for (x, y) in zip_blocks::<BlockQ6K, BlockQ8K>(w, a) {
        let aux = lanes(&q6_k_levels(&x), &y.qs, 16, |s| (x.scales[s] as i8) as i32);
        let d = f16_to_f32(x.d) * y.d_f32();
        for (s, &v) in sums.iter_mut().zip(&aux) {
            *s += d * v as f32;
        }
    }
    sums.iter().fold(0.0f32, |acc, &s| acc + s)
}
