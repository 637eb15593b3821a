//! `mx.depends(inputs, dependencies)`: arrays equal to `inputs` whose evaluation first
//! evaluates `dependencies` (an ordering edge in the lazy graph, e.g. for side effects).

use crate::array::Array;
use crate::error::{Error, Result};
use crate::primitive::Primitive;
use crate::ops::shape::ShapeOp;
use alloc::vec::Vec;

/// One output per input (same shape, dtype and data), all recorded by a single node whose
/// inputs are `inputs` followed by `dependencies`.
pub fn depends(inputs: &[Array], dependencies: &[Array]) -> Result<Vec<Array>> {
    if inputs.is_empty() {
        return Err(Error::invalid("depends", "At least one input is required."));
    }
    let metas = inputs.iter().map(|a| (a.shape().to_vec(), a.dtype())).collect();
    let all: Vec<Array> = inputs.iter().chain(dependencies).cloned().collect();
    Ok(Array::from_op_multi(Primitive::Shape(ShapeOp::Depends(inputs.len())), all, metas))
}
