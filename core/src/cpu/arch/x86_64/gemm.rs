//! x86-64 f32 GEMM/GEMV kernels: AVX2 + FMA (6×16 register tile, 12 of the 16 ymm registers
//! accumulate) and AVX-512 (14×32 tile, 28 of the 32 zmm registers accumulate). Zen 4 and
//! Intel cores both retire about 32 f32 FMAs per cycle at either width, so the tiles are
//! sized to keep every FMA pipe busy while loading 2 vectors of B and broadcasting MR scalars
//! of A per step of the shared dimension.
//!
//! Each function is `#[target_feature]`: the caller (the table in `cpu::gemm`) only hands it
//! out when `isa()` says this CPU has the feature, which is what makes calling it sound.

use crate::cpu::arch::x86_64::quant::hsum_ps;
use super::F32Kernels;
use core::arch::x86_64::*;

/// The AVX-512 kernel set.
pub(crate) static AVX512: F32Kernels = F32Kernels {
    mr: 14,
    nr: 32,
    micro: micro_avx512,
    dots: dots_avx512,
    axpys: axpys_avx512,
    widen_f16: widen_f16_avx512,
    dots_f16: Some(dots_f16_avx512),
    dots_bf16: Some(dots_bf16_avx512),
    pack_t: Some([pack_t_f32_avx512, pack_t_f16_avx512, pack_t_bf16_avx512]),
};

/// The AVX2 + FMA + F16C kernel set.
pub(crate) static AVX2: F32Kernels = F32Kernels {
    mr: 6,
    nr: 16,
    micro: micro_avx2,
    dots: dots_avx2,
    axpys: axpys_avx2,
    widen_f16: widen_f16_avx2,
    dots_f16: Some(dots_f16_avx2),
    dots_bf16: Some(dots_bf16_avx2),
    pack_t: Some([pack_t_f32_avx2, pack_t_f16_avx2, pack_t_bf16_avx2]),
};

/// Asks for the C tile's `rows × lines` cache lines in L2 before the tile is computed: the
/// update at the end then finds them there instead of waiting on L3 or memory, once per tile
/// and slice (a 2048² C does not fit in L2, and its rows 8 KiB apart share an L1 set).
#[inline(always)]
unsafe fn prefetch_c(c: *const f32, ldc: usize, rows: usize, lines: usize) {
    for r in 0..rows {
        for l in 0..lines {
            _mm_prefetch::<_MM_HINT_T1>(c.wrapping_add(r * ldc + 16 * l) as *const i8);
        }
    }
}

/// `C[14×32] = alpha·Σ_p ap[p·14 + r]·bp[p·32 + c] + beta·C` (C not read when beta == 0).
///
/// # Safety
/// AVX-512F must be available; `ap` holds `14·kc` and `bp` `32·kc` floats; C rows `r·ldc`
/// for r < 14 hold 32 writable floats.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn micro_avx512(kc: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
    const MR: usize = 14;
    prefetch_c(c, ldc, MR, 2);
    let mut acc0 = [_mm512_setzero_ps(); MR];
    let mut acc1 = [_mm512_setzero_ps(); MR];
    let (mut a, mut b) = (ap, bp);
    for _ in 0..kc {
        let b0 = _mm512_loadu_ps(b);
        let b1 = _mm512_loadu_ps(b.add(16));
        // Fully unrolled (constant trip count), so the accumulators stay in registers.
        for r in 0..MR {
            let x = _mm512_set1_ps(*a.add(r));
            acc0[r] = _mm512_fmadd_ps(x, b0, acc0[r]);
            acc1[r] = _mm512_fmadd_ps(x, b1, acc1[r]);
        }
        a = a.add(MR);
        b = b.add(32);
    }
    let va = _mm512_set1_ps(alpha);
    let vb = _mm512_set1_ps(beta);
    for r in 0..MR {
        let row = c.add(r * ldc);
        let mut y0 = _mm512_mul_ps(va, acc0[r]);
        let mut y1 = _mm512_mul_ps(va, acc1[r]);
        if beta != 0.0 {
            y0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(row), y0);
            y1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(row.add(16)), y1);
        }
        _mm512_storeu_ps(row, y0);
        _mm512_storeu_ps(row.add(16), y1);
    }
}

