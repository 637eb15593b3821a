//! Element types: the Rust type behind each [`DType`], lossless-as-possible conversion between
//! them (`astype`), and dispatch macros that turn a runtime dtype into a generic kernel call.

use crate::dtype::DType;
use half::{bf16, f16};

/// complex64: two f32, real part first (MLX and numpy layout).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Complex64 {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

impl Complex64 {
    /// Builds `re + im·i`.
    pub const fn new(re: f32, im: f32) -> Self {
        Complex64 { re, im }
    }
}

/// A scalar of any dtype, wide enough to carry each without loss; the hub of `astype`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// bool
    Bool(bool),
    /// any unsigned integer
    U(u64),
    /// any signed integer
    I(i64),
    /// any real float (f16/bf16/f32 widen exactly into f64)
    F(f64),
    /// complex64
    C(f32, f32),
}

impl Value {
    /// The value as f64 (complex: real part; bool: 0/1).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Bool(b) => b as u8 as f64,
            Value::U(u) => u as f64,
            Value::I(i) => i as f64,
            Value::F(f) => f,
            Value::C(re, _) => re as f64,
        }
    }
    /// The natural dtype of a scalar of this kind (Python scalar rules: bool, int32, float32, complex64).
    pub fn default_dtype(self) -> DType {
        match self {
            Value::Bool(_) => DType::Bool,
            Value::U(_) | Value::I(_) => DType::Int32,
            Value::F(_) => DType::Float32,
            Value::C(..) => DType::Complex64,
        }
    }
}

/// A Rust type that stores elements of one [`DType`].
pub trait Element: Copy + Default + PartialEq + Send + Sync + core::fmt::Debug + 'static {
    /// The dtype this type stores.
    const DTYPE: DType;
    /// Widens to a [`Value`] exactly.
    fn to_value(self) -> Value;
    /// Converts with C++ `static_cast` semantics as MLX uses them (floats to ints truncate,
    /// saturating where C++ would be undefined; complex to real drops the imaginary part).
    fn from_value(v: Value) -> Self;
}

macro_rules! int_element {
    ($t:ty, $dt:ident, $variant:ident, $wide:ty) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            #[inline]
            fn to_value(self) -> Value {
                Value::$variant(self as $wide)
            }
            #[inline]
            fn from_value(v: Value) -> Self {
                match v {
                    Value::Bool(b) => b as $t,
                    Value::U(u) => u as $t,
                    Value::I(i) => i as $t,
                    Value::F(f) => f as $t,
                    Value::C(re, _) => re as $t,
                }
            }
        }
    };
}
int_element!(u8, Uint8, U, u64);
int_element!(u16, Uint16, U, u64);
int_element!(u32, Uint32, U, u64);
int_element!(u64, Uint64, U, u64);
int_element!(i8, Int8, I, i64);
int_element!(i16, Int16, I, i64);
int_element!(i32, Int32, I, i64);
int_element!(i64, Int64, I, i64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline]
    fn to_value(self) -> Value {
        Value::Bool(self)
    }
    #[inline]
    fn from_value(v: Value) -> Self {
        match v {
            Value::Bool(b) => b,
            Value::U(u) => u != 0,
            Value::I(i) => i != 0,
            Value::F(f) => f != 0.0,
            Value::C(re, im) => re != 0.0 || im != 0.0,
        }
    }
}

impl Element for f32 {
    const DTYPE: DType = DType::Float32;
    #[inline]
    fn to_value(self) -> Value {
        Value::F(self as f64)
    }
    #[inline]
    fn from_value(v: Value) -> Self {
        match v {
            Value::Bool(b) => b as u8 as f32,
            // Direct conversions: going through f64 would round twice.
            Value::U(u) => u as f32,
            Value::I(i) => i as f32,
            Value::F(f) => f as f32,
            Value::C(re, _) => re,
        }
    }
}

impl Element for f64 {
    const DTYPE: DType = DType::Float64;
    #[inline]
    fn to_value(self) -> Value {
        Value::F(self)
    }
    #[inline]
    fn from_value(v: Value) -> Self {
        v.as_f64()
    }
}

