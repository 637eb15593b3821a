//! Q2_K and Q3_K weights in the AVX-512 VNNI matmul over prepared activations of
//! [`super::gemv`] (Q8_K rows in natural order, 16-element sums prepared once).
//!
//! Both formats scale 16 sub-blocks of 16 elements and share their 2-bit low quants
//! ([`Low2`]): one 512-bit register takes 64 consecutive elements, two runs of 32 made from the
//! same 32 quant bytes shifted by `2j` and `2j + 2` (one variable 16-bit shift and a mask).
//! Q3_K's high bit is one byte-mask test of its high-bit bytes and a masked add of 4. The
//! quants stay unsigned (0..3, 0..7) for `vpdpbusd`; what is not a product of quants goes
//! through the activation's 16-element sums once per super-block: Q2_K's mins
//! (`dmin·min_k·Σa_k`), Q3_K's offset of 4 (`4·d·scale_k·Σa_k`).

use core::arch::x86_64::*;

use super::super::prepared::{holds_q8k, prepare_q8k, q3k_scales, quant_gemv, Kernel, Low2};
use super::gemv::{Act, QuantGemv};

impl<const HIGH: bool> Low2<HIGH> {
    /// Per sub-block k, the scale of its integer dot (`d·scale_k`) and the factor of its
    /// activation sum that is subtracted (`d·4·scale_k` for Q3_K, `dmin·min_k` for Q2_K).
    #[target_feature(enable = "avx512f,avx512bw,avx2,f16c")]
    #[inline]
    unsafe fn scales(xb: *const u8) -> (__m512, __m512) {
        // Q2_K: `[d, dmin]`; Q3_K's `d` ends its block, so only its two bytes are read.
        let bits = if HIGH { (xb.add(Self::D) as *const u16).read_unaligned() as i32 } else { (xb.add(Self::D) as *const i32).read_unaligned() };
        let d2 = _mm_cvtph_ps(_mm_cvtsi32_si128(bits));
        let d = _mm512_broadcastss_ps(d2);
        if HIGH {
            let w = q3k_scales((xb.add(96) as *const [u8; 12]).read_unaligned());
            let bytes = _mm_setr_epi32(w[0] as i32, w[1] as i32, w[2] as i32, w[3] as i32);
            let sc = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), _mm512_set1_epi32(32))), d);
            (sc, _mm512_mul_ps(sc, _mm512_set1_ps(4.0)))
        } else {
            let raw = _mm_loadu_si128(xb as *const __m128i);
            let m4 = _mm_set1_epi8(0x0F);
            let to_f32 = |v: __m128i| _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v));
            let dmin = _mm512_broadcastss_ps(_mm_movehdup_ps(d2));
            (_mm512_mul_ps(to_f32(_mm_and_si128(raw, m4)), d), _mm512_mul_ps(to_f32(_mm_and_si128(_mm_srli_epi16(raw, 4), m4)), dmin))
        }
    }
}

impl<const HIGH: bool> Kernel for Low2<HIGH> {
    fn block_bytes(self) -> usize {
        Self::BYTES
    }
    fn holds(self, act: &Act, nb: usize) -> bool {
        holds_q8k(act, nb, 16)
    }
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")]
    unsafe fn tile<const M: usize, const R: usize>(self, x: *const u8, wrb: usize, nb: usize, acts: [&Act; M]) -> [[f32; R]; M] {
        let mut acc = [[_mm512_setzero_ps(); R]; M];
        let mut acc_off = [[_mm512_setzero_ps(); R]; M];
        // Register t (0..4) covers elements 64t..64t + 64: sub-blocks 4t..4t + 4, 4 lanes each;
        // its runs of 32 are j = 2·(t mod 2) and j + 1 of half h = t / 2.
        let lanes = [0, 1, 2, 3].map(|t: i32| {
            let k = 4 * t;
            _mm512_setr_epi32(k, k, k, k, k + 1, k + 1, k + 1, k + 1, k + 2, k + 2, k + 2, k + 2, k + 3, k + 3, k + 3, k + 3)
        });
        let shifts = [0, 1].map(|p: i16| _mm512_inserti64x4(_mm512_set1_epi16(4 * p), _mm256_set1_epi16(4 * p + 2), 1));
        let high_sel = [0, 1, 2, 3].map(|t: u32| {
            let bit = 4 * (t / 2) + 2 * (t % 2);
            _mm512_inserti64x4(_mm512_set1_epi8((1u8 << bit) as i8), _mm256_set1_epi8((1u8 << (bit + 1)) as i8), 1)
        });
        let (m3, four) = (_mm512_set1_epi8(0x03), _mm512_set1_epi8(4));
        let wb = Self::BYTES;
        for b in 0..nb {
            let mut sc = [_mm512_setzero_ps(); R];
            let mut off = [_mm512_setzero_ps(); R];
            for r in 0..R {
                (sc[r], off[r]) = Self::scales(x.add(r * wrb + b * wb));
            }
            let mut scale = [[_mm512_setzero_ps(); R]; M];
            for i in 0..M {
                let da = _mm512_set1_ps(*acts[i].d.as_ptr().add(b));
                let sums = _mm512_loadu_ps(acts[i].s.as_ptr().add(16 * b));
                for r in 0..R {
                    scale[i][r] = _mm512_mul_ps(sc[r], da);
                    acc_off[i][r] = _mm512_fmadd_ps(off[r], sums, acc_off[i][r]);
                }
            }
            let hm = core::array::from_fn::<_, R, _>(|r| {
                if HIGH {
                    let v = _mm256_loadu_si256(x.add(r * wrb + b * wb) as *const __m256i);
                    _mm512_inserti64x4(_mm512_castsi256_si512(v), v, 1)
                } else {
                    _mm512_setzero_si512()
                }
            });
            for h in 0..2 {
                let a = acts.map(|act| {
                    let p = act.q.as_ptr().add(b * 256 + 128 * h);
                    [_mm512_loadu_si512(p as *const _), _mm512_loadu_si512(p.add(64) as *const _)]
                });
                for r in 0..R {
                    let qs = _mm256_loadu_si256(x.add(r * wrb + b * wb + Self::QS + 32 * h) as *const __m256i);
                    let q2 = _mm512_inserti64x4(_mm512_castsi256_si512(qs), qs, 1);
                    for (p, shift) in shifts.iter().enumerate() {
                        let t = 2 * h + p;
                        let mut w = _mm512_and_si512(_mm512_srlv_epi16(q2, *shift), m3);
                        if HIGH {
                            w = _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(hm[r], high_sel[t]), w, four);
                        }
                        for i in 0..M {
                            let dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w, a[i][p]));
                            acc[i][r] = _mm512_fmadd_ps(dot, _mm512_permutexvar_ps(lanes[t], scale[i][r]), acc[i][r]);
                        }
                    }
                }
            }
        }
        let mut out = [[0f32; R]; M];
        for i in 0..M {
            for r in 0..R {
                out[i][r] = _mm512_reduce_add_ps(acc[i][r]) - _mm512_reduce_add_ps(acc_off[i][r]);
            }
        }
        out
    }
}

pub(super) const GEMV_Q2_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 16), Low2::<false>);

pub(super) const GEMV_Q3_K: QuantGemv = quant_gemv!(|x| prepare_q8k(x, 16), Low2::<true>);
