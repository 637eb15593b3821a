//! AVX-512 VBMI + VNNI GEMV for the 16-nibble-byte formats (Q4_0, Q4_1, IQ4_NL): four weight
//! blocks per step, where [`super::gemv`] takes two.
//!
//! Why: that kernel is bound by instructions, not memory (docs/BENCHMARKS.md, "Why Q4_0
//! trails"): per pair of blocks two 16-byte loads, two inserts, a shift, a mask, one
//! `vpdpbusd`, one convert, one scale permute and one FMA. Here four blocks' 64 nibble bytes
//! come out of two overlapping 64-byte loads with one `vpermt2b` (VBMI), into one register
//! `[q₀, q₁, q₂, q₃]` (16 bytes each); its low and high nibbles go through two `vpdpbusd` into
//! ONE i32 accumulator whose lanes `4k..4k + 4` then hold block k's whole integer dot, so the
//! convert and the FMAs happen once per four blocks. The four blocks' f16 scales come out of
//! the first load with one `vpermb` (spread to their lanes) and one `vcvtph2ps`, which replaces
//! the pair kernel's per-group gather, permute and multiply: that took about as many
//! instructions as the rest (docs/BENCHMARKS.md, "q4v28": the nibble window alone gained
//! 0.97–1.39×, with the scales 1.34–1.92× at 2 threads).
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
use crate::quant::GgmlType;

use super::super::prepared::{self, holds_32, quant_gemv, Format, Kernel, Order, Second};
use super::super::{GemvActivations as Act, QuantGemv};

/// A nibble format and its two byte indices into the 64 bytes at a quad's first block
/// (table 0) and the 64 bytes ending with its fourth (table 1): `idx` gathers the four
/// blocks' nibble bytes (`vpermt2b`), `scales` their f16 `d` (bytes 0..32) and second f16
/// (Q4_1's min, bytes 32..64) spread to the 4 lanes of each block (`vpermb` of table 0).
#[derive(Clone, Copy)]
pub(crate) struct Quad {
    f: Format,
    idx: [u8; 64],
    scales: [u8; 64],
}

impl Quad {
    /// Only for nibble formats of at most 32 bytes a block whose nibbles end the block (Q4_0,
    /// Q4_1, IQ4_NL): four blocks then span 64..128 bytes, both loads stay inside them and
    /// every block's leading f16 pair lies in table 0.
    const fn new(f: Format) -> Quad {
        let second = 4 * f.wb - 64;
        let (mut idx, mut scales) = ([0u8; 64], [0u8; 64]);
        let mut k = 0;
        while k < 4 {
            let mut j = 0;
            while j < 16 {
                let off = k * f.wb + f.wq + j;
                idx[16 * k + j] = if off < 64 { off } else { 64 + off - second } as u8;
                j += 1;
            }
            // Lanes 4k..4k + 4 (two bytes each) of both halves.
            let mut l = 0;
            while l < 4 {
                let at = 8 * k + 2 * l;
                scales[at] = (k * f.wb) as u8;
                scales[at + 1] = (k * f.wb + 1) as u8;
                scales[32 + at] = (k * f.wb + 2) as u8;
                scales[32 + at + 1] = (k * f.wb + 3) as u8;
                l += 1;
            }
            k += 1;
        }
        Quad { f, idx, scales }
    }
}

