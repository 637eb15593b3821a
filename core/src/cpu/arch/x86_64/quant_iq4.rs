//! x86-64 dot kernels of the 4-bit non-linear formats (IQ4_NL · Q8_0, IQ4_XS · Q8_K) at the
//! AVX2 and AVX-512 VNNI levels.
//!
//! The 16 levels of [`KVALUES`] fit one 128-bit register, so `vpshufb` turns 32 nibble indices
//! into their signed levels in one instruction; the rest is an exact i8·i8 dot product:
//! - AVX2 widens both sides to i16 and uses `vpmaddwd` (`vpmaddubsw` needs an unsigned side,
//!   and moving the weight's sign onto the activation is wrong for an activation of −128);
//! - VNNI looks up `level + 128` (unsigned, 1..241) and takes `vpdpbusd` of it minus
//!   `vpdpbusd` of 128: both exact in i32 for every activation byte.
//!
//! IQ4_XS's eight 6-bit sub-block scales multiply the sub-block sums in i32 (|Σ| ≤ 32·127·128,
//! times 32, over 8 sub-blocks stays far inside i32), so each super-block meets one float
//! multiply. Only the float summation order differs from the portable kernels (docs/QUANT.md).

use core::arch::x86_64::*;

use super::quant::{f16x8, hsum_ps, load, nibbles};
use crate::quant::ggml::iq4::{xs_sub_scale, KVALUES};
use crate::quant::GgmlType;

/// Bytes of an IQ4_NL block, a Q8_0 block, an IQ4_XS super-block and a Q8_K block.
const NL_BYTES: usize = GgmlType::IQ4_NL.block_bytes();
const Q8_0_BYTES: usize = GgmlType::Q8_0.block_bytes();
const XS_BYTES: usize = GgmlType::IQ4_XS.block_bytes();
const Q8_K_BYTES: usize = GgmlType::Q8_K.block_bytes();

/// The 16 levels, each plus `bias`, in both 128-bit lanes (the `vpshufb` table).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn table(bias: i8) -> __m256i {
    let t = _mm_add_epi8(_mm_loadu_si128(KVALUES.as_ptr() as *const __m128i), _mm_set1_epi8(bias));
    _mm256_broadcastsi128_si256(t)
}

/// The two kernels over one ISA's `sdot(indices, activations) → i32 lanes` (Σ of 4 products of
/// level × activation per lane, exact).
macro_rules! iq4_kernels {
    ($feat:literal, $sdot:ident, $bias:expr) => {
        /// IQ4_NL · Q8_0.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::x86_64) unsafe fn iq4_nl_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / NL_BYTES).min(a.len() / Q8_0_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let t = table($bias);
            let mut acc = _mm256_setzero_ps();
            for i in 0..nb {
                let (x, y) = (wp.add(i * NL_BYTES), ap.add(i * Q8_0_BYTES));
                let p = $sdot(t, nibbles(x.add(2)), load(y.add(2)));
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(f16x8(x), f16x8(y)), acc);
            }
            hsum_ps(acc)
        }

        /// IQ4_XS · Q8_K.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::x86_64) unsafe fn iq4_xs_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / XS_BYTES).min(a.len() / Q8_K_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let t = table($bias);
            let mut acc = _mm256_setzero_ps();
            for i in 0..nb {
                let (x, y) = (wp.add(i * XS_BYTES), ap.add(i * Q8_K_BYTES));
                let h = u16::from_le_bytes([*x.add(2), *x.add(3)]);
                let mut sumi = _mm256_setzero_si256();
                for s in 0..8 {
                    let ls = xs_sub_scale(h, *x.add(4 + s / 2), s) - 32;
                    let p = $sdot(t, nibbles(x.add(8 + 16 * s)), load(y.add(4 + 32 * s)));
                    sumi = _mm256_add_epi32(sumi, _mm256_mullo_epi32(p, _mm256_set1_epi32(ls)));
                }
                let d = f16x8(x);
                let dy = _mm256_set1_ps(f32::from_le_bytes([*y, *y.add(1), *y.add(2), *y.add(3)]));
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_mul_ps(d, dy), acc);
            }
            hsum_ps(acc)
        }
    };
}

pub(super) mod avx2 {
    use super::*;

    /// Levels looked up, then both sides widened to i16: exact for every byte.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn sdot(t: __m256i, idx: __m256i, q: __m256i) -> __m256i {
        let w = _mm256_shuffle_epi8(t, idx);
        let wide = |v: __m128i| _mm256_cvtepi8_epi16(v);
        let lo = _mm256_madd_epi16(wide(_mm256_castsi256_si128(w)), wide(_mm256_castsi256_si128(q)));
        let hi = _mm256_madd_epi16(wide(_mm256_extracti128_si256(w, 1)), wide(_mm256_extracti128_si256(q, 1)));
        _mm256_add_epi32(lo, hi)
    }

    iq4_kernels!("avx2,fma,f16c", sdot, 0);
}

pub(super) mod vnni {
    use super::*;
    use crate::cpu::arch::x86_64::quant::vnni::dot;

    /// `level + 128` looked up (unsigned), dotted, minus 128 · Σ activations.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn sdot(t: __m256i, idx: __m256i, q: __m256i) -> __m256i {
        let u = _mm256_shuffle_epi8(t, idx);
        _mm256_sub_epi32(dot(u, q), dot(_mm256_set1_epi8(-128), q))
    }

    iq4_kernels!("avx2,fma,f16c", sdot, -128);
}
