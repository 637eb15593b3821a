//! x86-64 kernels of MLX's affine quantized matmul (see `arch/affine.rs` for what each does):
//! AVX2 + FMA decodes 8 codes per step (a broadcast 8-byte load, `vpshufb` gathers each code's
//! two bytes into its lane, `vpsrlvd` + mask, `vcvtdq2ps`), AVX-512 16 codes per step the same
//! way. The dot and axpy kernels keep two accumulators per activation row so consecutive FMAs
//! do not wait on each other. The fused dot ([`Fused`], every MLX width) takes blocks of 8
//! (AVX2) or 16 (AVX-512) periods: P loads blended (`vpblendvb` / `vpblendmd`) into one vector
//! per phase and one `vpsrld` of it by 16, then per slot one `vpand`, `vcvtdq2ps` and one FMA
//! per activation row, even and odd slots into separate accumulators, and per phase one FMA by
//! the per-period scales (`vpermps`'d to the phase's lanes).
//!
//! At AVX-512 the 4-bit dot skips the mask and convert: per nibble one `vpsrld` and one
//! `vpermps` of a register of the 16 code values (times the slot's power of two), which reads
//! only the low four index bits.
//!
//! Each `#[target_feature]` function is only reached through [`kernels_for`], which hands a
//! table out only when the active level allows it — what makes calling them sound.

use super::quant::hsum_ps;
use crate::cpu::arch::affine::{fused_dispatch, safe_steps, unroll, AffineKernels, Fused, FusedKernel, FusedRow, FusedWidth, Lay, MAX_PHASES, MAX_ROWS, SPANS};
use crate::cpu::isa::Isa;
use core::arch::x86_64::*;

/// The kernels for `level`, if it has x86-64 ones.
pub(crate) fn kernels_for(level: Isa) -> Option<&'static AffineKernels> {
    if level.allows(Isa::Avx512) {
        return Some(&AVX512);
    }
    if level.allows(Isa::Avx2) {
        return Some(&AVX2);
    }
    None
}

static AVX2: AffineKernels = AffineKernels {
    decode: decode_avx2,
    dot_groups: dot_groups_avx2,
    axpy_groups: axpy_groups_avx2,
    fused: Some(Fused { lanes: 8, dot: fused_avx2 }),
};
static AVX512: AffineKernels = AffineKernels {
    decode: decode_avx512,
    dot_groups: dot_groups_avx512,
    axpy_groups: axpy_groups_avx512,
    fused: Some(Fused { lanes: 16, dot: fused_avx512 }),
};

/// `vpshufb` indices: dword lane `j` takes bytes `lo_j`, `hi_j` of the broadcast run into its
/// low half and zeros above (lane `j` lies in 128-bit lane `j/4`, as `vpshufb` needs).
const fn shuffle(bits: usize) -> [u8; 64] {
    let mut t = [0x80u8; 64];
    let mut j = 0;
    while j < 16 {
        t[4 * j] = SPANS[bits][j].lo;
        t[4 * j + 1] = SPANS[bits][j].hi;
        j += 1;
    }
    t
}
const fn shifts(bits: usize) -> [u32; 16] {
    let mut t = [0u32; 16];
    let mut j = 0;
    while j < 16 {
        t[j] = SPANS[bits][j].shift as u32;
        j += 1;
    }
    t
}
static SHUF: [[u8; 64]; 9] =
    [shuffle(1), shuffle(1), shuffle(2), shuffle(3), shuffle(4), shuffle(5), shuffle(6), shuffle(7), shuffle(8)];
static SHIFT: [[u32; 16]; 9] =
    [shifts(1), shifts(1), shifts(2), shifts(3), shifts(4), shifts(5), shifts(6), shifts(7), shifts(8)];

