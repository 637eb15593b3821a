//! Convolution graph building (`mx.conv1d`, `mx.conv2d`, `mx.conv3d`, `mx.conv_general`): MLX layout —
//! input `[N, spatial…, C_in]`, weight `[C_out, spatial…, C_in/groups]`, output
//! `[N, spatial…, C_out]`. Checks and output sizes follow `run_conv_checks` and
//! `Convolution::conv_out_shape` of MLX 0.32 (including its C++ truncating division).

use super::{fmt_shape, LinalgOp};
use crate::array::Array;
use crate::dtype::promote_types;
use crate::error::{Error, Result};
use crate::ops::{astype, slice};
use crate::primitive::Primitive;
use alloc::format;
use alloc::vec::Vec;

/// Parameters of a convolution primitive (one entry per spatial axis).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvParams {
    /// Step of the window.
    pub stride: Vec<usize>,
    /// Zeros added before each spatial axis.
    pub pad_lo: Vec<usize>,
    /// Zeros added after each spatial axis.
    pub pad_hi: Vec<usize>,
    /// Spacing between kernel taps.
    pub kernel_dilation: Vec<usize>,
    /// Spacing inserted between input elements (transposed convolution).
    pub input_dilation: Vec<usize>,
    /// Channel groups.
    pub groups: usize,
    /// Flip the kernel (true convolution instead of cross-correlation).
    pub flip: bool,
}

/// `mx.conv1d(input, weight, stride, padding, dilation, groups)`.
pub fn conv1d(input: &Array, weight: &Array, stride: isize, padding: isize, dilation: isize, groups: isize) -> Result<Array> {
    conv_general(input, weight, &[stride], &[padding], &[padding], &[dilation], &[1], groups, false)
}

/// `mx.conv2d(input, weight, stride, padding, dilation, groups)` with per-axis pairs.
pub fn conv2d(
    input: &Array,
    weight: &Array,
    stride: (isize, isize),
    padding: (isize, isize),
    dilation: (isize, isize),
    groups: isize,
) -> Result<Array> {
    let pad = [padding.0, padding.1];
    conv_general(input, weight, &[stride.0, stride.1], &pad, &pad, &[dilation.0, dilation.1], &[1, 1], groups, false)
}

/// `mx.conv3d(input, weight, stride, padding, dilation, groups)` with per-axis triples
/// (NDHWC input, ODHWI weight). As in MLX, `groups` must be 1 for three spatial axes.
pub fn conv3d(
    input: &Array,
    weight: &Array,
    stride: (isize, isize, isize),
    padding: (isize, isize, isize),
    dilation: (isize, isize, isize),
    groups: isize,
) -> Result<Array> {
    let pad = [padding.0, padding.1, padding.2];
    let (s, d) = ([stride.0, stride.1, stride.2], [dilation.0, dilation.1, dilation.2]);
    conv_general(input, weight, &s, &pad, &pad, &d, &[1, 1, 1], groups, false)
}

/// Expands a per-axis list given as empty (→ `default`), one value (→ every axis) or `n` values.
fn per_axis(v: &[isize], n: usize, default: isize) -> Vec<isize> {
    match v.len() {
        0 => alloc::vec![default; n],
        1 => alloc::vec![v[0]; n],
        _ => v.to_vec(),
    }
}

fn fmt_list(v: &[isize]) -> alloc::string::String {
    let s: Vec<alloc::string::String> = v.iter().map(|d| format!("{d}")).collect();
    format!("({})", s.join(","))
}

