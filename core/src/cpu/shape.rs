//! Shape kernels: views re-stride the input's buffer; copies go through `Data::read`.

use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::error::{Error, Result};
use crate::ops::shape::ShapeOp;
use crate::shape::row_major_strides;
use alloc::vec::Vec;

/// Evaluates a shape op on its single input.
pub fn eval(op: &ShapeOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, dtype) = super::out0(outputs, name)?.clone();
    let a = super::input(&inputs, 0, name)?;
    let d = a.data()?;
    let out = match op {
        ShapeOp::Reshape => {
            if d.is_row_contiguous(a.shape()) {
                Data { strides: row_major_strides(&shape), ..d }
            } else {
                let c = dense_copy(a, &d, name)?;
                Data { strides: row_major_strides(&shape), ..c }
            }
        }
        ShapeOp::Transpose(perm) => Data { strides: perm.iter().map(|&p| d.strides[p]).collect(), ..d },
        ShapeOp::Broadcast => {
            let lead = shape.len() - a.ndim();
            let mut strides = alloc::vec![0isize; shape.len()];
            for (i, (&n, &s)) in a.shape().iter().zip(&d.strides).enumerate() {
                strides[lead + i] = if n == 1 && shape[lead + i] != 1 { 0 } else { s };
            }
            Data { strides, ..d }
        }
        ShapeOp::Slice { start, step } => {
            let mut off = d.offset as isize;
            let item = dtype.size() as isize;
            for (i, &s) in start.iter().enumerate() {
                off += s * d.strides[i] * item;
            }
            let strides = d.strides.iter().zip(step).map(|(&s, &k)| s * k).collect();
            Data { offset: off as usize, strides, ..d }
        }
        ShapeOp::AsStrided { strides, offset } => {
            let base = if d.is_row_contiguous(a.shape()) { d } else { dense_copy(a, &d, name)? };
            check_strided_bounds(&shape, strides, *offset, a.size(), name)?;
            let off = base.offset + offset * dtype.size();
            Data { offset: off, strides: strides.clone(), ..base }
        }
        ShapeOp::Copy => dense_copy(a, &d, name)?,
    };
    Ok(alloc::vec![out])
}

/// A dense row-major copy of `a`'s elements.
pub(crate) fn dense_copy(a: &Array, d: &Data, op: &'static str) -> Result<Data> {
    let out = Data::alloc(a.shape(), a.dtype(), op)?;
    let sz = a.itemsize();
    let src = d.buf.bytes();
    // SAFETY: fresh buffer of exactly nbytes.
    let dst = unsafe { out.slice_mut::<u8>(a.nbytes()) };
    let mut k = 0;
    d.for_each_offset(a.shape(), |off| {
        let s = (d.offset as isize + off * sz as isize) as usize;
        dst[k..k + sz].copy_from_slice(&src[s..s + sz]);
        k += sz;
    });
    Ok(out)
}

/// Every element an `as_strided` view can reach must lie inside the `size` dense elements.
fn check_strided_bounds(shape: &[usize], strides: &[isize], offset: usize, size: usize, op: &'static str) -> Result<()> {
    if shape.iter().any(|&d| d == 0) {
        return Ok(());
    }
    let (mut lo, mut hi) = (offset as i128, offset as i128);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as i128 - 1) * s as i128;
        if span < 0 { lo += span } else { hi += span }
    }
    if lo < 0 || hi >= size as i128 {
        return Err(Error::invalid(op, "The strided view reaches outside the array's data."));
    }
    Ok(())
}
