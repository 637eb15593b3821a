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
pub(crate) static PORTABLE: FpKernels = FpKernels { dot: dot_portable, decode: decode_portable };

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
}