/// `mx.conv_general(input, weight, stride, padding, kernel_dilation, input_dilation, groups, flip)`
/// over 1–3 spatial axes; padding may be negative (crops the input, as MLX does).
#[allow(clippy::too_many_arguments)]
pub fn conv_general(
    input: &Array,
    weight: &Array,
    stride: &[isize],
    padding_lo: &[isize],
    padding_hi: &[isize],
    kernel_dilation: &[isize],
    input_dilation: &[isize],
    groups: isize,
    flip: bool,
) -> Result<Array> {
    const OP: &str = "conv";
    let nd = input.ndim();
    if groups != 1 && nd != 3 && nd != 4 {
        return Err(Error::invalid(OP, "Can only handle groups != 1 in 1D or 2D convolutions."));
    }
    if !(3..=5).contains(&nd) {
        return Err(Error::invalid(
            OP,
            "Only works for inputs with 1-3 spatial dimensions. The inputs must be in the format [N, ..., C_in]",
        ));
    }
    let sd = nd - 2;
    check(input, weight, sd, groups)?;
    let out_type = promote_types(input.dtype(), weight.dtype());
    let mut x = astype(input, out_type)?;
    let w = astype(weight, out_type)?;

    let stride = per_axis(stride, sd, 1);
    let mut lo = per_axis(padding_lo, sd, 0);
    let mut hi = per_axis(padding_hi, sd, 0);
    let kdil = per_axis(kernel_dilation, sd, 1);
    let idil = per_axis(input_dilation, sd, 1);
    let lists_ok = [&stride, &lo, &hi, &kdil, &idil].iter().all(|v| v.len() == sd);
    if !lists_ok {
        return Err(Error::invalid(OP, format!("Invalid strides, padding or dilation for {sd}D convolution.")));
    }

    // Negative padding crops the input.
    if lo.iter().chain(&hi).any(|&p| p < 0) {
        let mut start = alloc::vec![0isize; nd];
        let mut stop: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
        for i in 0..sd {
            if lo[i] < 0 {
                start[i + 1] = -lo[i];
                lo[i] = 0;
            }
            if hi[i] < 0 {
                stop[i + 1] += hi[i];
                hi[i] = 0;
            }
        }
        x = slice(&x, &start, &stop, &alloc::vec![1; nd])?;
    }

    let mut out_shape = alloc::vec![x.shape()[0]];
    for i in 0..sd {
        if kdil[i] <= 0 {
            return Err(Error::invalid(OP, format!("Kernel dilation sizes must be positive. Got kernel dilation {}.", fmt_list(&kdil))));
        }
        if idil[i] <= 0 {
            return Err(Error::invalid(OP, format!("Input dilation sizes must be positive. Got input dilation {}.", fmt_list(&idil))));
        }
        if stride[i] <= 0 {
            return Err(Error::invalid(OP, format!("Stride sizes must be positive. Got strides {}.", fmt_list(&stride))));
        }
        let kd = 1 + kdil[i] as i64 * (w.shape()[i + 1] as i64 - 1);
        let id = 1 + idil[i] as i64 * (x.shape()[i + 1] as i64 - 1);
        // C++ integer division truncates toward zero; MLX relies on it.
        let size = (id + lo[i] as i64 + hi[i] as i64 - kd) / stride[i] as i64 + 1;
        if size <= 0 {
            return Err(Error::invalid(
                OP,
                format!(
                    "Spatial dimensions of input after padding cannot be smaller than weight spatial dimensions. Got error at axis {} for input with shape {}, padding low {}, padding high {}, and weight of shape {}.",
                    i + 1,
                    fmt_shape(x.shape()),
                    fmt_list(&lo),
                    fmt_list(&hi),
                    fmt_shape(w.shape())
                ),
            ));
        }
        out_shape.push(size as usize);
    }
    out_shape.push(w.shape()[0]);
    let u = |v: &[isize]| v.iter().map(|&d| d as usize).collect::<Vec<usize>>();
    let params = ConvParams {
        stride: u(&stride),
        pad_lo: u(&lo),
        pad_hi: u(&hi),
        kernel_dilation: u(&kdil),
        input_dilation: u(&idil),
        groups: groups as usize,
        flip,
    };
    Ok(Array::from_op(Primitive::Linalg(LinalgOp::Conv(params)), alloc::vec![x, w], out_shape, out_type))
}

/// MLX's `run_conv_checks`.
fn check(input: &Array, weight: &Array, sd: usize, groups: isize) -> Result<()> {
    const OP: &str = "conv";
    if !input.dtype().is_float() {
        return Err(Error::invalid(
            OP,
            format!("Invalid input array with type {}. Convolution currently only supports floating point types", input.dtype()),
        ));
    }
    if weight.ndim() != sd + 2 {
        return Err(Error::invalid(
            OP,
            format!(
                "Invalid weight array with {} dimensions for {sd}D convolution. Expected an array with {} dimensions following the format [C_out, ..., C_in].",
                weight.ndim(),
                sd + 2
            ),
        ));
    }
    if groups <= 0 {
        return Err(Error::invalid(OP, format!("groups must be positive but got {groups}.")));
    }
    let g = groups as usize;
    let cin = input.shape()[sd + 1];
    if cin % g != 0 {
        return Err(Error::invalid(
            OP,
            format!(
                "The input channels must be divisible by the number of groups. Got input with shape {} and {groups} groups.",
                fmt_shape(input.shape())
            ),
        ));
    }
    if g > 1 && weight.shape()[0] % g != 0 {
        return Err(Error::invalid(
            OP,
            format!(
                "If groups > 1, the output channels must be divisible by the number of groups. Got {} output channels and {groups} groups.",
                weight.shape()[0]
            ),
        ));
    }
    let wc = weight.shape()[sd + 1];
    if cin != g * wc {
        let msg = if g == 1 {
            format!(
                "Expect the input channels in the input and weight array to match but got shapes - input: {} and weight: {}",
                fmt_shape(input.shape()),
                fmt_shape(weight.shape())
            )
        } else {
            format!(
                "Given groups={groups} and weights of shape {}, expected to have {} input channels but got {cin} input channels instead.",
                fmt_shape(weight.shape()),
                g * wc
            )
        };
        return Err(Error::invalid(OP, msg));
    }
    Ok(())
}
