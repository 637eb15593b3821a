//! aarch64 NEON kernels of MLX's fp-mode quantized matmul (see `arch/mlx_fp.rs` for what each
//! does), 16 elements per step:
//! - E2M1: 8 bytes of nibbles split into low and high nibbles, `tbl` maps both onto the doubled
//!   levels (`KVALUES` in one register), `zip1`/`zip2` restore element order, `sxtl` twice and
//!   `scvtf` give four f32 vectors.
//! - E4M3: `sxtl` twice puts each code in a 32-bit lane with its sign copied upwards; shifted
//!   left by 20 and masked it is an f32 worth the E4M3 value times 2⁻¹²⁰ (subnormals included),
//!   one `fmul` by 2¹²⁰ (exact) gives the value, and `cmeq` + `orr` make the NaN code a NaN.
//!
//! Group sums and totals as in the x86-64 kernels. NEON is part of every aarch64 target, so
//! these need no feature check. (No dot-product instruction: the activations stay f32 —
//! MLX multiplies them unquantized — so `sdot` has no integer operand pair to take.)

use crate::cpu::arch::mlx_fp::{FpFormat, FpKernels, PORTABLE};
use crate::cpu::isa::Isa;
use crate::quant::ggml::mxfp4::KVALUES;
use core::arch::aarch64::*;

/// The kernels for `level`, if it has aarch64 ones (every NEON level).
pub(crate) fn kernels_for(level: Isa) -> Option<&'static FpKernels> {
    if level.allows(Isa::Neon) {
        return Some(&NEON);
    }
    None
}

static NEON: FpKernels = FpKernels { dot: dot_neon, decode: decode_neon, fused_e2m1: None };

/// See the x86-64 twin: sign and magnitude bits of a code shifted left by 20, the magnitude
/// alone (all set: NaN), and 2¹²⁰.
const E4M3_KEEP: u32 = 0x87F0_0000;
const E4M3_MAG: u32 = 0x07F0_0000;
const E4M3_REBIAS: f32 = f32::from_bits((127 + 120) << 23);

/// Four lanes of sign-extended E4M3 codes as f32 values.
#[inline(always)]
unsafe fn e4m3_4(c: int32x4_t) -> float32x4_t {
    let c = vreinterpretq_u32_s32(vshlq_n_s32::<20>(c));
    let v = vmulq_f32(vreinterpretq_f32_u32(vandq_u32(c, vdupq_n_u32(E4M3_KEEP))), vdupq_n_f32(E4M3_REBIAS));
    let nan = vceqq_u32(vandq_u32(c, vdupq_n_u32(E4M3_MAG)), vdupq_n_u32(E4M3_MAG));
    vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(v), nan))
}

/// Raw values of 16 elements (`F` bits each) from `p`, as four vectors in element order.
#[inline(always)]
unsafe fn step<const F: usize>(t: int8x16_t, p: *const u8) -> [float32x4_t; 4] {
    let (w0, w1) = if F == 4 {
        let b = vld1_u8(p);
        let (lo, hi) = (vand_u8(b, vdup_n_u8(15)), vshr_n_u8::<4>(b));
        let (l, h) = (vqtbl1_s8(t, lo), vqtbl1_s8(t, hi));
        (vmovl_s8(vzip1_s8(l, h)), vmovl_s8(vzip2_s8(l, h)))
    } else {
        let b = vld1q_s8(p as *const i8);
        (vmovl_s8(vget_low_s8(b)), vmovl_high_s8(b))
    };
    let q = [vmovl_s16(vget_low_s16(w0)), vmovl_high_s16(w0), vmovl_s16(vget_low_s16(w1)), vmovl_high_s16(w1)];
    if F == 4 {
        q.map(|v| vcvtq_f32_s32(v))
    } else {
        q.map(|v| e4m3_4(v))
    }
}

