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
//! `x @ Ŵᵀ` at 2, 3, 4, 5, 6 and 8 bits has a fused kernel instead ([`Fused`]): it never
//! writes decoded codes. A period ([`Layout`]) is the shortest run of whole words holding whole
//! codes (1 word at 2/4/8 bits, 3 at 3 and 6, 5 at 5); each word of it (a phase) holds fixed
//! pieces ([`Slot`]s) of fixed codes, a code straddling two words being two pieces. Masking a
//! piece in place in the word (or, from bit 16 on, in the word shifted right by 16) and
//! converting the lane to f32 gives `piece·2^at` exactly (at most 22 significant bits, never
//! the sign bit), so the activations are permuted once per call ([`permute`]) and each
//! multiplied by the power of two that makes the sum come out as `Σ q·x`; a slot costs one
//! AND, one convert and one FMA per activation row. A block of `lanes` periods is loaded as
//! P vectors of consecutive words and blended per lane into one vector per phase ([`PhaseMap`]),
//! so every lane of it has the same slots. The per-period scales are permuted the same way.

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

/// A width [`Fused`] kernels take (every width MLX's affine mode uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FusedWidth {
    Two = 2,
    Three = 3,
    Four = 4,
    Five = 5,
    Six = 6,
    Eight = 8,
}

impl FusedWidth {
    /// The fused width of `bits`-wide codes, if they have one.
    pub(crate) fn of(bits: u32) -> Option<FusedWidth> {
        match bits {
            2 => Some(FusedWidth::Two),
            3 => Some(FusedWidth::Three),
            4 => Some(FusedWidth::Four),
            5 => Some(FusedWidth::Five),
            6 => Some(FusedWidth::Six),
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
    /// Packed words per vector: a block is `lanes` periods ([`Layout`]).
    pub lanes: usize,
    /// `out[r] = Σ_π sp[π]·Σ_{codes c of period π} q_c·x[r][c]` over the periods of `w` (one
    /// weight row of `width`-wide codes, whole periods), read as `Σ masked·xp` per [`Slot`]:
    /// `sp` is each period's group scale and `xp` the [`permute`]d activation rows, both
    /// zero-padded to whole blocks (`sp.len() ≥ blocks·lanes`, each
    /// `xp[r].len() ≥ blocks·slots·lanes`), `xp.len() ≤ MAX_ROWS`, `out.len() == xp.len()`.
    pub dot: FusedFn,
}

/// See [`Fused::dot`].
pub(crate) type FusedFn = fn(width: FusedWidth, w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]);

/// Most words per period (5 bits: 32 codes in 5 words).
pub(crate) const MAX_PHASES: usize = 5;
/// Most slots per word (2 bits: 16 codes).
pub(crate) const MAX_SLOTS: usize = 16;
/// Most lanes of a [`Fused`] (AVX-512).
pub(crate) const MAX_LANES: usize = 16;

/// One piece of one code inside one packed word (a code that straddles two words is two
/// pieces), as the kernels read it: `masked = word' & mask` with `word'` the word or, when
/// `hi`, the word shifted right by 16; `masked·2^shift` is the piece's value in the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub hi: bool,
    pub mask: u32,
    /// The code's index in its period.
    pub code: u8,
    /// `(first bit of the piece in its code) − (first bit of the piece where read)`.
    pub shift: i8,
}

/// How `bits`-wide codes lie in packed words. A period is the shortest run of whole words
/// holding whole codes (`bits/gcd(bits, 32)` words: 1 for 2, 4, 8 bits, 3 for 3 and 6, 5 for
/// 5); word `t` of a period ("phase" `t`) always holds the same pieces of the same codes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Words per period.
    pub phases: usize,
    /// Codes per period.
    pub codes: usize,
    /// Slots of phase `t`: `slots[t][..len[t]]`, in code order.
    pub len: [usize; MAX_PHASES],
    pub slots: [[Slot; MAX_SLOTS]; MAX_PHASES],
    /// `Σ len`: slots per period.
    pub total: usize,
}

