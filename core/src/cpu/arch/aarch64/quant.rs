//! aarch64 kernels for the GGUF dot products at two levels: NEON (`smull` + pairwise
//! accumulate) and dotprod (`sdot`, through inline asm so the crate's minimum Rust version is
//! kept). SVE machines run the dotprod kernels (SVE includes them; a vector-length-agnostic
//! version is future work).
//!
//! Both levels multiply signed bytes exactly (i8·i8 fits i16, sums go to i32), so the integer
//! part of every block equals the portable one; only the float accumulation order differs
//! (docs/QUANT.md). The activation quantizers stay portable on aarch64 for now.

use core::arch::aarch64::*;
use core::arch::asm;

use crate::cpu::isa::Isa;
use crate::quant::ggml::k_quants::scale_min_k4;
use crate::quant::GgmlType;

type DotFn = fn(&[u8], &[u8]) -> f32;
type QuantizeFn = fn(&[f32], &mut [u8]);
type GemmFn = super::super::QuantGemmFn;

#[inline]
fn f16_at(b: &[u8], at: usize) -> f32 {
    match b.get(at..at + 2) {
        Some(&[x, y]) => half::f16::from_bits(u16::from_le_bytes([x, y])).to_f32(),
        _ => 0.0,
    }
}

#[inline]
fn f32_at(b: &[u8], at: usize) -> f32 {
    match b.get(at..at + 4) {
        Some(&[p, q, r, s]) => f32::from_le_bytes([p, q, r, s]),
        _ => 0.0,
    }
}

#[inline]
fn i16_at(b: &[u8], at: usize) -> i32 {
    match b.get(at..at + 2) {
        Some(&[x, y]) => i16::from_le_bytes([x, y]) as i32,
        _ => 0,
    }
}

/// Byte j of entry b is 0x10 when bit j of b is set (the fifth bits of Q5_0/Q5_1).
const FIFTH: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if b & (1 << j) != 0 {
                t[b] |= 0x10u64 << (8 * j);
            }
            j += 1;
        }
        b += 1;
    }
    t
};

#[target_feature(enable = "neon")]
#[inline]
pub(super) unsafe fn fifth_bits(qh: u32) -> (uint8x16_t, uint8x16_t) {
    let byte = |k: u32| FIFTH[((qh >> (8 * k)) & 0xFF) as usize];
    (
        vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(byte(0)), vcreate_u64(byte(1)))),
        vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(byte(2)), vcreate_u64(byte(3)))),
    )
}

/// The f16 at `p` as f32.
#[inline]
unsafe fn f16_ptr(p: *const u8) -> f32 {
    half::f16::from_bits((p as *const u16).read_unaligned()).to_f32()
}

/// One register tile of a quantized GEMM: weight rows `w + j·wrb` (j < RN) times activation
/// rows `a + i·arb` (i < RM), `nb` blocks each, written to `out[i·ldo + j]`.
pub(super) struct Tile {
    w: *const u8,
    wrb: usize,
    a: *const u8,
    arb: usize,
    nb: usize,
    out: *mut f32,
    ldo: usize,
}

#[target_feature(enable = "neon")]
#[inline]
unsafe fn store_tile<const RM: usize, const RN: usize>(t: &Tile, acc: &[[float32x4_t; RN]; RM], extra: &[[f32; RN]; RM]) {
    for i in 0..RM {
        for j in 0..RN {
            *t.out.add(i * t.ldo + j) = vaddvq_f32(acc[i][j]) + extra[i][j];
        }
    }
}

/// A GEMM block in raw form for the tile drivers (built by the `safe_gemm!` wrappers, which
/// check every size first).
pub(super) struct Gemm {
    w: *const u8,
    nw: usize,
    wrb: usize,
    a: *const u8,
    nx: usize,
    arb: usize,
    out: *mut f32,
    ldo: usize,
}

/// Activation rows and weight rows per register tile (4 × 2: 8 q-register accumulators plus
/// the unpacked weights, well inside NEON's 32 registers).
const RM: usize = 4;
const RN: usize = 2;