/// `C[6×16] = alpha·A·B + beta·C`, as [`micro_avx512`].
///
/// # Safety
/// AVX2 + FMA must be available; sizes as [`micro_avx512`] with 6 and 16.
#[target_feature(enable = "avx2,fma")]
unsafe fn micro_avx2(kc: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
    const MR: usize = 6;
    prefetch_c(c, ldc, MR, 1);
    let mut acc0 = [_mm256_setzero_ps(); MR];
    let mut acc1 = [_mm256_setzero_ps(); MR];
    let (mut a, mut b) = (ap, bp);
    for _ in 0..kc {
        let b0 = _mm256_loadu_ps(b);
        let b1 = _mm256_loadu_ps(b.add(8));
        for r in 0..MR {
            let x = _mm256_broadcast_ss(&*a.add(r));
            acc0[r] = _mm256_fmadd_ps(x, b0, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(x, b1, acc1[r]);
        }
        a = a.add(MR);
        b = b.add(16);
    }
    let va = _mm256_set1_ps(alpha);
    let vb = _mm256_set1_ps(beta);
    for r in 0..MR {
        let row = c.add(r * ldc);
        let mut y0 = _mm256_mul_ps(va, acc0[r]);
        let mut y1 = _mm256_mul_ps(va, acc1[r]);
        if beta != 0.0 {
            y0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), y0);
            y1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row.add(8)), y1);
        }
        _mm256_storeu_ps(row, y0);
        _mm256_storeu_ps(row.add(8), y1);
    }
}

/// A mask selecting the first `n` (< 16) lanes.
#[inline(always)]
fn lanes(n: usize) -> __mmask16 {
    ((1u32 << n) - 1) as __mmask16
}

/// `y[j] += Σ_p x[p]·w[p·ld + j]` for j < n: rows of W are streamed four at a time into `y`
/// (which the caller keeps small enough for L1), so W is read exactly once, in order.
///
/// # Safety
/// AVX-512F; `x` holds k floats, each row `w + p·ld` holds n floats, `y` holds n.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn axpys_avx512(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, y: *mut f32) {
    let mut p = 0;
    while p + 4 <= k {
        let rows = [w.offset(p as isize * ld), w.offset((p + 1) as isize * ld), w.offset((p + 2) as isize * ld), w.offset((p + 3) as isize * ld)];
        let xs = [_mm512_set1_ps(*x.add(p)), _mm512_set1_ps(*x.add(p + 1)), _mm512_set1_ps(*x.add(p + 2)), _mm512_set1_ps(*x.add(p + 3))];
        let mut j = 0;
        while j < n {
            let m = if n - j >= 16 { 0xffff } else { lanes(n - j) };
            let mut acc = _mm512_maskz_loadu_ps(m, y.add(j));
            for r in 0..4 {
                acc = _mm512_fmadd_ps(xs[r], _mm512_maskz_loadu_ps(m, rows[r].add(j)), acc);
            }
            _mm512_mask_storeu_ps(y.add(j), m, acc);
            j += 16;
        }
        p += 4;
    }
    // The last rows one at a time (padding them with zero weights would turn inf into NaN).
    while p < k {
        let row = w.offset(p as isize * ld);
        let xv = _mm512_set1_ps(*x.add(p));
        let mut j = 0;
        while j < n {
            let m = if n - j >= 16 { 0xffff } else { lanes(n - j) };
            let acc = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, row.add(j)), _mm512_maskz_loadu_ps(m, y.add(j)));
            _mm512_mask_storeu_ps(y.add(j), m, acc);
            j += 16;
        }
        p += 1;
    }
}

/// `y[j] += Σ_p x[p]·w[p·ld + j]`, as [`axpys_avx512`] with scalar column tails.
///
/// # Safety
/// AVX2 + FMA; sizes as [`axpys_avx512`].
#[target_feature(enable = "avx2,fma")]
unsafe fn axpys_avx2(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, y: *mut f32) {
    let mut p = 0;
    while p + 4 <= k {
        let rows = [w.offset(p as isize * ld), w.offset((p + 1) as isize * ld), w.offset((p + 2) as isize * ld), w.offset((p + 3) as isize * ld)];
        let xv = [*x.add(p), *x.add(p + 1), *x.add(p + 2), *x.add(p + 3)];
        let xs = [_mm256_set1_ps(xv[0]), _mm256_set1_ps(xv[1]), _mm256_set1_ps(xv[2]), _mm256_set1_ps(xv[3])];
        let mut j = 0;
        while j + 8 <= n {
            let mut acc = _mm256_loadu_ps(y.add(j));
            for r in 0..4 {
                acc = _mm256_fmadd_ps(xs[r], _mm256_loadu_ps(rows[r].add(j)), acc);
            }
            _mm256_storeu_ps(y.add(j), acc);
            j += 8;
        }
        while j < n {
            let mut s = *y.add(j);
            for r in 0..4 {
                s += xv[r] * *rows[r].add(j);
            }
            *y.add(j) = s;
            j += 1;
        }
        p += 4;
    }
    while p < k {
        let row = w.offset(p as isize * ld);
        let xv = *x.add(p);
        for j in 0..n {
            *y.add(j) += xv * *row.add(j);
        }
        p += 1;
    }
}

