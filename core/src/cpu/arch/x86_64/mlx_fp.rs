//! x86-64 kernels of MLX's fp-mode quantized matmul (see `arch/mlx_fp.rs` for what each does),
//! 16 elements per step at AVX2 + FMA and at AVX-512:
//! - E2M1: 8 bytes of nibbles are split into low and high nibbles, `vpshufb` maps both onto
//!   the doubled levels (`KVALUES` in one register), `vpunpcklbw` puts them back in element
//!   order, and `vpmovsxbd` + `vcvtdq2ps` widen them (two 8-lane vectors, or one 16-lane one).
//! - E4M3: `vpmovsxbd` puts each code in a lane with its sign bit copied upwards; shifted left
//!   by 20, the sign lands in bit 31 and exponent+mantissa in bits 20..26, an f32 whose value
//!   is the E4M3 value times 2⁻¹²⁰ (subnormals included); one multiply by 2¹²⁰ (exact) gives
//!   it, and a compare turns the NaN code (`0x7F`/`0xFF`) into a NaN lane.
//!
//! - E2M1 at AVX-512, fused ([`FusedE2m1`]): 64 bytes (16 words) per block, `vpsrld` by 4·k
//!   and one `vpermps` of the 16 raw values as f32 per nibble `k` (the permute reads only the
//!   index's low four bits), the activations permuted to match once per call; per 16 groups one
//!   `vpgatherdd` of their scales from the table, `vpermps`'d to each block's lanes.
//!
//! The dot keeps each group's sum in its own accumulators (two per activation row), then adds
//! `scale × group sum` into one of two totals (even and odd groups), as the portable kernel's
//! `Σ_g s_g·Σ x·v` does, in a different order.
//!
//! Each `#[target_feature]` function is only reached through [`kernels_for`], which hands a
//! table out only when the level allows it — the driver only passes levels the CPU runs.

use super::quant::hsum_ps;
use crate::cpu::arch::affine::unroll;
use crate::cpu::arch::mlx_fp::{FpFormat, FpKernels, FusedE2m1, PORTABLE};
use crate::cpu::isa::Isa;
use crate::quant::ggml::mxfp4::KVALUES;
use core::arch::x86_64::*;

/// The kernels for `level`, if it has x86-64 ones.
pub(crate) fn kernels_for(level: Isa) -> Option<&'static FpKernels> {
    if level.allows(Isa::Avx512) {
        return Some(&AVX512);
    }
    if level.allows(Isa::Avx2) {
        return Some(&AVX2);
    }
    None
}

static AVX2: FpKernels = FpKernels { dot: dot_avx2, decode: decode_avx2, fused_e2m1: None };
static AVX512: FpKernels =
    FpKernels { dot: dot_avx512, decode: decode_avx512, fused_e2m1: Some(FusedE2m1 { lanes: 16, dot: fused_e2m1_avx512 }) };

/// `0x87F0_0000`: the sign and the seven exponent+mantissa bits of a code shifted left by 20.
const E4M3_KEEP: i32 = 0x87F0_0000u32 as i32;
/// `0x07F0_0000`: the magnitude bits; all set is the NaN code.
const E4M3_MAG: i32 = 0x07F0_0000;
/// 2¹²⁰: turns the code read as an f32 (exponent bias 127) into its value (bias 7).
const E4M3_REBIAS: f32 = f32::from_bits((127 + 120) << 23);

/// The 16 doubled levels of 8 bytes of E2M1 nibbles, in element order.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn e2m1_levels(t: __m128i, p: *const u8) -> __m128i {
    let b = _mm_loadl_epi64(p as *const __m128i);
    let m = _mm_set1_epi8(0x0F);
    let lo = _mm_and_si128(b, m);
    let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), m);
    _mm_unpacklo_epi8(_mm_shuffle_epi8(t, lo), _mm_shuffle_epi8(t, hi))
}

/// 8 E4M3 codes from `p` as f32.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn e4m3_8(p: *const u8) -> __m256 {
    let c = _mm256_slli_epi32::<20>(_mm256_cvtepi8_epi32(_mm_loadl_epi64(p as *const __m128i)));
    let v = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_and_si256(c, _mm256_set1_epi32(E4M3_KEEP))), _mm256_set1_ps(E4M3_REBIAS));
    let nan = _mm256_cmpeq_epi32(_mm256_and_si256(c, _mm256_set1_epi32(E4M3_MAG)), _mm256_set1_epi32(E4M3_MAG));
    _mm256_or_ps(v, _mm256_castsi256_ps(nan))
}