/// For one tile kernel: the GEMM driver (register tiles of RM × RN, edge tiles through smaller
/// instances) and the GEMV dot (a 1×1 tile).
macro_rules! tiles {
    ($feat:literal, $tile:ident, $gemm:ident, $dot1:ident, $wb:expr, $ab:expr) => {
        /// # Safety
        /// `w` holds `nw` rows of `wrb` bytes, `a` `nx` rows of `arb` bytes;
        /// `out[i·ldo + j]` is writable for i < nx, j < nw.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $gemm(g: &super::Gemm) {
            let nb = (g.wrb / $wb).min(g.arb / $ab);
            let w_all = core::slice::from_raw_parts(g.w, g.nw * g.wrb);
            let mut j0 = 0;
            while j0 < g.nw {
                let rn = (g.nw - j0).min(RN);
                crate::cpu::arch::prefetch_rows_ahead(w_all, g.wrb, j0, RN);
                let mut i0 = 0;
                while i0 < g.nx {
                    let rm = (g.nx - i0).min(RM);
                    let t = Tile {
                        w: g.w.add(j0 * g.wrb),
                        wrb: g.wrb,
                        a: g.a.add(i0 * g.arb),
                        arb: g.arb,
                        nb,
                        out: g.out.add(i0 * g.ldo + j0),
                        ldo: g.ldo,
                    };
                    match (rm, rn) {
                        (4, 2) => $tile::<4, 2>(&t),
                        (4, _) => $tile::<4, 1>(&t),
                        (3, 2) => $tile::<3, 2>(&t),
                        (3, _) => $tile::<3, 1>(&t),
                        (2, 2) => $tile::<2, 2>(&t),
                        (2, _) => $tile::<2, 1>(&t),
                        (_, 2) => $tile::<1, 2>(&t),
                        _ => $tile::<1, 1>(&t),
                    }
                    i0 += rm;
                }
                j0 += rn;
            }
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $dot1(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / $wb).min(a.len() / $ab);
            let mut out = 0.0f32;
            let t = Tile { w: w.as_ptr(), wrb: 0, a: a.as_ptr(), arb: 0, nb, out: &mut out, ldo: 1 };
            $tile::<1, 1>(&t);
            out
        }
    };
}

