//! AVX-512 VBMI + VNNI GEMV for the 16-nibble-byte formats (Q4_0, Q4_1, IQ4_NL): four weight
//! blocks per step, where [`super::gemv`] takes two.
//!
//! Why: that kernel is bound by instructions, not memory (docs/BENCHMARKS.md, "Why Q4_0
//! trails"): per pair of blocks two 16-byte loads, two inserts, a shift, a mask, one
//! `vpdpbusd`, one convert, one scale permute and one FMA. Here four blocks' 64 nibble bytes
//! come out of two overlapping 64-byte loads with one `vpermt2b` (VBMI), into one register
//! `[q₀, q₁, q₂, q₃]` (16 bytes each); its low and high nibbles go through two `vpdpbusd` into
//! ONE i32 accumulator whose lanes `4k..4k + 4` then hold block k's whole integer dot, so the
//! convert, the scale permute and the FMA happen once per four blocks.
//!
//! The activation rows are the ones [`super::gemv`] prepares ([`Order::NibblePairs`]), so
//! the weight-panel GEMM that shares them (`gemm_panel.rs`, from 8 rows) is untouched: two
//! pairs `[a₀ˡ, a₁ˡ, a₀ʰ, a₁ʰ]`, `[a₂ˡ, a₃ˡ, a₂ʰ, a₃ʰ]` (16 bytes each: ˡ elements 0..16, ʰ
//! 16..32) become `[a₀ˡ, a₁ˡ, a₂ˡ, a₃ˡ]` and `[a₀ʰ, a₁ʰ, a₂ʰ, a₃ʰ]` with one `vshufi64x2` each,
//! once per activation row and shared by the tile's weight rows.
//!
//! Selected where the CPU has AVX-512 VBMI on top of [`super::gemv::avx512_vnni`];
//! `MLX_ARM_Q4_GEMV=pairs` (read once, with `std`) keeps the pair kernel, for A/B runs.
//! Integer dots are exact; the float order differs from the pair kernel's (both meet the dot
//! bound of docs/QUANT.md), and every output goes through the same operations whatever the
//! tile, row range or thread count.

use core::arch::x86_64::*;

use super::gemv::level_table;
use super::quant::hsum_ps;
use crate::quant::GgmlType;

use super::super::prepared::{self, holds_32, quant_gemv, Format, Kernel, Order, Second};
use super::super::{GemvActivations as Act, QuantGemv};

/// A nibble format and the `vpermt2b` index that gathers four blocks' nibble bytes from the
/// 64 bytes at the first block (table 0) and the 64 bytes ending with the fourth (table 1).
#[derive(Clone, Copy)]
pub(crate) struct Quad {
    f: Format,
    idx: [u8; 64],
}

impl Quad {
    /// Only for nibble formats of at most 32 bytes a block whose nibbles end the block (Q4_0,
    /// Q4_1, IQ4_NL): four blocks then span 64..128 bytes and both loads stay inside them.
    const fn new(f: Format) -> Quad {
        let second = 4 * f.wb - 64;
        let mut idx = [0u8; 64];
        let mut k = 0;
        while k < 4 {
            let mut j = 0;
            while j < 16 {
                let off = k * f.wb + f.wq + j;
                idx[16 * k + j] = if off < 64 { off } else { 64 + off - second } as u8;
                j += 1;
            }
            k += 1;
        }
        Quad { f, idx }
    }
}

/// Lane → scale-lane index for the quad `q` of a group of 8 (blocks 4q..4q + 4, whose
/// `d_w·d_a` sit in lanes 2·block of the group's scale register): 4 lanes per block.
#[target_feature(enable = "avx512f")]
unsafe fn quad_lanes(q: i32) -> __m512i {
    let b = |k: i32| 2 * (4 * q + k);
    _mm512_setr_epi32(b(0), b(0), b(0), b(0), b(1), b(1), b(1), b(1), b(2), b(2), b(2), b(2), b(3), b(3), b(3), b(3))
}

