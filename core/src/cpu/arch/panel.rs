//! The architecture-neutral half of the weight-panel GEMM (prompt processing: many activation
//! rows against the same weights): 16 weight rows at a time are unpacked once into a panel
//! whose 64-byte lines hold 4 consecutive elements of each of the 16 rows (one i32 lane per
//! row), then every activation row passes over the panel. A micro-kernel broadcasts 4
//! activation bytes and `vpdpbusd`s them against a whole line, so each i32 lane accumulates one
//! (activation row, weight row) dot product and the float work (convert, scale, accumulate)
//! is done once per 32-element group for 16 outputs — where the tile kernels of
//! [`super::prepared`] sum horizontally and spend it per output.
//!
//! The panel is built per call from the file layout (no copy of the weights is kept):
//! unpacking 16 rows costs about what one activation row's pass over them costs, so it pays
//! from [`super::PANEL_MIN_ROWS`] activation rows on. Every element is stored unsigned
//! (nibbles as they are, Q6_K's 6-bit values, Q8_0 and the IQ4 levels offset by 128, MXFP4's
//! doubled levels by 12, the ternary codes 0..2 as they are), so one kernel serves every format:
//!
//! `W_j · a = Σ_g A_j[g] · d_a[g] · (Σ_{e∈g} q_j[e]·a[e] − o·Σ_{e∈g} a[e]) + B_j[g] · s_a[g]`
//!
//! with the format's offset `o` (8, 128, 32; 0 for the formats with a min), per weight row and
//! group the f32 `A` (and the min's `B`), and per activation row and group the prepared `d` and
//! `s` ([`super::GemvActivations`]) and the integer `o·Σa` (per call). The integer dot of a
//! group is exact, as in the dot kernels; only the float order differs from them (within
//! their bound), and each output goes through the same operations wherever its row sits in a
//! panel or tile.


use alloc::vec::Vec;

use crate::quant::GgmlType;

use super::prepared::{holds_32, holds_q8k, iq4xs_scales, q3k_scales, q4k_scales_mins, row_bytes_if_fits, Low2, IQ4XS_BYTES};
use super::{GemvActivations as Act, PanelGemm};

/// Weight rows per panel: one per i32 lane of a 512-bit register.
pub(crate) const COLS: usize = 16;

/// The weight formats a panel holds (the discriminant indexes [`Layout::ALL`]).
#[derive(Clone, Copy, PartialEq, Debug)]
#[repr(u8)]
pub(crate) enum Layout {
    Q4_0,
    Q4_1,
    /// Q5_0, Q5_1: Q4_0's and Q4_1's nibbles with a fifth bit per element (a u32 before them).
    Q5_0,
    Q5_1,
    Q8_0,
    /// Q2_K: 16 groups of 16 two-bit quants under 4-bit scales and mins.
    Q2K,
    /// Q3_K: Q2_K's two-bit quants plus a high bit each (stored 0..7, offset 4), 6-bit scales.
    Q3K,
    Q4K,
    Q5K,
    Q6K,
    /// IQ4_NL: 32-element blocks of level indices under an f16 `d`.
    Iq4Nl,
    /// IQ4_XS: 256-element blocks, a 6-bit scale per 32 elements.
    Iq4Xs,
    /// MXFP4: 32 E2M1 codes under an E8M0 scale; stored as the doubled level + 12 (0..24).
    Mxfp4,
    /// TQ1_0, TQ2_0: 256 trits under an f16 `d`, stored as the code 0..2 (TQ2_0: 0..3, the
    /// unused code 3 decoding to 2 as in ggml), offset 1; eight 32-element groups of scale 1.
    Tq1,
    Tq2,
}

impl Layout {
    /// Every layout, in discriminant order (`ALL[l as usize] == l`).
    pub(crate) const ALL: [Layout; 15] = [
        Layout::Q4_0,
        Layout::Q4_1,
        Layout::Q5_0,
        Layout::Q5_1,
        Layout::Q8_0,
        Layout::Q2K,
        Layout::Q3K,
        Layout::Q4K,
        Layout::Q5K,
        Layout::Q6K,
        Layout::Iq4Nl,
        Layout::Iq4Xs,
        Layout::Mxfp4,
        Layout::Tq1,
        Layout::Tq2,
    ];

