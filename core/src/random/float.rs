//! The three real float dtypes the samplers produce, with MLX's arithmetic on them.
//!
//! MLX's CPU backend does float16 / bfloat16 arithmetic by widening both operands to f32,
//! operating, and rounding back to nearest-even. f32 carries at least `2p + 2` bits for both
//! formats, so that is also the correctly rounded result; this module does the same.

#![allow(clippy::excessive_precision)] // constants spelled as in MLX's source; they round to the same f32

use half::{bf16, f16};

/// A real float element type MLX samples into (`float32`, `float16`, `bfloat16`).
pub trait RandFloat: Copy + PartialOrd + core::fmt::Debug + 'static {
    /// The largest value below 1 (`nextafter(1, 0)` in this dtype), as f32.
    const BELOW_ONE: f32;
    /// Widens exactly to f32.
    fn to_f32(self) -> f32;
    /// Rounds an f32 to nearest-even in this dtype.
    fn from_f32(x: f32) -> Self;

    /// `a + b` rounded in this dtype.
    #[inline]
    fn add(self, b: Self) -> Self {
        Self::from_f32(self.to_f32() + b.to_f32())
    }
    /// `a - b` rounded in this dtype.
    #[inline]
    fn sub(self, b: Self) -> Self {
        Self::from_f32(self.to_f32() - b.to_f32())
    }
    /// `a * b` rounded in this dtype.
    #[inline]
    fn mul(self, b: Self) -> Self {
        Self::from_f32(self.to_f32() * b.to_f32())
    }
    /// `a / b` rounded in this dtype.
    #[inline]
    fn div(self, b: Self) -> Self {
        Self::from_f32(self.to_f32() / b.to_f32())
    }
    /// Negation (exact).
    #[inline]
    fn neg(self) -> Self {
        Self::from_f32(-self.to_f32())
    }
    /// MLX's `minimum`: a NaN first operand wins, else `a < b ? a : b`.
    #[inline]
    fn minimum(self, b: Self) -> Self {
        if self.to_f32().is_nan() || self < b {
            self
        } else {
            b
        }
    }
    /// MLX's `maximum`: a NaN first operand wins, else `a > b ? a : b`.
    #[inline]
    fn maximum(self, b: Self) -> Self {
        if self.to_f32().is_nan() || self > b {
            self
        } else {
            b
        }
    }
    /// `sqrt(2.0)` as MLX's `array(std::sqrt(2.0), dtype)` stores it.
    #[inline]
    fn sqrt2() -> Self {
        Self::from_f32(core::f64::consts::SQRT_2 as f32)
    }
}

impl RandFloat for f32 {
    const BELOW_ONE: f32 = f32::from_bits(0x3F7F_FFFF);
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        x
    }
}

impl RandFloat for f16 {
    const BELOW_ONE: f32 = 0.999_511_718_75; // f16 0x3BFF, exact in f32
    #[inline]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
}

impl RandFloat for bf16 {
    const BELOW_ONE: f32 = 0.996_093_75; // bf16 0x3F7F
    #[inline]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
}
