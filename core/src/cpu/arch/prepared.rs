//! The architecture-neutral half of the quantized matmul over prepared activations
//! ([`super::QuantGemv`]): the weight-format facts the kernels are written over, the activation
//! preparation (once per matmul call) and the register-tiling driver. Each architecture only
//! supplies its [`Kernel`]s (x86-64 AVX-512 VNNI in `x86_64/gemv*.rs` and AVX2 in
//! `x86_64/gemv_avx2*.rs`, aarch64 NEON and
//! dotprod in `aarch64/gemv*.rs`), so the tiling and the activation layout exist once.

use alloc::vec::Vec;

use super::GemvActivations as Act;

/// Facts of a 32-element weight format (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) and its activation partner.
#[derive(Clone, Copy)]
pub(crate) struct Format {
    /// Bytes of one weight block.
    pub(crate) wb: usize,
    /// Offset of the quants in a weight block (after the f16 scale, and min for Q4_1).
    pub(crate) wq: usize,
    /// Bytes of one activation block (34 for Q8_0, 36 for Q8_1) and offset of its quants.
    pub(crate) ab: usize,
    pub(crate) aq: usize,
    /// Nibble formats: low nibbles are elements 0..16 of the block, high nibbles 16..32.
    pub(crate) nibbles: bool,
    /// Q5_0, Q5_1: the 4 bytes before the nibbles hold each element's fifth bit (bit `e` of
    /// the little-endian u32 is element `e`'s bit 4).
    pub(crate) fifth: bool,
    /// What the per-block second term is (see [`Act::s`]).
    pub(crate) second: Second,
    /// IQ4_NL: the nibbles index the 16 signed levels of `quant::ggml::iq4::KVALUES`. The
    /// AVX-512 VNNI kernels look up `level + 128` (unsigned, for `vpdpbusd`) and the
    /// [`Second::Offset`] term removes the 128; the AVX2 and aarch64 kernels look up the signed
    /// levels and leave that term out.
    pub(crate) levels: bool,
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Second {
    /// Q4_0 (Q5_0): the quants' offset of 8 (16), `d_w · (−8·d_a·Σa)`.
    Offset,
    /// Q4_1: the weight's min times the activation's `s = d_a·Σa`.
    Min,
    /// Q8_0: none.
    None,
}

pub(crate) const Q4_0: Format = Format { levels: false, wb: 18, wq: 2, ab: 34, aq: 2, nibbles: true, fifth: false, second: Second::Offset };
pub(crate) const Q4_1: Format = Format { levels: false, wb: 20, wq: 4, ab: 36, aq: 4, nibbles: true, fifth: false, second: Second::Min };
pub(crate) const Q8_0: Format = Format { levels: false, wb: 34, wq: 2, ab: 34, aq: 2, nibbles: false, fifth: false, second: Second::None };
pub(crate) const Q5_0: Format = Format { levels: false, wb: 22, wq: 6, ab: 34, aq: 2, nibbles: true, fifth: true, second: Second::Offset };
/// IQ4_NL (32 elements: f16 `d`, 16 bytes of indices in Q4_0's nibble order), Q8_0 activations.
/// (The x86-64 AVX2 and aarch64 kernels look up the signed levels and skip the offset term.)
pub(crate) const IQ4_NL: Format = Format { levels: true, wb: 18, wq: 2, ab: 34, aq: 2, nibbles: true, fifth: false, second: Second::Offset };
pub(crate) const Q5_1: Format = Format { levels: false, wb: 24, wq: 8, ab: 36, aq: 4, nibbles: true, fifth: true, second: Second::Min };

impl Format {
    /// What [`Second::Offset`] formats subtract from their unsigned quants: 8, 16 with a
    /// fifth bit, 128 for the looked-up levels of IQ4_NL.
    pub(crate) fn offset(self) -> f32 {
        if self.levels {
            128.0
        } else if self.fifth {
            16.0
        } else {
            8.0
        }
    }