    /// The layout a panel holds weights of GGUF type `ty` in (the one table of which types
    /// have panels), None where there is none.
    pub(crate) fn of(ty: GgmlType) -> Option<Layout> {
        use GgmlType as T;
        Some(match ty {
            T::Q4_0 => Layout::Q4_0,
            T::Q4_1 => Layout::Q4_1,
            T::Q5_0 => Layout::Q5_0,
            T::Q5_1 => Layout::Q5_1,
            T::Q8_0 => Layout::Q8_0,
            T::Q2_K => Layout::Q2K,
            T::Q3_K => Layout::Q3K,
            T::Q4_K => Layout::Q4K,
            T::Q5_K => Layout::Q5K,
            T::Q6_K => Layout::Q6K,
            T::IQ4_NL => Layout::Iq4Nl,
            T::IQ4_XS => Layout::Iq4Xs,
            T::MXFP4 => Layout::Mxfp4,
            T::TQ1_0 => Layout::Tq1,
            T::TQ2_0 => Layout::Tq2,
            _ => return None,
        })
    }

    /// Activation rows from which this layout's panel is used even where the level's own
    /// threshold ([`super::QuantGemv::panel_min_rows`]) is lower. Q5_0, Q5_1 and Q2_K panels
    /// measured no faster than their 4 × 2 tiles at 64 rows (0.75–0.99×, AVX2 on the device
    /// host, docs/BENCHMARKS.md "kq22") and 1.01–1.09× at 512: Q5's fifth bits cost
    /// the line builder a multiply per word and its i16 sums a second widening, and Q2_K's
    /// 16-element groups each paid the float work (convert, scale, min) for 4 integer steps
    /// (AVX2 has applied the scales in integers since kq23, not re-measured at 64 rows).
    ///
    /// MXFP4 and the ternary formats build their lines word by word at every level (the
    /// AVX-512 gathers have no arm for them), so they take that threshold there too.
    pub(crate) fn min_rows(self) -> usize {
        match self {
            Layout::Q5_0 | Layout::Q5_1 | Layout::Q2K => 512,
            Layout::Mxfp4 | Layout::Tq1 | Layout::Tq2 => super::PANEL_MIN_ROWS_WORDS,
            _ => 0,
        }
    }

    /// Bytes of one weight block.
    pub(crate) fn block_bytes(self) -> usize {
        match self {
            Layout::Q4_0 => 18,
            Layout::Q4_1 => 20,
            Layout::Q5_0 => 22,
            Layout::Q5_1 => 24,
            Layout::Q8_0 => 34,
            Layout::Q2K => Low2::<false>::BYTES,
            Layout::Q3K => Low2::<true>::BYTES,
            Layout::Q4K => super::prepared::Q4K_BYTES,
            Layout::Q5K => super::prepared::Q5K_BYTES,
            Layout::Q6K => super::prepared::Q6K_BYTES,
            Layout::Iq4Nl => 18,
            Layout::Iq4Xs => IQ4XS_BYTES,
            Layout::Mxfp4 => GgmlType::MXFP4.block_bytes(),
            Layout::Tq1 => GgmlType::TQ1_0.block_bytes(),
            Layout::Tq2 => GgmlType::TQ2_0.block_bytes(),
        }
    }
    /// Groups (of one `A`, `B` each) per weight block, which is also the groups sharing one
    /// activation `d` (Q8_K: one per 256 elements).
    pub(crate) fn groups_per_block(self) -> usize {
        match self {
            Layout::Q4_0 | Layout::Q4_1 | Layout::Q5_0 | Layout::Q5_1 | Layout::Q8_0 | Layout::Iq4Nl | Layout::Mxfp4 => 1,
            Layout::Q4K | Layout::Q5K | Layout::Iq4Xs | Layout::Tq1 | Layout::Tq2 => 8,
            Layout::Q2K | Layout::Q3K | Layout::Q6K => 16,
        }
    }
    /// 4-element steps per group (the 16-groups formats' groups are 16 elements, the others 32).
    pub(crate) fn steps(self) -> usize {
        if self.groups_per_block() == 16 {
            4
        } else {
            8
        }
    }
    /// The offset `o` subtracted from every stored element; 0 for the formats with a min
    /// (their second term is `B·s`).
    pub(crate) fn offset(self) -> i32 {
        match self {
            Layout::Q4_0 => 8,
            Layout::Q5_0 => 16,
            Layout::Q3K => 4,
            Layout::Q8_0 | Layout::Iq4Nl | Layout::Iq4Xs => 128,
            Layout::Q6K => 32,
            Layout::Mxfp4 => 12,
            Layout::Tq1 | Layout::Tq2 => 1,
            Layout::Q4_1 | Layout::Q5_1 | Layout::Q2K | Layout::Q4K | Layout::Q5K => 0,
        }
    }
    /// Whether the panel may hold this format's elements as signed bytes instead (`signed`
    /// passes of [`run`]): Q8_0's bytes and the IQ4 levels, which have no offset then.
    pub(crate) fn has_signed_bytes(self) -> bool {
        matches!(self, Layout::Q8_0 | Layout::Iq4Nl | Layout::Iq4Xs)
    }
    /// [`Layout::offset`] of a panel built with `signed` (see [`Layout::has_signed_bytes`]).
    pub(crate) fn offset_in(self, signed: bool) -> i32 {
        if signed && self.has_signed_bytes() {
            0
        } else {
            self.offset()
        }
    }
    /// Whether the format's group scales are small integers under one float `d` per block
    /// (Q2_K's 4-bit, Q3_K's 6-bit; the ternary formats' groups all have scale 1), which a
    /// level may apply in the integer domain
    /// ([`PanelLevel::INT_SCALES`]): the groups' integer dots, each times its scale, summed
    /// exactly, then one convert and float multiply per super-block instead of per group.
    pub(crate) fn has_int_scales(self) -> bool {
        matches!(self, Layout::Q2K | Layout::Q3K | Layout::Tq1 | Layout::Tq2)
    }
    /// Where the activations are the quantized rows as they are (`arch/dot_gemv.rs`: MXFP4's
    /// Q8_0, the ternary formats' Q8_K): the bytes of an activation block and the offset of
    /// its quants in it. None where they are prepared ([`super::prepared`]).
    pub(crate) fn act_block_bytes(self) -> Option<(usize, usize)> {
        match self {
            Layout::Mxfp4 => Some((GgmlType::Q8_0.block_bytes(), 2)),
            Layout::Tq1 | Layout::Tq2 => Some((GgmlType::Q8_K.block_bytes(), 4)),
            _ => None,
        }
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        if let Some((bytes, _)) = self.act_block_bytes() {
            return act.nb >= nb && act.q.len() >= nb * bytes && act.d.len() >= nb;
        }
        match self {
            Layout::Q4_0 | Layout::Q4_1 | Layout::Q5_0 | Layout::Q5_1 | Layout::Q8_0 | Layout::Iq4Nl => holds_32(act, nb),
            Layout::Q4K | Layout::Q5K | Layout::Iq4Xs => holds_q8k(act, nb, 8),
            Layout::Q2K | Layout::Q3K | Layout::Q6K => holds_q8k(act, nb, 16),
            Layout::Mxfp4 | Layout::Tq1 | Layout::Tq2 => false,
        }
    }
}

