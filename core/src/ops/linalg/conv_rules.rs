//! Transform rules of the convolution primitive.
//!
//! - vjp: through [`composed`], the same convolution written with ordinary ops (dilate, pad,
//!   one strided slice per kernel tap, a grouped matmul), so both cotangents — and second
//!   derivatives — come from those ops' rules, whatever the strides, dilations, groups or flip.
//! - vmap: one convolution over the whole batch. A mapped input only folds the batch into
//!   `N`; a mapped weight puts each example's channels in their own groups (`n · groups`).

use super::{ConvParams, LinalgOp};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::*;
use crate::primitive::Primitive;
use alloc::vec;
use alloc::vec::Vec;

fn dims(v: &[usize]) -> Vec<isize> {
    v.iter().map(|&d| d as isize).collect()
}

/// `x` with `d − 1` zeros inserted between neighbours along `axis` (input dilation).
fn dilate(x: &Array, axis: usize, d: usize) -> Result<Array> {
    let len = x.shape()[axis];
    let e = expand_dims(x, &[axis as isize + 1])?;
    let mut widths = vec![(0, 0); e.ndim()];
    widths[axis + 1] = (0, d - 1);
    let spread = pad(&e, &widths, PadMode::Constant, &zeros(&[], x.dtype())?)?;
    let mut shape = dims(x.shape());
    shape[axis] = (len * d) as isize;
    let flat = reshape(&spread, &shape)?;
    let mut stop = dims(x.shape());
    stop[axis] = ((len - 1) * d + 1) as isize;
    slice(&flat, &vec![0; x.ndim()], &stop, &vec![1; x.ndim()])
}