/// The [`Layout`] of `bits` bits (a fused width). A piece starting at bit 16 or above of its
/// word is read from the word shifted right by 16, so every `masked` is below `2^(15+bits)`
/// (exact in f32, never the sign bit) and every `shift` is at least −15.
pub(crate) const fn layout(bits: u32) -> Layout {
    let b = bits as usize;
    let mut g = 32;
    while !b.is_multiple_of(g) {
        g /= 2;
    }
    let phases = b / g;
    let codes = 32 * phases / b;
    assert!(phases <= MAX_PHASES);
    let none = Slot { hi: false, mask: 0, code: 0, shift: 0 };
    let mut lay = Layout { phases, codes, len: [0; MAX_PHASES], slots: [[none; MAX_SLOTS]; MAX_PHASES], total: 0 };
    let mut c = 0;
    while c < codes {
        let (start, end) = (c * b, c * b + b);
        let mut pos = start;
        while pos < end {
            let word = pos / 32;
            let stop = if end < (word + 1) * 32 { end } else { (word + 1) * 32 };
            let off = pos % 32;
            let hi = off >= 16;
            let at = if hi { off - 16 } else { off };
            let n = lay.len[word];
            assert!(n < MAX_SLOTS);
            lay.slots[word][n] =
                Slot { hi, mask: ((1u32 << (stop - pos)) - 1) << at, code: c as u8, shift: (pos - start) as i8 - at as i8 };
            lay.len[word] = n + 1;
            lay.total += 1;
            pos = stop;
        }
        c += 1;
    }
    lay
}

/// Where phase `t` lives in a block of `lanes` periods loaded as `phases` vectors of `lanes`
/// consecutive words: lane `l` of vector `s` holds word `s·lanes + l` of the block, whose phase
/// is `(s·lanes + l) % phases` (`lanes` is a power of two and `phases` odd, so each lane sees
/// every phase once). Blending, per lane, the vector that holds phase `t` gives one vector of
/// phase-`t` words (one per period, every lane the same slots).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PhaseMap {
    /// `src[t][l]`: the vector whose lane `l` holds a phase-`t` word.
    pub src: [[u8; MAX_LANES]; MAX_PHASES],
    /// `period[t][l]`: that word's period in the block.
    pub period: [[u8; MAX_LANES]; MAX_PHASES],
}

/// The [`PhaseMap`] of `bits` bits at `lanes` lanes.
pub(crate) const fn phase_map(bits: u32, lanes: usize) -> PhaseMap {
    let p = layout(bits).phases;
    assert!(lanes <= MAX_LANES);
    let mut m = PhaseMap { src: [[0; MAX_LANES]; MAX_PHASES], period: [[0; MAX_LANES]; MAX_PHASES] };
    let mut s = 0;
    while s < p {
        let mut l = 0;
        while l < lanes {
            let word = s * lanes + l;
            m.src[word % p][l] = s as u8;
            m.period[word % p][l] = (word / p) as u8;
            l += 1;
        }
        s += 1;
    }
    m
}

