//! MLX's quantization modes (`mx.quantize` / `mx.dequantize` / `mx.quantized_matmul`,
//! `mx.to_fp8` / `mx.from_fp8`) as slice-in/slice-out kernels, bit-identical with MLX 0.32.4.
//!
//! Modes: `affine` (bits 1–6, 8; groups 32/64/128; scales and biases in the weight dtype),
//! `mxfp4` / `mxfp8` (E8M0 power-of-two scales, group 32) and `nvfp4` (E4M3 scales, group 16,
//! optional f32 global scale). Rows of `K` weights are quantized along `K`; the packed words
//! form a little-endian, LSB-first bit stream per row ([`pack`]).
//!
//! The array layer wraps these: it checks dtypes/shapes with [`validate_quantize`] and
//! friends (which return MLX's exact error messages), then calls the kernels on contiguous
//! buffers. See `docs/QUANT.md`, section "MLX quantization modes".

pub mod affine;
pub mod fp;
pub mod fp8;
pub mod pack;
pub mod params;
pub mod qmm;

pub use affine::{affine_dequantize, affine_quantize};
pub use fp::{fp_dequantize, fp_quantize};
pub use fp8::{from_fp8, from_fp8_slice, to_fp8, to_fp8_slice};
pub use params::{
    validate_dequantize, validate_quantize, validate_quantized_matmul, QuantMode, QuantParams,
};
pub use qmm::{qmm, QScales};

use crate::dtype::DType;

/// A floating element type the kernels accept (`f32`, `f16`, `bf16`).
///
/// Every kernel computes in `f32` and rounds to `Self` wherever MLX's scalar CPU code rounds
/// to the array dtype: MLX's `float16_t`/`bfloat16_t` on Linux convert to `float`, operate and
/// round back (round-to-nearest-even), and `f32` holds every `f16`/`bf16` product or quotient
/// closely enough that this double rounding is innocuous.
pub trait QFloat: Copy + PartialEq + core::fmt::Debug + 'static {
    /// The matching [`DType`].
    const DTYPE: DType;
    /// Widens exactly to `f32`.
    fn to_f32(self) -> f32;
    /// Rounds an `f32` to the nearest `Self` (ties to even).
    fn from_f32(x: f32) -> Self;
}

impl QFloat for f32 {
    const DTYPE: DType = DType::Float32;
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        x
    }
}

impl QFloat for half::f16 {
    const DTYPE: DType = DType::Float16;
    #[inline]
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        half::f16::from_f32(x)
    }
}

impl QFloat for half::bf16 {
    const DTYPE: DType = DType::Bfloat16;
    #[inline]
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        half::bf16::from_f32(x)
    }
}

/// Rounds an `f32` computation result to `T`: the `T`-typed arithmetic MLX does.
#[inline]
pub(crate) fn rt<T: QFloat>(x: f32) -> f32 {
    T::from_f32(x).to_f32()
}

/// `n_rows` for a buffer of `len` elements holding rows of `k`, or an error if it does not
/// divide evenly.
pub(crate) fn rows_of(op: &'static str, len: usize, k: usize) -> crate::Result<usize> {
    if k == 0 || len % k != 0 {
        return Err(crate::Error::invalid(
            op,
            alloc::format!("Buffer of {len} elements is not a whole number of rows of {k}."),
        ));
    }
    Ok(len / k)
}

/// `v` as f32: borrowed when `T` is f32, widened otherwise.
pub(crate) fn widen_f32<T: QFloat>(v: &[T]) -> alloc::borrow::Cow<'_, [f32]> {
    if T::DTYPE == crate::DType::Float32 {
        // SAFETY: T is f32 (same dtype), so the slice reinterprets exactly.
        return alloc::borrow::Cow::Borrowed(unsafe { core::slice::from_raw_parts(v.as_ptr() as *const f32, v.len()) });
    }
    let mut out = alloc::vec![0f32; v.len()];
    // SAFETY: a QFloat is stored as its DTYPE stores elements (f16 / bf16 here).
    unsafe { crate::cpu::cast::widen_raw(T::DTYPE, v.as_ptr() as *const u8, v.len(), &mut out) };
    alloc::borrow::Cow::Owned(out)
}

/// Allocates a zeroed `Vec` of `n` elements, reporting failure instead of aborting.
pub(crate) fn try_zeroed<T: Copy>(op: &'static str, n: usize, zero: T) -> crate::Result<alloc::vec::Vec<T>> {
    let mut v = alloc::vec::Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| crate::Error::out_of_memory(op, n.saturating_mul(core::mem::size_of::<T>())))?;
    v.resize(n, zero);
    Ok(v)
}