/// Raw values of 16 elements (`F` bits each) from `p`, as two 8-lane vectors.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn step_avx2<const F: usize>(t: __m128i, p: *const u8) -> (__m256, __m256) {
    if F == 4 {
        let lv = e2m1_levels(t, p);
        (_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lv)), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_unpackhi_epi64(lv, lv))))
    } else {
        (e4m3_8(p), e4m3_8(p.add(8)))
    }
}

/// Raw values of 16 elements (`F` bits each) from `p`.
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
#[inline]
unsafe fn step_avx512<const F: usize>(t: __m128i, p: *const u8) -> __m512 {
    if F == 4 {
        _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(e2m1_levels(t, p)))
    } else {
        let c = _mm512_slli_epi32::<20>(_mm512_cvtepi8_epi32(_mm_loadu_si128(p as *const __m128i)));
        let v = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_and_si512(c, _mm512_set1_epi32(E4M3_KEEP))), _mm512_set1_ps(E4M3_REBIAS));
        let nan = _mm512_cmpeq_epi32_mask(_mm512_and_si512(c, _mm512_set1_epi32(E4M3_MAG)), _mm512_set1_epi32(E4M3_MAG));
        _mm512_mask_mov_ps(v, nan, _mm512_set1_ps(f32::NAN))
    }
}

/// Picks the monomorphized kernel for (format, group size, rows), or the portable one for a
/// group size the SIMD kernels do not take.
macro_rules! dispatch {
    ($imp:ident, $f:expr, $w:expr, $gs:expr, $sc:expr, $lut:expr, $xs:expr, $out:expr) => {{
        macro_rules! rows {
            ($fb:literal, $g:literal) => {
                match $xs.len() {
                    1 => $imp::<$fb, $g, 1>($w, $sc, $lut, $xs, $out),
                    2 => $imp::<$fb, $g, 2>($w, $sc, $lut, $xs, $out),
                    3 => $imp::<$fb, $g, 3>($w, $sc, $lut, $xs, $out),
                    _ => $imp::<$fb, $g, 4>($w, $sc, $lut, $xs, $out),
                }
            };
        }
        match ($f, $gs) {
            (FpFormat::E2M1, 16) => rows!(4, 16),
            (FpFormat::E2M1, 32) => rows!(4, 32),
            (FpFormat::E4M3, 16) => rows!(8, 16),
            (FpFormat::E4M3, 32) => rows!(8, 32),
            _ => (PORTABLE.dot)($f, $w, $gs, $sc, $lut, $xs, $out),
        }
    }};
}

/// The checks every dot makes before its unchecked loads: `R` rows, whole groups of `G`
/// elements of `F` bits in `w` and in each activation row. Returns the row pointers.
fn dot_checks<const F: usize, const G: usize, const R: usize>(w: &[u8], sc: &[u8], xs: &[&[f32]], out: &[f32]) -> [*const f32; R] {
    assert!(xs.len() == R && out.len() == R && w.len() >= sc.len() * G * F / 8);
    core::array::from_fn(|r| {
        assert!(xs[r].len() >= sc.len() * G);
        xs[r].as_ptr()
    })
}

fn dot_avx2(f: FpFormat, w: &[u8], gs: usize, sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]) {
    // SAFETY: AVX2 + FMA available (kernels_for); lengths are checked inside (dot_checks).
    unsafe { dispatch!(dot_avx2_impl, f, w, gs, sc, lut, xs, out) }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2_impl<const F: usize, const G: usize, const R: usize>(w: &[u8], sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]) {
    let xp = dot_checks::<F, G, R>(w, sc, xs, out);
    let t = _mm_loadu_si128(KVALUES.as_ptr() as *const __m128i);
    let wp = w.as_ptr();
    // Σ x·v of group g, per row (two accumulators per row, added at the end).
    let group = |g: usize| -> [__m256; R] {
        let mut a = [[_mm256_setzero_ps(); R]; 2];
        for st in 0..G / 16 {
            let e = g * G + 16 * st;
            let (v0, v1) = step_avx2::<F>(t, wp.add(e * F / 8));
            for r in 0..R {
                a[0][r] = _mm256_fmadd_ps(_mm256_loadu_ps(xp[r].add(e)), v0, a[0][r]);
                a[1][r] = _mm256_fmadd_ps(_mm256_loadu_ps(xp[r].add(e + 8)), v1, a[1][r]);
            }
        }
        core::array::from_fn(|r| _mm256_add_ps(a[0][r], a[1][r]))
    };
    let (mut t0, mut t1) = ([_mm256_setzero_ps(); R], [_mm256_setzero_ps(); R]);
    let ng = sc.len();
    let mut g = 0;
    while g + 2 <= ng {
        let (p0, p1) = (group(g), group(g + 1));
        let (s0, s1) = (_mm256_set1_ps(lut[sc[g] as usize]), _mm256_set1_ps(lut[sc[g + 1] as usize]));
        for r in 0..R {
            t0[r] = _mm256_fmadd_ps(s0, p0[r], t0[r]);
            t1[r] = _mm256_fmadd_ps(s1, p1[r], t1[r]);
        }
        g += 2;
    }
    if g < ng {
        let p0 = group(g);
        let s0 = _mm256_set1_ps(lut[sc[g] as usize]);
        for r in 0..R {
            t0[r] = _mm256_fmadd_ps(s0, p0[r], t0[r]);
        }
    }
    for r in 0..R {
        out[r] = hsum_ps(_mm256_add_ps(t0[r], t1[r]));
    }
}