/// Compile-time [`Layout`] and [`PhaseMap`]s per width, for the kernels.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) struct Lay<const B: u32, const L: usize>;
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
impl<const B: u32, const L: usize> Lay<B, L> {
    pub(crate) const LAYOUT: Layout = layout(B);
    pub(crate) const MAP: PhaseMap = phase_map(B, L);
    /// Per phase `t` and vector `s`: all-ones in the lanes that take vector `s` (blend masks).
    pub(crate) const BLEND: [[[i32; MAX_LANES]; MAX_PHASES]; MAX_PHASES] = {
        let mut b = [[[0; MAX_LANES]; MAX_PHASES]; MAX_PHASES];
        let mut t = 0;
        while t < MAX_PHASES {
            let mut s = 0;
            while s < MAX_PHASES {
                let mut l = 0;
                while l < L {
                    b[t][s][l] = if Self::MAP.src[t][l] as usize == s { -1 } else { 0 };
                    l += 1;
                }
                s += 1;
            }
            t += 1;
        }
        b
    };
    /// `BLEND` as bit masks (lane `l` = bit `l`; AVX-512 mask registers).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) const BLEND_BITS: [[u16; MAX_PHASES]; MAX_PHASES] = {
        let mut b = [[0u16; MAX_PHASES]; MAX_PHASES];
        let mut t = 0;
        while t < MAX_PHASES {
            let mut s = 0;
            while s < MAX_PHASES {
                let mut l = 0;
                while l < L {
                    if Self::BLEND[t][s][l] != 0 {
                        b[t][s] |= 1 << l;
                    }
                    l += 1;
                }
                s += 1;
            }
            t += 1;
        }
        b
    };
    /// Per phase, each lane's period as an i32 lane index (the per-period scales' permutation).
    pub(crate) const PERIOD: [[i32; MAX_LANES]; MAX_PHASES] = {
        let mut p = [[0; MAX_LANES]; MAX_PHASES];
        let mut t = 0;
        while t < MAX_PHASES {
            let mut l = 0;
            while l < MAX_LANES {
                p[t][l] = Self::MAP.period[t][l] as i32;
                l += 1;
            }
            t += 1;
        }
        p
    };
}

/// Expands `$body` once per literal with the const `$i` set to it: a forced unroll of the
/// fused kernels' phase and slot loops (3-, 5-bit blocks have 34–36 slots, over LLVM's
/// full-unroll budget, and a rolled slot loop reloads each mask and picks the half per slot).
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(unused_macros))]
macro_rules! unroll {
    ($i:ident in [$($n:literal),*] $body:block) => { $( { const $i: usize = $n; $body } )* };
}
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(unused_imports))]
pub(crate) use unroll;

/// Codes per period of `bits`-wide codes (a fused width).
pub(crate) const fn period_codes(bits: u32) -> usize {
    layout(bits).codes
}

/// The [`Layout`] of a fused width (`fuses(bits)`), built at compile time: `layout` is a loop
/// over the codes, and the kernels' per-row checks need it once per weight row (called at run
/// time it cost about a tenth of a 4-bit row's dot on the dev VM).
fn fused_layout(bits: u32) -> &'static Layout {
    static LAYOUTS: [Layout; 9] = [layout(2), layout(2), layout(2), layout(3), layout(4), layout(5), layout(6), layout(2), layout(8)];
    debug_assert!(fuses(bits));
    &LAYOUTS[(bits as usize).min(8)]
}

/// Blocks of `lanes` periods covering `k` codes.
fn blocks(k: usize, bits: u32, lanes: usize) -> usize {
    k.div_ceil(period_codes(bits)).div_ceil(lanes)
}

/// Length of one activation row after [`permute`] for `k` codes: whole blocks.
pub(crate) fn permuted_len(k: usize, bits: u32, lanes: usize) -> usize {
    blocks(k, bits, lanes) * layout(bits).total * lanes
}

/// Length of a row's per-period scales for `k` codes: whole blocks, zero past the row.
pub(crate) fn period_scales_len(k: usize, bits: u32, lanes: usize) -> usize {
    blocks(k, bits, lanes) * lanes
}

/// `2^e`, exact, for the slots' shifts (−15..=15): built from its exponent bits, since the core is
/// `no_std` (no `powi`).
const fn pow2(e: i8) -> f32 {
    f32::from_bits(((127 + e as i32) as u32) << 23)
}

