//! AVX2 micro-kernel of the weight-panel GEMM ([`super::super::panel`]) for x86-64 CPUs
//! without AVX-512 VNNI (Zen 2/3 such as the Steam Deck's, Skylake and older). The panel is
//! the AVX-512 one (16 weight rows, a 64-byte line = 4 consecutive elements of each row); a
//! 256-bit register takes half a line (8 rows), so a pass runs the 8 rows of one half against
//! [`ROWS`] activation rows, then the other half while those activations are still in L1.
//!
//! No `vpdpbusd`: each step is `vpmaddubsw` of a half line (unsigned weights) by 4 broadcast
//! activation bytes (signed), giving per row two i16 sums of 2 products. Those are summed in
//! i16 over as many steps as cannot overflow — |a| ≤ 127 (our activation quantizers clamp to
//! ±127), so a step's i16 is at most 2·127·w_max: a whole 32-element group for the nibble
//! formats (8 steps · 2·15·127 = 30 480), 4 steps for Q5_0, Q5_1, Q5_K (31 < 2⁵) and for the
//! 16-element groups of Q2_K (3) and Q3_K (7), 2 for Q6_K (63) — and only then widened by one `vpmaddwd` by 1. So a step costs one multiply and one add per 32
//! multiply-adds, against ~4 instructions in the tile kernels (`gemv_avx2*.rs`), which also
//! convert and scale every block of every output.
//!
//! Q8_0 and the IQ4 levels would saturate `vpmaddubsw` as unsigned `byte + 128`, so their panel
//! holds the signed bytes ([`super::super::panel::PassInputs::signed`]): `vpmaddubsw` of |w| and
//! the activation with w's sign (`vpsignb`; exact, 2·128·127 < 2¹⁵), one step per widening.
//! The float work per group and activation row is the AVX-512 kernel's: the offset term
//! subtracted from the exact integer dot (or the min's multiply-add), a convert and a
//! multiply-add by the weight's `A`; K-quant groups of a super-block summed before the one
//! multiply by the activation's `d`.
//!
//! Q2_K and Q3_K (16-element groups under small integer scales, [`Layout::has_int_scales`])
//! keep the scales in the integer domain: the group's i16 pair sums are widened by
//! `vpmaddwd` against the group's scale instead of 1 (Q3_K's offset `−4·Σa` put into the i16
//! sums first), summed exactly over the super-block, and only then converted and
//! multiplied by the weight's and the activation's `d` — one convert and multiply-add per
//! 16 groups instead of per group. Q2_K's min term stays a float multiply-add per group.
//!
//! The lines are built by the word-level unpacker of the neutral half
//! ([`super::super::panel::lines_words`]; no gather: Zen's `vpgatherdd` is slow).

use core::arch::x86_64::*;

use super::super::panel::{gemm_for, lines_words, with_tile_rows, Layout, Panel, PanelKernel, PanelLevel, PanelLines, PassInputs};
use super::super::GemvActivations as Act;

/// Activation rows per register tile: 4 i16 sums, 4 i32 dots, 4 group partials and 4
/// accumulators, a half line and a broadcast (the widening by 1 may be a memory operand).
const ROWS: usize = super::super::panel::TILE_ROWS;

/// What the weight format adds beside `A·Σ q·a`.
const OFFSET: u8 = 0;
const MIN: u8 = 1;
const NONE: u8 = 2;
/// An offset, and one group per block whose weight and activation scales are multiplied
/// first, then the dot by that (MXFP4, in ggml's order: a zero dot under an overflowing
/// scale product is NaN, as in the dot kernel).
const SCALED: u8 = 3;