fn decode_avx2(bits: u32, src: &[u8], dst: &mut [f32]) {
    // SAFETY: only handed out when AVX2 + FMA are available (kernels_for).
    unsafe { decode_avx2_impl(bits, src, dst) }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn decode_avx2_impl(bits: u32, src: &[u8], dst: &mut [f32]) {
    let b = (bits as usize).clamp(1, 8);
    let steps = dst.len() / 8;
    debug_assert!(src.len() >= steps * b);
    let shuf = _mm256_loadu_si256(SHUF[b].as_ptr() as *const __m256i);
    let shift = _mm256_loadu_si256(SHIFT[b].as_ptr() as *const __m256i);
    let mask = _mm256_set1_epi32((1i32 << b) - 1);
    let one = |p: *const u8, d: *mut f32| {
        let v = _mm256_set1_epi64x(core::ptr::read_unaligned(p as *const i64));
        let c = _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(v, shuf), shift), mask);
        _mm256_storeu_ps(d, _mm256_cvtepi32_ps(c));
    };
    let safe = safe_steps(src.len(), b, 8).min(steps);
    for i in 0..safe {
        // SAFETY: step i reads src[i·b .. i·b + 8] (in bounds by safe_steps), writes dst[8i..8i+8].
        one(src.as_ptr().add(i * b), dst.as_mut_ptr().add(8 * i));
    }
    if safe < steps {
        let mut pad = [0u8; 32];
        let rest = &src[safe * b..(steps * b).min(src.len())];
        pad[..rest.len()].copy_from_slice(rest);
        for i in safe..steps {
            // SAFETY: at most 8/b + 1 steps remain, so every 8-byte read stays inside pad.
            one(pad.as_ptr().add((i - safe) * b), dst.as_mut_ptr().add(8 * i));
        }
    }
}

fn decode_avx512(bits: u32, src: &[u8], dst: &mut [f32]) {
    // SAFETY: only handed out when AVX-512 F/BW is available (kernels_for).
    unsafe { decode_avx512_impl(bits, src, dst) }
}

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn decode_avx512_impl(bits: u32, src: &[u8], dst: &mut [f32]) {
    let b = (bits as usize).clamp(1, 8);
    let step = 2 * b;
    let steps = dst.len() / 16;
    debug_assert!(src.len() >= steps * step);
    let shuf = _mm512_loadu_si512(SHUF[b].as_ptr() as *const __m512i);
    let shift = _mm512_loadu_si512(SHIFT[b].as_ptr() as *const __m512i);
    let mask = _mm512_set1_epi32((1i32 << b) - 1);
    let one = |p: *const u8, d: *mut f32| {
        let v = _mm512_broadcast_i32x4(_mm_loadu_si128(p as *const __m128i));
        let c = _mm512_and_si512(_mm512_srlv_epi32(_mm512_shuffle_epi8(v, shuf), shift), mask);
        _mm512_storeu_ps(d, _mm512_cvtepi32_ps(c));
    };
    let safe = safe_steps(src.len(), step, 16).min(steps);
    for i in 0..safe {
        // SAFETY: step i reads src[i·step .. i·step + 16] (in bounds), writes dst[16i..16i+16].
        one(src.as_ptr().add(i * step), dst.as_mut_ptr().add(16 * i));
    }
    if safe < steps {
        let mut pad = [0u8; 48];
        let rest = &src[safe * step..(steps * step).min(src.len())];
        pad[..rest.len()].copy_from_slice(rest);
        for i in safe..steps {
            // SAFETY: fewer than 16/step + 1 steps remain, so every read stays inside pad.
            one(pad.as_ptr().add((i - safe) * step), dst.as_mut_ptr().add(16 * i));
        }
    }
}

fn dot_groups_avx2(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]) {
    // SAFETY: AVX2 + FMA available (kernels_for); lengths are checked inside.
    unsafe {
        match xs.len() {
            1 => dot_avx2::<1>(q, gs, s, xs, out),
            2 => dot_avx2::<2>(q, gs, s, xs, out),
            3 => dot_avx2::<3>(q, gs, s, xs, out),
            _ => dot_avx2::<MAX_ROWS>(q, gs, s, xs, out),
        }
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2<const R: usize>(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]) {
    assert!(xs.len() >= R && out.len() >= R && gs.is_multiple_of(16) && s.len() * gs <= q.len());
    let mut xp = [core::ptr::null::<f32>(); R];
    for r in 0..R {
        assert!(xs[r].len() >= s.len() * gs);
        xp[r] = xs[r].as_ptr();
    }
    let mut total = [_mm256_setzero_ps(); R];
    let qp = q.as_ptr();
    for (g, &sg) in s.iter().enumerate() {
        let mut a0 = [_mm256_setzero_ps(); R];
        let mut a1 = [_mm256_setzero_ps(); R];
        let mut i = g * gs;
        let end = i + gs;
        while i < end {
            let q0 = _mm256_loadu_ps(qp.add(i));
            let q1 = _mm256_loadu_ps(qp.add(i + 8));
            for r in 0..R {
                a0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xp[r].add(i)), q0, a0[r]);
                a1[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xp[r].add(i + 8)), q1, a1[r]);
            }
            i += 16;
        }
        let vs = _mm256_set1_ps(sg);
        for r in 0..R {
            total[r] = _mm256_fmadd_ps(vs, _mm256_add_ps(a0[r], a1[r]), total[r]);
        }
    }
    for r in 0..R {
        out[r] = hsum_ps(total[r]);
    }
}