    /// The fifth bits of the block at `xb` (see [`Format::fifth`]).
    ///
    /// # Safety
    /// `xb` starts a whole block of a `fifth` format.
    #[inline]
    pub(crate) unsafe fn fifth_bits(self, xb: *const u8) -> u32 {
        (xb.add(self.wq - 4) as *const u32).read_unaligned()
    }
}

/// Q8_K activation block: `d` (f32), 256 quants, 16 sums of 16 quants (i16).
pub(crate) const Q8K_BYTES: usize = 292;
/// Q2_K weight block: 16 bytes of 4-bit scales (low nibbles) and mins (high), 64 bytes of
/// 2-bit quants, `d`, `dmin` (f16).
pub(crate) const Q2K_BYTES: usize = 84;
/// Q3_K weight block: 32 bytes of high bits, 64 of 2-bit low quants, 12 of packed 6-bit
/// scales, `d` (f16).
pub(crate) const Q3K_BYTES: usize = 110;
/// Q4_K weight block: `d`, `dmin` (f16), 12 bytes of 6-bit scales and mins, 128 of nibbles.
pub(crate) const Q4K_BYTES: usize = 144;
/// Q5_K weight block: Q4_K's `d`, `dmin` and scales, 32 bytes of fifth bits, 128 of nibbles.
pub(crate) const Q5K_BYTES: usize = 176;
/// Q6_K weight block: 128 bytes of low nibbles, 64 of high bit pairs, 16 i8 scales, `d`.
pub(crate) const Q6K_BYTES: usize = 210;

/// IQ4_XS weight block: `d` (f16), `scales_h` (u16: the scales' top bit pairs), `scales_l`
/// (4 bytes: their low nibbles), 128 bytes of level indices (16 per 32-element sub-block, in
/// Q4_0's nibble order).
pub(crate) const IQ4XS_BYTES: usize = 136;

/// The eight 6-bit sub-block scales (0..63, before the −32) of the IQ4_XS block at `blk`, one
/// per byte: the low nibbles of `scales_l` spread one per byte, the bit pairs of `scales_h`
/// spread to bits 4..6 (a few word operations instead of eight bit-field reads).
#[inline]
pub(crate) fn iq4xs_scales(blk: &[u8; 8]) -> u64 {
    let h = u16::from_le_bytes([blk[2], blk[3]]) as u64;
    let l = u32::from_le_bytes([blk[4], blk[5], blk[6], blk[7]]) as u64;
    // Nibble k of `l` to byte k.
    let l = (l | l << 16) & 0x0000_FFFF_0000_FFFF;
    let l = (l | l << 8) & 0x00FF_00FF_00FF_00FF;
    let l = (l | l << 4) & 0x0F0F_0F0F_0F0F_0F0F;
    // Bit pair k of `h` to bits 4..6 of byte k.
    let h = (h | h << 24) & 0x0000_00FF_0000_00FF;
    let h = (h | h << 12) & 0x000F_000F_000F_000F;
    let h = (h | h << 6) & 0x0303_0303_0303_0303;
    l | h << 4
}

/// A Q8_K row prepared for the IQ4_XS kernels that take a sub-block pair per 512-bit register
/// in [`Order::NibblePairs`]: [`prepare_q8k`] with 32-element sums, each 64 quants reordered
/// to `[a[0..16], a[32..48], a[16..32], a[48..64]]` (the low nibbles of sub-blocks 2j and
/// 2j + 1, then their high nibbles).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn prepare_q8k_pairs(x: &[u8]) -> Act {
    let mut act = prepare_q8k(x, 32);
    for c in act.q.chunks_exact_mut(64) {
        let mut t = [0u8; 64];
        for (k, src) in [0, 32, 16, 48].into_iter().enumerate() {
            t[16 * k..16 * k + 16].copy_from_slice(&c[src..src + 16]);
        }
        c.copy_from_slice(&t);
    }
    act
}

/// The Q4_K family (8 sub-blocks of 32, 6-bit scales and mins after `d`, `dmin`): Q4_K, and
/// Q5_K with its fifth bits. `FIFTH` picks Q5_K.
#[derive(Clone, Copy)]
pub(crate) struct K4<const FIFTH: bool>;

impl<const FIFTH: bool> K4<FIFTH> {
    /// Bytes of one weight block.
    pub(crate) const BYTES: usize = if FIFTH { Q5K_BYTES } else { Q4K_BYTES };
    /// Offset of the 32 bytes of fifth bits (Q5_K): bit `2j` of byte `l` is element `64j + l`'s,
    /// bit `2j + 1` element `64j + 32 + l`'s.
    pub(crate) const QH: usize = 16;
    /// Offset of the 128 nibble bytes: byte `32j + l` holds element `64j + l` (low nibble) and
    /// `64j + 32 + l` (high nibble).
    pub(crate) const QS: usize = if FIFTH { 48 } else { 16 };
}

fn f16_le(p: &[u8], at: usize) -> f32 {
    crate::quant::ggml::util::f16_to_f32([p[at], p[at + 1]])
}

