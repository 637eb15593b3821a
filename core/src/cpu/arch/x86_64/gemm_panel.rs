//! AVX-512 VNNI micro-kernel of the weight-panel GEMM ([`super::super::panel`]): per group,
//! the panel's 8 (Q6_K: 4) lines stay in registers while up to [`ROWS`] activation rows pass:
//! each step is one `vpdpbusd` of a line (unsigned weights, 16 rows) by 4 broadcast activation
//! bytes (signed); then per group and activation row one integer subtract of the offset term
//! (or one multiply-add of the min term), a convert, a multiply and a multiply-add give 16
//! outputs.

use core::arch::x86_64::*;

use super::super::panel::{gemm_for, lines_words, with_tile_rows, Layout, Panel, PanelKernel, PanelLevel, PanelLines, PassInputs};
use super::super::prepared::Low2;
use super::super::GemvActivations as Act;

/// Activation rows per register tile: 8 weight lines + 2·ROWS accumulators + broadcasts fit
/// the 32 registers.
const ROWS: usize = super::super::panel::TILE_ROWS;

/// `M`-row tile of activations `acts` (rows `i0..i0 + M` of the pass) against the panel: the
/// 16 lanes of `out[i]` are the outputs of activation row i. `MIN`: the format has a min
/// (`B·s`), else an offset (`o·Σa` from `inp.sums`). `SCALED` (MXFP4, one group per block):
/// the weight's and activation's scales are multiplied first, then the dot by that (ggml's
/// order, so that a zero dot under an overflowing scale product is NaN as in the dot kernel).
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tile<const M: usize, const STEPS: usize, const MIN: bool, const SCALED: bool>(inp: &PassInputs, p: &Panel, i0: usize, acts: [&Act; M]) -> [__m512; M] {
    let mut acc = [_mm512_setzero_ps(); M];
    let (q, ab) = (p.q.as_ptr(), p.ab.as_ptr());
    // Groups sharing one activation scale `d` (a Q8_K super-block): their `A·dot` are summed
    // first and scaled by `d` once.
    let run = inp.layout.groups_per_block();
    let mut g0 = 0;
    while g0 < p.groups {
        let mut part = [_mm512_setzero_ps(); M];
        for g in g0..g0 + run {
            let line = |t: usize| _mm512_loadu_si512(q.add((g * STEPS + t) * 16) as *const _);
            let w: [__m512i; STEPS] = core::array::from_fn(line);
            let aw = _mm512_loadu_ps(ab.add(32 * g));
            let [lo, hi] = *inp.offs.get_unchecked(g);
            for i in 0..M {
                let qa = acts[i].q.as_ptr();
                let at = |t: usize| if t < 4 { lo as usize + 4 * t } else { hi as usize + 4 * (t - 4) };
                let bcast = |t: usize| _mm512_set1_epi32((qa.add(at(t)) as *const i32).read_unaligned());
                // Two chains of dot steps, so their latencies overlap.
                let (mut d0, mut d1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
                for t in (0..STEPS).step_by(2) {
                    d0 = _mm512_dpbusd_epi32(d0, w[t], bcast(t));
                    d1 = _mm512_dpbusd_epi32(d1, w[t + 1], bcast(t + 1));
                }
                let mut dot = _mm512_add_epi32(d0, d1);
                if MIN {
                    let bw = _mm512_loadu_ps(ab.add(32 * g + 16));
                    acc[i] = _mm512_fmadd_ps(bw, _mm512_set1_ps(*acts[i].s.get_unchecked(g)), acc[i]);
                } else {
                    dot = _mm512_sub_epi32(dot, _mm512_set1_epi32(*inp.sums.get_unchecked((i0 + i) * p.groups + g)));
                }
                if SCALED {
                    let s = _mm512_mul_ps(aw, _mm512_set1_ps(*acts[i].d.get_unchecked(g)));
                    acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), s, acc[i]);
                } else {
                    part[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), aw, part[i]);
                }
            }
        }
        let dg = g0 / run;
        for i in 0..M {
            if SCALED {
                break;
            }
            acc[i] = _mm512_fmadd_ps(part[i], _mm512_set1_ps(*acts[i].d.get_unchecked(dg)), acc[i]);
        }
        g0 += run;
    }
    acc
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn rows<const STEPS: usize, const MIN: bool, const SCALED: bool>(inp: &PassInputs, p: &Panel, acts: &[Act], cols: usize, out: *mut f32, ldo: usize) {
    let mask: __mmask16 = ((1u32 << cols) - 1) as u16;
    let mut i0 = 0;
    while i0 < acts.len() {
        let rm = (acts.len() - i0).min(ROWS);
        let a = &acts[i0..i0 + rm];
        with_tile_rows!(rm, M => {
            let t = tile::<M, STEPS, MIN, SCALED>(inp, p, i0, core::array::from_fn(|i| &a[i]));
            for (i, v) in t.iter().enumerate() {
                _mm512_mask_storeu_ps(out.add((i0 + i) * ldo), mask, *v);
            }
        });
        i0 += rm;
    }
}

