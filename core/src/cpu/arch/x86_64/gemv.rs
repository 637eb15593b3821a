//! AVX-512 VNNI GEMV for the GGUF formats a decode step streams (one activation row against
//! many weight rows): Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL weights, read in their file layout
//! (Q5_0/Q5_1: the fifth bits added to the nibble register with one masked byte add; IQ4_NL:
//! the nibbles turned into `level + 128` by one `vpshufb`, the 128 removed with Q4_0's offset
//! term).
//!
//! Why a kernel of its own beside the register-tiled GEMM: with one activation row the tiled
//! kernel spends ~20 instructions per weight block on work that is not the dot product —
//! unpacking 16 nibbles into a 256-bit register, converting the block's f16 scale (and min)
//! with a broadcast each, converting and scaling the activation block per weight row. Here:
//! - two weight blocks fill one 512-bit register (`vpdpbusd` on 64 bytes);
//! - the activation row is rearranged once per call into the byte order those registers
//!   take, with its block scales (and Q8_1 sums) as f32 arrays;
//! - the weight scales of 8 blocks are converted with one `vcvtph2ps`, multiplied by the
//!   activation scales in one instruction, and spread to the lanes of each block with one
//!   permute.
//!
//! The integer dot of each block is exact (as in the dot kernels); only the float
//! accumulation order differs from [`super::quant`]'s dot and GEMM kernels, so a GEMV result
//! equals the dot kernel's within the bound of docs/QUANT.md, not bit for bit.

use super::quant::hsum_ps;
use core::arch::x86_64::*;

use crate::quant::GgmlType;

use super::super::prepared::{self, holds_32, quant_gemv, Format, Kernel, Order, Second};
pub(super) use super::super::{GemvActivations as Act, QuantGemv};

/// Lane → scale-lane index for the pair `p` (blocks 2p, 2p+1 of a group of 8, whose scales
/// sit in lanes 4p and 4p + 2 of the group's scale register): nibble registers hold
/// `[lo₀, lo₁, hi₀, hi₁]` (4 lanes each), Q8_0 registers `[a₀, a₁]` (8 each).
#[target_feature(enable = "avx512f")]
unsafe fn lane_scales(p: usize, nibbles: bool) -> __m512i {
    let (b0, b1) = (4 * p as i32, 4 * p as i32 + 2);
    if nibbles {
        _mm512_setr_epi32(b0, b0, b0, b0, b1, b1, b1, b1, b0, b0, b0, b0, b1, b1, b1, b1)
    } else {
        _mm512_setr_epi32(b0, b0, b0, b0, b0, b0, b0, b0, b1, b1, b1, b1, b1, b1, b1, b1)
    }
}

/// The 64 unsigned weight bytes of blocks `b`, `b + 1` (at `x`) in register order.
#[target_feature(enable = "avx512f,avx512bw,avx2")]
#[inline]
unsafe fn weight_pair(f: Format, x: *const u8) -> __m512i {
    let (p0, p1) = (x.add(f.wq), x.add(f.wb + f.wq));
    if f.nibbles {
        let raw = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(p0 as *const __m128i)),
            _mm_loadu_si128(p1 as *const __m128i),
            1,
        );
        let both = _mm512_inserti64x4(_mm512_castsi256_si512(raw), _mm256_srli_epi16(raw, 4), 1);
        let w = _mm512_and_si512(both, _mm512_set1_epi8(0x0F));
        if f.levels {
            return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(level_table()), w);
        }
        if !f.fifth {
            return w;
        }
        // Q5_0/Q5_1: each half of a block's fifth bits goes to the lanes of its nibbles.
        let (h0, h1) = (f.fifth_bits(x) as u64, f.fifth_bits(x.add(f.wb)) as u64);
        let lanes = (h0 & 0xFFFF) | (h1 & 0xFFFF) << 16 | (h0 >> 16) << 32 | (h1 >> 16) << 48;
        _mm512_mask_add_epi8(w, lanes, w, _mm512_set1_epi8(16))
    } else {
        let lo = _mm256_loadu_si256(p0 as *const __m256i);
        _mm512_inserti64x4(_mm512_castsi256_si512(lo), _mm256_loadu_si256(p1 as *const __m256i), 1)
    }
}

/// IQ4_NL's 16 levels plus 128 (unsigned bytes 1..241), the `vpshufb` table of [`Format::levels`].
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn level_table() -> __m128i {
    let t = _mm_loadu_si128(crate::quant::ggml::iq4::KVALUES.as_ptr() as *const __m128i);
    _mm_xor_si128(t, _mm_set1_epi8(-128))
}

