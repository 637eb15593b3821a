//! The FFT family (`mx.fft`): complex, real-to-complex and complex-to-real discrete Fourier
//! transforms over any set of axes, with MLX 0.32's semantics (`mlx/fft.cpp`): sizes `s`/`n`
//! crop or zero-pad the input, the output is complex64 (float32 for `irfft*`; float64 and
//! integer inputs are cast as MLX casts them), `norm` is "backward", "ortho" or "forward".
//!
//! One primitive, [`FftOp`], transforms one axis; an n-D transform records one node per axis
//! (for `rfftn` the real transform is the last axis, done first; for `irfftn` it is done last).
//! The whole normalization factor rides on the last node, so no extra scaling pass runs.
//! Kernels (a pure-Rust mixed-radix and Bluestein FFT) live in `cpu/fft/`.
//! `fftshift`, `ifftshift`, `fftfreq` and `rfftfreq` are composites, in [`shift`].

pub(crate) mod grad;
mod shift;

pub use shift::{fftfreq, fftshift, ifftshift, rfftfreq};

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{astype, pad, slice, PadMode};
use crate::primitive::{Primitive, F64};
use crate::shape::fmt_shape;
use alloc::vec::Vec;

/// Transform along one axis. Input and output lengths along `axis`: `n`/`n` (complex),
/// `n`/`n/2+1` (real forward, float32 in), `n/2+1`/`n` (real inverse, float32 out).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FftOp {
    /// The (normalized) axis transformed.
    pub axis: usize,
    /// The logical transform length.
    pub n: usize,
    /// Inverse transform (`e^{+2πi…}`), unnormalized: the factor is in `scale`.
    pub inverse: bool,
    /// Real input (forward) or real output (inverse).
    pub real: bool,
    /// Factor applied to every output element.
    pub scale: F64,
}

impl FftOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match (self.real, self.inverse) {
            (false, false) => "fft",
            (false, true) => "ifft",
            (true, false) => "rfft",
            (true, true) => "irfft",
        }
    }
}

/// MLX's `norm` argument: which direction carries the `1/n` factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FftNorm {
    /// No factor forward, `1/n` inverse (the default).
    #[default]
    Backward,
    /// `1/√n` both ways.
    Ortho,
    /// `1/n` forward, none inverse.
    Forward,
}

impl FftNorm {
    /// Parses "backward" / "ortho" / "forward" (MLX's ValueError wording, tagged with `op`).
    pub fn parse(s: &str, op: &'static str) -> Result<FftNorm> {
        match s {
            "backward" => Ok(FftNorm::Backward),
            "ortho" => Ok(FftNorm::Ortho),
            "forward" => Ok(FftNorm::Forward),
            _ => Err(Error::invalid(op, "Invalid norm. Expected one of {'backward', 'ortho', 'forward'}.")),
        }
    }

    /// mlx-c's `mlx_fft_norm` value (0 backward, 1 ortho, 2 forward).
    pub fn from_code(code: u32) -> Result<FftNorm> {
        match code {
            0 => Ok(FftNorm::Backward),
            1 => Ok(FftNorm::Ortho),
            2 => Ok(FftNorm::Forward),
            _ => Err(Error::invalid("mlx_fft_norm", alloc::format!("invalid mlx_fft_norm value {code}"))),
        }
    }

    /// The factor of the whole transform of `count` points, the `1/count` of an inverse included.
    fn factor(self, count: f64, inverse: bool) -> f64 {
        match (self, inverse) {
            (FftNorm::Backward, false) | (FftNorm::Forward, true) => 1.0,
            (FftNorm::Backward, true) | (FftNorm::Forward, false) => 1.0 / count,
            (FftNorm::Ortho, _) => 1.0 / libm::sqrt(count),
        }
    }
}

const OP: &str = "fftn";

/// Which transform: complex or real, forward or inverse.
#[derive(Clone, Copy)]
struct Dir {
    real: bool,
    inverse: bool,
}

