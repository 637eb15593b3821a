//! `fftshift` / `ifftshift` (a roll by half of each axis, as numpy) and the sample
//! frequencies `fftfreq` / `rfftfreq` (float32), composed from ordinary ops as MLX does.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{arange, concatenate, multiply, roll};
use alloc::vec::Vec;

fn shift_impl(a: &Array, axes: Option<&[isize]>, inverse: bool, name: &'static str) -> Result<Array> {
    let nd = a.ndim() as isize;
    let all: Vec<isize> = (0..nd).collect();
    let axes = axes.unwrap_or(&all);
    if axes.is_empty() {
        return Ok(a.clone());
    }
    let mut shifts = Vec::with_capacity(axes.len());
    for &ax in axes {
        let v = if ax < 0 { ax + nd } else { ax };
        if v < 0 || v >= nd {
            return Err(Error::index(name, alloc::format!("Invalid axis {ax} for array with {nd} dimensions.")));
        }
        let half = (a.shape()[v as usize] / 2) as isize;
        shifts.push(if inverse { -half } else { half });
    }
    roll(a, &shifts, Some(axes))
}

/// `mx.fft.fftshift(a, axes=None)`: moves the zero frequency to the centre.
pub fn fftshift(a: &Array, axes: Option<&[isize]>) -> Result<Array> {
    shift_impl(a, axes, false, "fftshift")
}

/// `mx.fft.ifftshift(a, axes=None)`: undoes [`fftshift`].
pub fn ifftshift(a: &Array, axes: Option<&[isize]>) -> Result<Array> {
    shift_impl(a, axes, true, "ifftshift")
}

fn check(n: isize, d: f64, name: &'static str) -> Result<f32> {
    if n <= 0 {
        return Err(Error::invalid(name, "`n` must be greater than 0."));
    }
    if d == 0.0 {
        return Err(Error::invalid(name, "`d` must be non-zero."));
    }
    Ok((1.0 / (n as f64 * d)) as f32)
}

/// `mx.fft.fftfreq(n, d=1.0)`: `[0, 1, …, ⌈n/2⌉−1, −⌊n/2⌋, …, −1] / (n·d)`, float32.
pub fn fftfreq(n: isize, d: f64) -> Result<Array> {
    let scale = check(n, d, "fftfreq")?;
    let pos = arange(0.0, ((n + 1) / 2) as f64, 1.0, DType::Float32)?;
    let neg = arange(-((n / 2) as f64), 0.0, 1.0, DType::Float32)?;
    multiply(&concatenate(&[pos, neg], Some(0))?, &Array::scalar(scale)?)
}

/// `mx.fft.rfftfreq(n, d=1.0)`: `[0, 1, …, ⌊n/2⌋] / (n·d)`, float32.
pub fn rfftfreq(n: isize, d: f64) -> Result<Array> {
    let scale = check(n, d, "rfftfreq")?;
    multiply(&arange(0.0, (n / 2 + 1) as f64, 1.0, DType::Float32)?, &Array::scalar(scale)?)
}
