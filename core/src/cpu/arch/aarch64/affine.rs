//! aarch64 NEON kernels of MLX's affine quantized matmul (see `arch/affine.rs` for what each
//! does): the decoder takes 8 codes per step — `tbl` gathers each code's two bytes into a
//! 16-bit lane, `ushl` by a negative per-lane amount shifts it down, a mask keeps `bits`, and
//! the lanes are widened and converted to f32. The dot and axpy kernels keep two accumulators
//! per activation row. The fused dot ([`Fused`], every MLX width) takes blocks of 4 periods:
//! P loads blended (`bsl`) into one vector per phase and one `ushr` of it by 16, then per slot
//! one `and`, `ucvtf` and one FMA per activation row; the per-period scales go to the phase's
//! lanes by one `tbl`. NEON is part of every aarch64 target, so these need no feature check.

use crate::cpu::arch::affine::{
    fused_dispatch, safe_steps, unroll, AffineKernels, Fused, FusedKernel, FusedRow, FusedWidth, Lay, MAX_PHASES, MAX_ROWS, SPANS,
};
use crate::cpu::isa::Isa;
use core::arch::aarch64::*;

/// The kernels for `level`, if it has aarch64 ones (every NEON level).
pub(crate) fn kernels_for(level: Isa) -> Option<&'static AffineKernels> {
    if level.allows(Isa::Neon) {
        return Some(&NEON);
    }
    None
}

static NEON: AffineKernels = AffineKernels {
    decode: decode_neon,
    dot_groups: dot_groups_neon,
    axpy_groups: axpy_groups_neon,
    fused: Some(Fused { lanes: 4, dot: fused_neon }),
};

/// `tbl` indices: 16-bit lane `j` takes bytes `lo_j`, `hi_j` of the run (`0x80` reads as 0).
const fn table(bits: usize) -> [u8; 16] {
    let mut t = [0u8; 16];
    let mut j = 0;
    while j < 8 {
        t[2 * j] = SPANS[bits][j].lo;
        t[2 * j + 1] = SPANS[bits][j].hi;
        j += 1;
    }
    t
}
/// Per-lane left shifts (negative: right) for `ushl`.
const fn shifts(bits: usize) -> [i16; 8] {
    let mut t = [0i16; 8];
    let mut j = 0;
    while j < 8 {
        t[j] = -(SPANS[bits][j].shift as i16);
        j += 1;
    }
    t
}
static TBL: [[u8; 16]; 9] = [table(1), table(1), table(2), table(3), table(4), table(5), table(6), table(7), table(8)];
static SHL: [[i16; 8]; 9] = [shifts(1), shifts(1), shifts(2), shifts(3), shifts(4), shifts(5), shifts(6), shifts(7), shifts(8)];

fn decode_neon(bits: u32, src: &[u8], dst: &mut [f32]) {
    let b = (bits as usize).clamp(1, 8);
    let steps = dst.len() / 8;
    debug_assert!(src.len() >= steps * b);
    // SAFETY: NEON is baseline on aarch64; every read is checked against src (safe_steps) or
    // goes through the padded copy, every write stays inside dst (8 per step, steps = len/8).
    unsafe {
        let idx = vld1q_u8(TBL[b].as_ptr());
        let sh = vld1q_s16(SHL[b].as_ptr());
        let mask = vdupq_n_u16(((1u32 << b) - 1) as u16);
        let one = |p: *const u8, d: *mut f32| {
            let v = vqtbl1q_u8(vld1q_u8(p), idx);
            let c = vandq_u16(vshlq_u16(vreinterpretq_u16_u8(v), sh), mask);
            vst1q_f32(d, vcvtq_f32_u32(vmovl_u16(vget_low_u16(c))));
            vst1q_f32(d.add(4), vcvtq_f32_u32(vmovl_high_u16(c)));
        };
        let safe = safe_steps(src.len(), b, 16).min(steps);
        for i in 0..safe {
            one(src.as_ptr().add(i * b), dst.as_mut_ptr().add(8 * i));
        }
        if safe < steps {
            let mut pad = [0u8; 48];
            let rest = &src[safe * b..(steps * b).min(src.len())];
            pad[..rest.len()].copy_from_slice(rest);
            for i in safe..steps {
                // At most 16/b + 1 steps remain, so every 16-byte read stays inside pad.
                one(pad.as_ptr().add((i - safe) * b), dst.as_mut_ptr().add(8 * i));
            }
        }
    }
}

fn dot_groups_neon(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]) {
    match xs.len() {
        1 => dot_neon::<1>(q, gs, s, xs, out),
        2 => dot_neon::<2>(q, gs, s, xs, out),
        3 => dot_neon::<3>(q, gs, s, xs, out),
        _ => dot_neon::<MAX_ROWS>(q, gs, s, xs, out),
    }
}