/// 16 weight rows unpacked: line `g·steps + t` (16 words, 64 bytes) holds elements `4t..4t + 4`
/// of group g of every row (row r in word r, little-endian bytes); `ab[32g..32g + 16]` the rows' `A`, then their
/// `B` (zero for formats without a min).
///
/// With integer scales ([`Layout::has_int_scales`] at a level with [`PanelLevel::INT_SCALES`]):
/// `isc[16g + r]` is row r's integer scale of group g as an i16 in both halves of the word
/// (a `vpmaddwd` operand that scales a pair of i16 sums at once), and `d[16b + r]` row r's
/// float `d` of block b; `A` is then `d·scale` as before (unused by such a kernel) and `B`
/// the min's term as before. Both are empty otherwise.
pub(crate) struct Panel {
    pub(crate) q: Vec<u32>,
    pub(crate) ab: Vec<f32>,
    pub(crate) isc: Vec<u32>,
    pub(crate) d: Vec<f32>,
    pub(crate) groups: usize,
}

/// Where step t of group g reads the prepared activation quants: `lo + 4t` for t < 4, else
/// `hi + 4(t − 4)` (the two 16-element halves of a block, apart in the paired order).
pub(crate) type Offsets = [u32; 2];

fn f16_at(p: &[u8], at: usize) -> f32 {
    crate::quant::ggml::util::f16_to_f32([p[at], p[at + 1]])
}

impl Panel {
    fn new(layout: Layout, nb: usize, int_scales: bool) -> Panel {
        let groups = nb * layout.groups_per_block();
        let (isc, d) = if int_scales { (alloc::vec![0; groups * COLS], alloc::vec![0.0; nb * COLS]) } else { (Vec::new(), Vec::new()) };
        Panel { q: alloc::vec![0; groups * layout.steps() * COLS], ab: alloc::vec![0.0; groups * 32], isc, d, groups }
    }

    fn scales(&mut self, g: usize, r: usize, a: f32, b: f32) {
        self.ab[32 * g + r] = a;
        self.ab[32 * g + 16 + r] = b;
    }

    /// Row r's integer scale `v` of group g and float `d` of block b, where the panel keeps
    /// integer scales.
    fn int_scale(&mut self, g: usize, b: usize, r: usize, v: i32, d: f32) {
        if !self.isc.is_empty() {
            let h = v as i16 as u16 as u32;
            self.isc[COLS * g + r] = h | (h << 16);
            self.d[COLS * b + r] = d;
        }
    }

