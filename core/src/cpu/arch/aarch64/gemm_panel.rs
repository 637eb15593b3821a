//! NEON and dotprod micro-kernels of the weight-panel GEMM ([`super::super::panel`]; prompt
//! processing). The panel is the x86 one (16 weight rows, a 64-byte line = 4 consecutive
//! elements of each row), built by the neutral word-level unpacker with Q8_0 and the IQ4
//! levels as signed bytes — every stored value is then a valid i8 (nibbles, Q5_K's 0..31,
//! Q6_K's 0..63), so `sdot` (i8·i8) takes them as they are.
//!
//! A pass runs half a panel (8 rows: two 128-bit registers per step) against 4 activation
//! rows: per step the activation's 4 bytes are broadcast (`ld1r`) and each half line gets one
//! dot (`sdot`, or `smull` + pairwise adds at the plain NEON level), so every i32 lane
//! accumulates one (activation row, weight row) dot — no horizontal sums. The float work per
//! group and activation row is the x86 kernels': offset term off the exact integer dot (or
//! the min's multiply-add), a convert and a multiply-add by the weight's `A`, K-quant groups of
//! a super-block summed before the one multiply by the activation's `d`. Passes cover 512
//! elements at a time (the panel's slice stays in L1 while every activation row goes by);
//! the running sums wait in the output between passes, so an output's operations do not
//! depend on where its row sits.

use core::arch::aarch64::*;

use crate::cpu::isa::Isa;
use crate::quant::GgmlType;

use super::super::panel::{gemm_for, lines_words, with_tile_rows, Layout, Panel, PanelKernel, PanelLevel, PanelLines, PassInputs};
use super::super::{GemvActivations as Act, PanelGemm};

/// Activation rows per register tile: 8 i32 dots, 8 group partials, 8 accumulators, two half
/// lines and a broadcast fit the 32 registers.
const ROWS: usize = super::super::panel::TILE_ROWS;
/// Elements per pass over the panel (see the module comment).
const PASS_ELEMENTS: usize = 512;

/// What the weight format adds beside `A·Σ q·a`.
const OFFSET: u8 = 0;
const MIN: u8 = 1;
const NONE: u8 = 2;
/// An offset, and one group per block whose weight and activation scales are multiplied
/// first, then the dot by that (MXFP4, in ggml's order: a zero dot under an overflowing
/// scale product is NaN, as in the dot kernel).
const SCALED: u8 = 3;

