//! `mx.unique(a, size, return_index, return_inverse, return_counts, fill_value)` with MLX
//! 0.32's semantics: the sorted unique elements of the flattened `a` in an output of the
//! static length `size` (never inferred from the values, so `a` is not evaluated): truncated
//! to the `size` smallest, or padded with `fill_value` (default: the first unique element),
//! whose index is the first unique's and whose count is 0. Equality is `==` (so every NaN is
//! its own element, and -0 equals 0). Built, as MLX builds it, on a stable `argsort` (the
//! first occurrence leads each run of equal elements) and scatters into fixed-size buffers.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::shape::fmt_shape;
use alloc::format;
use alloc::vec::Vec;

const OP: &str = "unique";

/// `[values, index?, inverse?, counts?]`: values in `a`'s dtype (`size`,), `index` uint32
/// (`size`,: first occurrence in the flattened `a`), `inverse` uint32 (`a`'s shape: the entry of
/// each element, clamped to `size - 1`), `counts` int32 (`size`,).
pub fn unique(
    a: &Array,
    size: i64,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
    fill_value: Option<&Array>,
) -> Result<Vec<Array>> {
    if size < 0 {
        return Err(Error::invalid(OP, format!("Received negative size {size}.")));
    }
    let size = usize::try_from(size).map_err(|_| Error::invalid(OP, "Size too large."))?;
    let dtype = a.dtype();
    let fill = match fill_value {
        Some(f) if f.size() != 1 => {
            return Err(Error::invalid(OP, format!("Fill value must have one element, but got shape {}.", fmt_shape(f.shape()))))
        }
        Some(f) => Some(ops::astype(&ops::reshape(f, &[])?, dtype)?),
        None => None,
    };
    let n = a.size();
    if n == 0 {
        let values = match (&fill, size) {
            (_, 0) => ops::zeros(&[0], dtype)?,
            (Some(f), _) => ops::broadcast_to(f, &[size])?,
            (None, _) => {
                return Err(Error::invalid(OP, "A fill value is required for an empty input with a non-zero size."))
            }
        };
        let mut out = alloc::vec![values];
        if return_index {
            out.push(ops::zeros(&[size], DType::Uint32)?);
        }
        if return_inverse {
            out.push(ops::zeros(a.shape(), DType::Uint32)?);
        }
        if return_counts {
            out.push(ops::zeros(&[size], DType::Int32)?);
        }
        return Ok(out);
    }
    let flat = ops::reshape(a, &[-1])?;
    let perm = ops::argsort(&flat, Some(0))?;
    let sorted = ops::take(&flat, &perm, Some(0))?;
    // is_new[i]: sorted[i] starts a run of equal elements.
    let ni = n as isize;
    let head = ops::slice(&sorted, &[1], &[ni], &[1])?;
    let tail = ops::slice(&sorted, &[0], &[ni - 1], &[1])?;
    let is_new = ops::concatenate(&[Array::from_slice(&[true], &[1])?, ops::not_equal(&head, &tail)?], Some(0))?;
    let new_i32 = ops::astype(&is_new, DType::Int32)?;
    let group = ops::subtract(&ops::cumsum(&new_i32, Some(0), false, true, None)?, &Array::scalar(1i32)?)?;
    let count = ops::sum(&new_i32, None, false)?;
    // Run starts go to slot group (< n); the rest to the dummy slot n, cut off below.
    let target = ops::where_(&is_new, &group, &Array::scalar(i32::try_from(n).map_err(|_| Error::invalid(OP, "Input too large."))?)?)?;
    let compact = |updates: &Array, dt: DType| -> Result<Array> {
        let buf = ops::scatter(&ops::zeros(&[n + 1], dt)?, core::slice::from_ref(&target), &ops::reshape(updates, &[ni, 1])?, &[0])?;
        to_size(&buf, n, size)
    };
    let live = ops::less(&ops::arange(0.0, size as f64, 1.0, DType::Int32)?, &count)?;
    let values0 = compact(&sorted, dtype)?;
    let fill = match fill {
        Some(f) => f,
        None => ops::reshape(&ops::slice(&sorted, &[0], &[1], &[1])?, &[])?,
    };
    let mut out = alloc::vec![ops::where_(&live, &values0, &fill)?];
    if return_index {
        let index = compact(&ops::astype(&perm, DType::Uint32)?, DType::Uint32)?;
        let first = ops::reshape(&ops::slice(&ops::astype(&perm, DType::Uint32)?, &[0], &[1], &[1])?, &[])?;
        out.push(ops::where_(&live, &index, &first)?);
    }
    if return_inverse {
        let last = i32::try_from(size.saturating_sub(1)).map_err(|_| Error::invalid(OP, "Size too large."))?;
        let clamped = ops::astype(&ops::minimum(&group, &Array::scalar(last)?)?, DType::Uint32)?;
        let inv = ops::scatter(&ops::zeros(&[n], DType::Uint32)?, core::slice::from_ref(&perm), &ops::reshape(&clamped, &[ni, 1])?, &[0])?;
        out.push(ops::reshape(&inv, &a.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())?);
    }
    if return_counts {
        let ones = ops::full(&[n, 1], crate::Value::I(1), DType::Int32)?;
        let counts = ops::scatter_add(&ops::zeros(&[n + 1], DType::Int32)?, core::slice::from_ref(&group), &ones, &[0])?;
        out.push(to_size(&counts, n, size)?);
    }
    Ok(out)
}

/// The first `size` entries of the length-`n + 1` buffer `buf` (entries past `n` are zeros).
fn to_size(buf: &Array, n: usize, size: usize) -> Result<Array> {
    let keep = ops::slice(buf, &[0], &[size.min(n) as isize], &[1])?;
    if size <= n {
        return Ok(keep);
    }
    ops::concatenate(&[keep, ops::zeros(&[size - n], buf.dtype())?], Some(0))
}