    /// The per-group `A` and `B` of `rows` (≤ 16) weight rows of `nb` blocks each, `wrb`
    /// bytes apart, into lanes 0..rows; the other lanes are zero. (The quants go into `q`
    /// through the architecture's [`PanelLines`].)
    fn pack_scales(&mut self, layout: Layout, w: &[u8], wrb: usize, rows: usize, nb: usize) {
        if rows < COLS {
            self.ab.iter_mut().for_each(|v| *v = 0.0);
            self.isc.iter_mut().for_each(|v| *v = 0);
            self.d.iter_mut().for_each(|v| *v = 0.0);
        }
        let (bb, gpb) = (layout.block_bytes(), layout.groups_per_block());
        for r in 0..rows {
            for b in 0..nb {
                let blk = &w[r * wrb + b * bb..][..bb];
                let g0 = b * gpb;
                match layout {
                    Layout::Q4_0 | Layout::Q5_0 | Layout::Q8_0 | Layout::Iq4Nl => self.scales(g0, r, f16_at(blk, 0), 0.0),
                    Layout::Q4_1 | Layout::Q5_1 => self.scales(g0, r, f16_at(blk, 0), f16_at(blk, 2)),
                    Layout::Q2K => {
                        // Per group a 4-bit scale (low nibble) and min (high nibble) byte.
                        let (d, dmin) = (f16_at(blk, Low2::<false>::D), f16_at(blk, Low2::<false>::D + 2));
                        for s in 0..16 {
                            let sc = blk[s];
                            self.scales(g0 + s, r, d * (sc & 15) as f32, -dmin * (sc >> 4) as f32);
                            self.int_scale(g0 + s, b, r, (sc & 15) as i32, d);
                        }
                    }
                    Layout::Q3K => {
                        let d = f16_at(blk, Low2::<true>::D);
                        let mut sc = [0u8; 12];
                        sc.copy_from_slice(&blk[Low2::<true>::D - 12..Low2::<true>::D]);
                        let words = q3k_scales(sc);
                        for s in 0..16 {
                            let v = (words[s / 4] >> (8 * (s % 4))) as u8 as i32 - 32;
                            self.scales(g0 + s, r, d * v as f32, 0.0);
                            self.int_scale(g0 + s, b, r, v, d);
                        }
                    }
                    Layout::Q4K | Layout::Q5K => {
                        let (d, dmin) = (f16_at(blk, 0), f16_at(blk, 2));
                        let mut sc = [0u8; 12];
                        sc.copy_from_slice(&blk[4..16]);
                        let (scales, mins) = q4k_scales_mins(sc);
                        for j in 0..8 {
                            let (s, m) = ((scales >> (8 * j)) as u8 as f32, (mins >> (8 * j)) as u8 as f32);
                            self.scales(g0 + j, r, d * s, -dmin * m);
                        }
                    }
                    Layout::Q6K => {
                        let d = f16_at(blk, 208);
                        for s in 0..16 {
                            self.scales(g0 + s, r, d * blk[192 + s] as i8 as f32, 0.0);
                        }
                    }
                    Layout::Mxfp4 => self.scales(g0, r, crate::quant::ggml::util::e8m0_to_f32_half(blk[0]), 0.0),
                    Layout::Tq1 | Layout::Tq2 => {
                        let d = f16_at(blk, bb - 2);
                        for s in 0..8 {
                            self.scales(g0 + s, r, d, 0.0);
                            self.int_scale(g0 + s, b, r, 1, d);
                        }
                    }
                    Layout::Iq4Xs => {
                        let d = f16_at(blk, 0);
                        let mut head = [0u8; 8];
                        head.copy_from_slice(&blk[..8]);
                        let ls = iq4xs_scales(&head);
                        for s in 0..8 {
                            self.scales(g0 + s, r, d * (((ls >> (8 * s)) & 0xFF) as i32 - 32) as f32, 0.0);
                        }
                    }
                }
            }
        }
    }
}

/// The per-group activation offsets of `layout` over `nb` blocks; `pairs`: the nibble
/// formats' activations are in [`super::prepared::Order::NibblePairs`] (IQ4_XS: the pairs of
/// sub-blocks of [`super::prepared::prepare_q8k_pairs`], so every group has a partner).
fn offsets(layout: Layout, nb: usize, pairs: bool) -> Vec<Offsets> {
    let groups = nb * layout.groups_per_block();
    if let Some((bytes, at)) = layout.act_block_bytes() {
        // The quantized rows as they are: group g's 32 quants in its activation block.
        let gpb = layout.groups_per_block();
        return (0..groups)
            .map(|g| {
                let lo = (bytes * (g / gpb) + at + 32 * (g % gpb)) as u32;
                [lo, lo + 16]
            })
            .collect();
    }
    let paired = pairs && matches!(layout, Layout::Q4_0 | Layout::Q4_1 | Layout::Q5_0 | Layout::Q5_1 | Layout::Iq4Nl);
    let all_paired = pairs && layout == Layout::Iq4Xs;
    (0..groups)
        .map(|g| {
            let g32 = g as u32;
            if layout.steps() == 4 {
                [16 * g32, 16 * g32]
            } else if all_paired || (paired && g < nb - nb % 2) {
                let lo = 64 * (g32 / 2) + 16 * (g32 % 2);
                [lo, lo + 32]
            } else {
                [32 * g32, 32 * g32 + 16]
            }
        })
        .collect()
}