fn dot_groups_avx512(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]) {
    // SAFETY: AVX-512F available (kernels_for); lengths are checked inside.
    unsafe {
        match xs.len() {
            1 => dot_avx512::<1>(q, gs, s, xs, out),
            2 => dot_avx512::<2>(q, gs, s, xs, out),
            3 => dot_avx512::<3>(q, gs, s, xs, out),
            _ => dot_avx512::<MAX_ROWS>(q, gs, s, xs, out),
        }
    }
}

#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn dot_avx512<const R: usize>(q: &[f32], gs: usize, s: &[f32], xs: &[&[f32]], out: &mut [f32]) {
    assert!(xs.len() >= R && out.len() >= R && gs.is_multiple_of(32) && s.len() * gs <= q.len());
    let mut xp = [core::ptr::null::<f32>(); R];
    for r in 0..R {
        assert!(xs[r].len() >= s.len() * gs);
        xp[r] = xs[r].as_ptr();
    }
    let mut total = [_mm512_setzero_ps(); R];
    let qp = q.as_ptr();
    for (g, &sg) in s.iter().enumerate() {
        let mut a0 = [_mm512_setzero_ps(); R];
        let mut a1 = [_mm512_setzero_ps(); R];
        let mut i = g * gs;
        let end = i + gs;
        while i < end {
            let q0 = _mm512_loadu_ps(qp.add(i));
            let q1 = _mm512_loadu_ps(qp.add(i + 16));
            for r in 0..R {
                a0[r] = _mm512_fmadd_ps(_mm512_loadu_ps(xp[r].add(i)), q0, a0[r]);
                a1[r] = _mm512_fmadd_ps(_mm512_loadu_ps(xp[r].add(i + 16)), q1, a1[r]);
            }
            i += 32;
        }
        let vs = _mm512_set1_ps(sg);
        for r in 0..R {
            total[r] = _mm512_fmadd_ps(vs, _mm512_add_ps(a0[r], a1[r]), total[r]);
        }
    }
    for r in 0..R {
        out[r] = _mm512_reduce_add_ps(total[r]);
    }
}

fn axpy_groups_avx2(q: &[f32], gs: usize, c: &[f32], acc: &mut [f32]) {
    assert!(gs.is_multiple_of(8) && c.len() * gs <= q.len() && c.len() * gs <= acc.len());
    // SAFETY: AVX2 + FMA available (kernels_for); indices stay below c.len()·gs (checked).
    unsafe { axpy_avx2(q, gs, c, acc) }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn axpy_avx2(q: &[f32], gs: usize, c: &[f32], acc: &mut [f32]) {
    let (qp, ap) = (q.as_ptr(), acc.as_mut_ptr());
    for (g, &cg) in c.iter().enumerate() {
        let vc = _mm256_set1_ps(cg);
        let mut i = g * gs;
        while i < (g + 1) * gs {
            _mm256_storeu_ps(ap.add(i), _mm256_fmadd_ps(vc, _mm256_loadu_ps(qp.add(i)), _mm256_loadu_ps(ap.add(i))));
            i += 8;
        }
    }
}

fn axpy_groups_avx512(q: &[f32], gs: usize, c: &[f32], acc: &mut [f32]) {
    assert!(gs.is_multiple_of(16) && c.len() * gs <= q.len() && c.len() * gs <= acc.len());
    // SAFETY: AVX-512F available (kernels_for); indices stay below c.len()·gs (checked).
    unsafe { axpy_avx512(q, gs, c, acc) }
}

#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn axpy_avx512(q: &[f32], gs: usize, c: &[f32], acc: &mut [f32]) {
    let (qp, ap) = (q.as_ptr(), acc.as_mut_ptr());
    for (g, &cg) in c.iter().enumerate() {
        let vc = _mm512_set1_ps(cg);
        let mut i = g * gs;
        while i < (g + 1) * gs {
            _mm512_storeu_ps(ap.add(i), _mm512_fmadd_ps(vc, _mm512_loadu_ps(qp.add(i)), _mm512_loadu_ps(ap.add(i))));
            i += 16;
        }
    }
}