/// Sizes from the array itself (`s` omitted): an out-of-range axis is MLX's IndexError.
fn sizes_of(a: &Array, axes: &[isize], dir: Dir) -> Result<Vec<isize>> {
    let nd = a.ndim() as isize;
    let mut n = Vec::with_capacity(axes.len());
    for &ax in axes {
        let v = if ax < 0 { ax + nd } else { ax };
        if v < 0 || v >= nd {
            return Err(Error::index(OP, alloc::format!("Invalid axis received for array with {nd} dimensions.")));
        }
        n.push(a.shape()[v as usize] as isize);
    }
    if dir.real && dir.inverse {
        if let Some(last) = n.last_mut() {
            *last = (*last - 1) * 2;
        }
    }
    Ok(n)
}

/// MLX's `fft_impl` with explicit sizes: validate, crop/pad, cast, then one node per axis.
fn transform(a: &Array, n: &[isize], axes: &[isize], dir: Dir, norm: FftNorm) -> Result<Array> {
    let nd = a.ndim();
    if nd < 1 {
        return Err(Error::invalid(OP, "Requires array with at least one dimension."));
    }
    if n.len() != axes.len() {
        return Err(Error::invalid(OP, "Shape and axes have different sizes."));
    }
    if axes.is_empty() {
        return Ok(a.clone());
    }
    let valid: Vec<isize> = axes.iter().map(|&ax| if ax < 0 { ax + nd as isize } else { ax }).collect();
    let mut sorted = valid.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != valid.len() {
        return Err(Error::invalid(OP, alloc::format!("Duplicated axis received {}", fmt_shape(axes))));
    }
    if sorted[0] < 0 || sorted[sorted.len() - 1] >= nd as isize {
        return Err(Error::index(OP, alloc::format!("Invalid axis received for array with {nd} dimensions.")));
    }
    if n.iter().any(|&v| v <= 0) {
        return Err(Error::invalid(OP, alloc::format!("Invalid FFT output size requested {}", fmt_shape(n))));
    }
    let valid: Vec<usize> = valid.iter().map(|&v| v as usize).collect();
    let n: Vec<usize> = n.iter().map(|&v| v as usize).collect();
    let last = valid.len() - 1;
    let mut in_shape = a.shape().to_vec();
    for (&ax, &len) in valid.iter().zip(&n) {
        in_shape[ax] = len;
    }
    if dir.real && dir.inverse {
        in_shape[valid[last]] = n[last] / 2 + 1;
    }
    let mut x = a.clone();
    if in_shape.iter().zip(a.shape()).any(|(w, h)| w < h) {
        let stop: Vec<isize> = in_shape.iter().zip(a.shape()).map(|(w, h)| (*w).min(*h) as isize).collect();
        x = slice(&x, &alloc::vec![0; nd], &stop, &alloc::vec![1; nd])?;
    }
    if in_shape.iter().zip(x.shape()).any(|(w, h)| w > h) {
        let widths: Vec<(usize, usize)> = in_shape.iter().zip(x.shape()).map(|(w, h)| (0, w.saturating_sub(*h))).collect();
        x = pad(&x, &widths, PadMode::Constant, &Array::scalar(0.0f32)?)?;
    }
    let in_type = if dir.real && !dir.inverse { DType::Float32 } else { DType::Complex64 };
    x = astype(&x, in_type)?;
    let count = n.iter().map(|&v| v as f64).product::<f64>();
    let scale = norm.factor(count, dir.inverse);
    // Order of the per-axis nodes: the real axis first forward, last inverse.
    let mut order: Vec<usize> = (0..valid.len()).collect();
    if dir.real && !dir.inverse {
        order.rotate_right(1);
    }
    let nodes = order.len();
    for (step, &i) in order.iter().enumerate() {
        let real = dir.real && i == last;
        let op = FftOp {
            axis: valid[i],
            n: n[i],
            inverse: dir.inverse,
            real,
            scale: F64::new(if step + 1 == nodes { scale } else { 1.0 }),
        };
        let mut shape = x.shape().to_vec();
        let dtype = match (real, dir.inverse) {
            (true, false) => {
                shape[op.axis] = op.n / 2 + 1;
                DType::Complex64
            }
            (true, true) => {
                shape[op.axis] = op.n;
                DType::Float32
            }
            _ => DType::Complex64,
        };
        x = Array::from_op(Primitive::Fft(op), alloc::vec![x], shape, dtype);
    }
    Ok(x)
}