/// `o·Σa` per activation row and group (`sums[i·groups + g]`), where `offs` says the group's
/// quants are; empty for formats without an offset.
fn offset_sums(layout: Layout, o: i32, offs: &[Offsets], acts: &[Act]) -> Vec<i32> {
    if o == 0 {
        return Vec::new();
    }
    let sum = |q: &[u8]| q.iter().map(|&v| v as i8 as i32).sum::<i32>();
    let short = layout.steps() == 4;
    acts.iter()
        .flat_map(|a| {
            offs.iter().map(move |&[lo, hi]| {
                let (lo, hi) = (lo as usize, hi as usize);
                let s = if short { sum(&a.q[lo..lo + 16]) } else { sum(&a.q[lo..lo + 16]) + sum(&a.q[hi..hi + 16]) };
                o * s
            })
        })
        .collect()
}

/// [`offset_sums`] as the i16 `−o·Σa` in the low half of a word (high half zero) for the
/// integer-scale kernels, which subtract it from a group's i16 pair sums before scaling them
/// (|o·Σa| ≤ 4·16·127 for Q3_K, the one such format with an offset).
fn offset_sums16(sums: &[i32]) -> Vec<u32> {
    sums.iter().map(|&s| (s.wrapping_neg() as i16 as u16) as u32).collect()
}

/// What a micro-kernel pass reads beside the panel: per group the activation offsets, per
/// activation row and group the `o·Σa` ([`offset_sums`]).
pub(crate) struct PassInputs<'a> {
    pub(crate) layout: Layout,
    /// Q8_0 and the IQ4 levels are in the panel as signed bytes, without offset
    /// ([`Layout::has_signed_bytes`]; the AVX2 kernel's choice, whose `vpmaddubsw` would
    /// saturate on `byte + 128`).
    pub(crate) signed: bool,
    pub(crate) offs: &'a [Offsets],
    pub(crate) sums: &'a [i32],
    /// Where the panel holds integer scales ([`Panel::isc`]): [`offset_sums16`] of `sums`
    /// (empty where there is no offset, or no integer scales). Only x86-64's AVX2 level has
    /// integer scales so far.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) sums16: &'a [u32],
}

/// Unpacks the quants of `rows` (≤ 16) weight rows at `w`, `wrb` bytes apart, `nb` blocks
/// each, into the panel lines at `q` (`groups·steps·16` words), lanes past `rows` zero: per
/// group g and step t, the word of row r holds elements `4t..4t + 4` of its group g unsigned
/// (nibbles as stored; Q5_K with the fifth bit as 16; Q6_K's low nibble and high pair as
/// 0..63; Q8_0's bytes + 128; MXFP4's doubled level + 12; the ternary codes), element `4t + i`
/// in byte i.
///
/// # Safety
/// The CPU has the function's features; the rows hold `nb` blocks of `layout`; `q` holds the
/// panel's lines.
pub(crate) type PanelLines = unsafe fn(layout: Layout, w: *const u8, wrb: usize, rows: usize, nb: usize, q: *mut u32);

/// A micro-kernel pass: every activation row of `acts` against the panel, outputs
/// `out[i·ldo + c]` for the first `cols` lanes.
///
/// # Safety
/// The CPU has the kernel's features; `panel` and `inp` were built for its layout over the
/// blocks every `acts[i]` holds, `inp.sums` for these `acts`; `out` holds
/// `(acts.len() − 1)·ldo + cols` values.
pub(crate) type PanelKernel = unsafe fn(inp: &PassInputs, panel: &Panel, acts: &[Act], cols: usize, out: *mut f32, ldo: usize);

