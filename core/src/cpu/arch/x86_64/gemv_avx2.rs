//! AVX2 (+ FMA, F16C) matmul over prepared activations ([`super::super::prepared`]): the
//! kernels x86-64 CPUs without AVX-512 VNNI run (Zen 2, Skylake and older desktops; Skylake-X
//! at the AVX-512 level). Same driver, activation layouts and results (within the dot bound)
//! as the AVX-512 VNNI kernels of `gemv*.rs`, in 256-bit registers.
//!
//! Legacy formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0; this file): one block per register in the
//! activations' natural order. Per group of 8 blocks and weight row, the 8 f16 scales (and
//! Q4_1/Q5_1 mins) are converted with one `vcvtph2ps`, multiplied by the prepared activation
//! scales in one instruction per activation row and kept on the stack, so each block's dot
//! takes its scale with a broadcast load (no shuffle). The quants stay unsigned (`vpmaddubsw`
//! takes unsigned × signed bytes): Q4_0/Q5_0's offset and Q4_1/Q5_1's min go through the
//! activation's prepared per-block term, 8 blocks per FMA. IQ4_NL's indices are looked up
//! as the signed levels (`vpshufb`) and dotted as Q8_0's signed bytes are (|w| and the
//! activation with w's sign), so its prepared offset term (which removes the 128 of the
//! unsigned levels at AVX-512 VNNI) is not used here.
//!
//! K-quants (`gemv_avx2_k.rs`): the sub-block scales are small integers, so they multiply the
//! `vpmaddubsw` pair sums in `vpmaddwd` and a super-block's dot stays an exact i32 sum until
//! one convert and FMA by `d_w·d_a`.

use core::arch::x86_64::*;

use crate::cpu::isa::Isa;
use crate::quant::GgmlType;

use super::super::prepared::{self, holds_32, quant_gemv, Format, Kernel, Order, Second};
use super::super::{prefetch_distance, prefetch_lines_ahead, GemvActivations as Act, QuantGemv};
use super::quant::{avx2::dot, fifth_bits, hsum_ps, nibbles};

/// A legacy weight format known at compile time, so each format gets its own kernel with
/// the format's branches (nibbles or bytes, fifth bit, levels, second term) folded away: with
/// the format read at run time, the inner loop tested it per block and weight row and kept the
/// second-term accumulators on the stack.
trait Fmt: Copy {
    const F: Format;
}

macro_rules! fmt {
    ($name:ident, $f:path) => {
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy)]
        struct $name;
        impl Fmt for $name {
            const F: Format = $f;
        }
    };
}
fmt!(FQ4_0, prepared::Q4_0);
fmt!(FQ4_1, prepared::Q4_1);
fmt!(FQ5_0, prepared::Q5_0);
fmt!(FQ5_1, prepared::Q5_1);
fmt!(FQ8_0, prepared::Q8_0);
fmt!(FIQ4_NL, prepared::IQ4_NL);

/// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 or IQ4_NL weights.
#[derive(Clone, Copy)]
struct Legacy<L: Fmt>(core::marker::PhantomData<L>);

/// The f16 at `p` (bits).
#[inline]
unsafe fn f16_bits(p: *const u8) -> u64 {
    (p as *const u16).read_unaligned() as u64
}

/// The f16 at `p + k·stride` for k < count (zeros after) as 8 f32. Assembled in general
/// registers: a vector built from 8 narrow stores would stall on store forwarding. (The last,
/// partial group of a row; whole groups take [`scales8`].)
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn f16x8_strided(p: *const u8, stride: usize, count: usize) -> __m256 {
    let mut half = [0u64; 2];
    for k in 0..count {
        half[k / 4] |= f16_bits(p.add(k * stride)) << (16 * (k % 4));
    }
    _mm256_cvtph_ps(_mm_set_epi64x(half[1] as i64, half[0] as i64))
}

