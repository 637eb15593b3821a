//! mlx-c overloads that core spells differently, composed from core ops (as MLX composes them).

use mlx_arm_core::{ops, Array, DType, Result, Value};

/// `mlx.core.round(a, decimals)`: `round(a * 10^d) / 10^d` in a floating dtype, cast back.
pub fn round(a: &Array, decimals: i32) -> Result<Array> {
    if decimals == 0 {
        return ops::round(a);
    }
    let dtype = if a.dtype().is_inexact() { a.dtype() } else { DType::Float32 };
    // f64::powi needs std; libm's pow gives the same powers of ten without it.
    #[cfg(feature = "std")]
    let p = 10f64.powi(decimals);
    #[cfg(not(feature = "std"))]
    let p = libm::pow(10.0, decimals as f64);
    let scale = Array::from_value(Value::F(p), dtype)?;
    let x = ops::round(&ops::multiply(&ops::astype(a, dtype)?, &scale)?)?;
    ops::astype(&ops::divide(&x, &scale)?, a.dtype())
}

/// `mlx_full(shape, vals, dtype)`.
pub fn full(shape: &[usize], vals: &Array, dtype: DType) -> Result<Array> {
    ops::full_array(shape, vals, dtype)
}

/// `mlx_full_like(a, vals, dtype)`: as C++ `full_like`, `a` and `vals` broadcast together.
pub fn full_like(a: &Array, vals: &Array, dtype: DType) -> Result<Array> {
    let shape = mlx_arm_core::shape::broadcast_shapes(a.shape(), vals.shape(), "full_like")?;
    ops::full_array(&shape, vals, dtype)
}