/// Up to 16 halves at `p` (the lanes of `m`; the others read nothing) widened to f32.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,f16c")]
unsafe fn f16x16(p: *const u16, m: __mmask16) -> __m512 {
    _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p as *const i16))
}

/// Up to 16 bfloat16 at `p` widened to f32 (a bfloat16 is the top half of an f32).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn bf16x16(p: *const u16, m: __mmask16) -> __m512 {
    _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p as *const i16))))
}

/// 8 halves at `p` widened to f32.
#[inline]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16x8(p: *const u16) -> __m256 {
    _mm256_cvtph_ps(_mm_loadu_si128(p as *const __m128i))
}

/// 8 bfloat16 at `p` widened to f32.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn bf16x8(p: *const u16) -> __m256 {
    _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(_mm_loadu_si128(p as *const __m128i))))
}

/// 8 f32 at `p`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn f32x8(p: *const f32) -> __m256 {
    _mm256_loadu_ps(p)
}

/// `out[j] += Σ_p x[p]·w[j·ld + p]` for j < n, W in f32 or a 16-bit float format (as bits)
/// widened in registers as it streams (no f32 copy of W): four rows at a time, 32 elements of
/// each per step in two accumulators, so each load of `x` feeds eight FMAs and four rows'
/// loads are in flight; the k tail uses masked loads (no scalar loop, no overread).
macro_rules! dots_avx512 {
    ($name:ident, $t:ty, $load:ident, $what:literal) => {
        #[doc = concat!("The AVX-512 GEMV dot kernel for ", $what, " weights.")]
        ///
        /// # Safety
        /// AVX-512F/BW/VL (and F16C); `x` holds k floats, each row `w + j·ld` holds k
        /// elements, `out` holds n.
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma,f16c")]
        unsafe fn $name(n: usize, k: usize, w: *const $t, ld: isize, x: *const f32, out: *mut f32) {
            let mut j = 0;
            while j + 4 <= n {
                let rows = [w.offset(j as isize * ld), w.offset((j + 1) as isize * ld), w.offset((j + 2) as isize * ld), w.offset((j + 3) as isize * ld)];
                let mut acc = [[_mm512_setzero_ps(); 2]; 4];
                let mut p = 0;
                while p + 32 <= k {
                    let x0 = _mm512_loadu_ps(x.add(p));
                    let x1 = _mm512_loadu_ps(x.add(p + 16));
                    for r in 0..4 {
                        acc[r][0] = _mm512_fmadd_ps($load(rows[r].add(p), 0xffff), x0, acc[r][0]);
                        acc[r][1] = _mm512_fmadd_ps($load(rows[r].add(p + 16), 0xffff), x1, acc[r][1]);
                    }
                    p += 32;
                }
                while p < k {
                    let m = lanes_upto(k - p);
                    let x0 = _mm512_maskz_loadu_ps(m, x.add(p));
                    for r in 0..4 {
                        acc[r][0] = _mm512_fmadd_ps($load(rows[r].add(p), m), x0, acc[r][0]);
                    }
                    p += 16;
                }
                for r in 0..4 {
                    *out.add(j + r) += _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));
                }
                j += 4;
            }
            while j < n {
                let row = w.offset(j as isize * ld);
                let mut acc = _mm512_setzero_ps();
                let mut p = 0;
                while p < k {
                    let m = lanes_upto(k - p);
                    acc = _mm512_fmadd_ps($load(row.add(p), m), _mm512_maskz_loadu_ps(m, x.add(p)), acc);
                    p += 16;
                }
                *out.add(j) += _mm512_reduce_add_ps(acc);
                j += 1;
            }
        }
    };
}
dots_avx512!(dots_avx512, f32, f32x16, "f32");
dots_avx512!(dots_f16_avx512, u16, f16x16, "IEEE half (as bits)");
dots_avx512!(dots_bf16_avx512, u16, bf16x16, "bfloat16 (as bits)");

