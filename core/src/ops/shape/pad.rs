//! `mx.pad`: constant padding writes the input into a filled array (slice_update); edge,
//! reflect and symmetric padding gather each padded axis with a computed index vector.

use super::compose::slice_update;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::shape::checked_size;
use alloc::vec::Vec;

/// What fills the padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// `constant_values`.
    Constant,
    /// The edge element repeated.
    Edge,
    /// Mirror without repeating the edge (`3 2 | 1 2 3 | 2 1`).
    Reflect,
    /// Mirror repeating the edge (`2 1 | 1 2 3 | 3 2`).
    Symmetric,
}

impl PadMode {
    /// Parses MLX's mode names.
    pub fn from_name(name: &str) -> Result<PadMode> {
        match name {
            "constant" => Ok(PadMode::Constant),
            "edge" => Ok(PadMode::Edge),
            "reflect" => Ok(PadMode::Reflect),
            "symmetric" => Ok(PadMode::Symmetric),
            _ => Err(Error::invalid("pad", alloc::format!("Invalid padding mode ({name}) passed to pad"))),
        }
    }
}

/// Source index along an axis of size `n` for output position `i` (may be outside `0..n`).
fn source_index(i: i64, n: i64, mode: PadMode) -> i64 {
    match mode {
        PadMode::Constant | PadMode::Edge => i.clamp(0, n - 1),
        PadMode::Reflect => {
            if n == 1 {
                return 0;
            }
            let p = 2 * (n - 1);
            let j = i.rem_euclid(p);
            if j >= n { p - j } else { j }
        }
        PadMode::Symmetric => {
            let p = 2 * n;
            let j = i.rem_euclid(p);
            if j >= n { p - 1 - j } else { j }
        }
    }
}

/// `mx.pad(a, pad_width, mode, constant_values)`: `pad_width` holds `(before, after)` per axis,
/// or one pair applied to every axis. `constant_values` is cast to `a`'s dtype.
pub fn pad(a: &Array, pad_width: &[(usize, usize)], mode: PadMode, constant_values: &Array) -> Result<Array> {
    const OP: &str = "pad";
    let nd = a.ndim();
    let widths: Vec<(usize, usize)> = match pad_width.len() {
        1 => alloc::vec![pad_width[0]; nd],
        n if n == nd => pad_width.to_vec(),
        _ => {
            return Err(Error::invalid(
                OP,
                alloc::format!("Invalid number of padding sizes passed to pad with axes of size {nd}"),
            ))
        }
    };
    let mut shape = Vec::with_capacity(nd);
    for (&d, &(lo, hi)) in a.shape().iter().zip(&widths) {
        let s = d.checked_add(lo).and_then(|x| x.checked_add(hi)).ok_or_else(|| Error::invalid(OP, "Shape is too large."))?;
        shape.push(s);
    }
    checked_size(&shape, OP)?;
    if mode == PadMode::Constant {
        if constant_values.size() != 1 {
            return Err(Error::invalid(OP, "Constant values must be a scalar."));
        }
        let v = crate::ops::reshape(&crate::ops::astype(constant_values, a.dtype())?, &[])?;
        let filled = crate::ops::broadcast_to(&v, &shape)?;
        let start: Vec<isize> = widths.iter().map(|&(lo, _)| lo as isize).collect();
        let stop: Vec<isize> = widths.iter().zip(a.shape()).map(|(&(lo, _), &d)| (lo + d) as isize).collect();
        return slice_update(&filled, a, &start, &stop, &alloc::vec![1; nd]);
    }
    let mut out = a.clone();
    for (ax, (&n, &(lo, hi))) in a.shape().iter().zip(&widths).enumerate() {
        if lo == 0 && hi == 0 {
            continue;
        }
        if n == 0 {
            return Err(Error::invalid(OP, "Cannot pad a zero-size axis with a non-constant mode."));
        }
        let idx: Vec<i64> =
            (-(lo as i64)..(n + hi) as i64).map(|i| source_index(i, n as i64, mode)).collect();
        let idx = Array::from_slice(&idx, &[idx.len()])?;
        out = crate::ops::take(&out, &idx, Some(ax as isize))?;
    }
    Ok(out)
}