/// The kernels, written once over `dot`. Bounds: `nb` whole blocks of both rows; every
/// pointer read stays inside them.
macro_rules! kernels {
    ($feat:literal, $dot:ident) => {
        /// Q4_0 · Q8_0 on an `RM × RN` tile: each weight block is unpacked once for `RM`
        /// activation rows, each activation block loaded once for `RN` weight rows. The 1×1
        /// tile is the GEMV dot, so every output is bit-identical whatever the tiling.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_0_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let m4 = vdupq_n_u8(0x0F);
            let eight = vdupq_n_s8(8);
            let mut acc = [[vdupq_n_f32(0.0); RN]; RM];
            for b in 0..t.nb {
                let mut lo = [vdupq_n_s8(0); RN];
                let mut hi = [vdupq_n_s8(0); RN];
                let mut dw = [0f32; RN];
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 18);
                    let q = vld1q_u8(x.add(2));
                    lo[j] = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, m4)), eight);
                    hi[j] = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
                    dw[j] = f16_ptr(x);
                }
                for i in 0..RM {
                    let y = t.a.add(i * t.arb + b * 34);
                    let (ya, yb) = (vld1q_s8(y.add(2) as *const i8), vld1q_s8(y.add(18) as *const i8));
                    let da = f16_ptr(y);
                    for j in 0..RN {
                        let s = $dot($dot(vdupq_n_s32(0), lo[j], ya), hi[j], yb);
                        acc[i][j] = vfmaq_n_f32(acc[i][j], vcvtq_f32_s32(s), dw[j] * da);
                    }
                }
            }
            store_tile(t, &acc, &[[0.0; RN]; RM]);
        }

        /// Q4_1 · Q8_1 tile (`m·s`, weight min × activation `d·Σq`, summed on the side).
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_1_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let m4 = vdupq_n_u8(0x0F);
            let mut acc = [[vdupq_n_f32(0.0); RN]; RM];
            let mut mins = [[0f32; RN]; RM];
            for b in 0..t.nb {
                let mut lo = [vdupq_n_s8(0); RN];
                let mut hi = [vdupq_n_s8(0); RN];
                let mut dw = [0f32; RN];
                let mut mw = [0f32; RN];
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 20);
                    let q = vld1q_u8(x.add(4));
                    lo[j] = vreinterpretq_s8_u8(vandq_u8(q, m4));
                    hi[j] = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
                    dw[j] = f16_ptr(x);
                    mw[j] = f16_ptr(x.add(2));
                }
                for i in 0..RM {
                    let y = t.a.add(i * t.arb + b * 36);
                    let (ya, yb) = (vld1q_s8(y.add(4) as *const i8), vld1q_s8(y.add(20) as *const i8));
                    let (da, sa) = (f16_ptr(y), f16_ptr(y.add(2)));
                    for j in 0..RN {
                        let s = $dot($dot(vdupq_n_s32(0), lo[j], ya), hi[j], yb);
                        acc[i][j] = vfmaq_n_f32(acc[i][j], vcvtq_f32_s32(s), dw[j] * da);
                        mins[i][j] += mw[j] * sa;
                    }
                }
            }
            store_tile(t, &acc, &mins);
        }

        /// Q8_0 · Q8_0 tile.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q8_0_tile<const RM: usize, const RN: usize>(t: &Tile) {
            let mut acc = [[vdupq_n_f32(0.0); RN]; RM];
            for b in 0..t.nb {
                let mut lo = [vdupq_n_s8(0); RN];
                let mut hi = [vdupq_n_s8(0); RN];
                let mut dw = [0f32; RN];
                for j in 0..RN {
                    let x = t.w.add(j * t.wrb + b * 34);
                    lo[j] = vld1q_s8(x.add(2) as *const i8);
                    hi[j] = vld1q_s8(x.add(18) as *const i8);
                    dw[j] = f16_ptr(x);
                }
                for i in 0..RM {
                    let y = t.a.add(i * t.arb + b * 34);
                    let (ya, yb) = (vld1q_s8(y.add(2) as *const i8), vld1q_s8(y.add(18) as *const i8));
                    let da = f16_ptr(y);
                    for j in 0..RN {
                        let s = $dot($dot(vdupq_n_s32(0), lo[j], ya), hi[j], yb);
                        acc[i][j] = vfmaq_n_f32(acc[i][j], vcvtq_f32_s32(s), dw[j] * da);
                    }
                }
            }
            store_tile(t, &acc, &[[0.0; RN]; RM]);
        }

        tiles!($feat, q4_0_tile, q4_0_gemm, q4_0_q8_0, 18, 34);
        tiles!($feat, q4_1_tile, q4_1_gemm, q4_1_q8_1, 20, 36);
        tiles!($feat, q8_0_tile, q8_0_gemm, q8_0_q8_0, 34, 34);

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q5_0_q8_0(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 22).min(a.len() / 34);
            let m4 = vdupq_n_u8(0x0F);
            let sixteen = vdupq_n_s8(16);
            let mut acc = vdupq_n_f32(0.0);
            for i in 0..nb {
                let (x, y) = (&w[i * 22..], &a[i * 34..]);
                let d = f16_at(x, 0) * f16_at(y, 0);
                let (h0, h1) = fifth_bits(u32::from_le_bytes([x[2], x[3], x[4], x[5]]));
                let q = vld1q_u8(x.as_ptr().add(6));
                let lo = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, m4), h0)), sixteen);
                let hi = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), h1)), sixteen);
                let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y.as_ptr().add(2) as *const i8));
                let s = $dot(s, hi, vld1q_s8(y.as_ptr().add(18) as *const i8));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), d);
            }
            vaddvq_f32(acc)
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q5_1_q8_1(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 24).min(a.len() / 36);
            let m4 = vdupq_n_u8(0x0F);
            let mut acc = vdupq_n_f32(0.0);
            let mut mins = 0.0f32;
            for i in 0..nb {
                let (x, y) = (&w[i * 24..], &a[i * 36..]);
                let d = f16_at(x, 0) * f16_at(y, 0);
                mins += f16_at(x, 2) * f16_at(y, 2);
                let (h0, h1) = fifth_bits(u32::from_le_bytes([x[4], x[5], x[6], x[7]]));
                let q = vld1q_u8(x.as_ptr().add(8));
                let lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, m4), h0));
                let hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), h1));
                let s = $dot(vdupq_n_s32(0), lo, vld1q_s8(y.as_ptr().add(4) as *const i8));
                let s = $dot(s, hi, vld1q_s8(y.as_ptr().add(20) as *const i8));
                acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), d);
            }
            vaddvq_f32(acc) + mins
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q4_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 144).min(a.len() / 292);
            let m4 = vdupq_n_u8(0x0F);
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (&w[i * 144..], &a[i * 292..]);
                let yd = f32_at(y, 0);
                let mut sc = [0u8; 12];
                sc.copy_from_slice(&x[4..16]);
                let mut isum = 0i32;
                let mut mins = 0i32;
                for h in 0..4 {
                    let q0 = vld1q_u8(x.as_ptr().add(16 + 32 * h));
                    let q1 = vld1q_u8(x.as_ptr().add(32 + 32 * h));
                    let ya = |o: usize| vld1q_s8(y.as_ptr().add(4 + 64 * h + o) as *const i8);
                    let lo = $dot(
                        $dot(vdupq_n_s32(0), vreinterpretq_s8_u8(vandq_u8(q0, m4)), ya(0)),
                        vreinterpretq_s8_u8(vandq_u8(q1, m4)),
                        ya(16),
                    );
                    let hi = $dot(
                        $dot(vdupq_n_s32(0), vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), ya(32)),
                        vreinterpretq_s8_u8(vshrq_n_u8(q1, 4)),
                        ya(48),
                    );
                    let (s0, m0) = scale_min_k4(2 * h, &sc);
                    let (s1, m1) = scale_min_k4(2 * h + 1, &sc);
                    isum += s0 as i32 * vaddvq_s32(lo) + s1 as i32 * vaddvq_s32(hi);
                    let bs = |j: usize| i16_at(y, 260 + 4 * j) + i16_at(y, 262 + 4 * j);
                    mins += m0 as i32 * bs(2 * h) + m1 as i32 * bs(2 * h + 1);
                }
                sumf += f16_at(x, 0) * yd * isum as f32 - f16_at(x, 2) * yd * mins as f32;
            }
            sumf
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn q6_k_q8_k(w: &[u8], a: &[u8]) -> f32 {
            let nb = (w.len() / 210).min(a.len() / 292);
            let m4 = vdupq_n_u8(0x0F);
            let m2 = vdupq_n_u8(0x03);
            let off = vdupq_n_s8(32);
            let mut sumf = 0.0f32;
            for i in 0..nb {
                let (x, y) = (&w[i * 210..], &a[i * 292..]);
                let d = f16_at(x, 208) * f32_at(y, 0);
                let mut isum = 0i32;
                for h in 0..2 {
                    for half in 0..2 {
                        // 16 columns l = 16·half.. of this 128-element half.
                        let c = 16 * half;
                        let qa = vld1q_u8(x.as_ptr().add(64 * h + c));
                        let qb = vld1q_u8(x.as_ptr().add(64 * h + 32 + c));
                        let qh = vld1q_u8(x.as_ptr().add(128 + 32 * h + c));
                        let parts = [
                            vorrq_u8(vandq_u8(qa, m4), vshlq_n_u8(vandq_u8(qh, m2), 4)),
                            vorrq_u8(vandq_u8(qb, m4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 2), m2), 4)),
                            vorrq_u8(vshrq_n_u8(qa, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 4), m2), 4)),
                            vorrq_u8(vshrq_n_u8(qb, 4), vshlq_n_u8(vshrq_n_u8(qh, 6), 4)),
                        ];
                        for (k, u) in parts.into_iter().enumerate() {
                            let v = vsubq_s8(vreinterpretq_s8_u8(u), off);
                            let yv = vld1q_s8(y.as_ptr().add(4 + 128 * h + 32 * k + c) as *const i8);
                            let s = vaddvq_s32($dot(vdupq_n_s32(0), v, yv));
                            let scale = x[192 + 8 * h + 2 * k + half] as i8 as i32;
                            isum += scale * s;
                        }
                    }
                }
                sumf += d * isum as f32;
            }
            sumf
        }
    };
}