/// The convolution `p` of `x` `[N, spatial…, C_in]` with `w` `[C_out, taps…, C_in/groups]`,
/// composed of differentiable ops (im2col by strided slices, then a matmul per group).
pub(crate) fn composed(x: &Array, w: &Array, p: &ConvParams) -> Result<Array> {
    let nd = x.ndim();
    let sd = nd.checked_sub(2).ok_or_else(|| Error::invalid("conv", "Convolution input needs a batch and a channel axis."))?;
    if p.input_dilation.len() != sd || p.pad_lo.len() != sd || p.pad_hi.len() != sd {
        return Err(Error::invalid("conv", "Convolution parameters do not match its inputs."));
    }
    let mut x = x.clone();
    for i in 0..sd {
        if p.input_dilation[i] > 1 {
            x = dilate(&x, i + 1, p.input_dilation[i])?;
        }
    }
    if p.pad_lo.iter().chain(&p.pad_hi).any(|&v| v > 0) {
        let mut widths = vec![(0, 0); nd];
        for i in 0..sd {
            widths[i + 1] = (p.pad_lo[i], p.pad_hi[i]);
        }
        x = pad(&x, &widths, PadMode::Constant, &zeros(&[], x.dtype())?)?;
    }
    let taps = &w.shape()[1..=sd];
    // Parameters as `conv_general` validates them (a primitive rebuilt from a file may not be).
    let bad = || Error::invalid("conv", "Convolution parameters do not match its inputs.");
    let (g, cin) = (p.groups, x.shape()[nd - 1]);
    if w.ndim() != nd || g == 0 || cin % g != 0 || w.shape()[0] % g != 0 || [&p.stride, &p.kernel_dilation].iter().any(|v| v.len() != sd || v.contains(&0)) {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(sd);
    for i in 0..sd {
        let extent = p.kernel_dilation[i] * taps[i].checked_sub(1).ok_or_else(bad)? + 1;
        out.push(x.shape()[i + 1].checked_sub(extent).ok_or_else(bad)? / p.stride[i] + 1);
    }
    let ntaps: usize = taps.iter().product();
    // One strided window of the input per tap, in the weight's (row-major) tap order.
    let mut cols = Vec::with_capacity(ntaps);
    for t in 0..ntaps {
        let (mut start, mut stop, mut step) = (vec![0isize; nd], dims(x.shape()), vec![1isize; nd]);
        let mut rest = t;
        for i in (0..sd).rev() {
            let k = rest % taps[i];
            rest /= taps[i];
            // flip: true convolution, the kernel read backwards.
            let k = if p.flip { taps[i] - 1 - k } else { k };
            start[i + 1] = (k * p.kernel_dilation[i]) as isize;
            stop[i + 1] = start[i + 1] + ((out[i] - 1) * p.stride[i] + 1) as isize;
            step[i + 1] = p.stride[i] as isize;
        }
        cols.push(slice(&x, &start, &stop, &step)?);
    }
    let (n, cout) = (x.shape()[0], w.shape()[0]);
    let m: usize = n * out.iter().product::<usize>();
    let (cg, og) = (cin / g, cout / g);
    // [N, out…, taps, C_in] → [groups, N·out, taps · C_in/groups]
    let cols = reshape(&stack(&cols, -2)?, &[m as isize, ntaps as isize, g as isize, cg as isize])?;
    let cols = reshape(&transpose(&cols, Some(&[2, 0, 1, 3]))?, &[g as isize, m as isize, (ntaps * cg) as isize])?;
    // [C_out, taps…, C_in/groups] → [groups, taps · C_in/groups, C_out/groups]
    let wg = swapaxes(&reshape(w, &[g as isize, og as isize, (ntaps * cg) as isize])?, -1, -2)?;
    let y = transpose(&matmul(&cols, &wg)?, Some(&[1, 0, 2]))?;
    let mut shape = vec![n as isize];
    shape.extend(dims(&out));
    shape.push(cout as isize);
    reshape(&y, &shape)
}

/// The vmap rule: `bx`, `bw` are the batched input / weight (batch axis first) where mapped;
/// `out` is one example's output shape `[N, out…, C_out]`.
pub(crate) fn vmap(p: &ConvParams, x: &Array, w: &Array, bx: Option<&Array>, bw: Option<&Array>, out: &[usize], n: usize) -> Result<Array> {
    let conv = |p: ConvParams, x: Array, w: Array, shape: Vec<usize>| {
        let dtype = x.dtype();
        Array::from_op(Primitive::Linalg(LinalgOp::Conv(p)), vec![x, w], shape, dtype)
    };
    let nd = x.ndim();
    let Some(bw) = bw else {
        // Only the input is mapped: the batch joins N.
        let Some(bx) = bx else { return Err(Error::runtime("conv", "vmap of conv with nothing mapped")) };
        let mut xs = dims(&x.shape()[1..]);
        xs.insert(0, (n * x.shape()[0]) as isize);
        let mut ys = out.to_vec();
        ys[0] *= n;
        let y = conv(p.clone(), reshape(bx, &xs)?, w.clone(), ys);
        let mut shape = vec![n as isize];
        shape.extend(dims(out));
        return reshape(&y, &shape);
    };
    // The weight is mapped: example b's channels form groups b·g … b·g + g − 1.
    let bx = match bx {
        Some(b) => b.clone(),
        None => {
            let mut shape = vec![n];
            shape.extend_from_slice(x.shape());
            broadcast_to(&expand_dims(x, &[0])?, &shape)?
        }
    };
    // [n, N, spatial…, C_in] → [N, spatial…, n · C_in]
    let mut xs = dims(&x.shape()[..nd - 1]);
    xs.push((n * x.shape()[nd - 1]) as isize);
    let xb = reshape(&moveaxis(&bx, 0, -2)?, &xs)?;
    let mut ws = dims(w.shape());
    ws[0] *= n as isize;
    let wb = reshape(bw, &ws)?;
    let mut ys = out.to_vec();
    ys[nd - 1] *= n;
    let q = ConvParams { groups: p.groups * n, ..p.clone() };
    let y = conv(q, xb, wb, ys);
    // [N, out…, n · C_out] → [n, N, out…, C_out]
    let mut split = dims(&out[..nd - 1]);
    split.push(n as isize);
    split.push(out[nd - 1] as isize);
    moveaxis(&reshape(&y, &split)?, -2, 0)
}
