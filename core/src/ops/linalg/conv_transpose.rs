//! Transposed convolution (`mx.conv_transpose1d/2d/3d`). As in MLX 0.32, a transposed
//! convolution is the ordinary convolution of the input dilated by `stride` (zeros inserted
//! between elements) with the spatially flipped kernel and stride 1; `padding` and
//! `output_padding` become the low/high padding of that convolution (possibly negative, which
//! crops). Layouts are MLX's: input `[N, spatial…, C_in]`, weight `[C_out, spatial…, C_in/groups]`.

use super::conv::conv_general;
use crate::array::Array;
use crate::error::{Error, Result};
use alloc::vec::Vec;

/// `mx.conv_transpose1d(input, weight, stride, padding, dilation, output_padding, groups)`.
pub fn conv_transpose1d(
    input: &Array,
    weight: &Array,
    stride: isize,
    padding: isize,
    dilation: isize,
    output_padding: isize,
    groups: isize,
) -> Result<Array> {
    conv_transpose_general(input, weight, &[stride], &[padding], &[dilation], &[output_padding], groups)
}

/// `mx.conv_transpose2d` with per-axis pairs.
pub fn conv_transpose2d(
    input: &Array,
    weight: &Array,
    stride: (isize, isize),
    padding: (isize, isize),
    dilation: (isize, isize),
    output_padding: (isize, isize),
    groups: isize,
) -> Result<Array> {
    conv_transpose_general(
        input,
        weight,
        &[stride.0, stride.1],
        &[padding.0, padding.1],
        &[dilation.0, dilation.1],
        &[output_padding.0, output_padding.1],
        groups,
    )
}

/// `mx.conv_transpose3d` with per-axis triples (`groups` must be 1, as in MLX).
pub fn conv_transpose3d(
    input: &Array,
    weight: &Array,
    stride: (isize, isize, isize),
    padding: (isize, isize, isize),
    dilation: (isize, isize, isize),
    output_padding: (isize, isize, isize),
    groups: isize,
) -> Result<Array> {
    conv_transpose_general(
        input,
        weight,
        &[stride.0, stride.1, stride.2],
        &[padding.0, padding.1, padding.2],
        &[dilation.0, dilation.1, dilation.2],
        &[output_padding.0, output_padding.1, output_padding.2],
        groups,
    )
}

/// Rewrites the transposed convolution as `conv_general` (see the module doc). Per axis, with
/// kernel extent `kd = dilation·(k−1)`: low padding `kd − padding`, high padding
/// `kd − padding + output_padding`, input dilation `stride`, kernel flipped. The
/// ndim checks (including the wording of the ndim errors) are `conv_general`'s; MLX reads
/// the spatial sizes before those checks, so too few input/weight axes are an IndexError.
fn conv_transpose_general(
    input: &Array,
    weight: &Array,
    stride: &[isize],
    padding: &[isize],
    dilation: &[isize],
    output_padding: &[isize],
    groups: isize,
) -> Result<Array> {
    const OP: &str = "conv";
    let n = stride.len();
    if input.ndim() <= n || weight.ndim() <= n {
        return Err(Error::index(
            OP,
            alloc::format!(
                "Input of {} and weight of {} dimensions have too few axes for a {n}D transposed convolution.",
                input.ndim(),
                weight.ndim()
            ),
        ));
    }
    let mut lo = Vec::with_capacity(n);
    let mut hi = Vec::with_capacity(n);
    for i in 0..n {
        let kd = dilation[i] as i64 * (weight.shape()[i + 1] as i64 - 1);
        lo.push(to_int(kd - padding[i] as i64)?);
        hi.push(to_int(kd - padding[i] as i64 + output_padding[i] as i64)?);
    }
    conv_general(input, weight, &alloc::vec![1; n], &lo, &hi, dilation, stride, groups, true)
}

/// MLX keeps paddings in C `int`; a value outside it is an overflow error, never a wrap.
fn to_int(v: i64) -> Result<isize> {
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        return Err(Error::new(crate::error::ErrorKind::Overflow, "conv", "Transposed convolution padding overflows."));
    }
    Ok(v as isize)
}