/// How a kernel's registers take the quants of a 32-element format.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Order {
    /// Each block's 32 quants as they are (128-bit registers: `[a[0..16]]`, `[a[16..32]]`
    /// match a nibble register's low and high halves). The aarch64 and x86-64 AVX2 kernels' order.
    Natural,
    /// 512-bit registers over two blocks: for nibble formats a pair is
    /// `[a₀[0..16], a₁[0..16], a₀[16..32], a₁[16..32]]`, matching a weight register of
    /// `[lo₀, lo₁, hi₀, hi₁]`; Q8_0 pairs and a last odd block stay natural.
    NibblePairs,
}

/// The activation row `x` (whole blocks of the partner type) prepared: quants in `order`, per
/// block `d` and the term the weight's second f16 multiplies (Q4_1, Q5_1: the activation's
/// `s = d·Σq`; Q4_0: `−8·d·Σq`, Q5_0: `−16·d·Σq`, paired with the weight's own scale), both padded with zeros to
/// a multiple of 8 blocks (kernels load them in groups).
pub(crate) fn prepare(f: Format, order: Order, x: &[u8]) -> Act {
    let nb = x.len() / f.ab;
    let padded = nb.next_multiple_of(8);
    let mut q = Vec::with_capacity(nb * 32);
    let (mut d, mut s) = (Vec::with_capacity(padded), Vec::with_capacity(padded));
    for b in 0..nb {
        let blk = &x[b * f.ab..(b + 1) * f.ab];
        d.push(f16_le(blk, 0));
        let quants = &blk[f.aq..f.aq + 32];
        s.push(match f.second {
            Second::Min => f16_le(blk, 2),
            Second::Offset => -f.offset() * d[b] * quants.iter().map(|&v| v as i8 as i32).sum::<i32>() as f32,
            Second::None => 0.0,
        });
    }
    let quants = |b: usize| (b * f.ab + f.aq, b * f.ab + f.aq + 32);
    if order == Order::NibblePairs && f.nibbles {
        for pair in 0..nb / 2 {
            let (a0, a1) = (quants(2 * pair).0, quants(2 * pair + 1).0);
            for (src, half) in [(a0, 0), (a1, 0), (a0, 16), (a1, 16)] {
                q.extend_from_slice(&x[src + half..src + half + 16]);
            }
        }
        if nb % 2 == 1 {
            let (a, e) = quants(nb - 1);
            q.extend_from_slice(&x[a..e]);
        }
    } else {
        for b in 0..nb {
            let (a, e) = quants(b);
            q.extend_from_slice(&x[a..e]);
        }
    }
    d.resize(padded, 0.0);
    s.resize(padded, 0.0);
    Act { q, d, s, sums: Vec::new(), nb }
}

/// A Q8_K row `x` prepared: quants in natural order, `d` per super-block, and `s` per group
/// of `group` quants (16 or 32) = `d·Σa` over it, from the block's 16-element sums.
pub(crate) fn prepare_q8k(x: &[u8], group: usize) -> Act {
    let nb = x.len() / Q8K_BYTES;
    let per_block = 256 / group;
    let mut q = Vec::with_capacity(nb * 256);
    let mut d = Vec::with_capacity(nb);
    let mut s = Vec::with_capacity(nb * per_block);
    for blk in x.chunks_exact(Q8K_BYTES) {
        let da = f32::from_le_bytes([blk[0], blk[1], blk[2], blk[3]]);
        d.push(da);
        q.extend_from_slice(&blk[4..260]);
        let bsum = |i: usize| i16::from_le_bytes([blk[260 + 2 * i], blk[261 + 2 * i]]) as i32;
        let per_sum = group / 16;
        s.extend((0..per_block).map(|k| da * (0..per_sum).map(|i| bsum(per_sum * k + i)).sum::<i32>() as f32));
    }
    Act { q, d, s, sums: Vec::new(), nb }
}

/// The eight 6-bit scales and the eight mins of a Q4_K super-block's 12 scale bytes `sc`
/// (ggml's `scale_min_k4` order), one per byte of each u64, from three 32-bit word operations.
#[inline]
pub(crate) fn q4k_scales_mins(sc: [u8; 12]) -> (u64, u64) {
    let word = |i: usize| u32::from_le_bytes([sc[4 * i], sc[4 * i + 1], sc[4 * i + 2], sc[4 * i + 3]]);
    let (w0, w1, w2) = (word(0), word(1), word(2));
    const LOW6: u32 = 0x3f3f_3f3f;
    const LOW4: u32 = 0x0f0f_0f0f;
    const TOP2: u32 = 0x0303_0303;
    let scales = (w0 & LOW6) as u64 | ((((w2 & LOW4) | (((w0 >> 6) & TOP2) << 4)) as u64) << 32);
    let mins = (w1 & LOW6) as u64 | (((((w2 >> 4) & LOW4) | (((w1 >> 6) & TOP2) << 4)) as u64) << 32);
    (scales, mins)
}