/// The first two f16 of 8 consecutive blocks at `p` (stride `wb` ≥ 4 bytes): every block's
/// scale `d`, and what follows it (Q4_1/Q5_1: the min; other formats: quant bytes, unused),
/// as 8 f32 each. One 32-bit load per block and a shuffle, permute and two converts for the
/// group, where assembling each f16 in general registers took ~4 instructions per value.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn scales8(p: *const u8, wb: usize) -> (__m256, __m256) {
    let w = |k: usize| (p.add(k * wb) as *const i32).read_unaligned();
    let v = _mm256_setr_epi32(w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7));
    // Per 128-bit lane (4 blocks): the low halves (d) to bytes 0..8, the high halves to 8..16;
    // then the 64-bit quarters to [d0..4, d4..8, m0..4, m4..8].
    let split = _mm256_setr_epi8(
        0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
    );
    let v = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, split), 0b11_01_10_00);
    (_mm256_cvtph_ps(_mm256_castsi256_si128(v)), _mm256_cvtph_ps(_mm256_extracti128_si256(v, 1)))
}

/// The 32 weight bytes of the block at `xb` as `vpmaddubsw` takes them: unsigned nibbles
/// (plus the fifth bit), or signed bytes: Q8_0's as they are, IQ4_NL's levels.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn weights(f: Format, xb: *const u8) -> __m256i {
    if !f.nibbles {
        return _mm256_loadu_si256(xb.add(f.wq) as *const __m256i);
    }
    let w = nibbles(xb.add(f.wq));
    if f.levels {
        let t = _mm_loadu_si128(crate::quant::ggml::iq4::KVALUES.as_ptr() as *const __m128i);
        return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(t), w);
    }
    if f.fifth { _mm256_or_si256(w, fifth_bits(f.fifth_bits(xb))) } else { w }
}

impl<L: Fmt> Kernel for Legacy<L> {
    /// Q8_0 only. With the prefetch spread through this loop, Q8_0's GEMV ran 1.06–1.45× as fast
    /// on the device's Xeon (median of 3 alternated rounds per shape, 1 and 2 threads; the
    /// lm_head 49152×576 1.41–1.45×), Q4_0's 0.79–1.02× and Q4_1's 0.86–1.26× (docs/BENCHMARKS.md,
    /// "gq26"): the nibble formats keep the driver's per-tile prefetch.
    const PREFETCHES: bool = !L::F.nibbles;
    fn block_bytes(self) -> usize {
        L::F.wb
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_32(act, nb)
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let f = L::F;
        // Signed weight bytes (Q8_0, IQ4_NL's levels); only the unsigned nibbles have a second term.
        let signed = !f.nibbles || f.levels;
        let second = f.second != Second::None && !f.levels;
        // The scaled block dots, and the second terms (offsets, mins; 8 blocks per FMA) in the
        // same accumulators: a separate one per output left too few registers for the 4 × 2
        // tile (m = 2..4 decode batches), which then kept them on the stack.
        let mut acc = [[_mm256_setzero_ps(); R]; M];
        // Block p of the group at g: every (activation, weight) row's exact dot, scaled.
        macro_rules! block {
            ($g:expr, $p:expr, $scale:expr) => {{
                let (g, p) = ($g, $p);
                let w: [__m256i; R] = core::array::from_fn(|r| weights(f, x.add(r * wrb + (g + p) * f.wb)));
                for i in 0..M {
                    let a = _mm256_loadu_si256(acts[i].q.as_ptr().add((g + p) * 32) as *const __m256i);
                    for r in 0..R {
                        // Signed: |w| (≤ 128) times a with w's sign, exact in `vpmaddubsw`
                        // (2·128·127 < 2¹⁵; the activations are never −128).
                        let d = if signed { dot(_mm256_abs_epi8(w[r]), _mm256_sign_epi8(a, w[r])) } else { dot(w[r], a) };
                        acc[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_broadcast_ss(&$scale[i][r][p]), acc[i][r]);
                    }
                }
            }};
        }
        // The lines of a group of 8 blocks.
        let (ahead, group_lines) = (prefetch_distance(R * wrb), (8 * f.wb).div_ceil(64));
        let mut g = 0;
        while g < nb {
            let count = (nb - g).min(8);
            let mut dw = [_mm256_setzero_ps(); R];
            let mut mw = [_mm256_setzero_ps(); R];
            for r in 0..R {
                let xg = x.add(r * wrb + g * f.wb);
                if M == 1 && Self::PREFETCHES {
                    prefetch_lines_ahead(xg, ahead, group_lines);
                }
                if count == 8 {
                    let (d, m) = scales8(xg, f.wb);
                    dw[r] = d;
                    mw[r] = if f.second == Second::Min { m } else { d };
                } else {
                    dw[r] = f16x8_strided(xg, f.wb, count);
                    mw[r] = if f.second == Second::Min { f16x8_strided(xg.add(2), f.wb, count) } else { dw[r] };
                }
            }
            // Per (activation, weight) row: d_w·d_a of the group's blocks (lanes past the
            // row's end are zero: the prepared arrays are padded to 8 blocks).
            let mut scale = [[[0f32; 8]; R]; M];
            for i in 0..M {
                let da = _mm256_loadu_ps(acts[i].d.as_ptr().add(g));
                let sa = _mm256_loadu_ps(acts[i].s.as_ptr().add(g));
                for r in 0..R {
                    _mm256_storeu_ps(scale[i][r].as_mut_ptr(), _mm256_mul_ps(dw[r], da));
                    if second {
                        acc[i][r] = _mm256_fmadd_ps(mw[r], sa, acc[i][r]);
                    }
                }
            }
            if count == 8 {
                // Unrolled: constant offsets, no loop counter per block.
                block!(g, 0, scale);
                block!(g, 1, scale);
                block!(g, 2, scale);
                block!(g, 3, scale);
                block!(g, 4, scale);
                block!(g, 5, scale);
                block!(g, 6, scale);
                block!(g, 7, scale);
            } else {
                for p in 0..count {
                    block!(g, p, scale);
                }
            }
            g += 8;
        }
        let mut out = [[0f32; R]; M];
        for i in 0..M {
            for r in 0..R {
                out[i][r] = hsum_ps(acc[i][r]);
            }
        }
        out
    }
}