struct Avx2;
impl FusedKernel for Avx2 {
    unsafe fn dot<const B: u32, const R: usize>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
        // SAFETY: forwarded (AVX2 + FMA available).
        unsafe { fused_avx2_impl::<B, R>(w, sp, xp, out) }
    }
}

fn fused_avx2(width: FusedWidth, w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: AVX2 + FMA available (kernels_for); lengths are checked inside.
    unsafe { fused_dispatch::<Avx2>(width, w, sp, xp, out) }
}

/// One fused block at AVX2 (see `fused_avx2_impl`): `P` vectors of 8 words from `src`,
/// blended into one vector per phase; per slot one `vpand`, `vcvtdq2ps` and one FMA per row.
#[target_feature(enable = "avx2,fma")]
unsafe fn fused_avx2_impl<const B: u32, const R: usize>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    const L: usize = 8;
    let mut row = FusedRow::<R>::new(B, L, w, sp, xp, out);
    let x = row.x;
    let lay = &Lay::<B, L>::LAYOUT;
    let p = lay.phases;
    let mut total = [_mm256_setzero_ps(); R];
    let mut xo = 0;
    for blk in 0..row.blocks {
        // Whole blocks in place, the row's partial last one from a zero-padded copy.
        let src = row.block(blk).as_ptr();
        let mut v = [_mm256_setzero_si256(); MAX_PHASES];
        unroll!(S in [0, 1, 2, 3, 4] {
            if S < p {
                v[S] = _mm256_loadu_si256(src.add(32 * S) as *const __m256i);
            }
        });
        let sc = _mm256_loadu_ps(sp.as_ptr().add(L * blk));
        unroll!(T in [0, 1, 2, 3, 4] {
            if T < p {
                let mut word = v[0];
                unroll!(S in [1, 2, 3, 4] {
                    if S < p {
                        word = _mm256_blendv_epi8(word, v[S], _mm256_loadu_si256(Lay::<B, L>::BLEND[T][S].as_ptr() as *const __m256i));
                    }
                });
                let hi = _mm256_srli_epi32::<16>(word);
                let mut a = [[_mm256_setzero_ps(); R]; 2];
                unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    if J < lay.len[T] {
                        let slot = lay.slots[T][J];
                        let q = _mm256_cvtepi32_ps(_mm256_and_si256(if slot.hi { hi } else { word }, _mm256_set1_epi32(slot.mask as i32)));
                        for r in 0..R {
                            a[J & 1][r] = _mm256_fmadd_ps(_mm256_loadu_ps(x[r].add(xo + L * J)), q, a[J & 1][r]);
                        }
                    }
                });
                xo += L * lay.len[T];
                // Each lane's period scale (the scales are per period of the block, in order).
                let s = if p == 1 { sc } else { _mm256_permutevar8x32_ps(sc, _mm256_loadu_si256(Lay::<B, L>::PERIOD[T].as_ptr() as *const __m256i)) };
                for r in 0..R {
                    total[r] = _mm256_fmadd_ps(s, _mm256_add_ps(a[0][r], a[1][r]), total[r]);
                }
            }
        });
    }
    for r in 0..R {
        out[r] = hsum_ps(total[r]);
    }
}

struct Avx512;
impl FusedKernel for Avx512 {
    unsafe fn dot<const B: u32, const R: usize>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
        // SAFETY: forwarded (AVX-512F available).
        unsafe { fused_avx512_impl::<B, R>(w, sp, xp, out) }
    }
}