/// The n-D entry shared by `*fftn` and `*fft2`: `s` needs `axes` (as in MLX's Python layer);
/// neither transforms every axis.
fn nd(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, dir: Dir, norm: FftNorm, name: &'static str) -> Result<Array> {
    match (s, axes) {
        (Some(s), Some(axes)) => transform(a, s, axes, dir, norm),
        (None, Some(axes)) => transform(a, &sizes_of(a, axes, dir)?, axes, dir, norm),
        (Some(_), None) => Err(Error::invalid(name, "`axes` should not be `None` if `s` is not `None`.")),
        (None, None) => {
            let all: Vec<isize> = (0..a.ndim() as isize).collect();
            transform(a, &sizes_of(a, &all, dir)?, &all, dir, norm)
        }
    }
}

/// The 1-D entry: `n` defaults to the axis length (`2·(len − 1)` for `irfft`).
fn one(a: &Array, n: Option<isize>, axis: isize, dir: Dir, norm: FftNorm) -> Result<Array> {
    match n {
        Some(n) => transform(a, &[n], &[axis], dir, norm),
        None => transform(a, &sizes_of(a, &[axis], dir)?, &[axis], dir, norm),
    }
}

const C2C: Dir = Dir { real: false, inverse: false };
const IC2C: Dir = Dir { real: false, inverse: true };
const R2C: Dir = Dir { real: true, inverse: false };
const C2R: Dir = Dir { real: true, inverse: true };

/// `mx.fft.fft(a, n=None, axis=-1, norm="backward")`.
pub fn fft(a: &Array, n: Option<isize>, axis: isize, norm: FftNorm) -> Result<Array> {
    one(a, n, axis, C2C, norm)
}
/// `mx.fft.ifft(a, n=None, axis=-1, norm="backward")`.
pub fn ifft(a: &Array, n: Option<isize>, axis: isize, norm: FftNorm) -> Result<Array> {
    one(a, n, axis, IC2C, norm)
}
/// `mx.fft.rfft(a, n=None, axis=-1, norm="backward")`: the `n/2 + 1` non-negative frequencies.
pub fn rfft(a: &Array, n: Option<isize>, axis: isize, norm: FftNorm) -> Result<Array> {
    one(a, n, axis, R2C, norm)
}
/// `mx.fft.irfft(a, n=None, axis=-1, norm="backward")`: float32, `n` defaults to `2·(len − 1)`.
pub fn irfft(a: &Array, n: Option<isize>, axis: isize, norm: FftNorm) -> Result<Array> {
    one(a, n, axis, C2R, norm)
}
/// `mx.fft.fftn(a, s=None, axes=None, norm="backward")`.
pub fn fftn(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, C2C, norm, "fftn")
}
/// `mx.fft.ifftn(a, s=None, axes=None, norm="backward")`.
pub fn ifftn(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, IC2C, norm, "ifftn")
}
/// `mx.fft.rfftn(a, s=None, axes=None, norm="backward")`.
pub fn rfftn(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, R2C, norm, "rfftn")
}
/// `mx.fft.irfftn(a, s=None, axes=None, norm="backward")`.
pub fn irfftn(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, C2R, norm, "irfftn")
}
/// `mx.fft.fft2(a, s=None, axes=[-2, -1], norm="backward")` (`axes=None`: every axis).
pub fn fft2(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, C2C, norm, "fft2")
}
/// `mx.fft.ifft2(a, s=None, axes=[-2, -1], norm="backward")`.
pub fn ifft2(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, IC2C, norm, "ifft2")
}
/// `mx.fft.rfft2(a, s=None, axes=[-2, -1], norm="backward")`.
pub fn rfft2(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, R2C, norm, "rfft2")
}
/// `mx.fft.irfft2(a, s=None, axes=[-2, -1], norm="backward")`.
pub fn irfft2(a: &Array, s: Option<&[isize]>, axes: Option<&[isize]>, norm: FftNorm) -> Result<Array> {
    nd(a, s, axes, C2R, norm, "irfft2")
}
