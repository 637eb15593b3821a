//! x86-64 f32 GEMM/GEMV kernels: AVX2 + FMA (6×16 register tile, 12 of the 16 ymm registers
//! accumulate) and AVX-512 (14×32 tile, 28 of the 32 zmm registers accumulate). Zen 4 and
//! Intel cores both retire about 32 f32 FMAs per cycle at either width, so the tiles are
//! sized to keep every FMA pipe busy while loading 2 vectors of B and broadcasting MR scalars
//! of A per step of the shared dimension.
//!
//! Each function is `#[target_feature]`: the caller (the table in `cpu::gemm`) only hands it
//! out when `isa()` says this CPU has the feature, which is what makes calling it sound.

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
};

/// The AVX2 + FMA + F16C kernel set.
pub(crate) static AVX2: F32Kernels = F32Kernels {
    mr: 6,
    nr: 16,
    micro: micro_avx2,
    dots: dots_avx2,
    axpys: axpys_avx2,
    widen_f16: widen_f16_avx2,
};

/// `C[14×32] = alpha·Σ_p ap[p·14 + r]·bp[p·32 + c] + beta·C` (C not read when beta == 0).
///
/// # Safety
/// AVX-512F must be available; `ap` holds `14·kc` and `bp` `32·kc` floats; C rows `r·ldc`
/// for r < 14 hold 32 writable floats.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn micro_avx512(kc: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
    const MR: usize = 14;
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

/// `out[j] += Σ_p x[p]·w[j·ld + p]` for j < n: four rows at a time so each load of `x`
/// feeds four FMAs; the k tail uses masked loads (no scalar loop, no overread).
///
/// # Safety
/// AVX-512F; `x` holds k floats, each row `w + j·ld` holds k floats, `out` holds n.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn dots_avx512(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, out: *mut f32) {
    let mut j = 0;
    while j + 4 <= n {
        let rows = [w.offset(j as isize * ld), w.offset((j + 1) as isize * ld), w.offset((j + 2) as isize * ld), w.offset((j + 3) as isize * ld)];
        let mut acc = [[_mm512_setzero_ps(); 2]; 4];
        let mut p = 0;
        while p + 32 <= k {
            let x0 = _mm512_loadu_ps(x.add(p));
            let x1 = _mm512_loadu_ps(x.add(p + 16));
            for r in 0..4 {
                acc[r][0] = _mm512_fmadd_ps(_mm512_loadu_ps(rows[r].add(p)), x0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(_mm512_loadu_ps(rows[r].add(p + 16)), x1, acc[r][1]);
            }
            p += 32;
        }
        while p < k {
            let m = if k - p >= 16 { 0xffff } else { lanes(k - p) };
            let x0 = _mm512_maskz_loadu_ps(m, x.add(p));
            for r in 0..4 {
                acc[r][0] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, rows[r].add(p)), x0, acc[r][0]);
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
            let m = if k - p >= 16 { 0xffff } else { lanes(k - p) };
            acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, row.add(p)), _mm512_maskz_loadu_ps(m, x.add(p)), acc);
            p += 16;
        }
        *out.add(j) += _mm512_reduce_add_ps(acc);
        j += 1;
    }
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

/// Horizontal sum of 8 lanes.
#[inline(always)]
unsafe fn hsum256(v: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    _mm_cvtss_f32(s)
}

/// `out[j] += Σ_p x[p]·w[j·ld + p]`, as [`dots_avx512`] with scalar k tails.
///
/// # Safety
/// AVX2 + FMA; sizes as [`dots_avx512`].
#[target_feature(enable = "avx2,fma")]
unsafe fn dots_avx2(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, out: *mut f32) {
    let mut j = 0;
    while j + 4 <= n {
        let rows = [w.offset(j as isize * ld), w.offset((j + 1) as isize * ld), w.offset((j + 2) as isize * ld), w.offset((j + 3) as isize * ld)];
        let mut acc = [[_mm256_setzero_ps(); 2]; 4];
        let mut p = 0;
        while p + 16 <= k {
            let x0 = _mm256_loadu_ps(x.add(p));
            let x1 = _mm256_loadu_ps(x.add(p + 8));
            for r in 0..4 {
                acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[r].add(p)), x0, acc[r][0]);
                acc[r][1] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[r].add(p + 8)), x1, acc[r][1]);
            }
            p += 16;
        }
        for r in 0..4 {
            let mut s = hsum256(_mm256_add_ps(acc[r][0], acc[r][1]));
            for q in p..k {
                s += *rows[r].add(q) * *x.add(q);
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
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(row.add(p)), _mm256_loadu_ps(x.add(p)), acc);
            p += 8;
        }
        let mut s = hsum256(acc);
        for q in p..k {
            s += *row.add(q) * *x.add(q);
        }
        *out.add(j) += s;
        j += 1;
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