/// Σ of 4 adjacent products per i32 lane of weight bytes `w` (unsigned nibbles, or signed
/// Q8_0 bytes) and activation bytes `a` (signed, never −128: our quantizers clamp to ±127).
/// Q8_0 uses |w| and moves the sign onto `a`, which is exact for every weight byte.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn dot_pair(f: Format, w: __m512i, a: __m512i) -> __m512i {
    if f.nibbles {
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), w, a)
    } else {
        let neg = _mm512_movepi8_mask(w);
        let a = _mm512_mask_sub_epi8(a, neg, _mm512_setzero_si512(), a);
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(w), a)
    }
}

/// `R` weight rows (at `x`, `x + wrb`, …) against `M` prepared activation rows: each weight
/// pair is unpacked once for the `M` activation rows and each activation pair loaded once for
/// the `R` weight rows; the `M·R` accumulator chains overlap. `out[i][r]` = row r · act i.
/// Every output goes through the same operations in the same order whatever `M` and `R`, so
/// results do not depend on the tiling.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")]
unsafe fn tile<const M: usize, const R: usize>(f: Format, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
    let mut acc = [[_mm512_setzero_ps(); R]; M];
    let mut acc_tail = [[_mm256_setzero_ps(); R]; M];
    let lanes = [0, 1, 2, 3].map(|p| lane_scales(p, f.nibbles));
    let interleave = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    let duplicate = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    let wb = f.wb as i32;
    let block_offsets = _mm256_setr_epi32(0, wb, 2 * wb, 3 * wb, 4 * wb, 5 * wb, 6 * wb, 7 * wb);
    // Byte offset of the current pair in every activation row's `q`.
    let mut qo = 0;
    let mut g = 0;
    while g < nb {
        let count = (nb - g).min(8);
        let present: __mmask8 = ((1u32 << count) - 1) as u8;
        // Per weight row: the group's scales, lane 2i (and its second f16 in lane 2i + 1).
        let mut ws = [_mm512_setzero_ps(); R];
        for (r, v) in ws.iter_mut().enumerate() {
            let xg = x.add(r * wrb + g * f.wb);
            // One gather of the group's leading 32-bit words (`[d, m]` for Q4_1, `d` and
            // two quant bytes otherwise); lanes past the row's last block stay zero.
            let words = _mm256_mmask_i32gather_epi32::<1>(_mm256_setzero_si256(), present, block_offsets, xg as *const i32);
            *v = match f.second {
                Second::Min => _mm512_cvtph_ps(words),
                _ => _mm512_permutexvar_ps(duplicate, _mm512_castps256_ps512(_mm256_cvtph_ps(_mm256_cvtepi32_epi16(words)))),
            };
        }
        // Per (activation, weight) row: lane 2i = d_w·d_a of block i, lane 2i + 1 = its
        // second term, which goes straight into the odd lanes of the accumulator (all lanes
        // are summed at the end).
        let mut sc = [[_mm512_setzero_ps(); R]; M];
        for i in 0..M {
            let da = _mm512_castps256_ps512(_mm256_loadu_ps(acts[i].d.as_ptr().add(g)));
            let sa = _mm512_castps256_ps512(_mm256_loadu_ps(acts[i].s.as_ptr().add(g)));
            let ads = _mm512_permutex2var_ps(da, interleave, sa);
            for r in 0..R {
                sc[i][r] = _mm512_mul_ps(ws[r], ads);
                if f.second != Second::None {
                    acc[i][r] = _mm512_mask_add_ps(acc[i][r], 0xAAAA, acc[i][r], sc[i][r]);
                }
            }
        }
        for (p, lane) in lanes.iter().enumerate().take(count / 2) {
            let a = acts.map(|act| _mm512_loadu_si512(act.q.as_ptr().add(qo) as *const _));
            for r in 0..R {
                let w = weight_pair(f, x.add(r * wrb + (g + 2 * p) * f.wb));
                for i in 0..M {
                    let dot = _mm512_cvtepi32_ps(dot_pair(f, w, a[i]));
                    acc[i][r] = _mm512_fmadd_ps(dot, _mm512_permutexvar_ps(*lane, sc[i][r]), acc[i][r]);
                }
            }
            qo += 64;
        }
        if count % 2 == 1 {
            // The row's last block, alone: 32 elements in a 256-bit register.
            let b = count - 1;
            let a = acts.map(|act| _mm256_loadu_si256(act.q.as_ptr().add(qo) as *const __m256i));
            let at_b = _mm512_set1_epi32(2 * b as i32);
            for r in 0..R {
                let xb = x.add(r * wrb + (g + b) * f.wb + f.wq);
                for i in 0..M {
                    let dot = if f.nibbles {
                        let t = _mm_loadu_si128(xb as *const __m128i);
                        let mut w = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
                        if f.fifth {
                            w = _mm256_mask_add_epi8(w, f.fifth_bits(xb.sub(f.wq)), w, _mm256_set1_epi8(16));
                        }
                        if f.levels {
                            w = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(level_table()), w);
                        }
                        _mm256_dpbusd_epi32(_mm256_setzero_si256(), w, a[i])
                    } else {
                        let w = _mm256_loadu_si256(xb as *const __m256i);
                        _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(w), _mm256_sign_epi8(a[i], w))
                    };
                    let scale = _mm512_castps512_ps256(_mm512_permutexvar_ps(at_b, sc[i][r]));
                    acc_tail[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc_tail[i][r]);
                }
            }
            qo += 32;
        }
        g += 8;
    }
    let mut out = [[0f32; R]; M];
    for i in 0..M {
        for r in 0..R {
            out[i][r] = _mm512_reduce_add_ps(acc[i][r]) + hsum_ps(acc_tail[i][r]);
        }
    }
    out
}