fn dot_avx512(f: FpFormat, w: &[u8], gs: usize, sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]) {
    // SAFETY: AVX-512 F/BW available (kernels_for); lengths are checked inside (dot_checks).
    unsafe { dispatch!(dot_avx512_impl, f, w, gs, sc, lut, xs, out) }
}

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn dot_avx512_impl<const F: usize, const G: usize, const R: usize>(w: &[u8], sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]) {
    let xp = dot_checks::<F, G, R>(w, sc, xs, out);
    let t = _mm_loadu_si128(KVALUES.as_ptr() as *const __m128i);
    let wp = w.as_ptr();
    // Σ x·v of group g, per row (steps alternate between two accumulators).
    let group = |g: usize| -> [__m512; R] {
        let mut a = [[_mm512_setzero_ps(); R]; 2];
        for st in 0..G / 16 {
            let e = g * G + 16 * st;
            let v = step_avx512::<F>(t, wp.add(e * F / 8));
            for r in 0..R {
                a[st & 1][r] = _mm512_fmadd_ps(_mm512_loadu_ps(xp[r].add(e)), v, a[st & 1][r]);
            }
        }
        core::array::from_fn(|r| _mm512_add_ps(a[0][r], a[1][r]))
    };
    let (mut t0, mut t1) = ([_mm512_setzero_ps(); R], [_mm512_setzero_ps(); R]);
    let ng = sc.len();
    let mut g = 0;
    while g + 2 <= ng {
        let (p0, p1) = (group(g), group(g + 1));
        let (s0, s1) = (_mm512_set1_ps(lut[sc[g] as usize]), _mm512_set1_ps(lut[sc[g + 1] as usize]));
        for r in 0..R {
            t0[r] = _mm512_fmadd_ps(s0, p0[r], t0[r]);
            t1[r] = _mm512_fmadd_ps(s1, p1[r], t1[r]);
        }
        g += 2;
    }
    if g < ng {
        let p0 = group(g);
        let s0 = _mm512_set1_ps(lut[sc[g] as usize]);
        for r in 0..R {
            t0[r] = _mm512_fmadd_ps(s0, p0[r], t0[r]);
        }
    }
    for r in 0..R {
        out[r] = _mm512_reduce_add_ps(_mm512_add_ps(t0[r], t1[r]));
    }
}

