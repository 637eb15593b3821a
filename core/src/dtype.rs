//! Data types: one table ([`dtypes!`]) gives the enum, names, sizes and kinds;
//! promotion follows MLX's `promote_types` rules.

use crate::error::{Error, Result};

/// What family a dtype belongs to (MLX's `Dtype::Kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// Unsigned integers.
    Unsigned,
    /// Signed integers.
    Signed,
    /// Real floating point.
    Float,
    /// Complex floating point.
    Complex,
}

macro_rules! dtypes {
    ($( $variant:ident = $code:literal, $name:literal, $size:literal, $kind:ident; )*) => {
        /// An element type. The discriminants follow mlx-c's `mlx_dtype` enum so the C API can
        /// pass them through unchanged.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[repr(u8)]
        pub enum DType { $( #[doc = $name] $variant = $code, )* }

        impl DType {
            /// Every dtype, in mlx-c enum order.
            pub const ALL: &'static [DType] = &[$(DType::$variant),*];
            /// MLX's name (`"float32"`, `"bool"` …), as `repr(mx.float32)` shows it after `mlx.core.`.
            pub const fn name(self) -> &'static str { match self { $(DType::$variant => $name,)* } }
            /// Bytes per element.
            pub const fn size(self) -> usize { match self { $(DType::$variant => $size,)* } }
            /// The family.
            pub const fn kind(self) -> Kind { match self { $(DType::$variant => Kind::$kind,)* } }
            /// The mlx-c enum value.
            pub const fn code(self) -> u8 { self as u8 }
            /// Inverse of [`DType::code`]; `None` for values outside the enum.
            pub const fn from_code(code: u32) -> Option<DType> {
                match code { $($code => Some(DType::$variant),)* _ => None }
            }
            /// Inverse of [`DType::name`].
            pub fn from_name(name: &str) -> Option<DType> {
                match name { $($name => Some(DType::$variant),)* _ => None }
            }
        }
    };
}

dtypes! {
    Bool = 0, "bool", 1, Bool;
    Uint8 = 1, "uint8", 1, Unsigned;
    Uint16 = 2, "uint16", 2, Unsigned;
    Uint32 = 3, "uint32", 4, Unsigned;
    Uint64 = 4, "uint64", 8, Unsigned;
    Int8 = 5, "int8", 1, Signed;
    Int16 = 6, "int16", 2, Signed;
    Int32 = 7, "int32", 4, Signed;
    Int64 = 8, "int64", 8, Signed;
    Float16 = 9, "float16", 2, Float;
    Float32 = 10, "float32", 4, Float;
    Float64 = 11, "float64", 8, Float;
    Bfloat16 = 12, "bfloat16", 2, Float;
    Complex64 = 13, "complex64", 8, Complex;
}

impl core::fmt::Display for DType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl DType {
    /// Integer (signed or unsigned, not bool).
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Signed | Kind::Unsigned)
    }
    /// Real or complex floating point (MLX's `inexact`).
    pub const fn is_inexact(self) -> bool {
        matches!(self.kind(), Kind::Float | Kind::Complex)
    }
    /// Real floating point.
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), Kind::Float)
    }
    /// Complex.
    pub const fn is_complex(self) -> bool {
        matches!(self.kind(), Kind::Complex)
    }
    /// Signed integer of the given byte width.
    const fn signed_of(size: usize) -> DType {
        match size {
            1 => DType::Int8,
            2 => DType::Int16,
            4 => DType::Int32,
            _ => DType::Int64,
        }
    }
}

/// MLX's binary type promotion (`promote_types`): the dtype two operands are computed in.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    use Kind as K;
    if a == b {
        return a;
    }
    match (a.kind(), b.kind()) {
        (K::Complex, _) | (_, K::Complex) => Complex64,
        (K::Bool, _) => b,
        (_, K::Bool) => a,
        (K::Float, K::Float) => match (a, b) {
            (Float64, _) | (_, Float64) => Float64,
            (Float32, _) | (_, Float32) => Float32,
            // float16 with bfloat16: neither holds the other.
            _ => Float32,
        },
        (K::Float, _) => a,
        (_, K::Float) => b,
        (K::Unsigned, K::Unsigned) | (K::Signed, K::Signed) => {
            if a.size() >= b.size() { a } else { b }
        }
        (K::Unsigned, K::Signed) => promote_mixed_int(a, b),
        (K::Signed, K::Unsigned) => promote_mixed_int(b, a),
    }
}

/// Unsigned with signed: the smallest signed type holding both, and float32 for uint64.
fn promote_mixed_int(unsigned: DType, signed: DType) -> DType {
    if unsigned.size() < signed.size() {
        signed
    } else if unsigned == DType::Uint64 {
        DType::Float32
    } else {
        DType::signed_of(unsigned.size() * 2)
    }
}

/// The dtype of `op(a, b, …)` for several operands (MLX `result_type` over arrays).
pub fn result_type(dtypes: &[DType]) -> Result<DType> {
    let (first, rest) = dtypes
        .split_first()
        .ok_or_else(|| Error::invalid("result_type", "At least one array or dtype is required."))?;
    Ok(rest.iter().fold(*first, |acc, &d| promote_types(acc, d)))
}

