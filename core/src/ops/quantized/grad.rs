//! vjp rule of `quantized_matmul`, as MLX 0.32 defines it: the cotangent of `x` is the product
//! with the same quantized weight the other way round (`transpose` flipped), so a quantized
//! base layer passes gradients through without being dequantized (what QLoRA needs); the
//! affine scales and biases get theirs from the per-group sums of `dW = cotᵀ·x`; the packed
//! weight itself has none (MLX raises too). Recorded inputs are already cast and
//! batch-broadcast to one shape (see `quantized_matmul`), so products need no broadcasting.

use super::{q, QuantizedOp};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::*;
use crate::quant::mlx::QuantMode;
use crate::transforms::rules::{unsupported, Grads};
use alloc::vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("quantized_matmul", "yes (to x; to affine scales and biases; none to the packed weight, as MLX)"),
    ("gather_qmm", "yes (as the gathered matrices' quantized_matmul: to x, affine scales and biases)"),
    ("quantize, dequantize, fp8, ggml_*", "no"),
];

pub(crate) fn vjp(op: &QuantizedOp, inputs: &[Array], cot: &Array, needs: &[bool]) -> Result<Grads> {
    if let QuantizedOp::GatherQmm { mode, group_size, bits, transpose } = *op {
        return gather_qmm_vjp(inputs, cot, needs, mode, group_size, bits, transpose);
    }
    let QuantizedOp::QuantizedMatmul { mode, group_size, bits, transpose } = *op else {
        return Err(unsupported(op.name()));
    };
    let mut g: Grads = vec![None; inputs.len()];
    if needs[0] {
        let flipped = QuantizedOp::QuantizedMatmul { mode, group_size, bits, transpose: !transpose };
        let mut xs = inputs.to_vec();
        xs[0] = cot.clone();
        g[0] = Some(Array::from_op(q(flipped), xs, inputs[0].shape().to_vec(), inputs[0].dtype()));
    }
    if needs.get(1) == Some(&true) {
        return Err(Error::invalid("QuantizedMatmul::vjp", "no gradient wrt the quantized weights."));
    }
    let wants_sb = needs.iter().skip(2).any(|&n| n);
    if !wants_sb {
        return Ok(g);
    }
    if mode != QuantMode::Affine {
        return Err(Error::invalid("QuantizedMatmul::vjp", "no gradient wrt the quantized scales."));
    }
    let (x, w, scales, biases) = (&inputs[0], &inputs[1], &inputs[2], &inputs[3]);
    // dW in the stored layout of w, then split its last axis into groups.
    let (fx, fc) = if w.ndim() == 2 {
        (flatten(x, 0, -2)?, flatten(cot, 0, -2)?)
    } else {
        (x.clone(), cot.clone())
    };
    let dw = if transpose { matmul(&swapaxes(&fc, -1, -2)?, &fx)? } else { matmul(&swapaxes(&fx, -1, -2)?, &fc)? };
    let dsb = unflatten(&dw, -1, &[-1, group_size as isize])?;
    if needs[3] {
        g[3] = Some(sum(&dsb, Some(&[-1]), false)?);
    }
    if needs[2] {
        // The integer codes: dequantized with unit scales and zero biases.
        let codes = dequantize(w, &ones_like(scales)?, Some(&zeros_like(biases)?), Some(group_size as i64), Some(bits as i64), mode.name(), None, Some(scales.dtype()))?;
        let codes = unflatten(&codes, -1, &[-1, group_size as isize])?;
        g[2] = Some(sum(&multiply(&dsb, &codes)?, Some(&[-1]), false)?);
    }
    Ok(g)
}

/// gather_qmm (inputs `x, w, scales[, biases], lhs, rhs`): the rule of the same product written
/// as `take`s of the indexed matrices followed by [`quantized_matmul`], so `x`, scales and
/// biases get their cotangents (scattered back to the matrices the indices chose) and the
/// weight, or a non-affine mode's scales, raise as for `quantized_matmul`. The indices get none.
fn gather_qmm_vjp(inputs: &[Array], cot: &Array, needs: &[bool], mode: QuantMode, group_size: usize, bits: u32, transpose: bool) -> Result<Grads> {
    let nf = inputs.len() - 2;
    if needs[nf..].iter().any(|&n| n) {
        return Err(crate::ops::index::grad::indices_refused("gather_qmm"));
    }
    let fun = move |v: &[Array]| -> Result<alloc::vec::Vec<Array>> {
        let (lhs, rhs) = (&v[nf], &v[nf + 1]);
        let batch3 = |a: &Array| if a.ndim() == 2 { expand_dims(a, &[0]) } else { flatten(a, 0, -3) };
        let pick = |a: &Array| take(&batch3(a)?, rhs, Some(0));
        let biases = if nf == 4 { Some(pick(&v[3])?) } else { None };
        let (gs, b) = (Some(group_size as i64), Some(bits as i64));
        let x = take(&batch3(&v[0])?, lhs, Some(0))?;
        Ok(vec![quantized_matmul(&x, &pick(&v[1])?, &pick(&v[2])?, biases.as_ref(), transpose, gs, b, mode.name())?])
    };
    let needs: alloc::vec::Vec<bool> = (0..inputs.len()).map(|i| i < nf && needs[i]).collect();
    crate::transforms::rules::through(&fun, inputs, &needs, cot)
}