/// The kernels, written once over `$dot` (acc + Σ of 4 adjacent i8 products per i32 lane).
macro_rules! panel_kernels {
    ($feat:literal, $dot:path) => {
        use super::*;

        /// The `M`-row tile of activations (rows `i0..i0 + M` of the pass) against half `h`
        /// of the panel's `groups` (whole super-blocks), added to `acc`: lane r of
        /// `acc[i][k]` sums weight row `8h + 4k + r` · activation row i.
        #[target_feature(enable = $feat)]
        #[inline]
        unsafe fn tile<const M: usize, const STEPS: usize, const MODE: u8>(
            inp: &PassInputs,
            p: &Panel,
            i0: usize,
            h: usize,
            acts: [&Act; M],
            groups: core::ops::Range<usize>,
            mut acc: [[float32x4_t; 2]; M],
        ) -> [[float32x4_t; 2]; M] {
            let (q, ab) = (p.q.as_ptr().add(8 * h), p.ab.as_ptr().add(8 * h));
            let run = inp.layout.groups_per_block();
            let mut g0 = groups.start;
            while g0 < groups.end {
                let mut part = [[vdupq_n_f32(0.0); 2]; M];
                for g in g0..g0 + run {
                    let [lo, hi] = *inp.offs.get_unchecked(g);
                    let at = |t: usize| if t < 4 { lo as usize + 4 * t } else { hi as usize + 4 * (t - 4) };
                    let mut dot = [[vdupq_n_s32(0); 2]; M];
                    for t in 0..STEPS {
                        let line = q.add((g * STEPS + t) * 16) as *const i8;
                        let w = [vld1q_s8(line), vld1q_s8(line.add(4 * 4))];
                        for i in 0..M {
                            let word = (acts[i].q.as_ptr().add(at(t)) as *const i32).read_unaligned();
                            let b = vreinterpretq_s8_s32(vdupq_n_s32(word));
                            dot[i][0] = $dot(dot[i][0], w[0], b);
                            dot[i][1] = $dot(dot[i][1], w[1], b);
                        }
                    }
                    let aw = [vld1q_f32(ab.add(32 * g)), vld1q_f32(ab.add(32 * g + 4))];
                    for i in 0..M {
                        for k in 0..2 {
                            let mut d = dot[i][k];
                            match MODE {
                                MIN => {
                                    let bw = vld1q_f32(ab.add(32 * g + 16 + 4 * k));
                                    acc[i][k] = vfmaq_f32(acc[i][k], bw, vdupq_n_f32(*acts[i].s.get_unchecked(g)));
                                }
                                OFFSET | SCALED => d = vsubq_s32(d, vdupq_n_s32(*inp.sums.get_unchecked((i0 + i) * p.groups + g))),
                                _ => {}
                            }
                            if MODE == SCALED {
                                let s = vmulq_f32(aw[k], vdupq_n_f32(*acts[i].d.get_unchecked(g)));
                                acc[i][k] = vfmaq_f32(acc[i][k], vcvtq_f32_s32(d), s);
                            } else {
                                part[i][k] = vfmaq_f32(part[i][k], vcvtq_f32_s32(d), aw[k]);
                            }
                        }
                    }
                }
                let dg = g0 / run;
                for i in 0..M {
                    if MODE == SCALED {
                        break;
                    }
                    let da = vdupq_n_f32(*acts[i].d.get_unchecked(dg));
                    for k in 0..2 {
                        acc[i][k] = vfmaq_f32(acc[i][k], part[i][k], da);
                    }
                }
                g0 += run;
            }
            acc
        }

        #[target_feature(enable = $feat)]
        unsafe fn rows<const STEPS: usize, const MODE: u8>(inp: &PassInputs, p: &Panel, acts: &[Act], cols: usize, out: *mut f32, ldo: usize) {
            let per_pass = PASS_ELEMENTS / (4 * STEPS);
            let mut c0 = 0;
            while c0 < p.groups {
                let c1 = (c0 + per_pass).min(p.groups);
                let mut i0 = 0;
                while i0 < acts.len() {
                    let rm = (acts.len() - i0).min(ROWS);
                    let a = &acts[i0..i0 + rm];
                    for h in 0..cols.div_ceil(8) {
                        let live = (cols - 8 * h).min(8);
                        let at = |i: usize| out.add((i0 + i) * ldo + 8 * h);
                        // The live lanes of output row i (zeros past them) and back.
                        let load = |i: usize| {
                            let mut v = [0f32; 8];
                            if c0 > 0 {
                                core::ptr::copy_nonoverlapping(at(i), v.as_mut_ptr(), live);
                            }
                            [vld1q_f32(v.as_ptr()), vld1q_f32(v.as_ptr().add(4))]
                        };
                        let store = |i: usize, s: [float32x4_t; 2]| {
                            let mut v = [0f32; 8];
                            vst1q_f32(v.as_mut_ptr(), s[0]);
                            vst1q_f32(v.as_mut_ptr().add(4), s[1]);
                            core::ptr::copy_nonoverlapping(v.as_ptr(), at(i), live);
                        };
                        with_tile_rows!(rm, M => {
                            let acc = core::array::from_fn(|i| load(i));
                            let t = tile::<M, STEPS, MODE>(inp, p, i0, h, core::array::from_fn(|i| &a[i]), c0..c1, acc);
                            for (i, s) in t.into_iter().enumerate() {
                                store(i, s);
                            }
                        });
                    }
                    i0 += rm;
                }
                c0 = c1;
            }
        }

        /// The [`super::super::super::panel::PanelKernel`] of this level.
        ///
        /// # Safety
        /// As `PanelKernel`; the CPU has the features of `$feat`.
        pub(super) unsafe fn kernel(inp: &PassInputs, p: &Panel, acts: &[Act], cols: usize, out: *mut f32, ldo: usize) {
            if inp.signed {
                // Q8_0, IQ4_NL, IQ4_XS: no second term.
                return rows::<8, NONE>(inp, p, acts, cols, out, ldo);
            }
            match inp.layout {
                Layout::Q3K | Layout::Q6K => rows::<4, OFFSET>(inp, p, acts, cols, out, ldo),
                Layout::Q2K => rows::<4, MIN>(inp, p, acts, cols, out, ldo),
                Layout::Q4_1 | Layout::Q5_1 | Layout::Q4K | Layout::Q5K => rows::<8, MIN>(inp, p, acts, cols, out, ldo),
                Layout::Q4_0 | Layout::Q5_0 | Layout::Tq1 | Layout::Tq2 => rows::<8, OFFSET>(inp, p, acts, cols, out, ldo),
                Layout::Mxfp4 => rows::<8, SCALED>(inp, p, acts, cols, out, ldo),
                // `byte + 128` panels are never built here (the levels ask for signed ones).
                Layout::Q8_0 | Layout::Iq4Nl | Layout::Iq4Xs => {}
            }
        }

        /// This level of the panel GEMM: word-built lines with signed Q8_0/IQ4 bytes, the
        /// activations in natural order (the NEON/dotprod GEMV's preparation).
        pub(super) struct Level;

        impl PanelLevel for Level {
            const LINES: PanelLines = lines_words::<true>;
            const KERNEL: PanelKernel = kernel;
            const PAIRS: bool = false;
            const SIGNED: bool = true;
            const INT_SCALES: bool = false;
        }
    };
}

mod neon {
    panel_kernels!("neon", super::super::quant::neon::dot);
}

mod dotprod {
    panel_kernels!("neon,dotprod", super::super::quant::dotprod::dot);
}

/// The panel GEMM of weight type `ty` at `level` (NEON from level neon, `sdot` from dotprod),
/// over the activations the NEON/dotprod GEMV prepares (natural order).
pub(crate) fn panel_for(ty: GgmlType, level: Isa) -> Option<PanelGemm> {
    if level == Isa::Portable || !level.allows(Isa::Neon) || !Isa::Neon.is_available() {
        return None;
    }
    if level.allows(Isa::Dotprod) && Isa::Dotprod.is_available() {
        gemm_for::<dotprod::Level>(ty)
    } else {
        gemm_for::<neon::Level>(ty)
    }
}
