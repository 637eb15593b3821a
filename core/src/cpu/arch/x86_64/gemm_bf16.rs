//! x86-64 bf16 GEMM pair kernels (AVX-512 BF16, `vdpbf16ps`; see `cpu/gemm_pairs.rs` for the
//! packing and the numerics). The register tile is the f32 kernel's 14×32 — 28 zmm
//! accumulators, two B vectors and one broadcast A pair — but each instruction covers two
//! steps of the shared dimension.
//!
//! Each function is `#[target_feature]`: [`kernels`] only hands them out when the CPU has
//! AVX-512 BF16 and the active level allows AVX-512, which is what makes calling them sound.

use super::pairs::PairKernels;
use crate::cpu::isa::{self, Isa};
use core::arch::x86_64::*;

/// The AVX-512 BF16 pair kernels.
static AVX512_BF16: PairKernels = PairKernels { mr: 14, nr: 32, micro: micro_bf16_avx512, interleave: interleave_avx512 };

/// The pair kernels at `level`: AVX-512 BF16 where the level allows AVX-512 and this CPU has
/// the extension.
pub(crate) fn kernels(level: Isa) -> Option<&'static PairKernels> {
    let ok = level != Isa::Portable && level.allows(Isa::Avx512) && Isa::Avx512.is_available() && isa::has_avx512_bf16();
    ok.then_some(&AVX512_BF16)
}

/// Sixteen pair words as the instruction's bf16 vector type (same 64 bytes).
#[inline(always)]
fn bh(v: __m512i) -> __m512bh {
    // SAFETY: both are plain 512-bit vectors; every bit pattern is a valid value of each.
    unsafe { core::mem::transmute::<__m512i, __m512bh>(v) }
}

/// `C[14×32] = alpha·Σ_q Σ_h a[q][r].h·b[q][c].h + beta·C` (C not read when beta == 0).
///
/// # Safety
/// AVX-512F and AVX-512 BF16; `ap` holds `14·kq` and `bp` `32·kq` words; C rows `r·ldc` for
/// r < 14 hold 32 writable floats.
#[target_feature(enable = "avx512f,avx512bf16,avx2,fma")]
unsafe fn micro_bf16_avx512(kq: usize, ap: *const u32, bp: *const u32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
    const MR: usize = 14;
    for r in 0..MR {
        _mm_prefetch::<_MM_HINT_T1>(c.wrapping_add(r * ldc) as *const i8);
        _mm_prefetch::<_MM_HINT_T1>(c.wrapping_add(r * ldc + 16) as *const i8);
    }
    let mut acc0 = [_mm512_setzero_ps(); MR];
    let mut acc1 = [_mm512_setzero_ps(); MR];
    let (mut a, mut b) = (ap, bp);
    for _ in 0..kq {
        let b0 = bh(_mm512_loadu_si512(b as *const __m512i));
        let b1 = bh(_mm512_loadu_si512(b.add(16) as *const __m512i));
        // Fully unrolled (constant trip count), so the accumulators stay in registers.
        for r in 0..MR {
            let x = bh(_mm512_set1_epi32(*a.add(r) as i32));
            acc0[r] = _mm512_dpbf16_ps(acc0[r], x, b0);
            acc1[r] = _mm512_dpbf16_ps(acc1[r], x, b1);
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

/// `dst[c] = lo[c] | hi[c] << 16` for c < n, sixteen words per step (masked tail).
///
/// # Safety
/// AVX-512F/BW/VL; `lo` and `hi` hold n u16, `dst` n words.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn interleave_avx512(lo: *const u16, hi: *const u16, n: usize, dst: *mut u32) {
    let mut c = 0;
    while c < n {
        let m: __mmask16 = if n - c >= 16 { 0xffff } else { ((1u32 << (n - c)) - 1) as __mmask16 };
        let l = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, lo.add(c) as *const i16));
        let h = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, hi.add(c) as *const i16));
        _mm512_mask_storeu_epi32(dst.add(c) as *mut i32, m, _mm512_or_si512(l, _mm512_slli_epi32::<16>(h)));
        c += 16;
    }
}