/// `R` weight rows against `M` prepared activation rows (see [`Kernel::tile`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,avx2,fma,f16c")]
unsafe fn tile<const M: usize, const R: usize>(k: Quad, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
    let f = k.f;
    let mut acc = [[_mm512_setzero_ps(); R]; M];
    let mut acc_tail = [[_mm256_setzero_ps(); R]; M];
    let idx = _mm512_loadu_si512(k.idx.as_ptr() as *const _);
    let low4 = _mm512_set1_epi8(0x0F);
    let table = _mm512_broadcast_i32x4(level_table());
    let quads = [quad_lanes(0), quad_lanes(1)];
    let interleave = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    let duplicate = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    let wb = f.wb as i32;
    let block_offsets = _mm256_setr_epi32(0, wb, 2 * wb, 3 * wb, 4 * wb, 5 * wb, 6 * wb, 7 * wb);
    let second_load = 4 * f.wb - 64;
    // Byte offset of the current step in every activation row's `q`.
    let mut qo = 0;
    let mut g = 0;
    while g < nb {
        let count = (nb - g).min(8);
        let present: __mmask8 = ((1u32 << count) - 1) as u8;
        // The group's scales as in `gemv.rs`: per weight row lane 2i = d (lane 2i + 1 = Q4_1's
        // min); per (activation, weight) row lane 2i = d_w·d_a, lane 2i + 1 the second term,
        // which goes straight into the odd lanes of the accumulator.
        let mut ws = [_mm512_setzero_ps(); R];
        for (r, v) in ws.iter_mut().enumerate() {
            let xg = x.add(r * wrb + g * f.wb);
            let words = _mm256_mmask_i32gather_epi32::<1>(_mm256_setzero_si256(), present, block_offsets, xg as *const i32);
            *v = match f.second {
                Second::Min => _mm512_cvtph_ps(words),
                _ => _mm512_permutexvar_ps(duplicate, _mm512_castps256_ps512(_mm256_cvtph_ps(_mm256_cvtepi32_epi16(words)))),
            };
        }
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
        for (q, lanes) in quads.iter().enumerate().take(count / 4) {
            // Two activation pairs regrouped into the low- and high-nibble halves of 4 blocks.
            let a = acts.map(|act| {
                let p = act.q.as_ptr().add(qo);
                let (p0, p1) = (_mm512_loadu_si512(p as *const _), _mm512_loadu_si512(p.add(64) as *const _));
                (_mm512_shuffle_i64x2::<0x44>(p0, p1), _mm512_shuffle_i64x2::<0xEE>(p0, p1))
            });
            for r in 0..R {
                let xb = x.add(r * wrb + (g + 4 * q) * f.wb);
                let raw = _mm512_permutex2var_epi8(
                    _mm512_loadu_si512(xb as *const _),
                    idx,
                    _mm512_loadu_si512(xb.add(second_load) as *const _),
                );
                let mut lo = _mm512_and_si512(raw, low4);
                let mut hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
                if f.levels {
                    lo = _mm512_shuffle_epi8(table, lo);
                    hi = _mm512_shuffle_epi8(table, hi);
                }
                for i in 0..M {
                    let dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, a[i].0), hi, a[i].1);
                    acc[i][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(*lanes, sc[i][r]), acc[i][r]);
                }
            }
            qo += 128;
        }
        let mut b = count / 4 * 4;
        if count - b >= 2 {
            // A last pair (the row's last group): `[lo₀, lo₁, hi₀, hi₁]` as `gemv.rs` takes it.
            let a = acts.map(|act| _mm512_loadu_si512(act.q.as_ptr().add(qo) as *const _));
            let (b0, b1) = (2 * b as i32, 2 * b as i32 + 2);
            let lanes = _mm512_setr_epi32(b0, b0, b0, b0, b1, b1, b1, b1, b0, b0, b0, b0, b1, b1, b1, b1);
            for r in 0..R {
                let xb = x.add(r * wrb + (g + b) * f.wb + f.wq);
                let raw = _mm256_inserti128_si256(
                    _mm256_castsi128_si256(_mm_loadu_si128(xb as *const __m128i)),
                    _mm_loadu_si128(xb.add(f.wb) as *const __m128i),
                    1,
                );
                let both = _mm512_inserti64x4(_mm512_castsi256_si512(raw), _mm256_srli_epi16(raw, 4), 1);
                let mut w = _mm512_and_si512(both, low4);
                if f.levels {
                    w = _mm512_shuffle_epi8(table, w);
                }
                for i in 0..M {
                    let dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w, a[i]);
                    acc[i][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(lanes, sc[i][r]), acc[i][r]);
                }
            }
            qo += 64;
            b += 2;
        }
        if count - b == 1 {
            // The row's last block, alone (natural order): 32 elements in a 256-bit register.
            let a = acts.map(|act| _mm256_loadu_si256(act.q.as_ptr().add(qo) as *const __m256i));
            let at_b = _mm512_set1_epi32(2 * b as i32);
            for r in 0..R {
                let t = _mm_loadu_si128(x.add(r * wrb + (g + b) * f.wb + f.wq) as *const __m128i);
                let mut w = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
                if f.levels {
                    w = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(level_table()), w);
                }
                for i in 0..M {
                    let dot = _mm256_dpbusd_epi32(_mm256_setzero_si256(), w, a[i]);
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

impl Kernel for Quad {
    fn block_bytes(self) -> usize {
        self.f.wb
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_32(act, nb)
    }
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        tile::<M, R>(self, x, wrb, nb, acts)
    }
}

const QUAD_Q4_0: Quad = Quad::new(prepared::Q4_0);
const QUAD_Q4_1: Quad = Quad::new(prepared::Q4_1);
const QUAD_IQ4_NL: Quad = Quad::new(prepared::IQ4_NL);
const GEMV_Q4_0: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::Q4_0, Order::NibblePairs, x), QUAD_Q4_0);
const GEMV_Q4_1: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::Q4_1, Order::NibblePairs, x), QUAD_Q4_1);
const GEMV_IQ4_NL: QuantGemv = quant_gemv!(|x| prepared::prepare(prepared::IQ4_NL, Order::NibblePairs, x), QUAD_IQ4_NL);