pub(super) mod neon {
    use super::*;

    /// `acc + Σ of 4 adjacent x[i]·y[i]` per i32 lane, exact for all i8 values.
    #[target_feature(enable = "neon")]
    #[inline]
    pub(in crate::cpu::arch::aarch64) unsafe fn dot(acc: int32x4_t, x: int8x16_t, y: int8x16_t) -> int32x4_t {
        let lo = vmull_s8(vget_low_s8(x), vget_low_s8(y));
        let hi = vmull_high_s8(x, y);
        // Pairwise adds land the 16 products in 4 lanes (grouping differs from sdot, the
        // lane total is the same integer).
        vaddq_s32(acc, vpaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi)))
    }

    kernels!("neon", dot);
}

pub(super) mod dotprod {
    use super::*;

    /// `sdot`: `acc + Σ of 4 adjacent x[i]·y[i]` per i32 lane, exact.
    #[target_feature(enable = "neon,dotprod")]
    #[inline]
    pub(in crate::cpu::arch::aarch64) unsafe fn dot(mut acc: int32x4_t, x: int8x16_t, y: int8x16_t) -> int32x4_t {
        // SAFETY: reached only where the dot-product extension exists (checked by `dot_for`);
        // register-only instruction.
        asm!(
            "sdot {acc:v}.4s, {x:v}.16b, {y:v}.16b",
            acc = inout(vreg) acc,
            x = in(vreg) x,
            y = in(vreg) y,
            options(pure, nomem, nostack, preserves_flags),
        );
        acc
    }

