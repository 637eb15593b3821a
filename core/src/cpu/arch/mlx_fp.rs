//! The per-ISA pieces of MLX's floating-point quantized matmul (`mxfp4`, `mxfp8`, `nvfp4`;
//! `cpu::mlx_fp` drives them): the group-scaled dot product of one packed weight row with up to
//! [`MAX_ROWS`] activation rows, read straight from the packed bytes, and a decoder of packed
//! elements to f32 (for `x @ W` and the GEMM panels). One table per ISA
//! (`arch/x86_64/mlx_fp.rs`: AVX2, AVX-512; `arch/aarch64/mlx_fp.rs`: NEON) and the portable one
//! here, which is the reference the SIMD ones are tested against.
//!
//! The kernels work on *raw* element values: an E2M1 code gives ggml's doubled integer level
//! ([`KVALUES`], −12..12, the one table of E2M1 values in the crate), an E4M3 code its exact
//! value ([`from_fp8`]). The driver folds the E2M1 factor ½ into the group scale
//! ([`FpFormat::raw_factor`]); both factors are powers of two, so every product equals the
//! portable kernel's `x · value · scale` exactly and only the summation order differs.

use crate::cpu::isa::Isa;
use crate::quant::ggml::mxfp4::KVALUES;
use crate::quant::mlx::fp8::from_fp8;

/// Activation rows one [`FpKernels::dot`] call handles.
pub(crate) const MAX_ROWS: usize = 4;

/// The element format of a packed fp weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FpFormat {
    /// 4-bit E2M1 (`mxfp4`, `nvfp4`): two codes per byte, the low nibble first.
    E2M1,
    /// 8-bit E4M3 (`mxfp8`): one code per byte.
    E4M3,
}

impl FpFormat {
    /// Bits per element.
    pub(crate) const fn bits(self) -> usize {
        match self {
            FpFormat::E2M1 => 4,
            FpFormat::E4M3 => 8,
        }
    }
    /// What the raw value is multiplied by to give the element's value.
    pub(crate) const fn raw_factor(self) -> f32 {
        match self {
            FpFormat::E2M1 => 0.5,
            FpFormat::E4M3 => 1.0,
        }
    }
}

/// The raw value of code `c` (the portable decoder; see the module doc).
#[inline]
pub(crate) fn raw_value(f: FpFormat, c: u8) -> f32 {
    match f {
        FpFormat::E2M1 => KVALUES[(c & 15) as usize] as f32,
        FpFormat::E4M3 => from_fp8(c),
    }
}

/// See [`FpKernels::dot`].
pub(crate) type FpDotFn = fn(f: FpFormat, w: &[u8], gs: usize, sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]);

/// One ISA's kernels. Lengths are in elements; group sizes are 16 or 32.
pub(crate) struct FpKernels {
    /// `out[r] = Σ_g lut[sc[g]] · Σ_{i in group g} xs[r][i] · raw(code_i)` over the
    /// `sc.len()` groups of `gs` codes packed in `w` (one weight row, `w.len() ≥
    /// sc.len()·gs·bits/8`); `xs.len() == out.len() ≤ MAX_ROWS`, each `xs[r]` at least
    /// `sc.len()·gs` long.
    pub dot: FpDotFn,
    /// `dst[i]` = raw value of code `i` of `src`, `dst.len()` a multiple of 16 and
    /// `src.len() == dst.len()·bits/8`.
    pub decode: fn(f: FpFormat, src: &[u8], dst: &mut [f32]),
    /// The E2M1 dot over activations permuted once per call, where the ISA has one.
    pub fused_e2m1: Option<FusedE2m1>,
}

/// An E2M1 dot that never widens codes through bytes: a vector of `lanes` packed words is
/// shifted right by `4·k` (k = 0..8) and each lane's low four bits index a table of the 16
/// raw values as f32 (one full-width permute, which ignores the higher index bits), so nibble
/// `k` of every word costs one shift, one permute and one FMA per activation row. Lane `l`
/// holds codes `8l..8l + 8` of its block, so the activations are laid out once per call by
/// [`permute_e2m1`] to match. The products and scales are the portable kernel's exactly; only
/// the order of the f32 sums differs (per lane, 8 codes of one group, then times the scale).
#[derive(Clone, Copy)]
pub(crate) struct FusedE2m1 {
    /// Packed words per vector: a block is `8·lanes` codes.
    pub lanes: usize,
    /// `out[r] = Σ_g lut[sc[g]]·Σ_{i in group g} x_r[i]·raw(code_i)` over the `sc.len()` groups
    /// of `gs` (16 or 32) codes in `w`, `sc.len()·gs` a multiple of [`FusedE2m1::span`];
    /// `xp[r]` is activation row `r` laid out by [`permute_e2m1`] (at least `sc.len()·gs`
    /// long), `xp.len() == out.len() ≤ MAX_ROWS`.
    pub dot: FusedE2m1Fn,
}

/// See [`FusedE2m1::dot`].
pub(crate) type FusedE2m1Fn = fn(w: &[u8], gs: usize, sc: &[u8], lut: &[f32; 256], xp: &[&[f32]], out: &mut [f32]);

impl FusedE2m1 {
    /// Codes the kernel takes at a time for groups of `gs`: 16 groups (one vector of scales).
    pub(crate) const fn span(gs: usize) -> usize {
        16 * gs
    }
}