fn fused_avx512(width: FusedWidth, w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: AVX-512F available (kernels_for); lengths are checked inside.
    unsafe { fused_dispatch::<Avx512>(width, w, sp, xp, out) }
}

/// As `fused_avx2_impl` with 16 words per vector (`vpblendmd` with mask registers,
/// `vpermps` for the scales).
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn fused_avx512_impl<const B: u32, const R: usize>(w: &[u8], sp: &[f32], xp: &[&[f32]], out: &mut [f32]) {
    const L: usize = 16;
    let mut row = FusedRow::<R>::new(B, L, w, sp, xp, out);
    let x = row.x;
    let lay = &Lay::<B, L>::LAYOUT;
    let p = lay.phases;
    let mut total = [_mm512_setzero_ps(); R];
    // 4 bits: code J of a word is `(word >> 4J) & 15`, its activation permuted with the factor
    // 16^-(J % 4) (the slot's shift); a full-width permute of the 16 values q·16^(J % 4) (exact)
    // reads only the index's low four bits, so shift + permute replace and + convert.
    let iota = _mm512_cvtepi32_ps(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    let q16: [__m512; 4] = core::array::from_fn(|j| _mm512_mul_ps(iota, _mm512_set1_ps((1u32 << (4 * j)) as f32)));
    let mut xo = 0;
    for blk in 0..row.blocks {
        // Whole blocks in place, the row's partial last one from a zero-padded copy.
        let src = row.block(blk).as_ptr();
        if B == 4 {
            let word = _mm512_loadu_si512(src as *const __m512i);
            let mut a = [[_mm512_setzero_ps(); R]; 2];
            unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7] {
                let q = _mm512_permutexvar_ps(_mm512_srli_epi32::<{ (4 * J) as u32 }>(word), q16[J & 3]);
                for r in 0..R {
                    a[J & 1][r] = _mm512_fmadd_ps(_mm512_loadu_ps(x[r].add(xo + L * J)), q, a[J & 1][r]);
                }
            });
            xo += L * 8;
            let sc = _mm512_loadu_ps(sp.as_ptr().add(L * blk));
            for r in 0..R {
                total[r] = _mm512_fmadd_ps(sc, _mm512_add_ps(a[0][r], a[1][r]), total[r]);
            }
            continue;
        }
        let mut v = [_mm512_setzero_si512(); MAX_PHASES];
        unroll!(S in [0, 1, 2, 3, 4] {
            if S < p {
                v[S] = _mm512_loadu_si512(src.add(64 * S) as *const __m512i);
            }
        });
        let sc = _mm512_loadu_ps(sp.as_ptr().add(L * blk));
        unroll!(T in [0, 1, 2, 3, 4] {
            if T < p {
                let mut word = v[0];
                unroll!(S in [1, 2, 3, 4] {
                    if S < p {
                        word = _mm512_mask_blend_epi32(Lay::<B, L>::BLEND_BITS[T][S], word, v[S]);
                    }
                });
                let hi = _mm512_srli_epi32::<16>(word);
                let mut a = [[_mm512_setzero_ps(); R]; 2];
                unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    if J < lay.len[T] {
                        let slot = lay.slots[T][J];
                        let q = _mm512_cvtepi32_ps(_mm512_and_si512(if slot.hi { hi } else { word }, _mm512_set1_epi32(slot.mask as i32)));
                        for r in 0..R {
                            a[J & 1][r] = _mm512_fmadd_ps(_mm512_loadu_ps(x[r].add(xo + L * J)), q, a[J & 1][r]);
                        }
                    }
                });
                xo += L * lay.len[T];
                let s = if p == 1 { sc } else { _mm512_permutexvar_ps(_mm512_loadu_si512(Lay::<B, L>::PERIOD[T].as_ptr() as *const __m512i), sc) };
                for r in 0..R {
                    total[r] = _mm512_fmadd_ps(s, _mm512_add_ps(a[0][r], a[1][r]), total[r]);
                }
            }
        });
    }
    for r in 0..R {
        out[r] = _mm512_reduce_add_ps(total[r]);
    }
}