    kernels!("neon,dotprod", dot);
}


macro_rules! safe {
    ($name:ident, $inner:path) => {
        fn $name(w: &[u8], a: &[u8]) -> f32 {
            // SAFETY: reachable only through `dot_for`, which hands this out only when the
            // CPU has the features `$inner` is compiled for; slices are indexed in bounds.
            unsafe { $inner(w, a) }
        }
    };
}
safe!(q4_0_neon, neon::q4_0_q8_0);
safe!(q4_1_neon, neon::q4_1_q8_1);
safe!(q5_0_neon, neon::q5_0_q8_0);
safe!(q5_1_neon, neon::q5_1_q8_1);
safe!(q8_0_neon, neon::q8_0_q8_0);
safe!(q4_k_neon, neon::q4_k_q8_k);
safe!(q6_k_neon, neon::q6_k_q8_k);
safe!(q4_0_sdot, dotprod::q4_0_q8_0);
safe!(q4_1_sdot, dotprod::q4_1_q8_1);
safe!(q5_0_sdot, dotprod::q5_0_q8_0);
safe!(q5_1_sdot, dotprod::q5_1_q8_1);
safe!(q8_0_sdot, dotprod::q8_0_q8_0);
safe!(q4_k_sdot, dotprod::q4_k_q8_k);
safe!(q6_k_sdot, dotprod::q6_k_q8_k);
safe!(iq4_nl_neon, super::quant_iq4::neon::iq4_nl_q8_0);
safe!(iq4_xs_neon, super::quant_iq4::neon::iq4_xs_q8_k);
safe!(iq4_nl_sdot, super::quant_iq4::dotprod::iq4_nl_q8_0);
safe!(iq4_xs_sdot, super::quant_iq4::dotprod::iq4_xs_q8_k);