/// Lays `x` (one activation row of `k` codes) out for a [`Fused`] of `lanes` lanes at `bits`:
/// per block, phase by phase, slot by slot, lane by lane, the activation of the slot's code in
/// the lane's period times `2^shift` (exact), zero past `x`
/// (`dst.len() == permuted_len(x.len(), bits, lanes)`).
pub(crate) fn permute(x: &[f32], bits: u32, lanes: usize, dst: &mut [f32]) {
    let (lay, map) = (layout(bits), phase_map(bits, lanes));
    let mut d = dst.iter_mut();
    for blk in 0..blocks(x.len(), bits, lanes) {
        for t in 0..lay.phases {
            for slot in &lay.slots[t][..lay.len[t]] {
                let f = pow2(slot.shift);
                for l in 0..lanes {
                    let c = (blk * lanes + map.period[t][l] as usize) * lay.codes + slot.code as usize;
                    if let Some(v) = d.next() {
                        *v = x.get(c).map_or(0.0, |&v| v * f);
                    }
                }
            }
        }
    }
}

/// Checks the [`Fused::dot`] contract for `lanes` lanes, `bits` and `rows` activation rows
/// (panics otherwise: the SIMD kernels read by pointer after this); returns the row's block
/// count and how many of them are whole in `w`.
fn fused_blocks(bits: u32, rows: usize, lanes: usize, w: &[u8], sp: &[f32], xp: &[&[f32]], out: &[f32]) -> (usize, usize) {
    assert!(fuses(bits));
    let lay = fused_layout(bits);
    let period_bytes = 4 * lay.phases;
    assert!(w.len().is_multiple_of(period_bytes) && xp.len() >= rows && out.len() >= rows);
    let periods = w.len() / period_bytes;
    let blocks = periods.div_ceil(lanes);
    assert!(sp.len() >= blocks * lanes && xp.iter().take(rows).all(|x| x.len() >= blocks * lay.total * lanes));
    (blocks, periods / lanes)
}

/// One weight row of a [`Fused::dot`] call at `R` activation rows, its contract checked (see
/// [`FusedRow::new`]): what every ISA's kernel walks — the blocks of `lanes` periods, each read
/// in place where whole and the row's last, partial one from a zero-padded copy.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) struct FusedRow<'a, const R: usize> {
    /// Blocks of `lanes` periods covering the row (the last may be partial).
    pub blocks: usize,
    /// The [`permute`]d activation rows, `blocks·total·lanes` floats each.
    pub x: [*const f32; R],
    w: &'a [u8],
    block_bytes: usize,
    whole: usize,
    pad: [u8; MAX_PHASES * MAX_LANES * 4],
}

#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
impl<'a, const R: usize> FusedRow<'a, R> {
    /// The row `w` of `bits`-wide codes for a kernel of `lanes` lanes; panics where the
    /// arguments break the [`Fused::dot`] contract, since the kernels read by pointer after this.
    pub(crate) fn new(bits: u32, lanes: usize, w: &'a [u8], sp: &[f32], xp: &[&[f32]], out: &[f32]) -> Self {
        let (blocks, whole) = fused_blocks(bits, R, lanes, w, sp, xp, out);
        let block_bytes = 4 * fused_layout(bits).phases * lanes;
        assert!(block_bytes <= MAX_PHASES * MAX_LANES * 4);
        let x = core::array::from_fn(|r| xp[r].as_ptr());
        FusedRow { blocks, x, w, block_bytes, whole, pad: [0; MAX_PHASES * MAX_LANES * 4] }
    }

    /// The `4·phases·lanes` bytes of block `blk` (`< blocks`): in place when the block is whole,
    /// else the row's tail in a zero-padded copy, so a kernel loads whole vectors either way.
    pub(crate) fn block(&mut self, blk: usize) -> &[u8] {
        let at = blk * self.block_bytes;
        if blk < self.whole {
            return &self.w[at..at + self.block_bytes];
        }
        let rest = self.w.get(at..).unwrap_or(&[]);
        self.pad[..rest.len()].copy_from_slice(rest);
        self.pad[rest.len()..].iter_mut().for_each(|b| *b = 0);
        &self.pad[..self.block_bytes]
    }
}

/// One ISA's fused kernel body, monomorphized per width `B` and activation-row count `R`.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) trait FusedKernel {
    /// [`Fused::dot`] for `B` bits and `R` rows.
    ///
    /// # Safety
    /// The ISA features the implementation uses must be available.
    unsafe fn dot<const B: u32, const R: usize>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]);
}

