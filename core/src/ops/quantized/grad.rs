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
    ("quantize", "yes (as MLX's fallback: affine scales and biases back to w through the group extremes; the codes and fp modes' outputs are integers)"),
    ("dequantize", "yes (affine: to scales and biases; none to the packed codes, as MLX)"),
    ("to_fp8, from_fp8", "no: as MLX (`[Primitive::vjp] Not implemented for ToFP8.`)"),
    ("ggml_* (mlx-arm's GGUF ops)", "no"),
];

pub(crate) fn vjp(op: &QuantizedOp, inputs: &[Array], cot: &Array, needs: &[bool]) -> Result<Grads> {
    if let QuantizedOp::Dequantize { mode, group_size, bits } = *op {
        return dequantize_vjp(inputs, cot, needs, mode, group_size, bits);
    }
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

/// dequantize, affine (inputs `w, scales, biases` of one float dtype, the output's):
/// `out = code · scale + bias` per group, so a group's scale gets `Σ g · code` and its bias
/// `Σ g`. The packed codes get none (integers). The fp modes' scales are integer codes; a
/// gradient asked of an nvfp4 global scale is refused rather than left out.
fn dequantize_vjp(inputs: &[Array], cot: &Array, needs: &[bool], mode: QuantMode, group_size: usize, bits: u32) -> Result<Grads> {
    let mut g: Grads = vec![None; inputs.len()];
    if mode != QuantMode::Affine {
        if inputs.len() > 2 && needs[2] {
            return Err(unsupported("dequantize (global_scale)"));
        }
        return Ok(g);
    }
    let (w, scales, biases) = (&inputs[0], &inputs[1], &inputs[2]);
    let groups = unflatten(cot, -1, &[-1, group_size as isize])?;
    if needs[2] {
        g[2] = Some(sum(&groups, Some(&[-1]), false)?);
    }
    if needs[1] {
        let codes = dequantize(w, &ones_like(scales)?, Some(&zeros_like(biases)?), Some(group_size as i64), Some(bits as i64), mode.name(), None, Some(scales.dtype()))?;
        let codes = unflatten(&codes, -1, &[-1, group_size as isize])?;
        g[1] = Some(sum(&multiply(&groups, &codes)?, Some(&[-1]), false)?);
    }
    Ok(g)
}

/// quantize (outputs `wq, scales[, biases]`): MLX differentiates its fallback, so the affine
/// scales and biases send their cotangents back to `w` through the same steps — the group's
/// extremes, the edge (the extreme of larger magnitude) and the rounding that ties the scale
/// to it (rounding has a zero derivative). The packed codes (and every output of the fp modes)
/// are integers and send nothing.
pub(crate) fn quantize_vjp(mode: QuantMode, group_size: usize, bits: u32, inputs: &[Array], cotangents: &[Option<Array>], needs: &[bool]) -> Result<Grads> {
    let mut g: Grads = vec![None; inputs.len()];
    if mode != QuantMode::Affine || !needs[0] {
        return Ok(g);
    }
    let (Some(out_s), Some(out_b)) = (cotangents.get(1), cotangents.get(2)) else {
        return Ok(g);
    };
    if out_s.is_none() && out_b.is_none() {
        return Ok(g);
    }
    let w = &inputs[0];
    let fun = move |v: &[Array]| -> Result<alloc::vec::Vec<Array>> {
        let w = &v[0];
        let k = w.shape()[w.ndim() - 1];
        let groups = reshape(w, &[-1, (k / group_size) as isize, group_size as isize])?;
        let f32 = crate::dtype::DType::Float32;
        let c = |x: f64| Array::from_value(crate::element::Value::F(x), f32);
        let w_max = astype(&max(&groups, Some(&[-1]), true)?, f32)?;
        let w_min = astype(&min(&groups, Some(&[-1]), true)?, f32)?;
        let mask = greater(&abs(&w_min)?, &abs(&w_max)?)?;
        let scales = maximum(&divide(&subtract(&w_max, &w_min)?, &c(((1u32 << bits) - 1) as f64)?)?, &c(1e-7)?)?;
        let scales = where_(&mask, &scales, &negative(&scales)?)?;
        let edge = where_(&mask, &w_min, &w_max)?;
        let q0 = round(&divide(&edge, &scales)?)?;
        let zero = c(0.0)?;
        let scales = where_(&not_equal(&q0, &zero)?, &divide(&edge, &q0)?, &scales)?;
        let biases = where_(&equal(&q0, &zero)?, &zero, &edge)?;
        let mut shape: alloc::vec::Vec<isize> = w.shape().iter().map(|&d| d as isize).collect();
        *shape.last_mut().ok_or_else(|| Error::invalid("quantize", "a 0-d input"))? = -1;
        Ok(vec![reshape(&astype(&scales, w.dtype())?, &shape)?, reshape(&astype(&biases, w.dtype())?, &shape)?])
    };
    let outs = fun(core::slice::from_ref(w))?;
    let cots = [
        match out_s {
            Some(c) => c.clone(),
            None => zeros_like(&outs[0])?,
        },
        match out_b {
            Some(c) => c.clone(),
            None => zeros_like(&outs[1])?,
        },
    ];
    let d = crate::transforms::vjp_argnums(&fun, core::slice::from_ref(w), &[0], &cots)?;
    g[0] = d.into_iter().next();
    Ok(g)
}
