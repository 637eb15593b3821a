//! Elementwise ops of one input. The op list is one table ([`unary_ops!`]) that yields the
//! enum, the names and the public functions.

pub(crate) mod grad;
use crate::array::Array;
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::primitive::Primitive;

/// How an op maps the input dtype to the output dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryKind {
    /// Same dtype (abs, negative, floor …).
    Same,
    /// Floating result: integers and bool become float32 (exp, sin …).
    Float,
    /// Boolean result (isnan, logical_not …).
    Bool,
    /// Integer or bool input only, same dtype (bitwise_invert).
    Integer,
    /// Complex → float32 part, real → same (real, imag, abs of complex).
    RealPart,
}

macro_rules! unary_ops {
    ($( $variant:ident, $fname:ident, $name:literal, $kind:ident; )*) => {
        /// An elementwise op of one input.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum UnaryOp { $( #[doc = $name] $variant, )* }

        impl UnaryOp {
            /// Every unary op.
            pub const ALL: &'static [UnaryOp] = &[$(UnaryOp::$variant),*];
            /// MLX's name.
            pub fn name(&self) -> &'static str { match self { $(UnaryOp::$variant => $name,)* } }
            /// The dtype rule.
            pub fn kind(&self) -> UnaryKind { match self { $(UnaryOp::$variant => UnaryKind::$kind,)* } }
        }

        $(
            #[doc = concat!("`mx.", $name, "(a)`, elementwise.")]
            pub fn $fname(a: &Array) -> Result<Array> { unary(UnaryOp::$variant, a) }
        )*
    };
}

unary_ops! {
    Abs, abs, "abs", RealPart;
    Negative, negative, "negative", Same;
    Sign, sign, "sign", Same;
    Square, square, "square", Same;
    Floor, floor, "floor", Same;
    Ceil, ceil, "ceil", Same;
    Round, round, "round", Same;
    Trunc, trunc, "trunc", Same;
    Conjugate, conjugate, "conjugate", Same;
    Real, real, "real", RealPart;
    Imag, imag, "imag", RealPart;
    Sqrt, sqrt, "sqrt", Float;
    Rsqrt, rsqrt, "rsqrt", Float;
    Reciprocal, reciprocal, "reciprocal", Float;
    Exp, exp, "exp", Float;
    Expm1, expm1, "expm1", Float;
    Log, log, "log", Float;
    Log1p, log1p, "log1p", Float;
    Log2, log2, "log2", Float;
    Log10, log10, "log10", Float;
    Sin, sin, "sin", Float;
    Cos, cos, "cos", Float;
    Tan, tan, "tan", Float;
    Arcsin, arcsin, "arcsin", Float;
    Arccos, arccos, "arccos", Float;
    Arctan, arctan, "arctan", Float;
    Sinh, sinh, "sinh", Float;
    Cosh, cosh, "cosh", Float;
    Tanh, tanh, "tanh", Float;
    Arcsinh, arcsinh, "arcsinh", Float;
    Arccosh, arccosh, "arccosh", Float;
    Arctanh, arctanh, "arctanh", Float;
    Erf, erf, "erf", Float;
    Erfinv, erfinv, "erfinv", Float;
    Sigmoid, sigmoid, "sigmoid", Float;
    Degrees, degrees, "degrees", Float;
    Radians, radians, "radians", Float;
    IsNan, isnan, "isnan", Bool;
    IsInf, isinf, "isinf", Bool;
    IsPosInf, isposinf, "isposinf", Bool;
    IsNegInf, isneginf, "isneginf", Bool;
    IsFinite, isfinite, "isfinite", Bool;
    LogicalNot, logical_not, "logical_not", Bool;
    BitwiseInvert, bitwise_invert, "bitwise_invert", Integer;
}

/// Ops that MLX refuses on complex input (rather than computing something no library
/// defines, such as a componentwise floor or the real part's erf).
fn rejects_complex(op: UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Expm1 | UnaryOp::Sigmoid | UnaryOp::Erf | UnaryOp::Erfinv
    )
}

/// The output dtype of `op` on `dtype`, or the error MLX raises.
pub fn unary_dtype(op: UnaryOp, dtype: DType) -> Result<DType> {
    let name = op.name();
    match op.kind() {
        UnaryKind::Same => {
            if op == UnaryOp::Negative && dtype == DType::Bool {
                return Err(Error::invalid(name, "The negative of a boolean array is not supported."));
            }
            if dtype == DType::Complex64 && rejects_complex(op) {
                return Err(Error::invalid(name, "Not supported for complex64."));
            }
            Ok(dtype)
        }
        UnaryKind::Float => {
            if dtype == DType::Complex64 && rejects_complex(op) {
                return Err(Error::invalid(name, "Not supported for complex64."));
            }
            if dtype.is_inexact() {
                Ok(dtype)
            } else {
                Ok(DType::Float32)
            }
        }
        UnaryKind::Bool => Ok(DType::Bool),
        UnaryKind::Integer => match dtype.kind() {
            Kind::Signed | Kind::Unsigned | Kind::Bool => Ok(dtype),
            _ => Err(Error::invalid(name, "Bitwise operations are only allowed on integer types.")),
        },
        UnaryKind::RealPart => Ok(if dtype == DType::Complex64 { DType::Float32 } else { dtype }),
    }
}

/// Records `op(a)`.
pub fn unary(op: UnaryOp, a: &Array) -> Result<Array> {
    let out = unary_dtype(op, a.dtype())?;
    // Identity cases keep the graph small (MLX returns the input for these too).
    let identity = match op {
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc => !a.dtype().is_inexact(),
        UnaryOp::Conjugate | UnaryOp::Real => a.dtype() != DType::Complex64,
        _ => false,
    };
    if identity {
        return Ok(a.clone());
    }
    if op == UnaryOp::Imag && a.dtype() != DType::Complex64 {
        return crate::ops::zeros_like(a);
    }
    // Floating ops on integers compute in float32: cast first so kernels see one dtype.
    let a = if op.kind() == UnaryKind::Float && !a.dtype().is_inexact() {
        &crate::ops::astype(a, out)?
    } else {
        a
    };
    Ok(Array::from_op(Primitive::Unary(op), alloc::vec![a.clone()], a.shape().to_vec(), out))
}