/// The [`super::super::panel::PanelKernel`] of this architecture.
///
/// # Safety
/// As [`super::super::panel::PanelKernel`]; the CPU has AVX-512 F/BW and VNNI.
pub(crate) unsafe fn kernel(inp: &PassInputs, p: &Panel, acts: &[Act], cols: usize, out: *mut f32, ldo: usize) {
    if inp.layout == Layout::Mxfp4 {
        return rows::<8, false, true>(inp, p, acts, cols, out, ldo);
    }
    match (inp.layout.steps(), inp.layout.offset() == 0) {
        (4, false) => rows::<4, false, false>(inp, p, acts, cols, out, ldo),
        (4, true) => rows::<4, true, false>(inp, p, acts, cols, out, ldo),
        (_, false) => rows::<8, false, false>(inp, p, acts, cols, out, ldo),
        (_, true) => rows::<8, true, false>(inp, p, acts, cols, out, ldo),
    }
}

/// The [`super::super::panel::PanelLines`] of this architecture: each line is one masked
/// gather of a 32-bit word from the 16 rows, then byte-wise masks and shifts.
///
/// # Safety
/// As [`super::super::panel::PanelLines`]; the CPU has AVX-512 F/BW.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn lines(layout: Layout, w: *const u8, wrb: usize, rows: usize, nb: usize, q: *mut u32) {
    if matches!(layout, Layout::Mxfp4 | Layout::Tq1 | Layout::Tq2) {
        // No gathered form (yet): the word-level unpacker, whose values are the same.
        return lines_words::<false>(layout, w, wrb, rows, nb, q);
    }
    let live: __mmask16 = ((1u32 << rows) - 1) as u16;
    let row_at = _mm512_mullo_epi32(_mm512_set1_epi32(wrb as i32), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    let gather = |at: usize| _mm512_mask_i32gather_epi32::<1>(_mm512_setzero_si512(), live, row_at, w.add(at) as *const i32);
    let steps = layout.steps();
    let put = |g: usize, t: usize, v: __m512i| _mm512_storeu_si512(q.add((g * steps + t) * 16) as *mut _, v);
    let low4 = _mm512_set1_epi8(0x0F);
    let nib = |v: __m512i, shift: u32| _mm512_and_si512(_mm512_srl_epi32(v, _mm_cvtsi32_si128(shift as i32)), low4);
    // IQ4 indices to `level + 128`.
    let table = _mm512_broadcast_i32x4(super::gemv::level_table());
    let level = |idx: __m512i| _mm512_shuffle_epi8(table, idx);
    let (bb, gpb) = (layout.block_bytes(), layout.groups_per_block());
    for b in 0..nb {
        let (x, g0) = (b * bb, b * gpb);
        match layout {
            Layout::Q4_0 | Layout::Q4_1 => {
                let qs = x + if layout == Layout::Q4_1 { 4 } else { 2 };
                for t in 0..4 {
                    let v = gather(qs + 4 * t);
                    put(g0, t, nib(v, 0));
                    put(g0, t + 4, nib(v, 4));
                }
            }
            Layout::Q5_0 | Layout::Q5_1 => {
                let qs = x + if layout == Layout::Q5_1 { 8 } else { 6 };
                let high = gather(qs - 4);
                // `panel::fifth_bits` per lane: bits 4t..4t + 4 of the word to the value 16 in bytes 0..4.
                let spread = |shift: u32| {
                    let nib = _mm512_and_si512(_mm512_srl_epi32(high, _mm_cvtsi32_si128(shift as i32)), _mm512_set1_epi32(0xF));
                    let one = _mm512_and_si512(_mm512_mullo_epi32(nib, _mm512_set1_epi32(0x0020_4081)), _mm512_set1_epi32(0x0101_0101));
                    _mm512_slli_epi32::<4>(one)
                };
                for t in 0..4 {
                    let v = gather(qs + 4 * t);
                    put(g0, t, _mm512_or_si512(nib(v, 0), spread(4 * t as u32)));
                    put(g0, t + 4, _mm512_or_si512(nib(v, 4), spread(16 + 4 * t as u32)));
                }
            }
            Layout::Q2K | Layout::Q3K => {
                let hi = layout == Layout::Q3K;
                let qs = x + if hi { Low2::<true>::QS } else { Low2::<false>::QS };
                for h in 0..2 {
                    for l in (0..32).step_by(4) {
                        let v = gather(qs + 32 * h + l);
                        let hm = if hi { gather(x + l) } else { _mm512_setzero_si512() };
                        for j in 0..4 {
                            let e = 128 * h + 32 * j + l;
                            let low = _mm512_and_si512(_mm512_srl_epi32(v, _mm_cvtsi32_si128(2 * j as i32)), _mm512_set1_epi8(3));
                            let bit = _mm512_and_si512(_mm512_srl_epi32(hm, _mm_cvtsi32_si128((4 * h + j) as i32)), _mm512_set1_epi8(1));
                            put(g0 + e / 16, (e % 16) / 4, _mm512_or_si512(low, _mm512_slli_epi32::<2>(bit)));
                        }
                    }
                }
            }
            Layout::Iq4Nl => {
                for t in 0..4 {
                    let v = gather(x + 2 + 4 * t);
                    put(g0, t, level(nib(v, 0)));
                    put(g0, t + 4, level(nib(v, 4)));
                }
            }
            Layout::Iq4Xs => {
                for s in 0..8 {
                    for t in 0..4 {
                        let v = gather(x + 8 + 16 * s + 4 * t);
                        put(g0 + s, t, level(nib(v, 0)));
                        put(g0 + s, t + 4, level(nib(v, 4)));
                    }
                }
            }
            Layout::Q8_0 => {
                for t in 0..8 {
                    put(g0, t, _mm512_xor_si512(gather(x + 2 + 4 * t), _mm512_set1_epi8(-128)));
                }
            }
            Layout::Q4K | Layout::Q5K => {
                let fifth = layout == Layout::Q5K;
                let qs = x + if fifth { 48 } else { 16 };
                for t in 0..8 {
                    let high = if fifth { gather(x + 16 + 4 * t) } else { _mm512_setzero_si512() };
                    for j in 0..4 {
                        let v = gather(qs + 32 * j + 4 * t);
                        for (k, half) in [nib(v, 0), nib(v, 4)].into_iter().enumerate() {
                            let sub = 2 * j + k;
                            let v = if fifth {
                                let bit = _mm512_and_si512(_mm512_srl_epi32(high, _mm_cvtsi32_si128(sub as i32)), _mm512_set1_epi8(1));
                                _mm512_or_si512(half, _mm512_slli_epi32::<4>(bit))
                            } else {
                                half
                            };
                            put(g0 + sub, t, v);
                        }
                    }
                }
            }
            Layout::Q6K => {
                for h in 0..2 {
                    for l in (0..32).step_by(4) {
                        let (qa, qb, qh) = (gather(x + 64 * h + l), gather(x + 64 * h + 32 + l), gather(x + 128 + 32 * h + l));
                        for (k, (low, hs)) in [(nib(qa, 0), 0), (nib(qb, 0), 2), (nib(qa, 4), 4), (nib(qb, 4), 6)].into_iter().enumerate() {
                            let pair = _mm512_and_si512(_mm512_srl_epi32(qh, _mm_cvtsi32_si128(hs)), _mm512_set1_epi8(3));
                            let e = 128 * h + 32 * k + l;
                            put(g0 + e / 16, (e % 16) / 4, _mm512_or_si512(low, _mm512_slli_epi32::<4>(pair)));
                        }
                    }
                }
            }
            // Built by `lines_words` above.
            Layout::Mxfp4 | Layout::Tq1 | Layout::Tq2 => {}
        }
    }
}

/// The AVX-512 VNNI level of the panel GEMM: gathered lines, unsigned bytes throughout,
/// activations as the AVX-512 VNNI GEMV prepares them (32-element nibble formats in
/// nibble-pair order).
struct Avx512Vnni;

impl PanelLevel for Avx512Vnni {
    const LINES: PanelLines = lines;
    const KERNEL: PanelKernel = kernel;
    const PAIRS: bool = true;
    const SIGNED: bool = false;
    const INT_SCALES: bool = false;
}

/// The panel GEMM of weight type `ty` at `level`: AVX-512 VNNI where the AVX-512 VNNI GEMV
/// runs, else the AVX2 one.
pub(crate) fn panel_for(ty: crate::quant::GgmlType, level: crate::cpu::isa::Isa) -> Option<super::super::PanelGemm> {
    if !super::gemv::avx512_vnni(level) {
        return super::gemm_panel_avx2::panel_for(ty, level);
    }
    gemm_for::<Avx512Vnni>(ty)
}
