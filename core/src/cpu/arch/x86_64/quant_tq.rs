//! x86-64 dot kernels of the GGUF ternary formats (TQ1_0 · Q8_K, TQ2_0 · Q8_K) at the AVX2
//! and AVX-512 VNNI levels.
//!
//! Both decode 32 weights at a time to `t ∈ {−1, 0, 1}` (TQ2_0: the 2-bit code minus one; the
//! unused code 3 gives 2, as in the portable kernel) and multiply exactly: the activation's
//! sign moves onto `t` (`vpsignb`) and its magnitude is taken unsigned (`vpabsb`: −128 becomes
//! 128), then `vpmaddubsw` (pairs ≤ 2·128·2, eight of them summed in i16 ≤ 4096) or `vpdpbusd`.
//! The activation's `bsums` are not used (the portable kernel reads only the quants).
//!
//! TQ1_0's base-3 fraction bytes give trit `n` as `((q·3ⁿ mod 256)·3) >> 8`: `q·3ⁿ mod 256` by
//! repeated wrapping byte adds (`q·3 = q + q + q`), and `(q·3) >> 8` is `[q ≥ 86] + [q ≥ 171]`
//! (two unsigned compares), so `t = (q·3 >> 8) − 1 = ¬(m₁ + m₂)` with the compare masks −1/0.
//! Each block's integer sum is reduced to one i32 and scaled and accumulated in the portable
//! kernel's order, so the result equals the portable one bit for bit (an Inf scale gives ±Inf,
//! not the NaN of a zero lane times Inf).

use core::arch::x86_64::*;

use super::quant::{f16_at, f32_at, load};
use crate::cpu::isa::{self, Isa};
use crate::quant::GgmlType;

const TQ1_BYTES: usize = GgmlType::TQ1_0.block_bytes();
const TQ2_BYTES: usize = GgmlType::TQ2_0.block_bytes();
const Q8_K_BYTES: usize = GgmlType::Q8_K.block_bytes();

/// The sum of 8 i32 lanes (exact: a block's lanes total at most 256·128).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn hsum_epi32(v: __m256i) -> i32 {
    let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
    _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01)))
}

/// `q·3 mod 256` per byte.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn times3(q: __m256i) -> __m256i {
    _mm256_add_epi8(_mm256_add_epi8(q, q), q)
}

/// The trit minus one, −1/0/1, of each fraction byte `q` (already multiplied by 3ⁿ).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn trit(q: __m256i) -> __m256i {
    let ge86 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8(86)), q);
    let ge171 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8(171u8 as i8)), q);
    _mm256_xor_si256(_mm256_add_epi8(ge86, ge171), _mm256_set1_epi8(-1))
}

/// The kernels over one ISA's `dot(u, s) → i32 lanes` (Σ of 4 products u8·i8 per lane, exact)
/// and `acc(sum, u, s)`, the running integer sum of one block (i16 pairs for AVX2, i32 lanes
/// for VNNI) finished to i32 lanes by `fin`.
macro_rules! tq_kernels {
    ($feat:literal, $acc:path, $fin:path) => {
        /// `Σ t·y` of 32 trits `t` (−1/0/1) and the 32 activations at `y`, added to `s`.
        #[target_feature(enable = $feat)]
        #[inline]
        unsafe fn tdot(s: __m256i, t: __m256i, y: *const u8) -> __m256i {
            let q = load(y);
            $acc(s, _mm256_abs_epi8(q), _mm256_sign_epi8(t, q))
        }

        /// TQ2_0 · Q8_K.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::x86_64) unsafe fn tq2_0_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / TQ2_BYTES).min(a.len() / Q8_K_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let (three, one) = (_mm256_set1_epi8(3), _mm256_set1_epi8(1));
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (wp.add(i * TQ2_BYTES), ap.add(i * Q8_K_BYTES));
                let mut s = _mm256_setzero_si256();
                for half in 0..2 {
                    let q = load(x.add(32 * half));
                    // Bits 2l..2l+2 of byte m: element 128·half + 32·l + m.
                    let c = [q, _mm256_srli_epi16(q, 2), _mm256_srli_epi16(q, 4), _mm256_srli_epi16(q, 6)];
                    for (l, c) in c.into_iter().enumerate() {
                        let t = _mm256_sub_epi8(_mm256_and_si256(c, three), one);
                        s = tdot(s, t, y.add(4 + 128 * half + 32 * l));
                    }
                }
                sumf += hsum_epi32($fin(s)) as f32 * (f16_at(x.add(64)) * f32_at(y));
            }
            sumf
        }

        /// TQ1_0 · Q8_K.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::x86_64) unsafe fn tq1_0_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / TQ1_BYTES).min(a.len() / Q8_K_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (wp.add(i * TQ1_BYTES), ap.add(i * Q8_K_BYTES));
                let yq = y.add(4);
                let mut s = _mm256_setzero_si256();
                // Bytes 0..32, trit n: elements 32·n + m.
                let mut q = load(x);
                for n in 0..5 {
                    s = tdot(s, trit(q), yq.add(32 * n));
                    q = times3(q);
                }
                // Bytes 32..48, trit n: elements 160 + 16·n + m; trits n and n+1 share a
                // register (low and high lane), the last one pairs with qh below.
                let q16 = _mm_loadu_si128(x.add(32) as *const __m128i);
                let q1 = _mm_add_epi8(_mm_add_epi8(q16, q16), q16);
                let mut q = _mm256_set_m128i(q1, q16);
                for n in 0..2 {
                    s = tdot(s, trit(q), yq.add(160 + 32 * n));
                    q = times3(times3(q));
                }
                // qh: trit n of byte j is element 240 + 4·n + j: byte 4·n + j of the high lane
                // is qh[j]·3ⁿ. The low lane is bytes 32..48's trit 4 (elements 224..240).
                let h0 = _mm_set1_epi32((x.add(48) as *const i32).read_unaligned());
                let h1 = _mm_add_epi8(_mm_add_epi8(h0, h0), h0);
                let h2 = _mm_add_epi8(_mm_add_epi8(h1, h1), h1);
                let h3 = _mm_add_epi8(_mm_add_epi8(h2, h2), h2);
                let h = _mm_blend_epi32(_mm_blend_epi32(h0, h1, 0b0010), _mm_blend_epi32(h2, h3, 0b1000), 0b1100);
                let q = _mm256_set_m128i(h, _mm256_castsi256_si128(q));
                s = tdot(s, trit(q), yq.add(224));
                sumf += hsum_epi32($fin(s)) as f32 * (f16_at(x.add(52)) * f32_at(y));
            }
            sumf
        }
    };
}