/// The `M`-row tile of activations `acts` (rows `i0..i0 + M` of the pass) against half `h` of
/// the panel's `groups` (whole super-blocks), added to `acc`: lane r of `acc[i]` sums weight
/// row `8h + r` · activation row i. `STEPS` per group,
/// `CHUNK` steps summed in i16 before widening (see the module comment), `SIGNED` weights
/// (`CHUNK` = 1), `MODE` the second term; `INT`: integer group scales (`CHUNK` = `STEPS`, see
/// [`Layout::has_int_scales`]).
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn tile<const M: usize, const STEPS: usize, const CHUNK: usize, const SIGNED: bool, const MODE: u8, const INT: bool>(
    inp: &PassInputs,
    p: &Panel,
    i0: usize,
    h: usize,
    acts: [&Act; M],
    groups: core::ops::Range<usize>,
    mut acc: [__m256; M],
) -> [__m256; M] {
    let (q, ab) = (p.q.as_ptr().add(8 * h), p.ab.as_ptr().add(8 * h));
    let ones = _mm256_set1_epi16(1);
    let run = inp.layout.groups_per_block();
    let mut g0 = groups.start;
    while g0 < groups.end {
        let mut part = [_mm256_setzero_ps(); M];
        // INT: the block's Σ scale·dot, exact in i32 (|Σ| ≤ 16 groups · 32 · 16·4·127, Q3_K).
        let mut idot = [_mm256_setzero_si256(); M];
        for g in g0..g0 + run {
            let [lo, hi] = *inp.offs.get_unchecked(g);
            let at = |t: usize| if t < 4 { lo as usize + 4 * t } else { hi as usize + 4 * (t - 4) };
            let mut dot = if INT { idot } else { [_mm256_setzero_si256(); M] };
            // INT: the group's scales, which the widening multiplies the pair sums by.
            let widen = if INT { _mm256_loadu_si256(p.isc.as_ptr().add(16 * g + 8 * h) as *const __m256i) } else { ones };
            for c in (0..STEPS).step_by(CHUNK) {
                // INT with an offset: the i16 sums start at −o·Σa (low half of each pair), so
                // the scale multiplies the group's offset dot.
                let mut s16: [__m256i; M] = core::array::from_fn(|i| {
                    if INT && MODE == OFFSET {
                        _mm256_set1_epi32(*inp.sums16.get_unchecked((i0 + i) * p.groups + g) as i32)
                    } else {
                        _mm256_setzero_si256()
                    }
                });
                for t in c..c + CHUNK {
                    let line = _mm256_loadu_si256(q.add((g * STEPS + t) * 16) as *const __m256i);
                    let wu = if SIGNED { _mm256_abs_epi8(line) } else { line };
                    for i in 0..M {
                        let b = _mm256_set1_epi32((acts[i].q.as_ptr().add(at(t)) as *const i32).read_unaligned());
                        let b = if SIGNED { _mm256_sign_epi8(b, line) } else { b };
                        s16[i] = _mm256_add_epi16(s16[i], _mm256_maddubs_epi16(wu, b));
                    }
                }
                for i in 0..M {
                    dot[i] = _mm256_add_epi32(dot[i], _mm256_madd_epi16(s16[i], widen));
                }
            }
            if INT {
                idot = dot;
                if MODE == MIN {
                    let bw = _mm256_loadu_ps(ab.add(32 * g + 16));
                    for i in 0..M {
                        acc[i] = _mm256_fmadd_ps(bw, _mm256_set1_ps(*acts[i].s.get_unchecked(g)), acc[i]);
                    }
                }
                continue;
            }
            let aw = _mm256_loadu_ps(ab.add(32 * g));
            for i in 0..M {
                match MODE {
                    MIN => {
                        let bw = _mm256_loadu_ps(ab.add(32 * g + 16));
                        acc[i] = _mm256_fmadd_ps(bw, _mm256_set1_ps(*acts[i].s.get_unchecked(g)), acc[i]);
                    }
                    OFFSET | SCALED => dot[i] = _mm256_sub_epi32(dot[i], _mm256_set1_epi32(*inp.sums.get_unchecked((i0 + i) * p.groups + g))),
                    _ => {}
                }
                if MODE == SCALED {
                    let s = _mm256_mul_ps(aw, _mm256_set1_ps(*acts[i].d.get_unchecked(g)));
                    acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[i]), s, acc[i]);
                } else {
                    part[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[i]), aw, part[i]);
                }
            }
        }
        let dg = g0 / run;
        if INT {
            // One convert and multiply-add by the weight's `d` times the activation's per block.
            let dw = _mm256_loadu_ps(p.d.as_ptr().add(16 * dg + 8 * h));
            for i in 0..M {
                let s = _mm256_mul_ps(dw, _mm256_set1_ps(*acts[i].d.get_unchecked(dg)));
                acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(idot[i]), s, acc[i]);
            }
        } else if MODE != SCALED {
            for i in 0..M {
                acc[i] = _mm256_fmadd_ps(part[i], _mm256_set1_ps(*acts[i].d.get_unchecked(dg)), acc[i]);
            }
        }
        g0 += run;
    }
    acc
}

/// Groups of 32 elements (Q6_K: 16) per pass over the panel: 16 rows × 512 elements, 8 KiB of
/// lines plus their scales, stay in L1 while every activation row goes by (a whole panel is
/// 64 KiB at k = 4096: read from L2 per activation tile, half of each line per half pass, the
/// passes were bound by L2 bandwidth). The running sums wait in `out` between passes, so an
/// output's operations are the same as in one pass.
const PASS_ELEMENTS: usize = 512;