macro_rules! safe_gemm {
    ($name:ident, $inner:path) => {
        fn $name(w: &[u8], nw: usize, a: &[u8], nx: usize, out: &mut [f32], ldo: usize) {
            let ok = nw > 0
                && nx > 0
                && w.len() % nw == 0
                && a.len() % nx == 0
                && ldo >= nw
                && (nx - 1).checked_mul(ldo).and_then(|v| v.checked_add(nw)).is_some_and(|need| out.len() >= need);
            debug_assert!(ok || nw == 0 || nx == 0, "quantized GEMM block sizes");
            if !ok {
                return;
            }
            let g = Gemm {
                w: w.as_ptr(),
                nw,
                wrb: w.len() / nw,
                a: a.as_ptr(),
                nx,
                arb: a.len() / nx,
                out: out.as_mut_ptr(),
                ldo,
            };
            // SAFETY: handed out only by `gemm_for`, which checks the CPU features; rows,
            // blocks and outputs lie within the slices checked above.
            unsafe { $inner(&g) }
        }
    };
}
safe_gemm!(q4_0_gemm_neon, neon::q4_0_gemm);
safe_gemm!(q4_1_gemm_neon, neon::q4_1_gemm);
safe_gemm!(q8_0_gemm_neon, neon::q8_0_gemm);
safe_gemm!(q4_0_gemm_sdot, dotprod::q4_0_gemm);
safe_gemm!(q4_1_gemm_sdot, dotprod::q4_1_gemm);
safe_gemm!(q8_0_gemm_sdot, dotprod::q8_0_gemm);

/// The register-tiled GEMM of weight type `ty` for `level`, if this file has one.
pub(crate) fn gemm_for(ty: GgmlType, level: Isa) -> Option<GemmFn> {
    use GgmlType as T;
    if level == Isa::Portable || !level.allows(Isa::Neon) || !Isa::Neon.is_available() {
        return None;
    }
    let sdot = level.allows(Isa::Dotprod) && Isa::Dotprod.is_available();
    Some(match (ty, sdot) {
        (T::Q4_0, false) => q4_0_gemm_neon,
        (T::Q4_1, false) => q4_1_gemm_neon,
        (T::Q8_0, false) => q8_0_gemm_neon,
        (T::Q4_0, true) => q4_0_gemm_sdot,
        (T::Q4_1, true) => q4_1_gemm_sdot,
        (T::Q8_0, true) => q8_0_gemm_sdot,
        _ => return None,
    })
}

/// The dot kernel of weight type `ty` for `level`, if this file has one and the CPU runs it.
pub(crate) fn dot_for(ty: GgmlType, level: Isa) -> Option<DotFn> {
    use GgmlType as T;
    if level == Isa::Portable || !level.allows(Isa::Neon) || !Isa::Neon.is_available() {
        return None;
    }
    let sdot = level.allows(Isa::Dotprod) && Isa::Dotprod.is_available();
    Some(match (ty, sdot) {
        (T::Q4_0, false) => q4_0_neon,
        (T::Q4_1, false) => q4_1_neon,
        (T::Q5_0, false) => q5_0_neon,
        (T::Q5_1, false) => q5_1_neon,
        (T::Q8_0, false) => q8_0_neon,
        (T::Q4_K, false) => q4_k_neon,
        (T::Q6_K, false) => q6_k_neon,
        (T::IQ4_NL, false) => iq4_nl_neon,
        (T::IQ4_XS, false) => iq4_xs_neon,
        (T::IQ4_NL, true) => iq4_nl_sdot,
        (T::IQ4_XS, true) => iq4_xs_sdot,
        (T::Q4_0, true) => q4_0_sdot,
        (T::Q4_1, true) => q4_1_sdot,
        (T::Q5_0, true) => q5_0_sdot,
        (T::Q5_1, true) => q5_1_sdot,
        (T::Q8_0, true) => q8_0_sdot,
        (T::Q4_K, true) => q4_k_sdot,
        (T::Q6_K, true) => q6_k_sdot,
        _ => return None,
    })
}

/// No aarch64 quantizers yet: the portable ones run.
pub(crate) fn quantize_for(_ty: GgmlType, _level: Isa) -> Option<QuantizeFn> {
    None
}