/// Whether the quad kernels run here: AVX-512 VBMI present and `MLX_ARM_Q4_GEMV=pairs` not
/// set (both read once). The caller has checked [`super::gemv::avx512_vnni`].
fn enabled() -> bool {
    #[cfg(feature = "std")]
    {
        extern crate std;
        use core::sync::atomic::{AtomicU8, Ordering};
        // 0 = unknown, 1 = no, 2 = yes.
        static ON: AtomicU8 = AtomicU8::new(0);
        match ON.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                let pairs = std::env::var("MLX_ARM_Q4_GEMV").is_ok_and(|v| v.trim().eq_ignore_ascii_case("pairs"));
                let yes = !pairs && std::is_x86_feature_detected!("avx512vbmi");
                ON.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
                yes
            }
        }
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(target_feature = "avx512vbmi")
    }
}

/// The quad GEMV of `ty` where [`enabled`]; None otherwise (the caller keeps `gemv.rs`'s).
/// Only call after [`super::gemv::avx512_vnni`] allowed AVX-512 VNNI at the level.
pub(super) fn gemv_for(ty: GgmlType) -> Option<QuantGemv> {
    if !enabled() {
        return None;
    }
    match ty {
        GgmlType::Q4_0 => Some(GEMV_Q4_0),
        GgmlType::Q4_1 => Some(GEMV_Q4_1),
        GgmlType::IQ4_NL => Some(GEMV_IQ4_NL),
        _ => None,
    }
}