/// `out[i·ldo + j] = W_j · act_i` for the `nw` weight rows in `w` (file layout) and the
/// prepared rows `acts`, panel by panel, at level `P`. Sizes that do not fit write nothing
/// (the callers check them first). `P` must come from an architecture's `panel_for`, which
/// hands it out only where the CPU has its features.
pub(crate) fn run<P: PanelLevel>(layout: Layout, w: &[u8], nw: usize, acts: &[Act], out: &mut [f32], ldo: usize) {
    let nx = acts.len();
    let Some(wrb) = row_bytes_if_fits(w, nw, nx, out, ldo) else { return };
    let nb = wrb / layout.block_bytes();
    if nb == 0 || !acts.iter().all(|a| layout.holds(a, nb)) {
        return;
    }
    let offs = offsets(layout, nb, P::PAIRS);
    let signed = P::SIGNED && layout.has_signed_bytes();
    let int_scales = P::INT_SCALES && layout.has_int_scales();
    let sums = offset_sums(layout, layout.offset_in(signed), &offs, acts);
    let sums16 = if int_scales { offset_sums16(&sums) } else { Vec::new() };
    let inp = PassInputs { layout, signed, offs: &offs, sums: &sums, sums16: &sums16 };
    let mut panel = Panel::new(layout, nb, int_scales);
    let mut j0 = 0;
    while j0 < nw {
        let cols = (nw - j0).min(COLS);
        let rows = &w[j0 * wrb..];
        panel.pack_scales(layout, rows, wrb, cols, nb);
        // SAFETY: `lines` and the kernel came from their architecture's table after the feature
        // check; the `cols` rows from j0 hold `nb` blocks each (wrb ≥ nb·block bytes); the
        // panel, offsets and sums were built for `layout` over `nb` blocks, which every
        // activation row holds (checked above); out[(nx − 1)·ldo + j0 + cols − 1] is in bounds.
        unsafe {
            (P::LINES)(layout, rows.as_ptr(), wrb, cols, nb, panel.q.as_mut_ptr());
            (P::KERNEL)(&inp, &panel, acts, cols, out.as_mut_ptr().add(j0), ldo);
        }
        j0 += cols;
    }
}

/// One ISA level's half of the panel GEMM: its line builder, its micro-kernel and how the
/// activations of the level's GEMV (whose preparation the panel reads) are laid out.
pub(crate) trait PanelLevel {
    const LINES: PanelLines;
    const KERNEL: PanelKernel;
    /// The GEMV prepares the 32-element nibble formats in [`super::prepared::Order::NibblePairs`].
    const PAIRS: bool;
    /// The panel holds Q8_0 and the IQ4 levels as signed bytes ([`PassInputs::signed`]).
    const SIGNED: bool;
    /// The kernel applies integer group scales ([`Layout::has_int_scales`]) in the integer
    /// domain, from [`Panel::isc`], [`Panel::d`] and [`PassInputs::sums16`].
    const INT_SCALES: bool;
}

/// [`run`] at level `P` for the layout of discriminant `L`.
fn gemm<P: PanelLevel, const L: u8>(w: &[u8], nw: usize, acts: &[Act], out: &mut [f32], ldo: usize) {
    run::<P>(Layout::ALL[L as usize], w, nw, acts, out, ldo)
}

/// The panel GEMM of GGUF type `ty` at level `P` (every type [`Layout::of`] has), None for the
/// others. Only an architecture's `panel_for` calls this, after checking that the CPU has
/// `P`'s features and the level allows them: the returned kernel runs `P`'s code.
pub(crate) fn gemm_for<P: PanelLevel>(ty: GgmlType) -> Option<PanelGemm> {
    macro_rules! at {
        ($($l:ident),*) => {
            match Layout::of(ty)? {
                $(Layout::$l => gemm::<P, { Layout::$l as u8 }> as PanelGemm,)*
            }
        };
    }
    Some(at!(Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2K, Q3K, Q4K, Q5K, Q6K, Iq4Nl, Iq4Xs, Mxfp4, Tq1, Tq2))
}

/// Activation rows per register tile of every level's micro-kernel (each level's file says
/// why its registers hold that many); [`with_tile_rows`] dispatches 1..=TILE_ROWS.
pub(crate) const TILE_ROWS: usize = 4;

/// Runs `$body` with `$m` a `const usize` equal to `$rows` (1..=[`TILE_ROWS`], the activation
/// rows of a micro-kernel tile), so that the body instantiates its tile at that compile-time row count:
/// the one row-count dispatch of every level's panel kernel.
macro_rules! with_tile_rows {
    ($rows:expr, $m:ident => $body:block) => {
        match $rows {
            4 => {
                const $m: usize = 4;
                $body
            }
            3 => {
                const $m: usize = 3;
                $body
            }
            2 => {
                const $m: usize = 2;
                $body
            }
            _ => {
                const $m: usize = 1;
                $body
            }
        }
    };
}
pub(crate) use with_tile_rows;

