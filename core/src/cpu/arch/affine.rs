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
//!
//! 4-bit `x @ Ŵᵀ` has a fused kernel instead ([`Fused4`]): it never writes decoded codes. A
//! vector of `lanes` packed words holds nibble `p` of word `l` at bits `4p..4p + 4` of lane `l`;
//! masking those bits in place and converting the lane to f32 gives `q·16^p` exactly, so the
//! activations are permuted once per call ([`permute4`]) to match — block of `8·lanes` codes,
//! nibble-major, each multiplied by `16^-p` — and each nibble costs one AND, one convert and
//! one FMA per activation row (no shuffle, no shift, no store of the codes).

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
    /// The fused 4-bit `x @ Ŵᵀ` kernel, where the ISA has one.
    pub fused4: Option<Fused4>,
}

/// The fused 4-bit kernel of one ISA (see the module doc).
pub(crate) struct Fused4 {
    /// Packed words per vector: [`permute4`] blocks are `8·lanes` codes.
    pub lanes: usize,
    /// `out[r] = Σ_l sw[l]·Σ_p q(l, p)·16^p·xp[r][perm(l, p)]` over the words `l` of `w` (one
    /// weight row, little-endian words of 8 codes, a multiple of 4 words): `sw` is each
    /// word's group scale and `xp` the [`permute4`]d activation rows, both zero-padded to
    /// whole blocks (`sw.len() ≥ blocks·lanes`, each `xp[r].len() ≥ blocks·8·lanes`),
    /// `xp.len() ≤ MAX_ROWS`, `out.len() == xp.len()`.
    pub dot: Fused4Fn,
}

/// See [`Fused4::dot`].
pub(crate) type Fused4Fn = fn(w: &[u8], sw: &[f32], xp: &[&[f32]], out: &mut [f32]);

/// Factor of nibble `p` in [`permute4`]: the kernels convert nibble `p < 7` masked in place
/// (`q·16^p`, exact in f32: 4 significant bits) and nibble 7 shifted down (a masked top
/// nibble would read as a negative i32 where the ISA has only a signed convert).
pub(crate) const NIBBLE_SCALE: [f32; 8] =
    [1.0, 1.0 / 16.0, 1.0 / 256.0, 1.0 / 4096.0, 1.0 / 65536.0, 1.0 / 1048576.0, 1.0 / 16777216.0, 1.0];

/// Length of one activation row after [`permute4`] for `k` codes: whole blocks of `8·lanes`.
pub(crate) fn permuted_len(k: usize, lanes: usize) -> usize {
    k.div_ceil(8 * lanes) * 8 * lanes
}

/// Lays `x` (one activation row of `k` codes) out for a [`Fused4`] of `lanes` lanes:
/// `dst[b·8L + p·L + l] = x[8·(b·L + l) + p]·NIBBLE_SCALE[p]`, zero past `x`
/// (`dst.len() == permuted_len(x.len(), lanes)`). Scaling by a power of two is exact.
pub(crate) fn permute4(x: &[f32], lanes: usize, dst: &mut [f32]) {
    for (b, blk) in dst.chunks_exact_mut(8 * lanes).enumerate() {
        for (p, (row, &f)) in blk.chunks_exact_mut(lanes).zip(&NIBBLE_SCALE).enumerate() {
            for (l, d) in row.iter_mut().enumerate() {
                *d = x.get(8 * (b * lanes + l) + p).map_or(0.0, |&v| v * f);
            }
        }
    }
}

/// Checks the [`Fused4::dot`] contract for `lanes` lanes and `rows` activation rows (panics
/// otherwise: the SIMD kernels read by pointer after this); returns the row's word count.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) fn fused4_words(rows: usize, lanes: usize, w: &[u8], sw: &[f32], xp: &[&[f32]], out: &[f32]) -> usize {
    let words = w.len() / 4;
    let blocks = words.div_ceil(lanes);
    assert!(w.len().is_multiple_of(16) && sw.len() >= blocks * lanes && xp.len() >= rows && out.len() >= rows);
    assert!(xp.iter().take(rows).all(|x| x.len() >= blocks * 8 * lanes));
    words
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
    AffineKernels { decode: decode_portable, dot_groups: dot_groups_portable, axpy_groups: axpy_groups_portable, fused4: None };

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute4_is_nibble_major_per_block_scaled_and_zero_padded() {
        // 2 lanes: blocks of 16 codes; x = 1..=24 (3 words), so the second block has one word.
        let x: Vec<f32> = (1..=24).map(|v| v as f32).collect();
        let mut d = vec![f32::NAN; permuted_len(24, 2)];
        assert_eq!(d.len(), 32);
        permute4(&x, 2, &mut d);
        // Block 0, nibble p: words 0 and 1 → x[p], x[8 + p], scaled by 16^-p (1 for p = 7).
        assert_eq!(&d[..4], &[1.0, 9.0, 2.0 / 16.0, 10.0 / 16.0]);
        assert_eq!(&d[14..16], &[8.0, 16.0]);
        // Block 1: word 2 (x[16..24]) in lane 0, lane 1 past x is zero.
        assert_eq!(&d[16..20], &[17.0, 0.0, 18.0 / 16.0, 0.0]);
        assert_eq!(&d[30..32], &[24.0, 0.0]);
    }
}
