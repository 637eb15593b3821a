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
//! 2-, 4- and 8-bit `x @ Ŵᵀ` have a fused kernel instead ([`Fused`]): it never writes decoded
//! codes. A little-endian word holds `F = 32/bits` codes, code `p` at bits `bits·p..` ("field"
//! `p`). A vector of `lanes` packed words and the same vector shifted right by 16 hold every
//! field of every word at a fixed place of its lane: field `p` at bit `(bits·p) % 16` of the
//! plain vector (`bits·p < 16`) or of the shifted one. Masking those bits in place and
//! converting the lane to f32 gives `q·2^((bits·p) % 16)` exactly (at most 16 significant bits,
//! never the sign bit), so the activations are permuted once per call ([`permute`]) to match —
//! blocks of `F·lanes` codes, field-major, each multiplied by [`field_scale`] — and each field
//! costs one AND, one convert and one FMA per activation row (no shuffle, no per-lane shift, no
//! store of the codes). Reading the upper fields from the shifted copy keeps the activation
//! factors at `2^-14` or above, so an activation rounds to a subnormal only below `2^-112`.

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
    /// The fused `x @ Ŵᵀ` kernel of the [`FusedWidth`]s, where the ISA has one.
    pub fused: Option<Fused>,
}

/// A width [`Fused`] kernels take: codes that never straddle a 32-bit word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FusedWidth {
    Two = 2,
    Four = 4,
    Eight = 8,
}

impl FusedWidth {
    /// The fused width of `bits`-wide codes, if they have one.
    pub(crate) fn of(bits: u32) -> Option<FusedWidth> {
        match bits {
            2 => Some(FusedWidth::Two),
            4 => Some(FusedWidth::Four),
            8 => Some(FusedWidth::Eight),
            _ => None,
        }
    }
}

/// Whether `bits`-wide codes have a fused `x @ Ŵᵀ` kernel (where the ISA has one).
pub(crate) fn fuses(bits: u32) -> bool {
    FusedWidth::of(bits).is_some()
}

/// The fused kernel of one ISA (see the module doc).
pub(crate) struct Fused {
    /// Packed words per vector: [`permute`] blocks are `F·lanes` codes.
    pub lanes: usize,
    /// `out[r] = Σ_l sw[l]·Σ_p q(l, p)·2^((bits·p) % 16)·xp[r][perm(l, p)]` over the words `l`
    /// of `w` (one weight row of `width`-wide codes, a multiple of 2 words):
    /// `sw` is each word's group scale and `xp` the [`permute`]d activation rows, both
    /// zero-padded to whole blocks (`sw.len() ≥ blocks·lanes`, each
    /// `xp[r].len() ≥ blocks·F·lanes`), `xp.len() ≤ MAX_ROWS`, `out.len() == xp.len()`.
    pub dot: FusedFn,
}

/// See [`Fused::dot`].
pub(crate) type FusedFn = fn(width: FusedWidth, w: &[u8], sw: &[f32], xp: &[&[f32]], out: &mut [f32]);

/// Codes per 32-bit word ("fields") at `bits` bits.
pub(crate) const fn fields(bits: u32) -> usize {
    (32 / bits) as usize
}

/// Factor of field `p` in [`permute`]: the kernels convert field `p` masked in place in the word
/// or, from bit 16 on, in the word shifted right by 16: `q·2^((bits·p) % 16)`, so the
/// activation is scaled by the inverse (a power of two: exact).
pub(crate) fn field_scale(bits: u32, p: usize) -> f32 {
    1.0 / (1u32 << ((bits as usize * p) % 16)) as f32
}

/// Whether field `p` of `bits`-wide codes lies in the word's upper half (the kernels read it
/// from the word shifted right by 16).
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) const fn in_high_half(bits: u32, p: usize) -> bool {
    bits as usize * p >= 16
}

/// Mask of field `p` of `bits`-wide codes where the kernels read it (see [`in_high_half`]).
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) const fn field_mask(bits: u32, p: usize) -> u32 {
    ((1u32 << bits) - 1) << ((bits as usize * p) % 16)
}

/// Length of one activation row after [`permute`] for `k` codes: whole blocks of `F·lanes`.
pub(crate) fn permuted_len(k: usize, bits: u32, lanes: usize) -> usize {
    let block = fields(bits) * lanes;
    k.div_ceil(block) * block
}

/// Lays `x` (one activation row of `k` codes) out for a [`Fused`] of `lanes` lanes at `bits`:
/// `dst[b·F·L + p·L + l] = x[F·(b·L + l) + p]·field_scale(bits, p)`, zero past `x`
/// (`dst.len() == permuted_len(x.len(), bits, lanes)`).
pub(crate) fn permute(x: &[f32], bits: u32, lanes: usize, dst: &mut [f32]) {
    let f = fields(bits);
    for (b, blk) in dst.chunks_exact_mut(f * lanes).enumerate() {
        for (p, row) in blk.chunks_exact_mut(lanes).enumerate() {
            let scale = field_scale(bits, p);
            for (l, d) in row.iter_mut().enumerate() {
                *d = x.get(f * (b * lanes + l) + p).map_or(0.0, |&v| v * scale);
            }
        }
    }
}