/// The [`PanelLines`] of a level without a vector unpacker (x86-64 AVX2, aarch64 NEON and
/// dotprod): the same 32-bit word operations as the AVX-512 gathers, one row at a time (the
/// compiler vectorises the byte masks). `SIGNED`: Q8_0's bytes and the IQ4 levels as signed
/// bytes (see [`PassInputs::signed`]), else offset by 128.
///
/// # Safety
/// As [`PanelLines`] (no CPU feature is needed).
pub(crate) unsafe fn lines_words<const SIGNED: bool>(layout: Layout, w: *const u8, wrb: usize, rows: usize, nb: usize, q: *mut u32) {
    let steps = layout.steps();
    let groups = nb * layout.groups_per_block();
    // SAFETY: the caller passes a panel of `groups·steps·16` words and `rows` rows of `nb`
    // blocks each, `wrb` bytes apart (PanelLines' contract).
    let q = core::slice::from_raw_parts_mut(q, groups * steps * COLS);
    if rows < COLS {
        q.iter_mut().for_each(|v| *v = 0);
    }
    const LOW4: u32 = 0x0F0F_0F0F;
    // IQ4 index bytes to levels (signed bytes, or + 128).
    let level = |v: u32| {
        u32::from_le_bytes(v.to_le_bytes().map(|i| {
            let l = crate::quant::ggml::iq4::KVALUES[(i & 15) as usize] as u8;
            if SIGNED {
                l
            } else {
                l ^ 0x80
            }
        }))
    };
    let (bb, gpb) = (layout.block_bytes(), layout.groups_per_block());
    for r in 0..rows {
        let row = core::slice::from_raw_parts(w.add(r * wrb), nb * bb);
        let mut put = |g: usize, t: usize, v: u32| q[(g * steps + t) * COLS + r] = v;
        for b in 0..nb {
            let blk = &row[b * bb..][..bb];
            let word = |at: usize| u32::from_le_bytes([blk[at], blk[at + 1], blk[at + 2], blk[at + 3]]);
            let g0 = b * gpb;
            match layout {
                Layout::Q4_0 | Layout::Q4_1 => {
                    let qs = if layout == Layout::Q4_1 { 4 } else { 2 };
                    for t in 0..4 {
                        let v = word(qs + 4 * t);
                        put(g0, t, v & LOW4);
                        put(g0, t + 4, (v >> 4) & LOW4);
                    }
                }
                Layout::Q5_0 | Layout::Q5_1 => {
                    let qs = if layout == Layout::Q5_1 { 8 } else { 6 };
                    let high = word(qs - 4);
                    for t in 0..4 {
                        let v = word(qs + 4 * t);
                        put(g0, t, (v & LOW4) | fifth_bits(high >> (4 * t)));
                        put(g0, t + 4, ((v >> 4) & LOW4) | fifth_bits(high >> (16 + 4 * t)));
                    }
                }
                Layout::Q2K | Layout::Q3K => {
                    let high = layout == Layout::Q3K;
                    let qs = if high { Low2::<true>::QS } else { Low2::<false>::QS };
                    for h in 0..2 {
                        for l in (0..32).step_by(4) {
                            let v = word(qs + 32 * h + l);
                            let hm = if high { word(l) } else { 0 };
                            for j in 0..4 {
                                let e = 128 * h + 32 * j + l;
                                let hb = ((hm >> (4 * h + j)) & 0x0101_0101) << 2;
                                put(g0 + e / 16, (e % 16) / 4, ((v >> (2 * j)) & 0x0303_0303) | hb);
                            }
                        }
                    }
                }
                Layout::Iq4Nl => {
                    for t in 0..4 {
                        let v = word(2 + 4 * t);
                        put(g0, t, level(v & LOW4));
                        put(g0, t + 4, level((v >> 4) & LOW4));
                    }
                }
                Layout::Iq4Xs => {
                    for s in 0..8 {
                        for t in 0..4 {
                            let v = word(8 + 16 * s + 4 * t);
                            put(g0 + s, t, level(v & LOW4));
                            put(g0 + s, t + 4, level((v >> 4) & LOW4));
                        }
                    }
                }
                Layout::Q8_0 => {
                    for t in 0..8 {
                        let v = word(2 + 4 * t);
                        put(g0, t, if SIGNED { v } else { v ^ 0x8080_8080 });
                    }
                }
                Layout::Q4K | Layout::Q5K => {
                    let fifth = layout == Layout::Q5K;
                    let qs = if fifth { 48 } else { 16 };
                    for t in 0..8 {
                        let high = if fifth { word(16 + 4 * t) } else { 0 };
                        for j in 0..4 {
                            let v = word(qs + 32 * j + 4 * t);
                            for k in 0..2 {
                                let sub = 2 * j + k;
                                let half = (v >> (4 * k)) & LOW4;
                                put(g0 + sub, t, half | (((high >> sub) & 0x0101_0101) << 4));
                            }
                        }
                    }
                }
                Layout::Q6K => {
                    for h in 0..2 {
                        for l in (0..32).step_by(4) {
                            let (qa, qb, qh) = (word(64 * h + l), word(64 * h + 32 + l), word(128 + 32 * h + l));
                            for (k, (low, hs)) in [(qa & LOW4, 0), (qb & LOW4, 2), ((qa >> 4) & LOW4, 4), ((qb >> 4) & LOW4, 6)].into_iter().enumerate() {
                                let pair = (qh >> hs) & 0x0303_0303;
                                let e = 128 * h + 32 * k + l;
                                put(g0 + e / 16, (e % 16) / 4, low | (pair << 4));
                            }
                        }
                    }
                }
                Layout::Mxfp4 => {
                    for t in 0..4 {
                        let v = word(1 + 4 * t);
                        put(g0, t, mxfp4_level(v & LOW4));
                        put(g0, t + 4, mxfp4_level((v >> 4) & LOW4));
                    }
                }
                Layout::Tq2 => {
                    // Bits 2l..2l + 2 of byte 32·half + m: element 128·half + 32·l + m.
                    for s in 0..8 {
                        let (half, l) = (s / 4, s % 4);
                        for t in 0..8 {
                            put(g0 + s, t, (word(32 * half + 4 * t) >> (2 * l)) & 0x0303_0303);
                        }
                    }
                }
                Layout::Tq1 => {
                    let codes = tq1_codes(blk);
                    for s in 0..8 {
                        for t in 0..8 {
                            let at = 32 * s + 4 * t;
                            put(g0 + s, t, u32::from_le_bytes([codes[at], codes[at + 1], codes[at + 2], codes[at + 3]]));
                        }
                    }
                }
            }
        }
    }
}