/// MLX's dtype categories (`mx.floating`, `mx.integer` …), for `issubdtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// complex64
    ComplexFloating,
    /// float16, bfloat16, float32, float64
    Floating,
    /// floating or complex
    Inexact,
    /// int8..int64
    SignedInteger,
    /// uint8..uint64
    UnsignedInteger,
    /// signed or unsigned integers
    Integer,
    /// any numeric type (not bool)
    Number,
    /// everything
    Generic,
}

impl Category {
    /// Is `dtype` in this category?
    pub fn contains(self, dtype: DType) -> bool {
        match self {
            Category::ComplexFloating => dtype.is_complex(),
            Category::Floating => dtype.is_float(),
            Category::Inexact => dtype.is_inexact(),
            Category::SignedInteger => dtype.kind() == Kind::Signed,
            Category::UnsignedInteger => dtype.kind() == Kind::Unsigned,
            Category::Integer => dtype.is_integer(),
            Category::Number => dtype.kind() != Kind::Bool,
            Category::Generic => true,
        }
    }
    /// Is category `self` a sub-category of `other`?
    pub fn is_sub_of(self, other: Category) -> bool {
        use Category::*;
        self == other
            || other == Generic
            || matches!(
                (self, other),
                (ComplexFloating | Floating, Inexact)
                    | (SignedInteger | UnsignedInteger, Integer)
                    | (ComplexFloating | Floating | Inexact | SignedInteger | UnsignedInteger | Integer, Number)
            )
    }
}

/// Machine limits of a floating dtype (`mx.finfo`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FInfo {
    /// The dtype described (complex64 reports its float32 parts, as MLX does).
    pub dtype: DType,
    /// Smallest finite value.
    pub min: f64,
    /// Largest finite value.
    pub max: f64,
    /// Difference between 1.0 and the next representable value.
    pub eps: f64,
}

/// `mx.finfo(dtype)`: limits of a floating dtype; an error for integers and bool.
pub fn finfo(dtype: DType) -> Result<FInfo> {
    let (max, eps) = match dtype {
        DType::Float16 => (65504.0, 0.0009765625),
        DType::Bfloat16 => (3.3895313892515355e38, 0.0078125),
        DType::Float32 | DType::Complex64 => (f32::MAX as f64, f32::EPSILON as f64),
        DType::Float64 => (f64::MAX, f64::EPSILON),
        _ => {
            return Err(Error::invalid(
                "finfo",
                alloc::format!("finfo not supported for non-inexact type {dtype}."),
            ))
        }
    };
    let dtype = if dtype == DType::Complex64 { DType::Float32 } else { dtype };
    Ok(FInfo { dtype, min: -max, max, eps })
}

/// Limits of an integer dtype (`mx.iinfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IInfo {
    /// The dtype described.
    pub dtype: DType,
    /// Smallest value.
    pub min: i128,
    /// Largest value.
    pub max: i128,
}

/// `mx.iinfo(dtype)`: limits of an integer dtype; an error for floats, complex and bool.
pub fn iinfo(dtype: DType) -> Result<IInfo> {
    let bits = (dtype.size() * 8) as u32;
    let (min, max) = match dtype.kind() {
        Kind::Unsigned => (0i128, (1i128 << bits) - 1),
        Kind::Signed => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        _ => {
            return Err(Error::invalid(
                "iinfo",
                alloc::format!("iinfo not supported for non-integer type {dtype}."),
            ))
        }
    };
    Ok(IInfo { dtype, min, max })
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn table_is_consistent() {
        for (i, d) in DType::ALL.iter().enumerate() {
            assert_eq!(d.code() as usize, i);
            assert_eq!(DType::from_code(i as u32), Some(*d));
            assert_eq!(DType::from_name(d.name()), Some(*d));
        }
        assert_eq!(DType::from_code(14), None);
    }

    #[test]
    fn promotion_hand_cases() {
        // Hand-checked against real MLX 0.32 (`mx.promote_types`).
        assert_eq!(promote_types(Uint8, Int8), Int16);
        assert_eq!(promote_types(Uint32, Int32), Int64);
        assert_eq!(promote_types(Uint64, Int8), Float32);
        assert_eq!(promote_types(Int64, Float16), Float16);
        assert_eq!(promote_types(Float16, Bfloat16), Float32);
        assert_eq!(promote_types(Bool, Bfloat16), Bfloat16);
        assert_eq!(promote_types(Float64, Complex64), Complex64);
        assert_eq!(promote_types(Int16, Uint8), Int16);
    }

    #[test]
    fn limits() {
        assert_eq!(iinfo(Int8).unwrap().min, -128);
        assert_eq!(iinfo(Uint64).unwrap().max, u64::MAX as i128);
        assert!(iinfo(Float32).is_err());
        assert_eq!(finfo(Float16).unwrap().max, 65504.0);
        assert!(finfo(Int32).is_err());
    }
}