fn dot_neon<const R: usize>(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]) {
    assert!(xs.len() >= R && out.len() >= R && gs.is_multiple_of(8) && s.len() * gs <= q.len());
    let mut xp = [core::ptr::null::<f32>(); R];
    for r in 0..R {
        assert!(xs[r].len() >= s.len() * gs);
        xp[r] = xs[r].as_ptr();
    }
    // SAFETY: NEON is baseline; every index is below s.len()·gs, inside q and each xs[r] (checked).
    unsafe {
        let mut total = [vdupq_n_f32(0.0); R];
        let qp = q.as_ptr();
        for (g, &sg) in s.iter().enumerate() {
            let mut a0 = [vdupq_n_f32(0.0); R];
            let mut a1 = [vdupq_n_f32(0.0); R];
            let mut i = g * gs;
            while i < (g + 1) * gs {
                let q0 = vld1q_f32(qp.add(i));
                let q1 = vld1q_f32(qp.add(i + 4));
                for r in 0..R {
                    a0[r] = vfmaq_f32(a0[r], vld1q_f32(xp[r].add(i)), q0);
                    a1[r] = vfmaq_f32(a1[r], vld1q_f32(xp[r].add(i + 4)), q1);
                }
                i += 8;
            }
            for r in 0..R {
                total[r] = vfmaq_n_f32(total[r], vaddq_f32(a0[r], a1[r]), sg);
            }
        }
        for r in 0..R {
            out[r] = vaddvq_f32(total[r]);
        }
    }
}

fn axpy_groups_neon(q: &[f32], gs: usize, c: &[f32], acc: &mut [f32]) {
    assert!(gs.is_multiple_of(4) && c.len() * gs <= q.len() && c.len() * gs <= acc.len());
    // SAFETY: NEON is baseline; indices stay below c.len()·gs (checked).
    unsafe {
        let (qp, ap) = (q.as_ptr(), acc.as_mut_ptr());
        for (g, &cg) in c.iter().enumerate() {
            let mut i = g * gs;
            while i < (g + 1) * gs {
                vst1q_f32(ap.add(i), vfmaq_n_f32(vld1q_f32(ap.add(i)), vld1q_f32(qp.add(i)), cg));
                i += 4;
            }
        }
    }
}

struct Neon;
impl FusedKernel for Neon {
    unsafe fn dot<const B: u32, const R: usize>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
        fused_neon_rows::<B, R>(w, sp, xp, out)
    }
}

fn fused_neon(width: FusedWidth, w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: NEON is baseline on aarch64; lengths are checked inside.
    unsafe { fused_dispatch::<Neon>(width, w, sp, xp, out) }
}

fn fused_neon_rows<const B: u32, const R: usize>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    const L: usize = 4;
    let mut row = FusedRow::<R>::new(B, L, w, sp, xp, out);
    let x = row.x;
    let lay = &Lay::<B, L>::LAYOUT;
    let p = lay.phases;
    // Byte indices of each phase's per-lane period scale (`tbl` over the block's 4 scales).
    let mut sidx = [[0u8; 16]; MAX_PHASES];
    for (t, idx) in sidx.iter_mut().enumerate().take(p) {
        for (i, b) in idx.iter_mut().enumerate() {
            *b = 4 * Lay::<B, L>::PERIOD[t][i / 4] as u8 + (i % 4) as u8;
        }
    }
    let mut xo = 0;
    // SAFETY: NEON is baseline; block blk reads the 16·p bytes `row.block` hands out,
    // sp[4·blk..4·blk + 4] and xp[r][xo..xo + 4] with xo < blocks·total·4, all inside the
    // lengths FusedRow::new checked.
    unsafe {
        let mut total = [vdupq_n_f32(0.0); R];
        for blk in 0..row.blocks {
            // Whole blocks in place, the row's partial last one from a zero-padded copy.
            let src = row.block(blk).as_ptr();
            let mut v = [vdupq_n_u32(0); MAX_PHASES];
            unroll!(S in [0, 1, 2, 3, 4] {
                if S < p {
                    v[S] = vld1q_u32(src.add(16 * S) as *const u32);
                }
            });
            let sc = vld1q_f32(sp.as_ptr().add(L * blk));
            unroll!(T in [0, 1, 2, 3, 4] {
                if T < p {
                    let mut word = v[0];
                    unroll!(S in [1, 2, 3, 4] {
                        if S < p {
                            word = vbslq_u32(vld1q_u32(Lay::<B, L>::BLEND[T][S].as_ptr() as *const u32), v[S], word);
                        }
                    });
                    let hi = vshrq_n_u32::<16>(word);
                    let mut a = [[vdupq_n_f32(0.0); R]; 2];
                    unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                        if J < lay.len[T] {
                            let slot = lay.slots[T][J];
                            let q = vcvtq_f32_u32(vandq_u32(if slot.hi { hi } else { word }, vdupq_n_u32(slot.mask)));
                            for r in 0..R {
                                a[J & 1][r] = vfmaq_f32(a[J & 1][r], vld1q_f32(x[r].add(xo + L * J)), q);
                            }
                        }
                    });
                    xo += L * lay.len[T];
                    let s = if p == 1 {
                        sc
                    } else {
                        vreinterpretq_f32_u8(vqtbl1q_u8(vreinterpretq_u8_f32(sc), vld1q_u8(sidx[T].as_ptr())))
                    };
                    for r in 0..R {
                        total[r] = vfmaq_f32(total[r], s, vaddq_f32(a[0][r], a[1][r]));
                    }
                }
            });
        }
        for r in 0..R {
            out[r] = vaddvq_f32(total[r]);
        }
    }
}