/// [`dots_avx512!`] on 8 lanes with scalar k tails.
macro_rules! dots_avx2 {
    ($name:ident, $t:ty, $load:ident, $scalar:expr, $what:literal) => {
        #[doc = concat!("The AVX2 GEMV dot kernel for ", $what, " weights.")]
        ///
        /// # Safety
        /// AVX2 + FMA (+ F16C); sizes as [`dots_avx512`].
        #[target_feature(enable = "avx2,fma,f16c")]
        unsafe fn $name(n: usize, k: usize, w: *const $t, ld: isize, x: *const f32, out: *mut f32) {
            let widen: fn($t) -> f32 = $scalar;
            let mut j = 0;
            while j + 4 <= n {
                let rows = [w.offset(j as isize * ld), w.offset((j + 1) as isize * ld), w.offset((j + 2) as isize * ld), w.offset((j + 3) as isize * ld)];
                let mut acc = [[_mm256_setzero_ps(); 2]; 4];
                let mut p = 0;
                while p + 16 <= k {
                    let x0 = _mm256_loadu_ps(x.add(p));
                    let x1 = _mm256_loadu_ps(x.add(p + 8));
                    for r in 0..4 {
                        acc[r][0] = _mm256_fmadd_ps($load(rows[r].add(p)), x0, acc[r][0]);
                        acc[r][1] = _mm256_fmadd_ps($load(rows[r].add(p + 8)), x1, acc[r][1]);
                    }
                    p += 16;
                }
                for r in 0..4 {
                    let mut s = hsum_ps(_mm256_add_ps(acc[r][0], acc[r][1]));
                    for q in p..k {
                        s += widen(*rows[r].add(q)) * *x.add(q);
                    }
                    *out.add(j + r) += s;
                }
                j += 4;
            }
            while j < n {
                let row = w.offset(j as isize * ld);
                let mut acc = _mm256_setzero_ps();
                let mut p = 0;
                while p + 8 <= k {
                    acc = _mm256_fmadd_ps($load(row.add(p)), _mm256_loadu_ps(x.add(p)), acc);
                    p += 8;
                }
                let mut s = hsum_ps(acc);
                for q in p..k {
                    s += widen(*row.add(q)) * *x.add(q);
                }
                *out.add(j) += s;
                j += 1;
            }
        }
    };
}
dots_avx2!(dots_avx2, f32, f32x8, |v| v, "f32");
dots_avx2!(dots_f16_avx2, u16, f16x8, |h| half::f16::from_bits(h).to_f32(), "IEEE half (as bits)");
dots_avx2!(dots_bf16_avx2, u16, bf16x8, |h| f32::from_bits((h as u32) << 16), "bfloat16 (as bits)");

/// Up to 16 f32 at `p` (the lanes of `m`).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn f32x16(p: *const f32, m: __mmask16) -> __m512 {
    _mm512_maskz_loadu_ps(m, p)
}

/// Transposes 16 registers of 16 floats (row i, lane q → row q, lane i) in 64 shuffles:
/// pairs of rows interleave 32-bit, then 64-bit elements, then two rounds of 128-bit lane
/// selects gather the four quarters of each column.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn transpose16(r: &mut [__m512; 16]) {
    let mut t = [_mm512_setzero_ps(); 16];
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // u[4g + c]: rows 4g..4g+4 of columns c, c + 4, c + 8, c + 12 (one per 128-bit lane).
    let mut u = [_mm512_setzero_ps(); 16];
    for g in 0..4 {
        let (lo, hi) = (_mm512_castps_pd(t[4 * g]), _mm512_castps_pd(t[4 * g + 2]));
        let (lo2, hi2) = (_mm512_castps_pd(t[4 * g + 1]), _mm512_castps_pd(t[4 * g + 3]));
        u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo, hi));
        u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo, hi));
        u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo2, hi2));
        u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo2, hi2));
    }
    for c in 0..4 {
        let v0 = _mm512_shuffle_f32x4::<0x88>(u[c], u[4 + c]);
        let v1 = _mm512_shuffle_f32x4::<0xdd>(u[c], u[4 + c]);
        let v2 = _mm512_shuffle_f32x4::<0x88>(u[8 + c], u[12 + c]);
        let v3 = _mm512_shuffle_f32x4::<0xdd>(u[8 + c], u[12 + c]);
        r[c] = _mm512_shuffle_f32x4::<0x88>(v0, v2);
        r[c + 8] = _mm512_shuffle_f32x4::<0xdd>(v0, v2);
        r[c + 4] = _mm512_shuffle_f32x4::<0x88>(v1, v3);
        r[c + 12] = _mm512_shuffle_f32x4::<0xdd>(v1, v3);
    }
}

