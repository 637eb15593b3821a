//! x86-64 dot kernel of GGUF MXFP4 · Q8_0 at the AVX2 and AVX-512 VNNI levels.
//!
//! The 16 E2M1 codes decode to the doubled integers of [`KVALUES`] (−12..12), which fit one
//! 128-bit register: `vpshufb` turns 32 nibble indices into their signed levels in one
//! instruction. The product with the i8 activations is exact: the activation's sign is moved
//! onto the level (`vpsignb`, |level| ≤ 12 stays small) and its magnitude taken unsigned
//! (`vpabsb`, so −128 becomes 128, not −128), then `vpmaddubsw` (pairs ≤ 2·128·12, far from
//! i16 saturation) or `vpdpbusd`. The block's scale `f16(d_y) · 2^(e−128)` is one float
//! multiply as in the portable kernel; only the float summation order differs (docs/QUANT.md).

use core::arch::x86_64::*;

use super::quant::{f16x8, hsum_ps, load, nibbles};
use crate::cpu::isa::{self, Isa};
use crate::quant::ggml::mxfp4::KVALUES;
use crate::quant::ggml::util::E8M0_HALF_BITS;
use crate::quant::GgmlType;

/// Bytes of an MXFP4 block and of a Q8_0 block.
const W_BYTES: usize = GgmlType::MXFP4.block_bytes();
const A_BYTES: usize = GgmlType::Q8_0.block_bytes();

/// The kernel over one ISA's `dot(u, s) → i32 lanes` (Σ of 4 products u8·i8 per lane, exact).
macro_rules! mxfp4_kernel {
    ($feat:literal, $dot:path) => {
        /// One block's exact lane sums (as floats) and its scale, broadcast.
        #[target_feature(enable = $feat)]
        #[inline]
        unsafe fn block(t: __m256i, x: *const u8, y: *const u8) -> (__m256, __m256) {
            let q = load(y.add(2));
            let lv = _mm256_shuffle_epi8(t, nibbles(x.add(1)));
            let p = $dot(_mm256_abs_epi8(q), _mm256_sign_epi8(lv, q));
            let e = _mm256_castsi256_ps(_mm256_set1_epi32(E8M0_HALF_BITS[*x as usize] as i32));
            (_mm256_cvtepi32_ps(p), _mm256_mul_ps(f16x8(y), e))
        }

        /// MXFP4 · Q8_0. Two accumulators: consecutive blocks' FMAs do not wait on each other.
        #[target_feature(enable = $feat)]
        pub(in crate::cpu::arch::x86_64) unsafe fn mxfp4_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / W_BYTES).min(a.len() / A_BYTES);
            let (wp, ap) = (w.as_ptr(), a.as_ptr());
            let t = _mm256_broadcastsi128_si256(_mm_loadu_si128(KVALUES.as_ptr() as *const __m128i));
            let (mut acc0, mut acc1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            let mut i = 0;
            while i + 2 <= nb {
                let (p0, d0) = block(t, wp.add(i * W_BYTES), ap.add(i * A_BYTES));
                let (p1, d1) = block(t, wp.add((i + 1) * W_BYTES), ap.add((i + 1) * A_BYTES));
                acc0 = _mm256_fmadd_ps(p0, d0, acc0);
                acc1 = _mm256_fmadd_ps(p1, d1, acc1);
                i += 2;
            }
            if i < nb {
                let (p0, d0) = block(t, wp.add(i * W_BYTES), ap.add(i * A_BYTES));
                acc0 = _mm256_fmadd_ps(p0, d0, acc0);
            }
            hsum_ps(_mm256_add_ps(acc0, acc1))
        }
    };
}

pub(super) mod avx2 {
    use super::*;
    mxfp4_kernel!("avx2,fma,f16c", crate::cpu::arch::x86_64::quant::avx2::dot);
}

pub(super) mod vnni {
    use super::*;
    mxfp4_kernel!("avx2,fma,f16c", crate::cpu::arch::x86_64::quant::vnni::dot);
}

fn mxfp4_avx2(w: &[u8], a: &[u8]) -> f32 {
    // SAFETY: handed out only by `dot_for`, after checking AVX2/FMA/F16C; bounds are the
    // whole blocks both slices hold.
    unsafe { avx2::mxfp4_q8_0(w, a) }
}

fn mxfp4_vnni(w: &[u8], a: &[u8]) -> f32 {
    // SAFETY: handed out only by `dot_for`, after checking AVX-512 VNNI; as above.
    unsafe { vnni::mxfp4_q8_0(w, a) }
}

/// Whether `level` runs an MXFP4 kernel of this file on this CPU: None if not, else whether
/// the VNNI one (same level rules as `quant::dot_for`).
fn vnni_at(ty: GgmlType, level: Isa) -> Option<bool> {
    if ty != GgmlType::MXFP4 || !level.allows(Isa::Avx2) || level == Isa::Portable || !Isa::Avx2.is_available() {
        return None;
    }
    Some(level.allows(Isa::Avx512) && Isa::Avx512.is_available() && isa::has_avx512_vnni())
}

/// The MXFP4 dot kernel for `level`, if the CPU runs it.
pub(crate) fn dot_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantDotFn> {
    Some(if vnni_at(ty, level)? { mxfp4_vnni } else { mxfp4_avx2 })
}

/// The MXFP4 matmul for `level` (the dot kernel per pair, the panel added by `arch::quant_gemv`;
/// see `arch/dot_gemv.rs`), if the CPU runs it.
pub(crate) fn gemv_for(ty: GgmlType, level: Isa) -> Option<crate::cpu::arch::QuantGemv> {
    use crate::cpu::arch::dot_gemv::{dot_gemv, prepare_q8_0_raw};
    Some(if vnni_at(ty, level)? { dot_gemv!(prepare_q8_0_raw, mxfp4_vnni) } else { dot_gemv!(prepare_q8_0_raw, mxfp4_avx2) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn e8m0_table_is_the_portable_decoder() {
        for e in 0..=255u8 {
            let want = crate::quant::ggml::util::e8m0_to_f32_half(e);
            assert_eq!(f32::from_bits(crate::quant::ggml::util::E8M0_HALF_BITS[e as usize]).to_bits(), want.to_bits(), "e = {e}");
        }
    }
}