#[target_feature(enable = "avx2,fma")]
unsafe fn rows<const STEPS: usize, const CHUNK: usize, const SIGNED: bool, const MODE: u8, const INT: bool>(
    inp: &PassInputs,
    p: &Panel,
    acts: &[Act],
    cols: usize,
    out: *mut f32,
    ldo: usize,
) {
    // Whole super-blocks per pass (the groups of one sum the activation's `d` scales).
    let per_pass = PASS_ELEMENTS / (4 * STEPS);
    let mut c0 = 0;
    while c0 < p.groups {
        let c1 = (c0 + per_pass).min(p.groups);
        let mut i0 = 0;
        while i0 < acts.len() {
            let rm = (acts.len() - i0).min(ROWS);
            let a = &acts[i0..i0 + rm];
            for h in 0..cols.div_ceil(8) {
                let live = (cols - 8 * h).min(8) as i32;
                let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(live), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
                let at = |i: usize| out.add((i0 + i) * ldo + 8 * h);
                with_tile_rows!(rm, M => {
                    // Whole halves by plain loads and stores (a masked store is microcoded on Zen).
                    let full = live == 8;
                    let acc = core::array::from_fn(|i| match (c0 == 0, full) {
                        (true, _) => _mm256_setzero_ps(),
                        (false, true) => _mm256_loadu_ps(at(i)),
                        (false, false) => _mm256_maskload_ps(at(i), mask),
                    });
                    let t = tile::<M, STEPS, CHUNK, SIGNED, MODE, INT>(inp, p, i0, h, core::array::from_fn(|i| &a[i]), c0..c1, acc);
                    for (i, v) in t.iter().enumerate() {
                        if full {
                            _mm256_storeu_ps(at(i), *v);
                        } else {
                            _mm256_maskstore_ps(at(i), mask, *v);
                        }
                    }
                });
            }
            i0 += rm;
        }
        c0 = c1;
    }
}

/// The [`super::super::panel::PanelKernel`] of this level.
///
/// # Safety
/// As [`super::super::panel::PanelKernel`]; the CPU has AVX2 and FMA; Q2_K and Q3_K panels
/// and inputs hold the integer scales (`panel::run` builds them for this level's `INT_SCALES`).
unsafe fn kernel(inp: &PassInputs, p: &Panel, acts: &[Act], cols: usize, out: *mut f32, ldo: usize) {
    let l = inp.layout;
    if inp.signed {
        // Q8_0, IQ4_NL, IQ4_XS: no second term.
        return rows::<8, 1, true, NONE, false>(inp, p, acts, cols, out, ldo);
    }
    match l {
        Layout::Q6K => rows::<4, 2, false, OFFSET, false>(inp, p, acts, cols, out, ldo),
        // Integer scales (the level's INT_SCALES): the run builds them for these two.
        Layout::Q3K => rows::<4, 4, false, OFFSET, true>(inp, p, acts, cols, out, ldo),
        Layout::Q2K => rows::<4, 4, false, MIN, true>(inp, p, acts, cols, out, ldo),
        Layout::Q5_1 | Layout::Q5K => rows::<8, 4, false, MIN, false>(inp, p, acts, cols, out, ldo),
        Layout::Q5_0 => rows::<8, 4, false, OFFSET, false>(inp, p, acts, cols, out, ldo),
        Layout::Q4_1 | Layout::Q4K => rows::<8, 8, false, MIN, false>(inp, p, acts, cols, out, ldo),
        Layout::Q4_0 => rows::<8, 8, false, OFFSET, false>(inp, p, acts, cols, out, ldo),
        // MXFP4's levels + 12 (≤ 24: 5 steps of pairs ≤ 2·24·128 fit i16, so 4 per widening).
        Layout::Mxfp4 => rows::<8, 4, false, SCALED, false>(inp, p, acts, cols, out, ldo),
        // Ternary codes ≤ 3 (pairs ≤ 768): a whole group per widening, after the i16 offset
        // term (|Σa| ≤ 32·128); scale 1 per group, so the block's dots are summed in integers.
        Layout::Tq1 | Layout::Tq2 => rows::<8, 8, false, OFFSET, true>(inp, p, acts, cols, out, ldo),
        // Unsigned `byte + 128` never reaches this level (panel_for builds them signed).
        Layout::Q8_0 | Layout::Iq4Nl | Layout::Iq4Xs => {}
    }
}

/// The AVX2 level of the panel GEMM: word-built lines with signed Q8_0/IQ4 bytes, activations
/// in natural order (the AVX2 GEMV's preparation).
struct Avx2;

impl PanelLevel for Avx2 {
    const LINES: PanelLines = lines_words::<true>;
    const KERNEL: PanelKernel = kernel;
    const PAIRS: bool = false;
    const SIGNED: bool = true;
    const INT_SCALES: bool = true;
}

/// The AVX2 panel GEMM of weight type `ty`, where `level` allows AVX2 and the CPU has it.
pub(crate) fn panel_for(ty: crate::quant::GgmlType, level: crate::cpu::isa::Isa) -> Option<super::super::PanelGemm> {
    use crate::cpu::isa::Isa;
    if level == Isa::Portable || !level.allows(Isa::Avx2) || !Isa::Avx2.is_available() {
        return None;
    }
    gemm_for::<Avx2>(ty)
}
