//! vjp rules of the FFT family, one transform axis per node. With `g` the cotangent read as
//! `∂L/∂re + i·∂L/∂im` (MLX's convention), the vjp of a linear map `A` is `Aᴴ g`:
//! - complex fft / ifft: the transform the other way, same factor (the DFT matrix is
//!   symmetric, so `Aᴴ` is its conjugate);
//! - rfft (real `n` → `n/2 + 1` bins): the bins' cotangent zero-padded to `n`, the complex
//!   inverse transform, real part;
//! - irfft (`n/2 + 1` bins → real `n`): each inner bin stands for itself and its mirror, so it
//!   gets twice the rfft of `g`; bin 0 (and the Nyquist bin of an even `n`) once.

use super::FftOp;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::{astype, multiply, pad, real, PadMode};
use crate::primitive::Primitive;
use crate::transforms::rules::Grads;
use alloc::vec;
use alloc::vec::Vec;

fn node(x: Array, op: FftOp, len: usize, dtype: DType) -> Array {
    let mut shape = x.shape().to_vec();
    shape[op.axis] = len;
    Array::from_op(Primitive::Fft(op), vec![x], shape, dtype)
}

pub(crate) fn vjp(op: &FftOp, inputs: &[Array], g: &Array) -> Result<Grads> {
    let x = &inputs[0];
    let (axis, n) = (op.axis, op.n);
    let other_way = FftOp { inverse: !op.inverse, real: false, ..op.clone() };
    let d = match (op.real, op.inverse) {
        (false, _) => node(astype(g, DType::Complex64)?, other_way, n, DType::Complex64),
        (true, false) => {
            let mut widths = vec![(0, 0); g.ndim()];
            widths[axis] = (0, n - g.shape()[axis]);
            let zero = Array::from_value(crate::element::Value::F(0.0), DType::Complex64)?;
            let full = pad(&astype(g, DType::Complex64)?, &widths, PadMode::Constant, &zero)?;
            real(&node(full, other_way, n, DType::Complex64))?
        }
        (true, true) => {
            let bins = x.shape()[axis];
            let forward = FftOp { inverse: false, real: true, ..op.clone() };
            let f = node(astype(g, DType::Float32)?, forward, bins, DType::Complex64);
            let weights: Vec<f32> = (0..bins).map(|k| if k == 0 || (n % 2 == 0 && k == n / 2) { 1.0 } else { 2.0 }).collect();
            let mut along = vec![1; x.ndim()];
            along[axis] = bins;
            multiply(&f, &Array::from_slice(&weights, &along)?)?
        }
    };
    Ok(vec![Some(d)])
}
