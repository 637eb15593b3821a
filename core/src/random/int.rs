//! Integer output dtypes for `randint`, with C's float-to-integer cast as x86-64 executes it.
//!
//! MLX casts `floor(uniform)` to the output dtype *before* clamping, so an out-of-range value
//! (e.g. `2^31` for int32, or any draw wider than an int8) goes through `static_cast`. x86-64
//! truncates with `cvttss2si`, which yields the "integer indefinite" value (`INT_MIN` of the
//! register width) when out of range; narrower types take the low bits of the 32-bit result,
//! uint32 the low bits of the 64-bit result. In-range values are plain truncation.

/// An integer (or bool) dtype `randint` can produce.
pub trait RandInt: Copy + Ord + core::fmt::Debug + 'static {
    /// `static_cast<Self>(x)` for an f32 `x`, as compiled for x86-64.
    fn from_f32(x: f32) -> Self;
    /// `static_cast<Self>(x)` for an int32 `x` (modular for narrower types).
    fn from_i32(x: i32) -> Self;
}

/// `cvttss2si` with a 32-bit destination.
fn cvt32(x: f32) -> i32 {
    if x.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        i32::MIN
    } else {
        x as i32
    }
}

/// `cvttss2si` with a 64-bit destination.
fn cvt64(x: f32) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

macro_rules! via32 {
    ($($t:ty),*) => {$(
        impl RandInt for $t {
            fn from_f32(x: f32) -> Self { cvt32(x) as $t }
            fn from_i32(x: i32) -> Self { x as $t }
        }
    )*};
}
via32!(i8, i16, i32, u8, u16);

impl RandInt for u32 {
    fn from_f32(x: f32) -> Self {
        cvt64(x) as u32
    }
    fn from_i32(x: i32) -> Self {
        x as u32
    }
}

impl RandInt for i64 {
    fn from_f32(x: f32) -> Self {
        cvt64(x)
    }
    fn from_i32(x: i32) -> Self {
        i64::from(x)
    }
}

impl RandInt for u64 {
    /// GCC's float-to-uint64 sequence: below 2^63 a signed convert, else convert `x - 2^63` and
    /// set the top bit.
    fn from_f32(x: f32) -> Self {
        const TWO63: f32 = 9_223_372_036_854_775_808.0;
        if x < TWO63 {
            cvt64(x) as u64
        } else {
            (cvt64(x - TWO63) as u64) ^ (1u64 << 63)
        }
    }
    fn from_i32(x: i32) -> Self {
        x as u64
    }
}

impl RandInt for bool {
    fn from_f32(x: f32) -> Self {
        x != 0.0
    }
    fn from_i32(x: i32) -> Self {
        x != 0
    }
}
