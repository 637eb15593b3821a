//! CPU kernels of the fast family.

use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::error::Result;
use crate::ops::fast::FastOp;
use alloc::vec::Vec;

/// Evaluates a fast primitive.
pub fn eval(op: &FastOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let _ = (inputs, outputs);
    match *op {}
}
