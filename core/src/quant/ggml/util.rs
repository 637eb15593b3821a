//! Scalar helpers shared by every GGML block format: half-precision conversion, ggml's
//! rounding tricks and C's float→int conversion, each written so our bytes equal ggml's.
//!
//! ggml's reference quantizers are C code whose results depend on a few C details: the
//! `MIN`/`MAX` macros (which treat NaN asymmetrically), `nearest_int` (a bit trick, not
//! `roundf`), and float→small-int casts (x86 `cvttss2si` then truncation). Mirroring them
//! here keeps ordinary inputs bit-identical and keeps odd inputs (NaN, Inf) deterministic
//! and free of UB; Rust's saturating `as` alone would differ from ggml on those.

/// f16 little-endian bytes → f32 (exact).
#[inline]
pub(crate) fn f16_to_f32(b: [u8; 2]) -> f32 {
    half::f16::from_bits(u16::from_le_bytes(b)).to_f32()
}

/// f32 → f16 little-endian bytes, round-to-nearest-even like ggml's `GGML_FP32_TO_FP16`
/// (every NaN becomes the quiet NaN `0x7E00` with the input's sign, as in ggml).
#[inline]
pub(crate) fn f32_to_f16(x: f32) -> [u8; 2] {
    let bits = if x.is_nan() {
        (((x.to_bits() >> 16) & 0x8000) as u16) | 0x7E00
    } else {
        half::f16::from_f32(x).to_bits()
    };
    bits.to_le_bytes()
}

/// bf16 bits → f32 (exact).
#[inline]
pub(crate) fn bf16_to_f32(b: [u8; 2]) -> f32 {
    f32::from_bits((u16::from_le_bytes(b) as u32) << 16)
}

/// f32 → bf16 bits, round-to-nearest-even; NaN is forced quiet (ggml `GGML_FP32_TO_BF16`).
#[inline]
pub(crate) fn f32_to_bf16(x: f32) -> [u8; 2] {
    let u = x.to_bits();
    let bits = if (u & 0x7fff_ffff) > 0x7f80_0000 {
        ((u >> 16) | 64) as u16
    } else {
        (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
    };
    bits.to_le_bytes()
}

/// ggml's E8M0 scale decoded at half value (`GGML_E8M0_TO_FP32_HALF`): 2^(e-128).
#[inline]
pub(crate) const fn e8m0_to_f32_half(e: u8) -> f32 {
    if e < 2 {
        f32::from_bits(0x0020_0000u32 << e)
    } else {
        f32::from_bits(((e as u32) - 1) << 23)
    }
}

/// The bits of [`e8m0_to_f32_half`] for every E8M0 byte: a SIMD kernel loads a block's scale
/// instead of taking the branch on the subnormal exponents 0 and 1, which cost more than the
/// block's dot.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // the x86 MXFP4 kernel's
pub(crate) static E8M0_HALF_BITS: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut e = 0;
    while e < 256 {
        t[e] = e8m0_to_f32_half(e as u8).to_bits();
        e += 1;
    }
    t
};

/// ggml's `nearest_int`: adds 1.5·2^23 and reads the mantissa, i.e. round-half-even for
/// |x| ≤ 2^22. Outside that range (or for NaN) it returns the same garbage-but-defined
/// value as the C code, which is what ggml stores.
#[inline]
pub(crate) fn nearest_int(x: f32) -> i32 {
    let v = x + 12_582_912.0;
    ((v.to_bits() & 0x007f_ffff) as i32) - 0x0040_0000
}

/// C's float→int conversion as x86 performs it (`cvttss2si`): truncation toward zero,
/// and the "integer indefinite" `i32::MIN` for NaN or out-of-range values.
#[inline]
pub(crate) fn c_f32_to_i32(x: f32) -> i32 {
    if x.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        i32::MIN
    } else {
        x as i32
    }
}

/// C's `lroundf` as glibc does it on x86-64: half away from zero, `i64::MIN` for NaN or
/// out-of-range values.
#[inline]
pub(crate) fn c_lroundf(x: f32) -> i64 {
    if x.is_nan() || !(-9.223_372e18..9.223_372e18).contains(&x) {
        i64::MIN
    } else {
        libm::roundf(x) as i64
    }
}

/// ggml's `MAX(a, b)` macro: `a > b ? a : b` (returns `b` when either is NaN).
#[inline]
pub(crate) fn c_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `fabsf`.
#[inline]
pub(crate) fn fabsf(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0x7fff_ffff)
}

/// Reads a little-endian `u32` from 4 bytes.
#[inline]
pub(crate) fn le_u32(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_int_is_round_half_even_in_range() {
        assert_eq!(nearest_int(0.5), 0);
        assert_eq!(nearest_int(1.5), 2);
        assert_eq!(nearest_int(2.5), 2);
        assert_eq!(nearest_int(-1.5), -2);
        assert_eq!(nearest_int(-0.49), 0);
        assert_eq!(nearest_int(1000.7), 1001);
    }

    #[test]
    fn e8m0_half_is_power_of_two() {
        assert_eq!(e8m0_to_f32_half(128), 1.0);
        assert_eq!(e8m0_to_f32_half(127), 0.5);
        assert_eq!(e8m0_to_f32_half(0), libm::ldexpf(1.0, -128));
        assert_eq!(e8m0_to_f32_half(1), libm::ldexpf(1.0, -127));
        assert_eq!(e8m0_to_f32_half(255), libm::ldexpf(1.0, 127));
    }

    #[test]
    fn c_casts_match_x86() {
        assert_eq!(c_f32_to_i32(f32::NAN), i32::MIN);
        assert_eq!(c_f32_to_i32(-3.9), -3);
        assert_eq!(c_lroundf(2.5), 3);
        assert_eq!(c_lroundf(-2.5), -3);
        assert_eq!(c_lroundf(f32::INFINITY), i64::MIN);
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(f32_to_bf16(1.0), [0x80, 0x3f]);
        // 1 + 2^-8 is a tie between 1.0 and 1 + 2^-7: even mantissa (1.0) wins.
        assert_eq!(u16::from_le_bytes(f32_to_bf16(1.0 + 1.0 / 256.0)), 0x3f80);
        assert_eq!(u16::from_le_bytes(f32_to_bf16(f32::NAN)) & 0x7fc0, 0x7fc0);
    }
}