impl Kernel for Format {
    fn block_bytes(self) -> usize {
        self.wb
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_32(act, nb)
    }
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        tile::<M, R>(self, x, wrb, nb, acts)
    }
}

const GEMV_Q4_0: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::Q4_0, Order::NibblePairs, x), prepared::Q4_0);
const GEMV_Q4_1: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::Q4_1, Order::NibblePairs, x), prepared::Q4_1);
const GEMV_Q8_0: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::Q8_0, Order::NibblePairs, x), prepared::Q8_0);
const GEMV_Q5_0: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::Q5_0, Order::NibblePairs, x), prepared::Q5_0);
const GEMV_Q5_1: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::Q5_1, Order::NibblePairs, x), prepared::Q5_1);
const GEMV_IQ4_NL: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::IQ4_NL, Order::NibblePairs, x), prepared::IQ4_NL);

/// Whether the CPU has AVX-512 F/BW/VL and VNNI and `level` allows AVX-512 (the kernels of
/// this file and of `gemm_panel.rs`).
pub(crate) fn avx512_vnni(level: crate::cpu::isa::Isa) -> bool {
    use crate::cpu::isa::{self, Isa};
    level.allows(Isa::Avx512) && level != Isa::Portable && Isa::Avx512.is_available() && isa::has_avx512_vnni()
}

/// The GEMV of weight type `ty` when [`avx512_vnni`] allows it; else the AVX2 one
/// ([`super::gemv_avx2`]) where `level` allows AVX2.
pub(crate) fn gemv_for(ty: GgmlType, level: crate::cpu::isa::Isa) -> Option<QuantGemv> {
    if !avx512_vnni(level) {
        return super::gemv_avx2::gemv_for(ty, level);
    }
    // Q4_0, Q4_1, IQ4_NL four blocks a step where the CPU has AVX-512 VBMI (gemv_quad.rs).
    if let Some(g) = super::gemv_quad::gemv_for(ty) {
        return Some(g);
    }
    match ty {
        GgmlType::Q4_0 => Some(GEMV_Q4_0),
        GgmlType::Q4_1 => Some(GEMV_Q4_1),
        GgmlType::Q8_0 => Some(GEMV_Q8_0),
        GgmlType::Q5_0 => Some(GEMV_Q5_0),
        GgmlType::Q5_1 => Some(GEMV_Q5_1),
        GgmlType::IQ4_NL => Some(GEMV_IQ4_NL),
        GgmlType::IQ4_XS => Some(super::gemv_k::GEMV_IQ4_XS),
        GgmlType::Q2_K => Some(super::gemv_k23::GEMV_Q2_K),
        GgmlType::Q3_K => Some(super::gemv_k23::GEMV_Q3_K),
        GgmlType::Q4_K => Some(super::gemv_k::GEMV_Q4_K),
        GgmlType::Q5_K => Some(super::gemv_k::GEMV_Q5_K),
        GgmlType::Q6_K => Some(super::gemv_k::GEMV_Q6_K),
        _ => None,
    }
}