pub(super) mod avx2 {
    use super::*;

    /// i16 pair sums: eight `vpmaddubsw` of |y| ≤ 128 and ±1 per block stay ≤ 2048.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn acc(s: __m256i, u: __m256i, t: __m256i) -> __m256i {
        _mm256_add_epi16(s, _mm256_maddubs_epi16(u, t))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn fin(s: __m256i) -> __m256i {
        _mm256_madd_epi16(s, _mm256_set1_epi16(1))
    }

    tq_kernels!("avx2,fma,f16c", acc, fin);
}

pub(super) mod vnni {
    use super::*;

    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn acc(s: __m256i, u: __m256i, t: __m256i) -> __m256i {
        _mm256_add_epi32(s, crate::cpu::arch::x86_64::quant::vnni::dot(u, t))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn fin(s: __m256i) -> __m256i {
        s
    }

    tq_kernels!("avx2,fma,f16c", acc, fin);
}

macro_rules! safe {
    ($name:ident, $inner:path) => {
        fn $name(w: &[u8], a: &[u8]) -> f32 {
            // SAFETY: handed out only by `dot_for`, which checks the CPU for the features
            // `$inner` is compiled for; it reads only the whole blocks both slices hold.
            unsafe { $inner(w, a) }
        }
    };
}
safe!(tq1_0_avx2, avx2::tq1_0_q8_k);
safe!(tq2_0_avx2, avx2::tq2_0_q8_k);
safe!(tq1_0_vnni, vnni::tq1_0_q8_k);
safe!(tq2_0_vnni, vnni::tq2_0_q8_k);

/// Whether `level` runs a ternary kernel on this CPU: None if not, else whether the VNNI one
/// (same level rules as `quant::dot_for`).
fn vnni_at(level: Isa) -> Option<bool> {
    if !level.allows(Isa::Avx2) || level == Isa::Portable || !Isa::Avx2.is_available() {
        return None;
    }
    Some(level.allows(Isa::Avx512) && Isa::Avx512.is_available() && isa::has_avx512_vnni())
}

/// The ternary dot kernel of `ty` for `level`, if the CPU runs it.
pub(crate) fn dot_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantDotFn> {
    match (ty, vnni_at(level)?) {
        (GgmlType::TQ1_0, false) => Some(tq1_0_avx2),
        (GgmlType::TQ2_0, false) => Some(tq2_0_avx2),
        (GgmlType::TQ1_0, true) => Some(tq1_0_vnni),
        (GgmlType::TQ2_0, true) => Some(tq2_0_vnni),
        _ => None,
    }
}

/// The ternary matmul of `ty` for `level` (the dot kernel per pair, the panel added by
/// `arch::quant_gemv`; see `arch/dot_gemv.rs`), if the CPU runs it.
pub(crate) fn gemv_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantGemv> {
    use crate::cpu::arch::dot_gemv::{dot_gemv, prepare_q8_k_raw as prep};
    match (ty, vnni_at(level)?) {
        (GgmlType::TQ1_0, false) => Some(dot_gemv!(prep, tq1_0_avx2)),
        (GgmlType::TQ2_0, false) => Some(dot_gemv!(prep, tq2_0_avx2)),
        (GgmlType::TQ1_0, true) => Some(dot_gemv!(prep, tq1_0_vnni)),
        (GgmlType::TQ2_0, true) => Some(dot_gemv!(prep, tq2_0_vnni)),
        _ => None,
    }
}
