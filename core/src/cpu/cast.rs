//! astype and view kernels.

use super::elementwise::{apply1, map1_slices, typed, typed_mut};
use crate::dtype::DType;
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::ops::cast::CastOp;
use crate::shape::row_major_strides;
use alloc::vec::Vec;

/// An astype slice kernel: `y = x` converted elementwise, over byte slices holding elements
/// of the two dtypes it was chosen for by [`kernel`]; `x = None` converts in place (only where
/// the two have one size).
///
/// # Safety
/// The slices hold valid, aligned elements of their dtypes; `x` has `y`'s element count.
pub type SliceCast = unsafe fn(&mut [u8], Option<&[u8]>);

/// The astype slice kernel from dtype `from` to `to`: between float32 and float16/bfloat16 the
/// `half` crate's slice conversions (F16C / NEON where present, several elements an
/// instruction; the same rounding as one at a time), element by element otherwise.
pub fn kernel(from: DType, to: DType) -> SliceCast {
    match (from, to) {
        (DType::Float16, DType::Float32) => widen::<half::f16>,
        (DType::Bfloat16, DType::Float32) => widen::<half::bf16>,
        (DType::Float32, DType::Float16) => narrow::<half::f16>,
        (DType::Float32, DType::Bfloat16) => narrow::<half::bf16>,
        _ => crate::dispatch_all!(from, I => crate::dispatch_all!(to, O => cast_slice::<I, O> as SliceCast)),
    }
}

/// `src` as float32 into `dst` (the shorter length) through the astype kernel: whole-slice
/// F16C / NEON conversions for float16 and bfloat16, one element at a time otherwise. The one
/// widening that kernels computing in f32 use.
pub(crate) fn widen_into<T: Element>(src: &[T], dst: &mut [f32]) {
    let n = src.len().min(dst.len());
    // SAFETY: `src` holds at least n elements of T, whose dtype is T::DTYPE.
    unsafe { widen_raw(T::DTYPE, src.as_ptr() as *const u8, n, dst) }
}

/// [`widen_into`] for elements known only by their dtype: n of them at `src`.
///
/// # Safety
/// `src` points to `n` valid, aligned elements stored as `dtype` stores them.
pub(crate) unsafe fn widen_raw(dtype: DType, src: *const u8, n: usize, dst: &mut [f32]) {
    let n = n.min(dst.len());
    let x = core::slice::from_raw_parts(src, n * dtype.size());
    let y = core::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, n * 4);
    // The kernel of (dtype, float32) reads n elements of `x` and writes n f32 into `y`.
    kernel(dtype, DType::Float32)(y, Some(x));
}

/// float16 / bfloat16: the element types whose slices the `half` crate converts at once.
trait HalfSlice: Element {
    fn widen(src: &[Self], dst: &mut [f32]);
    fn narrow(src: &[f32], dst: &mut [Self]);
}

macro_rules! half_slice {
    ($($t:ty),*) => {$(
        impl HalfSlice for $t {
            fn widen(src: &[Self], dst: &mut [f32]) {
                half::slice::HalfFloatSliceExt::convert_to_f32_slice(src, dst)
            }
            fn narrow(src: &[f32], dst: &mut [Self]) {
                half::slice::HalfFloatSliceExt::convert_from_f32_slice(dst, src)
            }
        }
    )*};
}
half_slice!(half::f16, half::bf16);

/// float16/bfloat16 → float32. In place only where sizes match, which they never do here.
unsafe fn widen<H: HalfSlice>(y: &mut [u8], x: Option<&[u8]>) {
    let Some(x) = x else { return cast_slice::<H, f32>(y, None) };
    let (src, dst) = (typed::<H>(x), typed_mut::<f32>(y));
    let n = src.len().min(dst.len());
    H::widen(&src[..n], &mut dst[..n]);
}

/// float32 → float16/bfloat16 (round to nearest even, as one element at a time).
unsafe fn narrow<H: HalfSlice>(y: &mut [u8], x: Option<&[u8]>) {
    let Some(x) = x else { return cast_slice::<f32, H>(y, None) };
    let (src, dst) = (typed::<f32>(x), typed_mut::<H>(y));
    let n = src.len().min(dst.len());
    H::narrow(&src[..n], &mut dst[..n]);
}

unsafe fn cast_slice<I: Element, O: Element>(y: &mut [u8], x: Option<&[u8]>) {
    apply1::<I, O>(y, x, |v| O::from_value(v.to_value()));
}

/// Evaluates a cast.
pub fn eval(op: &CastOp, mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    let name = op.name();
    let (shape, dtype) = super::out0(outputs, name)?.clone();
    let a = inputs.pop().ok_or_else(|| Error::runtime(name, "Missing input."))?;
    match op {
        CastOp::AsType => {
            let k = kernel(a.dtype(), dtype);
            // SAFETY: the driver hands the kernel slices of the input's and the output's dtypes.
            map1_slices(a, &shape, dtype, name, &|y, x| unsafe { k(y, x) })
        }
        CastOp::View => {
            let d = a.data()?;
            let d = if d.is_row_contiguous(a.shape()) { d } else { super::shape::dense_copy(&a, &d, name)? };
            if dtype == crate::DType::Bool {
                // Reinterpreting arbitrary bytes as bool must keep the 0/1 invariant: copy and normalize.
                let bytes = a.to_bytes()?;
                let norm: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
                return Ok(Array::from_slice(&norm, &shape)?.data()?);
            }
            Ok(Data { strides: row_major_strides(&shape), ..d })
        }
    }
}