/// Lays out one activation row for a [`FusedE2m1`] of `lanes` lanes: per block of `8·lanes`
/// codes, `dst[8·lanes·b + lanes·k + l] = x[8·lanes·b + 8·l + k]` (`x.len()` a multiple of
/// `8·lanes`, `dst.len() == x.len()`).
pub(crate) fn permute_e2m1(x: &[f32], lanes: usize, dst: &mut [f32]) {
    let blk = 8 * lanes;
    for (xb, db) in x.chunks_exact(blk).zip(dst.chunks_exact_mut(blk)) {
        for (l, xl) in xb.chunks_exact(8).enumerate() {
            for (k, &v) in xl.iter().enumerate() {
                db[lanes * k + l] = v;
            }
        }
    }
}

/// The kernels of `level` (the portable ones where the ISA has none).
pub(crate) fn kernels(level: Isa) -> &'static FpKernels {
    #[cfg(target_arch = "x86_64")]
    if let Some(k) = super::x86_64::mlx_fp::kernels_for(level) {
        return k;
    }
    #[cfg(target_arch = "aarch64")]
    if let Some(k) = super::aarch64::mlx_fp::kernels_for(level) {
        return k;
    }
    let _ = level;
    &PORTABLE
}

/// The portable reference kernels.
pub(crate) static PORTABLE: FpKernels = FpKernels { dot: dot_portable, decode: decode_portable, fused_e2m1: None };

/// Code `i` of a packed row.
#[inline]
fn code(f: FpFormat, w: &[u8], i: usize) -> u8 {
    match f {
        FpFormat::E2M1 => (w[i / 2] >> (4 * (i & 1))) & 15,
        FpFormat::E4M3 => w[i],
    }
}

fn dot_portable(f: FpFormat, w: &[u8], gs: usize, sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]) {
    for (x, o) in xs.iter().zip(out.iter_mut()) {
        let mut total = 0f32;
        for (g, &s) in sc.iter().enumerate() {
            let mut acc = 0f32;
            for i in g * gs..(g + 1) * gs {
                acc += x[i] * raw_value(f, code(f, w, i));
            }
            total += lut[s as usize] * acc;
        }
        *o = total;
    }
}

fn decode_portable(f: FpFormat, src: &[u8], dst: &mut [f32]) {
    for (i, d) in dst.iter_mut().enumerate() {
        *d = raw_value(f, code(f, src, i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::mlx::fp::FP4_LUT;

    /// E2M1 from its bit fields (sign, 2-bit exponent with bias 1, 1-bit mantissa): the
    /// independent oracle of both the doubled levels and `FP4_LUT` (derived from them).
    fn e2m1(c: u8) -> f32 {
        let (s, e, m) = ((c >> 3) & 1, (c >> 1) & 3, (c & 1) as f32);
        let mag = if e == 0 { m * 0.5 } else { (1.0 + m * 0.5) * (1u32 << (e - 1)) as f32 };
        if s == 1 { -mag } else { mag }
    }

    #[test]
    fn raw_values_times_the_factor_are_the_element_values() {
        for c in 0..16u8 {
            let v = raw_value(FpFormat::E2M1, c) * FpFormat::E2M1.raw_factor();
            assert_eq!(v, e2m1(c), "code {c}");
            assert_eq!(FP4_LUT[c as usize].to_bits(), e2m1(c).to_bits(), "code {c}");
        }
        for c in 0..=255u8 {
            let (a, b) = (raw_value(FpFormat::E4M3, c), from_fp8(c));
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "code {c}");
        }
    }

    /// The fused E2M1 kernels' arithmetic lane by lane in scalar code: word `l` of a block,
    /// shifted by 4·k, indexes the raw values, times the permuted activation `lanes·k + l`, times
    /// the scale of the lane's group, equals the portable dot.
    #[test]
    fn the_permuted_nibble_walk_is_the_grouped_dot() {
        for lanes in [8usize, 16] {
            for gs in [16usize, 32] {
                let n = 2 * FusedE2m1::span(gs);
                let w: Vec<u8> = (0..n / 2).map(|i| (i as u32).wrapping_mul(2_654_435_761).rotate_left(13) as u8).collect();
                let sc: Vec<u8> = (0..n / gs).map(|g| (120 + g % 9) as u8).collect();
                let lut: [f32; 256] = core::array::from_fn(|c| (c as f32 - 123.0) / 4.0);
                let x: Vec<f32> = (0..n).map(|i| ((i * 37 % 23) as f32 - 11.0) / 8.0).collect();
                let mut want = [0f32];
                dot_portable(FpFormat::E2M1, &w, gs, &sc, &lut, &[&x], &mut want);
                let mut xp = vec![0f32; n];
                permute_e2m1(&x, lanes, &mut xp);
                let mut got = 0f64;
                for b in 0..n / (8 * lanes) {
                    for l in 0..lanes {
                        let at = 4 * (b * lanes + l);
                        let word = u32::from_le_bytes([w[at], w[at + 1], w[at + 2], w[at + 3]]);
                        let s = lut[sc[(8 * (b * lanes + l)) / gs] as usize];
                        for k in 0..8 {
                            let v = KVALUES[((word >> (4 * k)) & 15) as usize] as f32;
                            got += (v * xp[8 * lanes * b + lanes * k + l] * s) as f64;
                        }
                    }
                }
                assert!((got - want[0] as f64).abs() <= 1e-4 * got.abs().max(1.0), "{lanes} lanes, gs {gs}: {got} vs {}", want[0]);
            }
        }
    }
}