/// `R` weight rows against `M` prepared activation rows (see [`Kernel::tile`]). Per quad of
/// blocks and weight row: two loads, one `vpermt2b` (nibbles), one `vpermb` + convert (scales),
/// two masks, a shift, two `vpdpbusd`, one convert and two FMAs: `acc += (dot·d_a + s_a)·d_w`
/// (Q4_0, IQ4_NL: `s_a` = the offset term, in the first lane of each block only) or
/// `acc += (dot·d_a)·d_w + m_w·s_a` (Q4_1). Rows of whole quads only (`nb % 4 == 0`, see the
/// [`Kernel`] impl).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,avx2,fma,f16c")]
unsafe fn tile<const M: usize, const R: usize>(k: Quad, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
    let f = k.f;
    let mut acc = [[_mm512_setzero_ps(); R]; M];
    let idx = _mm512_loadu_si512(k.idx.as_ptr() as *const _);
    let scale_idx = _mm512_loadu_si512(k.scales.as_ptr() as *const _);
    let low4 = _mm512_set1_epi8(0x0F);
    let table = _mm512_broadcast_i32x4(level_table());
    let spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    let min = f.second == Second::Min;
    let second_load = 4 * f.wb - 64;
    let quads = nb / 4;
    for qd in 0..quads {
        let b = 4 * qd;
        // Per activation row: the low- and high-nibble halves of the 4 blocks (two pairs
        // regrouped), `d_a` spread to each block's lanes, `s_a` in its first lane.
        let a = acts.map(|act| {
            let p = act.q.as_ptr().add(128 * qd);
            let (p0, p1) = (_mm512_loadu_si512(p as *const _), _mm512_loadu_si512(p.add(64) as *const _));
            let da = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(_mm_loadu_ps(act.d.as_ptr().add(b))));
            let sa = _mm512_maskz_permutexvar_ps(0x1111, spread, _mm512_castps128_ps512(_mm_loadu_ps(act.s.as_ptr().add(b))));
            (_mm512_shuffle_i64x2::<0x44>(p0, p1), _mm512_shuffle_i64x2::<0xEE>(p0, p1), da, sa)
        });
        for r in 0..R {
            let xb = x.add(r * wrb + b * f.wb);
            let t0 = _mm512_loadu_si512(xb as *const _);
            let raw = _mm512_permutex2var_epi8(t0, idx, _mm512_loadu_si512(xb.add(second_load) as *const _));
            let sw = _mm512_permutexvar_epi8(scale_idx, t0);
            let dw = _mm512_cvtph_ps(_mm512_castsi512_si256(sw));
            let mut lo = _mm512_and_si512(raw, low4);
            let mut hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
            if f.levels {
                lo = _mm512_shuffle_epi8(table, lo);
                hi = _mm512_shuffle_epi8(table, hi);
            }
            if min {
                let mw = _mm512_cvtph_ps(_mm512_extracti64x4_epi64::<1>(sw));
                for i in 0..M {
                    let (al, ah, da, sa) = a[i];
                    let dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, al), hi, ah));
                    acc[i][r] = _mm512_fmadd_ps(_mm512_mul_ps(dot, da), dw, _mm512_fmadd_ps(mw, sa, acc[i][r]));
                }
            } else {
                for i in 0..M {
                    let (al, ah, da, sa) = a[i];
                    let dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, al), hi, ah));
                    acc[i][r] = _mm512_fmadd_ps(_mm512_fmadd_ps(dot, da, sa), dw, acc[i][r]);
                }
            }
        }
    }
    let mut out = [[0f32; R]; M];
    for i in 0..M {
        for r in 0..R {
            out[i][r] = _mm512_reduce_add_ps(acc[i][r]);
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
    /// Rows whose blocks are not whole quads go to the pair kernel, whole rows of them: a
    /// scalar tail of 1–3 blocks cost more than the quads on short rows (the default model's
    /// 576-wide rows hold 18 blocks; its decode ran at 0.4× the pair kernel's speed on the
    /// device, docs/BENCHMARKS.md "Session 21: the quad GEMV on short rows"). Chosen per
    /// matrix, so every output of a product still goes through the same operations.
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        if nb % 4 == 0 {
            tile::<M, R>(self, x, wrb, nb, acts)
        } else {
            Kernel::tile::<M, R>(self.f, x, wrb, nb, acts)
        }
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
        use core::sync::atomic::AtomicU8;
        static PAIRS: AtomicU8 = AtomicU8::new(0);
        let pairs = crate::cpu::isa::probed_once(&PAIRS, || {
            std::env::var("MLX_ARM_Q4_GEMV").is_ok_and(|v| v.trim().eq_ignore_ascii_case("pairs"))
        });
        !pairs && crate::cpu::isa::has_avx512_vbmi()
    }
    #[cfg(not(feature = "std"))]
    {
        crate::cpu::isa::has_avx512_vbmi()
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
