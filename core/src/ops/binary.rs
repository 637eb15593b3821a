//! Elementwise ops of two broadcast inputs, plus `where`. The op list is one table.

pub(crate) mod grad;
use crate::array::Array;
use crate::dtype::{promote_types, DType, Kind};
use crate::error::{Error, Result};
use crate::ops::astype;
use crate::primitive::Primitive;
use crate::shape::broadcast_shapes;

/// How an op picks the dtype it computes in and the dtype it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryKind {
    /// Computes and returns the promoted dtype.
    Arith,
    /// Like `Arith`, but integers and bool become float32 (divide, arctan2, logaddexp).
    Float,
    /// Computes in the promoted dtype, returns bool.
    Compare,
    /// Computes and returns bool (inputs are converted to bool).
    Logical,
    /// Integer or bool operands only (bitwise and shifts).
    Bitwise,
}

macro_rules! binary_ops {
    ($( $variant:ident, $fname:ident, $name:literal, $kind:ident; )*) => {
        /// An elementwise op of two inputs.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum BinaryOp { $( #[doc = $name] $variant, )* }

        impl BinaryOp {
            /// Every binary op.
            pub const ALL: &'static [BinaryOp] = &[$(BinaryOp::$variant),*];
            /// MLX's name.
            pub fn name(&self) -> &'static str { match self { $(BinaryOp::$variant => $name,)* } }
            /// The dtype rule.
            pub fn kind(&self) -> BinaryKind { match self { $(BinaryOp::$variant => BinaryKind::$kind,)* } }
        }

        $(
            #[doc = concat!("`mx.", $name, "(a, b)`, elementwise with broadcasting.")]
            pub fn $fname(a: &Array, b: &Array) -> Result<Array> { binary(BinaryOp::$variant, a, b) }
        )*
    };
}

binary_ops! {
    Add, add, "add", Arith;
    Subtract, subtract, "subtract", Arith;
    Multiply, multiply, "multiply", Arith;
    Divide, divide, "divide", Float;
    FloorDivide, floor_divide, "floor_divide", Arith;
    Remainder, remainder, "remainder", Arith;
    Power, power, "power", Arith;
    Maximum, maximum, "maximum", Arith;
    Minimum, minimum, "minimum", Arith;
    Arctan2, arctan2, "arctan2", Float;
    LogAddExp, logaddexp, "logaddexp", Float;
    Equal, equal, "equal", Compare;
    NotEqual, not_equal, "not_equal", Compare;
    Less, less, "less", Compare;
    LessEqual, less_equal, "less_equal", Compare;
    Greater, greater, "greater", Compare;
    GreaterEqual, greater_equal, "greater_equal", Compare;
    LogicalAnd, logical_and, "logical_and", Logical;
    LogicalOr, logical_or, "logical_or", Logical;
    BitwiseAnd, bitwise_and, "bitwise_and", Bitwise;
    BitwiseOr, bitwise_or, "bitwise_or", Bitwise;
    BitwiseXor, bitwise_xor, "bitwise_xor", Bitwise;
    LeftShift, left_shift, "left_shift", Bitwise;
    RightShift, right_shift, "right_shift", Bitwise;
}

/// `(compute dtype, output dtype)` of `op` on operands of `a` and `b`.
pub fn binary_dtypes(op: BinaryOp, a: DType, b: DType) -> Result<(DType, DType)> {
    let t = promote_types(a, b);
    // MLX refuses these on complex operands (no library defines a complex remainder or arctan2).
    if t == DType::Complex64 {
        match op {
            BinaryOp::Remainder => return Err(Error::invalid(op.name(), "Complex type not supported.")),
            BinaryOp::Arctan2 => return Err(Error::invalid(op.name(), "Not supported for complex64.")),
            _ => {}
        }
    }
    Ok(match op.kind() {
        BinaryKind::Arith => (t, t),
        BinaryKind::Float => {
            let f = if t.is_inexact() { t } else { DType::Float32 };
            (f, f)
        }
        BinaryKind::Compare => (t, DType::Bool),
        BinaryKind::Logical => (DType::Bool, DType::Bool),
        BinaryKind::Bitwise => {
            if !matches!(t.kind(), Kind::Signed | Kind::Unsigned | Kind::Bool) {
                // A RuntimeError in MLX (std::runtime_error), unlike most argument errors.
                return Err(Error::runtime(
                    op.name(),
                    alloc::format!("Only allowed on integer or boolean types but got types {} and {}.", a.name(), b.name()),
                ));
            }
            // Shifts of bools compute in uint8, as MLX does.
            let t = if t == DType::Bool && matches!(op, BinaryOp::LeftShift | BinaryOp::RightShift) { DType::Uint8 } else { t };
            (t, t)
        }
    })
}

/// Records `op(a, b)` with numpy broadcasting and MLX type promotion.
pub fn binary(op: BinaryOp, a: &Array, b: &Array) -> Result<Array> {
    let (compute, out) = binary_dtypes(op, a.dtype(), b.dtype())?;
    let shape = broadcast_shapes(a.shape(), b.shape(), op.name())?;
    let a = crate::ops::shape::broadcast_operand(&astype(a, compute)?, &shape)?;
    let b = crate::ops::shape::broadcast_operand(&astype(b, compute)?, &shape)?;
    Ok(Array::from_op(Primitive::Binary(op), alloc::vec![a, b], shape, out))
}

/// `mx.where(condition, x, y)`: `x` where `condition` is true, else `y`, all broadcast.
pub fn where_(condition: &Array, x: &Array, y: &Array) -> Result<Array> {
    const OP: &str = "where";
    let dtype = promote_types(x.dtype(), y.dtype());
    let shape = broadcast_shapes(&broadcast_shapes(condition.shape(), x.shape(), OP)?, y.shape(), OP)?;
    let c = crate::ops::shape::broadcast_operand(&astype(condition, DType::Bool)?, &shape)?;
    let x = crate::ops::shape::broadcast_operand(&astype(x, dtype)?, &shape)?;
    let y = crate::ops::shape::broadcast_operand(&astype(y, dtype)?, &shape)?;
    Ok(Array::from_op(Primitive::Select, alloc::vec![c, x, y], shape, dtype))
}
