//! `mx.fast.cross_entropy(logits, targets)`: `logsumexp(logits, -1) - logits[..., target]`
//! per row, returned as float32. MLX fuses it on Metal/CUDA (accumulating in float32); its CPU
//! path — the one this core matches — is the unfused composition reducing in the logits'
//! dtype, then cast to float32. Targets must be in `[0, logits.shape[-1])` (MLX does not check;
//! a negative target counts from the end here, as `take_along_axis`).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::shape::fmt_shape;
use alloc::format;

const OP: &str = "cross_entropy";

/// The per-row loss, float32, shaped as `targets` (= `logits.shape[:-1]`).
pub fn cross_entropy(logits: &Array, targets: &Array) -> Result<Array> {
    let nd = logits.ndim();
    if nd == 0 {
        return Err(Error::invalid(OP, "logits must have at least 1 dimension but got input with 0 dimensions."));
    }
    if targets.shape() != &logits.shape()[..nd - 1] {
        return Err(Error::invalid(
            OP,
            format!(
                "targets shape {} does not match logits shape {} with the last axis removed.",
                fmt_shape(targets.shape()),
                fmt_shape(logits.shape())
            ),
        ));
    }
    if !logits.dtype().is_float() {
        return Err(Error::invalid(OP, format!("Received unsupported logits type {}.", logits.dtype())));
    }
    if !targets.dtype().is_integer() {
        return Err(Error::invalid(OP, format!("targets must be integer class indices but got {}.", targets.dtype())));
    }
    let lse = ops::logsumexp(logits, Some(&[-1]), false)?;
    let picked = ops::take_along_axis(logits, &ops::expand_dims(targets, &[-1])?, Some(-1))?;
    let loss = ops::subtract(&lse, &ops::squeeze(&picked, Some(&[-1]))?)?;
    ops::astype(&loss, DType::Float32)
}
