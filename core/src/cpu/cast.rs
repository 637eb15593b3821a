//! astype and view kernels.

use super::elementwise::map1;
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::ops::cast::CastOp;
use crate::shape::row_major_strides;
use alloc::vec::Vec;

/// Evaluates a cast.
pub fn eval(op: &CastOp, mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    let name = op.name();
    let (shape, dtype) = super::out0(outputs, name)?.clone();
    let a = inputs.pop().ok_or_else(|| Error::runtime(name, "Missing input."))?;
    match op {
        CastOp::AsType => {
            crate::dispatch_all!(a.dtype(), I => crate::dispatch_all!(dtype, O => {
                map1::<I, O>(a, &shape, name, |x| O::from_value(x.to_value()))
            }))
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