/// `dst[p·w + r] = src[r·ld + p]` widened, for r < rows ≤ w and p < kc, with zeros in the
/// rows `rows..w` — packing a panel whose source rows run along the shared dimension (row-major
/// A, or B = Wᵀ of a row-major W) in 16×16 blocks transposed in registers instead of one
/// strided store per element.
macro_rules! pack_t_avx512 {
    ($name:ident, $t:ty, $load:ident) => {
        /// # Safety
        /// AVX-512F/BW/VL (and F16C); each row `src + r·ld` (elements) holds kc elements;
        /// `dst` holds `w·kc` floats.
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,f16c")]
        unsafe fn $name(src: *const u8, ld: isize, rows: usize, w: usize, kc: usize, dst: *mut f32) {
            let src = src as *const $t;
            let mut r0 = 0;
            while r0 < w {
                let live = rows.saturating_sub(r0).min(16);
                let store = lanes_upto(w - r0);
                let mut p = 0;
                while p < kc {
                    let take = (kc - p).min(16);
                    let m = lanes_upto(take);
                    let mut v = [_mm512_setzero_ps(); 16];
                    for (i, vi) in v.iter_mut().enumerate().take(live) {
                        *vi = $load(src.offset((r0 + i) as isize * ld + p as isize), m);
                    }
                    transpose16(&mut v);
                    for (q, vq) in v.iter().enumerate().take(take) {
                        _mm512_mask_storeu_ps(dst.add((p + q) * w + r0), store, *vq);
                    }
                    p += 16;
                }
                r0 += 16;
            }
        }
    };
}
pack_t_avx512!(pack_t_f32_avx512, f32, f32x16);
pack_t_avx512!(pack_t_f16_avx512, u16, f16x16);
pack_t_avx512!(pack_t_bf16_avx512, u16, bf16x16);

/// A mask selecting the first `min(n, 16)` lanes.
#[inline(always)]
fn lanes_upto(n: usize) -> __mmask16 {
    if n >= 16 {
        0xffff
    } else {
        lanes(n)
    }
}

/// Widens `n` IEEE halves (as bits) to f32 with `vcvtph2ps` on 16 lanes.
///
/// # Safety
/// AVX-512F; `src` holds n u16, `dst` n f32.
#[target_feature(enable = "avx512f,avx2,f16c")]
unsafe fn widen_f16_avx512(src: *const u16, dst: *mut f32, n: usize) {
    let mut i = 0;
    while i + 16 <= n {
        let h = _mm256_loadu_si256(src.add(i) as *const __m256i);
        _mm512_storeu_ps(dst.add(i), _mm512_cvtph_ps(h));
        i += 16;
    }
    widen_f16_tail(src, dst, i, n);
}

/// Widens `n` IEEE halves to f32 with F16C on 8 lanes.
///
/// # Safety
/// AVX2 + F16C; `src` holds n u16, `dst` n f32.
#[target_feature(enable = "avx2,f16c")]
unsafe fn widen_f16_avx2(src: *const u16, dst: *mut f32, n: usize) {
    let mut i = 0;
    while i + 8 <= n {
        let h = _mm_loadu_si128(src.add(i) as *const __m128i);
        _mm256_storeu_ps(dst.add(i), _mm256_cvtph_ps(h));
        i += 8;
    }
    widen_f16_tail(src, dst, i, n);
}

/// The last few halves, through `half`.
#[inline(always)]
unsafe fn widen_f16_tail(src: *const u16, dst: *mut f32, from: usize, n: usize) {
    for i in from..n {
        *dst.add(i) = half::f16::from_bits(*src.add(i)).to_f32();
    }
}