macro_rules! legacy_gemv {
    ($f:ident, $t:ident) => {
        quant_gemv!(|x| prepared::prepare(prepared::$f, Order::Natural, x), Legacy::<$t>(core::marker::PhantomData))
    };
}

const Q4_0: QuantGemv = legacy_gemv!(Q4_0, FQ4_0);
const Q4_1: QuantGemv = legacy_gemv!(Q4_1, FQ4_1);
const Q5_0: QuantGemv = legacy_gemv!(Q5_0, FQ5_0);
const Q5_1: QuantGemv = legacy_gemv!(Q5_1, FQ5_1);
const Q8_0: QuantGemv = legacy_gemv!(Q8_0, FQ8_0);
const IQ4_NL: QuantGemv = legacy_gemv!(IQ4_NL, FIQ4_NL);

/// The AVX2 matmul over prepared activations of weight type `ty`, where `level` allows AVX2
/// and the CPU has it.
pub(crate) fn gemv_for(ty: GgmlType, level: Isa) -> Option<QuantGemv> {
    use super::gemv_avx2_k as k;
    if level == Isa::Portable || !level.allows(Isa::Avx2) || !Isa::Avx2.is_available() {
        return None;
    }
    Some(match ty {
        GgmlType::Q4_0 => Q4_0,
        GgmlType::Q4_1 => Q4_1,
        GgmlType::Q5_0 => Q5_0,
        GgmlType::Q5_1 => Q5_1,
        GgmlType::Q8_0 => Q8_0,
        GgmlType::IQ4_NL => IQ4_NL,
        GgmlType::IQ4_XS => k::IQ4_XS,
        GgmlType::Q2_K => k::Q2_K,
        GgmlType::Q3_K => k::Q3_K,
        GgmlType::Q4_K => k::Q4_K,
        GgmlType::Q5_K => k::Q5_K,
        GgmlType::Q6_K => super::gemv_avx2_q6k::Q6_K,
        _ => return None,
    })
}