fn decode_avx2(f: FpFormat, src: &[u8], dst: &mut [f32]) {
    let steps = dst.len() / 16;
    assert!(src.len() >= steps * 2 * f.bits());
    // SAFETY: AVX2 + FMA available (kernels_for); step i reads src[i·2·bits ..][..2·bits] and
    // writes dst[16i..16i + 16], in bounds by the assert.
    unsafe {
        match f {
            FpFormat::E2M1 => decode_avx2_impl::<4>(src, dst, steps),
            FpFormat::E4M3 => decode_avx2_impl::<8>(src, dst, steps),
        }
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn decode_avx2_impl<const F: usize>(src: &[u8], dst: &mut [f32], steps: usize) {
    let t = _mm_loadu_si128(KVALUES.as_ptr() as *const __m128i);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    for i in 0..steps {
        let (v0, v1) = step_avx2::<F>(t, sp.add(i * 2 * F));
        _mm256_storeu_ps(dp.add(16 * i), v0);
        _mm256_storeu_ps(dp.add(16 * i + 8), v1);
    }
}

fn decode_avx512(f: FpFormat, src: &[u8], dst: &mut [f32]) {
    let steps = dst.len() / 16;
    assert!(src.len() >= steps * 2 * f.bits());
    // SAFETY: AVX-512 F/BW available (kernels_for); bounds as decode_avx2.
    unsafe {
        match f {
            FpFormat::E2M1 => decode_avx512_impl::<4>(src, dst, steps),
            FpFormat::E4M3 => decode_avx512_impl::<8>(src, dst, steps),
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn decode_avx512_impl<const F: usize>(src: &[u8], dst: &mut [f32], steps: usize) {
    let t = _mm_loadu_si128(KVALUES.as_ptr() as *const __m128i);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    for i in 0..steps {
        _mm512_storeu_ps(dp.add(16 * i), step_avx512::<F>(t, sp.add(i * 2 * F)));
    }
}

fn fused_e2m1_avx512(w: &[u8], gs: usize, sc: &[u8], lut: &[f32; 256], xp: &[&[f32]], out: &mut [f32]) {
    // SAFETY: AVX-512 F/BW available (kernels_for); lengths are checked inside.
    unsafe {
        match (gs, xp.len()) {
            (16, 1) => fused_e2m1_avx512_impl::<16, 1>(w, sc, lut, xp, out),
            (16, 2) => fused_e2m1_avx512_impl::<16, 2>(w, sc, lut, xp, out),
            (16, 3) => fused_e2m1_avx512_impl::<16, 3>(w, sc, lut, xp, out),
            (16, _) => fused_e2m1_avx512_impl::<16, 4>(w, sc, lut, xp, out),
            (32, 1) => fused_e2m1_avx512_impl::<32, 1>(w, sc, lut, xp, out),
            (32, 2) => fused_e2m1_avx512_impl::<32, 2>(w, sc, lut, xp, out),
            (32, 3) => fused_e2m1_avx512_impl::<32, 3>(w, sc, lut, xp, out),
            (32, _) => fused_e2m1_avx512_impl::<32, 4>(w, sc, lut, xp, out),
            // The driver only hands groups of 16 or 32 over (MLX's nvfp4 and mxfp4).
            _ => panic!("fused E2M1 dot: group size {gs} is not 16 or 32"),
        }
    }
}

/// [`FusedE2m1::dot`] for groups of `G` and `R` activation rows (see the module doc).
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn fused_e2m1_avx512_impl<const G: usize, const R: usize>(w: &[u8], sc: &[u8], lut: &[f32; 256], xp: &[&[f32]], out: &mut [f32]) {
    const L: usize = 16;
    let n = sc.len() * G;
    assert!(n.is_multiple_of(FusedE2m1::span(G)) && w.len() >= n / 2 && xp.len() == R && out.len() == R);
    let x: [*const f32; R] = core::array::from_fn(|r| {
        assert!(xp[r].len() >= n);
        xp[r].as_ptr()
    });
    let table = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(KVALUES.as_ptr() as *const __m128i)));
    // Lane l of a block holds codes 8l..8l + 8: group 8l/G of the block's 8L/G groups.
    let gpb = 8 * L / G;
    let bps = 16 / gpb;
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let lane_group = _mm512_srlv_epi32(iota, _mm512_set1_epi32((G / 8).trailing_zeros() as i32));
    let (wp, sp) = (w.as_ptr(), sc.as_ptr());
    let mut total = [_mm512_setzero_ps(); R];
    for span in 0..n / FusedE2m1::span(G) {
        // The 16 groups' scales, one lane each.
        let codes = _mm512_cvtepu8_epi32(_mm_loadu_si128(sp.add(16 * span) as *const __m128i));
        let s = _mm512_i32gather_ps::<4>(codes, lut.as_ptr() as *const _);
        for bb in 0..bps {
            let b = span * bps + bb;
            let sv = _mm512_permutexvar_ps(_mm512_add_epi32(lane_group, _mm512_set1_epi32((bb * gpb) as i32)), s);
            let wv = _mm512_loadu_si512(wp.add(64 * b) as *const __m512i);
            let xo = 8 * L * b;
            let mut a = [[_mm512_setzero_ps(); R]; 2];
            unroll!(K in [0, 1, 2, 3, 4, 5, 6, 7] {
                let v = _mm512_permutexvar_ps(_mm512_srli_epi32::<{ (4 * K) as u32 }>(wv), table);
                for r in 0..R {
                    a[K & 1][r] = _mm512_fmadd_ps(_mm512_loadu_ps(x[r].add(xo + L * K)), v, a[K & 1][r]);
                }
            });
            for r in 0..R {
                total[r] = _mm512_fmadd_ps(sv, _mm512_add_ps(a[0][r], a[1][r]), total[r]);
            }
        }
    }
    for r in 0..R {
        out[r] = _mm512_reduce_add_ps(total[r]);
    }
}
