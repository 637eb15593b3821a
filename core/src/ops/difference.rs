//! `mx.diff`: the n-th forward difference along one axis, as `n` rounds of
//! `x[1:] - x[:-1]` (slices are views; nothing is computed until evaluation).

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{slice, subtract};
use alloc::vec;

/// `mx.diff(a, n=1, axis=-1)`; each round shortens `axis` by one (never below zero).
pub fn diff(a: &Array, n: i64, axis: isize) -> Result<Array> {
    const OP: &str = "diff";
    let nd = a.ndim() as isize;
    let ax = if axis < 0 { axis + nd } else { axis };
    if ax < 0 || ax >= nd {
        return Err(Error::invalid(OP, "Axis is out of bounds for the array."));
    }
    if n < 0 {
        return Err(Error::invalid(OP, "Order `n` must be non-negative."));
    }
    let ax = ax as usize;
    let mut x = a.clone();
    for _ in 0..n {
        let len = x.shape()[ax] as isize;
        if len == 0 {
            break; // an empty axis stays empty
        }
        let stop: alloc::vec::Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
        let step = vec![1isize; x.ndim()];
        let mut upper_start = vec![0isize; x.ndim()];
        upper_start[ax] = 1;
        let mut lower_stop = stop.clone();
        lower_stop[ax] = len - 1;
        let upper = slice(&x, &upper_start, &stop, &step)?;
        let lower = slice(&x, &vec![0isize; x.ndim()], &lower_stop, &step)?;
        x = subtract(&upper, &lower)?;
    }
    Ok(x)
}