fn dot_neon(f: FpFormat, w: &[u8], gs: usize, sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]) {
    macro_rules! rows {
        ($fb:literal, $g:literal) => {
            match xs.len() {
                1 => dot_impl::<$fb, $g, 1>(w, sc, lut, xs, out),
                2 => dot_impl::<$fb, $g, 2>(w, sc, lut, xs, out),
                3 => dot_impl::<$fb, $g, 3>(w, sc, lut, xs, out),
                _ => dot_impl::<$fb, $g, 4>(w, sc, lut, xs, out),
            }
        };
    }
    match (f, gs) {
        (FpFormat::E2M1, 16) => rows!(4, 16),
        (FpFormat::E2M1, 32) => rows!(4, 32),
        (FpFormat::E4M3, 16) => rows!(8, 16),
        (FpFormat::E4M3, 32) => rows!(8, 32),
        _ => (PORTABLE.dot)(f, w, gs, sc, lut, xs, out),
    }
}

fn dot_impl<const F: usize, const G: usize, const R: usize>(w: &[u8], sc: &[u8], lut: &[f32; 256], xs: &[&[f32]], out: &mut [f32]) {
    assert!(xs.len() == R && out.len() == R && w.len() >= sc.len() * G * F / 8);
    let xp: [*const f32; R] = core::array::from_fn(|r| {
        assert!(xs[r].len() >= sc.len() * G);
        xs[r].as_ptr()
    });
    let wp = w.as_ptr();
    // SAFETY: NEON is baseline on aarch64; group g reads w[g·G·F/8 ..][..G·F/8] and
    // xs[r][g·G ..][..G] for g < sc.len(), in bounds by the asserts above.
    unsafe {
        let t = vld1q_s8(KVALUES.as_ptr());
        let group = |g: usize| -> [float32x4_t; R] {
            let mut a = [[vdupq_n_f32(0.0); R]; 2];
            for st in 0..G / 16 {
                let e = g * G + 16 * st;
                let v = step::<F>(t, wp.add(e * F / 8));
                for r in 0..R {
                    for (j, vj) in v.iter().enumerate() {
                        a[j & 1][r] = vfmaq_f32(a[j & 1][r], vld1q_f32(xp[r].add(e + 4 * j)), *vj);
                    }
                }
            }
            core::array::from_fn(|r| vaddq_f32(a[0][r], a[1][r]))
        };
        let (mut t0, mut t1) = ([vdupq_n_f32(0.0); R], [vdupq_n_f32(0.0); R]);
        let ng = sc.len();
        let mut g = 0;
        while g + 2 <= ng {
            let (p0, p1) = (group(g), group(g + 1));
            let (s0, s1) = (vdupq_n_f32(lut[sc[g] as usize]), vdupq_n_f32(lut[sc[g + 1] as usize]));
            for r in 0..R {
                t0[r] = vfmaq_f32(t0[r], s0, p0[r]);
                t1[r] = vfmaq_f32(t1[r], s1, p1[r]);
            }
            g += 2;
        }
        if g < ng {
            let p0 = group(g);
            let s0 = vdupq_n_f32(lut[sc[g] as usize]);
            for r in 0..R {
                t0[r] = vfmaq_f32(t0[r], s0, p0[r]);
            }
        }
        for r in 0..R {
            out[r] = vaddvq_f32(vaddq_f32(t0[r], t1[r]));
        }
    }
}

fn decode_neon(f: FpFormat, src: &[u8], dst: &mut [f32]) {
    let steps = dst.len() / 16;
    assert!(src.len() >= steps * 2 * f.bits());
    // SAFETY: NEON is baseline; step i reads src[i·2·bits ..][..2·bits] and writes
    // dst[16i..16i + 16], in bounds by the assert.
    unsafe {
        let t = vld1q_s8(KVALUES.as_ptr());
        let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
        for i in 0..steps {
            let v = match f {
                FpFormat::E2M1 => step::<4>(t, sp.add(i * 8)),
                FpFormat::E4M3 => step::<8>(t, sp.add(i * 16)),
            };
            for (j, vj) in v.iter().enumerate() {
                vst1q_f32(dp.add(16 * i + 4 * j), *vj);
            }
        }
    }
}