/// Transposes 8 registers of 8 floats (row i, lane q → row q, lane i) in 24 shuffles: pairs of
/// rows interleave 32-bit elements, then 64-bit pairs, then the 128-bit halves are exchanged.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn transpose8(r: &mut [__m256; 8]) {
    let t: [__m256; 8] = core::array::from_fn(|i| {
        let (a, b) = (r[2 * (i / 2)], r[2 * (i / 2) + 1]);
        if i % 2 == 0 {
            _mm256_unpacklo_ps(a, b)
        } else {
            _mm256_unpackhi_ps(a, b)
        }
    });
    // u[4h + c]: rows 4h..4h+4 of columns c (low 128 bits) and c + 4 (high).
    let mut u = [_mm256_setzero_ps(); 8];
    for h in 0..2 {
        let (lo, hi) = (t[4 * h], t[4 * h + 2]);
        let (lo2, hi2) = (t[4 * h + 1], t[4 * h + 3]);
        u[4 * h] = _mm256_shuffle_ps::<0x44>(lo, hi);
        u[4 * h + 1] = _mm256_shuffle_ps::<0xee>(lo, hi);
        u[4 * h + 2] = _mm256_shuffle_ps::<0x44>(lo2, hi2);
        u[4 * h + 3] = _mm256_shuffle_ps::<0xee>(lo2, hi2);
    }
    for c in 0..4 {
        r[c] = _mm256_permute2f128_ps::<0x20>(u[c], u[4 + c]);
        r[c + 4] = _mm256_permute2f128_ps::<0x31>(u[c], u[4 + c]);
    }
}

/// Stores the first `n` (< 8) lanes of `v` at `dst` with plain 4-, 2- and 1-lane stores (a
/// masked store is microcoded on Zen).
#[inline]
#[target_feature(enable = "avx")]
unsafe fn store_first(dst: *mut f32, v: __m256, n: usize) {
    let (mut x, mut at) = (_mm256_castps256_ps128(v), 0);
    if n & 4 != 0 {
        _mm_storeu_ps(dst, x);
        x = _mm256_extractf128_ps::<1>(v);
        at = 4;
    }
    if n & 2 != 0 {
        _mm_storel_epi64(dst.add(at) as *mut __m128i, _mm_castps_si128(x));
        x = _mm_movehl_ps(x, x);
        at += 2;
    }
    if n & 1 != 0 {
        _mm_store_ss(dst.add(at), x);
    }
}

/// `dst[p·w + r] = src[r·ld + p]` widened, as the AVX-512 `pack_t_*` in 8×8 blocks: each block
/// is 8 row loads (widened on the load: `vcvtph2ps`, a 16-bit shift for bfloat16), 24 shuffles
/// and 8 stores, instead of 64 scalar moves with a strided store each. Row chunks narrower than
/// 8 (the 6-row A panel) store exactly their lanes, so a panel never writes its neighbour's
/// (another thread may be packing it). The depth tail goes through a zero-padded copy on the
/// stack, so nothing past a row's `kc` elements is read.
macro_rules! pack_t_avx2 {
    ($name:ident, $t:ty, $load:ident) => {
        /// # Safety
        /// AVX2 + F16C; each row `src + r·ld` (elements) holds kc elements; `dst` holds `w·kc`
        /// floats.
        #[target_feature(enable = "avx2,fma,f16c")]
        unsafe fn $name(src: *const u8, ld: isize, rows: usize, w: usize, kc: usize, dst: *mut f32) {
            let src = src as *const $t;
            let mut r0 = 0;
            while r0 < w {
                let live = rows.saturating_sub(r0).min(8);
                let cw = (w - r0).min(8);
                let mut p = 0;
                while p < kc {
                    let take = (kc - p).min(8);
                    let mut v = [_mm256_setzero_ps(); 8];
                    for (i, vi) in v.iter_mut().enumerate().take(live) {
                        let row = src.offset((r0 + i) as isize * ld + p as isize);
                        *vi = if take == 8 {
                            $load(row)
                        } else {
                            let mut tail = [<$t>::default(); 8];
                            core::ptr::copy_nonoverlapping(row, tail.as_mut_ptr(), take);
                            $load(tail.as_ptr())
                        };
                    }
                    transpose8(&mut v);
                    for (q, vq) in v.iter().enumerate().take(take) {
                        let at = dst.add((p + q) * w + r0);
                        if cw == 8 {
                            _mm256_storeu_ps(at, *vq);
                        } else {
                            store_first(at, *vq, cw);
                        }
                    }
                    p += 8;
                }
                r0 += 8;
            }
        }
    };
}
pack_t_avx2!(pack_t_f32_avx2, f32, f32x8);
pack_t_avx2!(pack_t_f16_avx2, u16, f16x8);
pack_t_avx2!(pack_t_bf16_avx2, u16, bf16x8);