/// Q2_K and Q3_K, whose 16 sub-blocks of 16 share the 2-bit low quants: byte `32h + l` of
/// the 64 bytes at [`Low2::QS`] holds bits `2j..2j + 2` of element `128h + 32j + l`. Q3_K
/// (`HIGH`) adds bit `4h + j` of byte `l` of its 32 high-bit bytes (at 0) as +4.
#[derive(Clone, Copy)]
pub(crate) struct Low2<const HIGH: bool>;

impl<const HIGH: bool> Low2<HIGH> {
    /// Bytes of one weight block.
    pub(crate) const BYTES: usize = if HIGH { Q3K_BYTES } else { Q2K_BYTES };
    /// Offset of the 64 bytes of low bit pairs.
    pub(crate) const QS: usize = if HIGH { 32 } else { 16 };
    /// Offset of the f16 `d` (Q2_K: `dmin` follows).
    pub(crate) const D: usize = if HIGH { 108 } else { 80 };
}

/// The sixteen 6-bit scales (0..63, offset by 32) of a Q3_K super-block's 12 scale bytes, one
/// per byte of four u32 (scale `4i + b` in byte b of word i), from 32-bit word operations:
/// scale s takes its low nibble from byte `s mod 8` (high nibble when s ≥ 8) and its top two
/// bits from byte `8 + s mod 4`, shifted by `2·(s / 4)`.
#[inline]
pub(crate) fn q3k_scales(sc: [u8; 12]) -> [u32; 4] {
    let word = |i: usize| u32::from_le_bytes([sc[4 * i], sc[4 * i + 1], sc[4 * i + 2], sc[4 * i + 3]]);
    let (w0, w1, top) = (word(0), word(1), word(2));
    const LOW4: u32 = 0x0f0f_0f0f;
    const TOP2: u32 = 0x0303_0303;
    [
        (w0 & LOW4) | ((top & TOP2) << 4),
        (w1 & LOW4) | (((top >> 2) & TOP2) << 4),
        ((w0 >> 4) & LOW4) | (((top >> 4) & TOP2) << 4),
        ((w1 >> 4) & LOW4) | (((top >> 6) & TOP2) << 4),
    ]
}

/// A weight format's register-tile kernel over prepared activation rows.
pub(crate) trait Kernel: Copy {
    /// Bytes of one weight block.
    fn block_bytes(self) -> usize;
    /// Whether the kernel's GEMV tiles (`M` = 1) prefetch the weights ahead themselves, a few
    /// lines per block through their loop (`prefetch::lines_ahead`); the driver then
    /// asks for none for them. Other tiles (and kernels) get the driver's per-tile prefetch.
    const PREFETCHES: bool = false;
    /// Whether `act` holds the `nb` blocks the kernel reads.
    fn holds(self, act: &Act, nb: usize) -> bool;
    /// `out[i][r]` = weight row r (at `x + r·wrb`, `nb` blocks) · activation row i. Every
    /// output goes through the same operations whatever `M` and `R`, so results do not depend
    /// on the tiling.
    ///
    /// # Safety
    /// The CPU has the features the implementation is compiled for (the architecture's
    /// `gemv_for` checked them before handing the kernel out); the `R` rows hold `nb` blocks;
    /// every `acts[i]` holds them too ([`Kernel::holds`]).
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M];
}

/// Kernel formats whose blocks fill whole prepared activation blocks of 32 quants.
pub(crate) fn holds_32(act: &Act, nb: usize) -> bool {
    act.nb >= nb && act.q.len() >= nb * 32 && act.d.len() >= nb.next_multiple_of(8) && act.s.len() >= nb.next_multiple_of(8)
}

/// Q8_K rows prepared with `groups` sums per super-block (8 for Q4_K, 16 for Q6_K).
pub(crate) fn holds_q8k(act: &Act, nb: usize, groups: usize) -> bool {
    act.nb >= nb && act.q.len() >= nb * 256 && act.d.len() >= nb && act.s.len() >= nb * groups
}