/// Four MXFP4 codes (one per byte) to their doubled levels + 12 (0..24, unsigned).
fn mxfp4_level(v: u32) -> u32 {
    u32::from_le_bytes(v.to_le_bytes().map(|c| (crate::quant::ggml::mxfp4::KVALUES[(c & 15) as usize] + 12) as u8))
}

/// The 256 codes (trit + 1: 0..2) of the TQ1_0 block `blk` in element order, as ggml decodes
/// them: trit n of a fraction byte q is `((q·3ⁿ mod 256)·3) >> 8` (module docs of
/// `quant::ggml::ternary`). Written as loops over whole byte runs so that they vectorise.
fn tq1_codes(blk: &[u8]) -> [u8; 256] {
    const POW3: [u8; 5] = [1, 3, 9, 27, 81];
    let trit = |q: u8, n: usize| ((q.wrapping_mul(POW3[n]) as u16 * 3) >> 8) as u8;
    let mut c = [0u8; 256];
    for n in 0..5 {
        // Bytes 0..32: element 32n + m; bytes 32..48: element 160 + 16n + m.
        for m in 0..32 {
            c[32 * n + m] = trit(blk[m], n);
        }
        for m in 0..16 {
            c[160 + 16 * n + m] = trit(blk[32 + m], n);
        }
    }
    // qh (bytes 48..52): trit n of byte j is element 240 + 4n + j.
    for n in 0..4 {
        for j in 0..4 {
            c[240 + 4 * n + j] = trit(blk[48 + j], n);
        }
    }
    c
}

/// Bits 0..4 of `bits` as the value 16 in bytes 0..4 (Q5_0 and Q5_1's fifth bits of 4
/// consecutive elements): the multiply puts a copy of the nibble at bits 0, 7, 14 and 21, whose
/// bit i lands on bit 8i (the copies do not overlap, so nothing carries).
pub(crate) fn fifth_bits(bits: u32) -> u32 {
    (((bits & 0xF).wrapping_mul(0x0020_4081)) & 0x0101_0101) << 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_discriminant_order_and_of_covers_it() {
        for (i, l) in Layout::ALL.iter().enumerate() {
            assert_eq!(*l as usize, i);
        }
        // Each layout is the panel of exactly one type, whose blocks it reads whole.
        for l in Layout::ALL {
            let types: Vec<GgmlType> = GgmlType::ALL.iter().copied().filter(|&t| Layout::of(t) == Some(l)).collect();
            assert_eq!(types.len(), 1, "{l:?}: {types:?}");
            assert_eq!(l.block_bytes(), types[0].block_bytes(), "{l:?}");
        }
    }

    #[test]
    fn fifth_bits_spread_each_bit_to_its_byte() {
        for v in 0u32..16 {
            let want = u32::from_le_bytes([0, 1, 2, 3].map(|i| if v >> i & 1 == 1 { 16 } else { 0 }));
            assert_eq!(fifth_bits(v | 0xABC0), want, "{v:04b}");
        }
    }
}