/// Runs `K`'s kernel for `width` and `xp.len()` rows (`≤ MAX_ROWS`).
///
/// # Safety
/// As [`FusedKernel::dot`]: `K`'s ISA features are available.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) unsafe fn fused_dispatch<K: FusedKernel>(width: FusedWidth, w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match width {
            FusedWidth::Two => fused_rows::<K, 2>(w, sp, xp, out),
            FusedWidth::Three => fused_rows::<K, 3>(w, sp, xp, out),
            FusedWidth::Four => fused_rows::<K, 4>(w, sp, xp, out),
            FusedWidth::Five => fused_rows::<K, 5>(w, sp, xp, out),
            FusedWidth::Six => fused_rows::<K, 6>(w, sp, xp, out),
            FusedWidth::Eight => fused_rows::<K, 8>(w, sp, xp, out),
        }
    }
}

#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
unsafe fn fused_rows<K: FusedKernel, const B: u32>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match xp.len() {
            1 => K::dot::<B, 1>(w, sp, xp, out),
            2 => K::dot::<B, 2>(w, sp, xp, out),
            3 => K::dot::<B, 3>(w, sp, xp, out),
            _ => K::dot::<B, MAX_ROWS>(w, sp, xp, out),
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
    fn pow2_is_exact_over_the_shift_range() {
        for e in -15i8..=15 {
            assert_eq!(pow2(e), 2f32.powi(e as i32), "2^{e}");
        }
    }

    #[test]
    fn permute_is_slot_major_per_block_scaled_and_zero_padded() {
        // 4 bits (one word per period, 8 slots), 2 lanes: blocks of 16 codes; x = 1..=24
        // (3 words), so the second block has one word.
        let x: Vec<f32> = (1..=24).map(|v| v as f32).collect();
        let mut d = vec![f32::NAN; permuted_len(24, 4, 2)];
        assert_eq!(d.len(), 32);
        permute(&x, 4, 2, &mut d);
        // Block 0, slot p: words 0 and 1 → x[p], x[8 + p], scaled by 16^-(p % 4).
        assert_eq!(&d[..4], &[1.0, 9.0, 2.0 / 16.0, 10.0 / 16.0]);
        assert_eq!(&d[8..10], &[5.0, 13.0]);
        assert_eq!(&d[14..16], &[8.0 / 4096.0, 16.0 / 4096.0]);
        // Block 1: word 2 (x[16..24]) in lane 0, lane 1 past x is zero.
        assert_eq!(&d[16..20], &[17.0, 0.0, 18.0 / 16.0, 0.0]);
        assert_eq!(&d[30..32], &[24.0 / 4096.0, 0.0]);
    }

    #[test]
    fn layouts_rebuild_every_code_from_its_slots() {
        for bits in [2u32, 3, 4, 5, 6, 8] {
            let lay = layout(bits);
            assert_eq!(lay.phases * 32, lay.codes * bits as usize, "{bits}");
            assert_eq!(lay.total, lay.len.iter().sum::<usize>());
            // Words whose every bit is set, then a pseudo-random pattern.
            for seed in [u32::MAX, 0x9e37_79b9, 0x0123_4567] {
                let words: Vec<u32> = (0..lay.phases as u32).map(|i| seed.rotate_left(7 * i) ^ i.wrapping_mul(0x5bd1_e995)).collect();
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                let mut want = vec![0f32; lay.codes];
                decode_portable(bits, &bytes, &mut want);
                let mut got = vec![0f32; lay.codes];
                for t in 0..lay.phases {
                    let (w, hi) = (words[t], words[t] >> 16);
                    for s in &lay.slots[t][..lay.len[t]] {
                        let masked = (if s.hi { hi } else { w }) & s.mask;
                        // In range for the kernels' signed convert, exact in f32.
                        assert!(masked < 1 << 23 && s.shift >= -15, "{bits} {s:?}");
                        got[s.code as usize] += masked as f32 * pow2(s.shift);
                    }
                }
                assert_eq!(got, want, "{bits} bits");
            }
        }
        // 3 bits: word 0 holds codes 0–9 and the low 2 bits of code 10, word 1 its top bit.
        let l3 = layout(3);
        assert_eq!((l3.phases, l3.codes, l3.len[..3].to_vec()), (3, 32, vec![11, 12, 11]));
        assert_eq!(l3.slots[0][10], Slot { hi: true, mask: 0b11 << 14, code: 10, shift: -14 });
        assert_eq!(l3.slots[1][0], Slot { hi: false, mask: 1, code: 10, shift: 2 });
        assert_eq!((layout(5).total, layout(6).total, layout(6).codes), (36, 18, 16));
    }

    #[test]
    fn phase_maps_give_each_lane_every_phase_once() {
        for (bits, lanes) in [(3u32, 8usize), (5, 8), (6, 16), (5, 4), (3, 16), (4, 8)] {
            let (lay, map) = (layout(bits), phase_map(bits, lanes));
            for l in 0..lanes {
                let mut seen = vec![false; lay.phases];
                for t in 0..lay.phases {
                    let s = map.src[t][l] as usize;
                    let word = s * lanes + l;
                    assert_eq!(word % lay.phases, t);
                    assert_eq!(map.period[t][l] as usize, word / lay.phases);
                    assert!(!seen[s]);
                    seen[s] = true;
                }
            }
        }
    }

    /// The kernels' arithmetic, lane by lane in scalar code: packed row × permuted x, summed per
    /// period with the period's scale, equals `Σ s_g·q·x` over the decoded row.
    #[test]
    fn the_slot_walk_over_a_permuted_row_is_the_grouped_dot() {
        for bits in [2u32, 3, 4, 5, 6, 8] {
            for lanes in [4usize, 8, 16] {
                let (lay, map) = (layout(bits), phase_map(bits, lanes));
                let k = 32 * 7; // 7 groups of 32: a partial last block
                let bytes: Vec<u8> = (0..k * bits as usize / 8).map(|i| (i as u32).wrapping_mul(2_654_435_761).rotate_left(11) as u8).collect();
                let x: Vec<f32> = (0..k).map(|i| ((i * 37 % 23) as f32 - 11.0) / 8.0).collect();
                let scales: Vec<f32> = (0..7).map(|g| 0.5 + g as f32).collect();
                let mut q = vec![0f32; k];
                decode_portable(bits, &bytes, &mut q);
                let want: f64 = (0..k).map(|i| (scales[i / 32] * q[i] * x[i]) as f64).sum();
                let mut xp = vec![0f32; permuted_len(k, bits, lanes)];
                permute(&x, bits, lanes, &mut xp);
                let periods = k / lay.codes;
                let mut sp = vec![0f32; period_scales_len(k, bits, lanes)];
                for (pi, s) in sp.iter_mut().enumerate().take(periods) {
                    *s = scales[pi * lay.codes / 32];
                }
                let word = |i: usize| bytes.get(4 * i..4 * i + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                let mut got = 0f64;
                let mut xi = 0;
                for blk in 0..blocks(k, bits, lanes) {
                    for t in 0..lay.phases {
                        for s in &lay.slots[t][..lay.len[t]] {
                            for l in 0..lanes {
                                let w = word(blk * lay.phases * lanes + map.src[t][l] as usize * lanes + l);
                                let masked = (if s.hi { w >> 16 } else { w }) & s.mask;
                                got += (masked as f32 * xp[xi] * sp[blk * lanes + map.period[t][l] as usize]) as f64;
                                xi += 1;
                            }
                        }
                    }
                }
                assert!((got - want).abs() <= 1e-3 * want.abs().max(1.0), "{bits} bits, {lanes} lanes: {got} vs {want}");
            }
        }
    }
}