/// `out[i·ldo + j] = W_j · act_i` for the `nw` weight rows in `w` and the activation rows
/// `acts`, in register tiles of 4 activation × 2 weight rows (GEMV: 1 × 4), edges through
/// smaller instances. Sizes that do not fit write nothing (the callers check them first).
///
/// `K` must come from an architecture's `gemv_for`, which hands a kernel out only where the
/// CPU has its features.
pub(crate) fn run<K: Kernel>(f: K, w: &[u8], nw: usize, acts: &[Act], out: &mut [f32], ldo: usize) {
    let nx = acts.len();
    let Some(wrb) = row_bytes_if_fits(w, nw, nx, out, ldo) else { return };
    let nb = wrb / f.block_bytes();
    if !acts.iter().all(|a| f.holds(a, nb)) {
        return;
    }
    let (mm, rr) = if nx == 1 { (1, 4) } else { (4, 2) };
    let mut j0 = 0;
    while j0 < nw {
        let rn = (nw - j0).min(rr);
        let x = w[j0 * wrb..].as_ptr();
        if !(K::PREFETCHES && mm == 1) {
            super::prefetch_rows_ahead(w, wrb, j0, rr);
        }
        let mut i0 = 0;
        while i0 < nx {
            let rm = (nx - i0).min(mm);
            let a = &acts[i0..i0 + rm];
            // SAFETY: `K` was handed out by its architecture's `gemv_for` after the feature
            // check; the rn rows from j0 hold `wrb ≥ nb·block_bytes` bytes each, every
            // activation row holds `nb` blocks (checked above), and out[i·ldo + j] is in
            // bounds for i < nx, j < nw.
            unsafe {
                macro_rules! put {
                    ($m:literal, $r:literal) => {{
                        let t = f.tile::<$m, $r>(x, wrb, nb, core::array::from_fn(|i| &a[i]));
                        for (i, row) in t.iter().enumerate() {
                            for (j, &v) in row.iter().enumerate() {
                                *out.get_unchecked_mut((i0 + i) * ldo + j0 + j) = v;
                            }
                        }
                    }};
                }
                match (rm, rn) {
                    (1, 4) => put!(1, 4),
                    (4, 2) => put!(4, 2),
                    (4, 1) => put!(4, 1),
                    (3, 2) => put!(3, 2),
                    (3, 1) => put!(3, 1),
                    (2, 2) => put!(2, 2),
                    (2, 1) => put!(2, 1),
                    (1, 2) => put!(1, 2),
                    (1, 3) => put!(1, 3),
                    _ => put!(1, 1),
                }
            }
            i0 += rm;
        }
        j0 += rn;
    }
}

/// The bytes per weight row when `nw` rows in `w` against `nx` activation rows fit an output
/// `out` of row stride `ldo` (`out[i·ldo + j]`, i < nx, j < nw); None otherwise.
pub(crate) fn row_bytes_if_fits(w: &[u8], nw: usize, nx: usize, out: &[f32], ldo: usize) -> Option<usize> {
    if nw == 0 || nx == 0 || w.len() % nw != 0 || ldo < nw {
        return None;
    }
    let need = (nx - 1).checked_mul(ldo)?.checked_add(nw)?;
    (out.len() >= need).then_some(w.len() / nw)
}

/// A [`super::QuantGemv`] from a preparation and a kernel.
macro_rules! quant_gemv {
    ($prepare:expr, $kernel:expr) => {
        $crate::cpu::arch::QuantGemv {
            prepare: $prepare,
            run: |w, nw, acts, out, ldo| $crate::cpu::arch::prepared::run($kernel, w, nw, acts, out, ldo),
            panel: None,
            panel_min_rows: usize::MAX,
        }
    };
}
pub(crate) use quant_gemv;

#[cfg(test)]
mod tests {
    /// The word-level unpacking of IQ4_XS scales against the block's bit-field reader, over
    /// bytes from a small LCG (every bit of `scales_h` and `scales_l` set and clear many times).
    #[test]
    fn iq4xs_scales_match_the_bit_fields() {
        let mut state = 0x1234_5678_9ABC_DEF0u64;
        for _ in 0..4096 {
            let mut blk = [0u8; 8];
            for b in blk.iter_mut() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                *b = (state >> 56) as u8;
            }
            let got = super::iq4xs_scales(&blk);
            let h = u16::from_le_bytes([blk[2], blk[3]]);
            for s in 0..8 {
                let want = crate::quant::ggml::iq4::xs_sub_scale(h, blk[4 + s / 2], s);
                assert_eq!(((got >> (8 * s)) & 0xFF) as i32, want, "{blk:?} sub-block {s}");
            }
        }
    }
}
