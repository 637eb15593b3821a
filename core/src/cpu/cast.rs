//! astype and view kernels.

use super::elementwise::{apply1, map1_slices};
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

/// The astype slice kernel from dtype `from` to `to`.
pub fn kernel(from: DType, to: DType) -> SliceCast {
    crate::dispatch_all!(from, I => crate::dispatch_all!(to, O => cast_slice::<I, O> as SliceCast))
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