/// Checks the [`Fused::dot`] contract for `lanes` lanes, `bits` and `rows` activation rows
/// (panics otherwise: the SIMD kernels read by pointer after this); returns the row's word count.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) fn fused_words(bits: u32, rows: usize, lanes: usize, w: &[u8], sw: &[f32], xp: &[&[f32]], out: &[f32]) -> usize {
    let words = w.len() / 4;
    let blocks = words.div_ceil(lanes);
    assert!(fuses(bits) && w.len().is_multiple_of(8) && sw.len() >= blocks * lanes && xp.len() >= rows && out.len() >= rows);
    assert!(xp.iter().take(rows).all(|x| x.len() >= blocks * fields(bits) * lanes));
    words
}

/// One ISA's fused kernel body, monomorphized per width `B` and activation-row count `R`.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) trait FusedKernel {
    /// [`Fused::dot`] for `B` bits and `R` rows.
    ///
    /// # Safety
    /// The ISA features the implementation uses must be available.
    unsafe fn dot<const B: u32, const R: usize>(w: &[u8], sw: &[f32], xp: &[&[f32]], out: &mut [f32]);
}

/// Runs `K`'s kernel for `width` and `xp.len()` rows (`≤ MAX_ROWS`).
///
/// # Safety
/// As [`FusedKernel::dot`]: `K`'s ISA features are available.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) unsafe fn fused_dispatch<K: FusedKernel>(width: FusedWidth, w: &[u8], sw: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match width {
            FusedWidth::Two => fused_rows::<K, 2>(w, sw, xp, out),
            FusedWidth::Four => fused_rows::<K, 4>(w, sw, xp, out),
            FusedWidth::Eight => fused_rows::<K, 8>(w, sw, xp, out),
        }
    }
}

#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
unsafe fn fused_rows<K: FusedKernel, const B: u32>(w: &[u8], sw: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match xp.len() {
            1 => K::dot::<B, 1>(w, sw, xp, out),
            2 => K::dot::<B, 2>(w, sw, xp, out),
            3 => K::dot::<B, 3>(w, sw, xp, out),
            _ => K::dot::<B, MAX_ROWS>(w, sw, xp, out),
        }
    }
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
    AffineKernels { decode: decode_portable, dot_groups: dot_groups_portable, axpy_groups: axpy_groups_portable, fused: None };

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
    fn permute_is_field_major_per_block_scaled_and_zero_padded() {
        // 4 bits, 2 lanes: blocks of 16 codes; x = 1..=24 (3 words), so the second block has one word.
        let x: Vec<f32> = (1..=24).map(|v| v as f32).collect();
        let mut d = vec![f32::NAN; permuted_len(24, 4, 2)];
        assert_eq!(d.len(), 32);
        permute(&x, 4, 2, &mut d);
        // Block 0, field p: words 0 and 1 → x[p], x[8 + p], scaled by 16^-(p % 4).
        assert_eq!(&d[..4], &[1.0, 9.0, 2.0 / 16.0, 10.0 / 16.0]);
        assert_eq!(&d[8..10], &[5.0, 13.0]);
        assert_eq!(&d[14..16], &[8.0 / 4096.0, 16.0 / 4096.0]);
        // Block 1: word 2 (x[16..24]) in lane 0, lane 1 past x is zero.
        assert_eq!(&d[16..20], &[17.0, 0.0, 18.0 / 16.0, 0.0]);
        assert_eq!(&d[30..32], &[24.0 / 4096.0, 0.0]);
    }

    #[test]
    fn field_scales_undo_the_in_place_position_of_each_field() {
        // 8 bits: bytes 0, 1 of the word and of the word >> 16.
        assert_eq!([0, 1, 2, 3].map(|p| field_scale(8, p)), [1.0, 1.0 / 256.0, 1.0, 1.0 / 256.0]);
        // 2 bits: 16 fields, the smallest factor 2^-14 (fields 7 and 15).
        assert_eq!(field_scale(2, 7), 1.0 / 16384.0);
        assert_eq!(field_scale(2, 8), 1.0);
        assert_eq!(field_scale(2, 15), 1.0 / 16384.0);
        assert!(fuses(2) && fuses(4) && fuses(8) && !fuses(3) && !fuses(6));
        // 8 bits, 1 lane: blocks of one word (4 codes), two of them for 5 codes.
        let mut d = vec![f32::NAN; permuted_len(5, 8, 1)];
        permute(&[1.0, 2.0, 3.0, 4.0, 5.0], 8, 1, &mut d);
        assert_eq!(d, [1.0, 2.0 / 256.0, 3.0, 4.0 / 256.0, 5.0, 0.0, 0.0, 0.0]);
    }
}