macro_rules! half_element {
    ($t:ty, $dt:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            #[inline]
            fn to_value(self) -> Value {
                Value::F(self.to_f64())
            }
            #[inline]
            fn from_value(v: Value) -> Self {
                match v {
                    Value::Bool(b) => <$t>::from_f32(b as u8 as f32),
                    // MLX converts integers through float32 first.
                    Value::U(u) => <$t>::from_f32(u as f32),
                    Value::I(i) => <$t>::from_f32(i as f32),
                    // f64 -> half rounds once (f32 inputs are exact in f64).
                    Value::F(f) => <$t>::from_f64(f),
                    Value::C(re, _) => <$t>::from_f32(re),
                }
            }
        }
    };
}
half_element!(f16, Float16);
half_element!(bf16, Bfloat16);

impl Element for Complex64 {
    const DTYPE: DType = DType::Complex64;
    #[inline]
    fn to_value(self) -> Value {
        Value::C(self.re, self.im)
    }
    #[inline]
    fn from_value(v: Value) -> Self {
        match v {
            Value::C(re, im) => Complex64 { re, im },
            other => Complex64 { re: f32::from_value(other), im: 0.0 },
        }
    }
}

/// Runs `$body` with `$T` bound to the element type of `$dtype` (every dtype).
#[macro_export]
macro_rules! dispatch_all {
    ($dtype:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Bool => { type $T = bool; $body }
            __D::Uint8 => { type $T = u8; $body }
            __D::Uint16 => { type $T = u16; $body }
            __D::Uint32 => { type $T = u32; $body }
            __D::Uint64 => { type $T = u64; $body }
            __D::Int8 => { type $T = i8; $body }
            __D::Int16 => { type $T = i16; $body }
            __D::Int32 => { type $T = i32; $body }
            __D::Int64 => { type $T = i64; $body }
            __D::Float16 => { type $T = half::f16; $body }
            __D::Float32 => { type $T = f32; $body }
            __D::Float64 => { type $T = f64; $body }
            __D::Bfloat16 => { type $T = half::bf16; $body }
            __D::Complex64 => { type $T = $crate::element::Complex64; $body }
        }
    }};
}

/// Runs `$body` with `$T` bound to a real (non-complex) element type; complex gives `$else`.
#[macro_export]
macro_rules! dispatch_real {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Bool => { type $T = bool; $body }
            __D::Uint8 => { type $T = u8; $body }
            __D::Uint16 => { type $T = u16; $body }
            __D::Uint32 => { type $T = u32; $body }
            __D::Uint64 => { type $T = u64; $body }
            __D::Int8 => { type $T = i8; $body }
            __D::Int16 => { type $T = i16; $body }
            __D::Int32 => { type $T = i32; $body }
            __D::Int64 => { type $T = i64; $body }
            __D::Float16 => { type $T = half::f16; $body }
            __D::Float32 => { type $T = f32; $body }
            __D::Float64 => { type $T = f64; $body }
            __D::Bfloat16 => { type $T = half::bf16; $body }
            __D::Complex64 => $other,
        }
    }};
}

/// Runs `$body` with `$T` bound to an integer element type (not bool); others give `$else`.
#[macro_export]
macro_rules! dispatch_int {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Uint8 => { type $T = u8; $body }
            __D::Uint16 => { type $T = u16; $body }
            __D::Uint32 => { type $T = u32; $body }
            __D::Uint64 => { type $T = u64; $body }
            __D::Int8 => { type $T = i8; $body }
            __D::Int16 => { type $T = i16; $body }
            __D::Int32 => { type $T = i32; $body }
            __D::Int64 => { type $T = i64; $body }
            _ => $other,
        }
    }};
}

/// Runs `$body` with `$T` bound to a real float element type (f16, bf16, f32, f64); others give `$else`.
#[macro_export]
macro_rules! dispatch_float {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Float16 => { type $T = half::f16; $body }
            __D::Float32 => { type $T = f32; $body }
            __D::Float64 => { type $T = f64; $body }
            __D::Bfloat16 => { type $T = half::bf16; $body }
            _ => $other,
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_follow_cpp_casts() {
        assert_eq!(i32::from_value(Value::F(-2.7)), -2);
        assert_eq!(u8::from_value(Value::I(300)), 44); // wraps like C++ integer casts
        assert!(bool::from_value(Value::F(0.5)));
        assert_eq!(f32::from_value(Value::I(16_777_217)), 16_777_216.0);
        assert_eq!(f16::from_value(Value::F(65520.0)), f16::INFINITY);
        assert_eq!(Complex64::from_value(Value::F(2.0)), Complex64::new(2.0, 0.0));
    }
}
