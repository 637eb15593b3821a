//! The per-ISA pieces of MLX's affine quantized matmul (`cpu::affine` drives them): decoding
//! a run of packed `bits`-wide codes to f32, the group-scaled dot products of a decoded weight
//! row with up to [`MAX_ROWS`] activation rows, and the group-scaled axpy of `x @ W`. One table
//! per ISA (`arch/x86_64/affine.rs`: AVX2, AVX-512; `arch/aarch64/affine.rs`: NEON) and the
//! portable one here, which is the reference the SIMD ones are tested against.
//!
//! MLX packs each row as a little-endian, LSB-first bit stream (see `quant::mlx::pack`), so 8
//! consecutive codes always fill exactly `bits` bytes and code `j` of such a run starts at bit
//! `j·bits`: byte `j·bits/8`, shifted right by `j·bits % 8`, spanning at most two bytes. The
//! SIMD decoders gather those two bytes per lane with a byte shuffle, shift each lane by its
//! own amount and mask — one shape for every width 1–8 ([`SPANS`] holds the positions).

use crate::cpu::isa::Isa;

/// Activation rows one [`AffineKernels::dot_groups`] call handles.
pub(crate) const MAX_ROWS: usize = 4;

/// Where code `j` (0..16) of a 16-code run of `bits`-wide codes lies: its first byte, its
/// second byte (or `0x80`, "none", when the code ends inside the first) and the right shift.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))] // the SIMD decoders' tables
#[derive(Clone, Copy)]
pub(crate) struct Span {
    pub lo: u8,
    pub hi: u8,
    pub shift: u8,
}

#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))] // the SIMD decoders' tables
const fn spans(bits: usize) -> [Span; 16] {
    let mut out = [Span { lo: 0, hi: 0x80, shift: 0 }; 16];
    let mut j = 0;
    while j < 16 {
        let bit = j * bits;
        let shift = bit % 8;
        out[j] = Span { lo: (bit / 8) as u8, hi: if shift + bits > 8 { (bit / 8 + 1) as u8 } else { 0x80 }, shift: shift as u8 };
        j += 1;
    }
    out
}

/// [`Span`]s of every width, indexed by `bits` (entry 0 and 7 unused).
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))] // the SIMD decoders' tables
pub(crate) static SPANS: [[Span; 16]; 9] =
    [spans(1), spans(1), spans(2), spans(3), spans(4), spans(5), spans(6), spans(7), spans(8)];

/// See [`AffineKernels::dot_groups`].
pub(crate) type DotGroupsFn = fn(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]);

/// One ISA's kernels. Lengths are in elements; every length is a multiple of 16 (group sizes
/// are 32, 64 or 128).
pub(crate) struct AffineKernels {
    /// `dst[i]` = code `i` of the `bits`-wide stream `src` as f32, `i < dst.len()`;
    /// `src.len() == dst.len()·bits/8` (the decoder never reads past `src`).
    pub decode: fn(bits: u32, src: &[u8], dst: &mut [f32]),
    /// `out[r] = Σ_g s[g]·Σ_{i in group g} xs[r][i]·q[i]` for each activation row `r`
    /// (`xs.len() ≤ MAX_ROWS`, each as long as `q`, `s.len() == q.len()/gs`).
    pub dot_groups: DotGroupsFn,
    /// `acc[i] += c[g]·q[i]` for `i` in group `g` (`c.len() == q.len()/gs`).
    pub axpy_groups: fn(q: &[f32], gs: usize, c: &[f32], acc: &mut [f32]),
}

/// The kernels `level` runs (the portable ones where there are no SIMD ones).
pub(crate) fn kernels(level: Isa) -> &'static AffineKernels {
    #[cfg(target_arch = "x86_64")]
    if let Some(k) = super::x86_64::affine::kernels_for(level) {
        return k;
    }
    #[cfg(target_arch = "aarch64")]
    if let Some(k) = super::aarch64::affine::kernels_for(level) {
        return k;
    }
    let _ = level;
    &PORTABLE
}

/// The portable reference kernels.
pub(crate) static PORTABLE: AffineKernels =
    AffineKernels { decode: decode_portable, dot_groups: dot_groups_portable, axpy_groups: axpy_groups_portable };

/// Decodes codes one at a time from their (at most) two bytes.
pub(crate) fn decode_portable(bits: u32, src: &[u8], dst: &mut [f32]) {
    let mask = (1u32 << bits) - 1;
    for (i, d) in dst.iter_mut().enumerate() {
        let bit = i * bits as usize;
        let lo = src.get(bit / 8).copied().unwrap_or(0) as u32;
        let hi = src.get(bit / 8 + 1).copied().unwrap_or(0) as u32;
        *d = (((lo | (hi << 8)) >> (bit % 8)) & mask) as f32;
    }
}

fn dot_groups_portable(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]) {
    for (o, x) in out.iter_mut().zip(xs) {
        let mut total = 0f32;
        for ((qg, xg), &sg) in q.chunks_exact(gs).zip(x.chunks_exact(gs)).zip(s) {
            let acc: f32 = qg.iter().zip(xg).map(|(a, b)| a * b).sum();
            total += sg * acc;
        }
        *o = total;
    }
}

fn axpy_groups_portable(q: &[f32], gs: usize, c: &[f32], acc: &mut [f32]) {
    for ((qg, ag), &cg) in q.chunks_exact(gs).zip(acc.chunks_exact_mut(gs)).zip(c) {
        for (a, &v) in ag.iter_mut().zip(qg) {
            *a += cg * v;
        }
    }
}

/// Splits `src` into the part a SIMD decoder may read `read` bytes at a time in steps of
/// `step` bytes without running past its end, and hands the rest to the caller through a
/// zero-padded copy: returns the number of whole steps that are safe to read in place.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) fn safe_steps(src_len: usize, step: usize, read: usize) -> usize {
    if src_len < read {
        return 0;
    }
    // Step i reads [i·step, i·step + read): safe while i·step + read <= src_len.
    ((src_len - read) / step + 1).min(src_len / step)
}
