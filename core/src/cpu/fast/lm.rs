//! CPU kernels of the language models' fused decode ops (`ops/fast/lm.rs`). Each runs the
//! kernels of the ops it stands for on the same values — the sum as `add` computes it, then
//! [`rms_row`](super::rms_row); each head as [`rope`](super::rope) rotates it — so the results
//! are bit-identical to the composed graph's.

use super::{as_f32, as_f32_mut, per_feature, rms_row, Store};
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::cpu::elementwise::{OutPtr, GRAIN};
use crate::error::{Error, Result};
use crate::parallel::parallel_for;
use crate::shape::row_major_strides;
use alloc::vec::Vec;

/// `add_rms_norm`: inputs x, r, weight; outputs `x + r` and its RMSNorm. The sum is written
/// into x's buffer where this node holds x's only reference (the residual stream's previous
/// value, dead after the add): one activation buffer fewer live at a prefill's peak (issue 16).
pub(super) fn add_rms_norm(inputs: Vec<Array>, eps: f32, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    const OP: &str = "add_rms_norm";
    let (shape, dtype) = crate::cpu::out0(outputs, OP)?.clone();
    if outputs.len() != 2 || inputs.len() != 3 {
        return Err(Error::runtime(OP, "takes three inputs and gives two outputs"));
    }
    let mut inputs = inputs.into_iter();
    let (Some(x), Some(r), Some(w)) = (inputs.next(), inputs.next(), inputs.next()) else {
        return Err(Error::runtime(OP, "takes three inputs and gives two outputs"));
    };
    let nbytes = shape.iter().product::<usize>() * dtype.size();
    let (x, sum) = if x.dtype() == dtype && x.shape() == shape.as_slice() {
        match x.donate(nbytes) {
            Ok(d) => (None, d),
            Err(x) => (Some(x), Data::alloc_for_overwrite(&shape, dtype, OP)?),
        }
    } else {
        (Some(x), Data::alloc_for_overwrite(&shape, dtype, OP)?)
    };
    let normed = Data::alloc_for_overwrite(&shape, dtype, OP)?;
    crate::dispatch_float!(dtype, T => add_norm::<T>(x.as_ref(), &r, &w, eps, &shape, &sum, &normed),
        else Err(Error::unsupported(OP, alloc::format!("{OP} does not support {dtype}."))))?;
    Ok(alloc::vec![sum, normed])
}

/// `x = None`: x's values are already in `sum` (its donated buffer), added to in place.
fn add_norm<T: Store>(x: Option<&Array>, r: &Array, w: &Array, eps: f32, shape: &[usize], sum: &Data, normed: &Data) -> Result<()> {
    let d = shape.last().copied().unwrap_or(1);
    let xd = x.map(|x| x.data()).transpose()?;
    let (rd, wd) = (r.data()?, w.data()?);
    let xv = xd.as_ref().map(|xd| xd.read::<T>(shape)).transpose()?;
    let rv = rd.read::<T>(shape)?;
    let wv = per_feature::<T>(&wd, w.ndim(), d)?;
    let n = rv.len();
    if d == 0 || n == 0 || xv.as_ref().is_some_and(|xv| xv.len() != n) {
        return Ok(());
    }
    // As `rms_norm`'s kernel: the f32 of 1/d.
    let inv_d = (1.0 / d as f64) as f32;
    let level = crate::cpu::isa::isa();
    let (ps, py) = (OutPtr(sum.buf.as_mut_ptr() as *mut T), OutPtr(normed.buf.as_mut_ptr() as *mut T));
    parallel_for(n / d, (GRAIN / d).max(1), &|rows| {
        let (ps, py) = (&ps, &py);
        for i in rows {
            let row = i * d..(i + 1) * d;
            // SAFETY: row i of each output buffer (fresh, or x's donated one), written by this
            // chunk only.
            let (s, y) = unsafe { (ps.chunk(&row), py.chunk(&row)) };
            let b = &rv[row.clone()];
            match xv.as_ref().map(|xv| &xv[row.clone()]) {
                Some(a) => {
                    if let (Some(a), Some(b), Some(s)) = (as_f32(a), as_f32(b), as_f32_mut(&mut *s)) {
                        s.iter_mut().zip(a).zip(b).for_each(|((s, &a), &b)| *s = a + b);
                    } else {
                        // `add` of two halves: the f32 sum rounded once to the dtype.
                        s.iter_mut().zip(a).zip(b).for_each(|((s, &a), &b)| *s = T::from_f(a.f() + b.f()));
                    }
                }
                None => {
                    if let (Some(b), Some(s)) = (as_f32(b), as_f32_mut(&mut *s)) {
                        s.iter_mut().zip(b).for_each(|(s, &b)| *s += b);
                    } else {
                        s.iter_mut().zip(b).for_each(|(s, &b)| *s = T::from_f(s.f() + b.f()));
                    }
                }
            }
            rms_row(level, s, &wv, eps, inv_d, y);
        }
    });
    Ok(())
}

/// `decode_heads`: inputs q, k, v `(B, 1, H·D)`, offset, optional freqs; outputs q and k
/// rotated, and v, as `(B, H, 1, D)`.
pub(super) fn decode_heads(
    inputs: &[Array],
    _head_dim: usize,
    dims: usize,
    traditional: bool,
    base: f32,
    scale: f32,
    outputs: &[OutMeta],
) -> Result<Vec<Data>> {
    const OP: &str = "decode_heads";
    if outputs.len() != 3 || inputs.len() < 4 {
        return Err(Error::runtime(OP, "takes q, k, v and an offset and gives three outputs"));
    }
    let mut out = Vec::with_capacity(3);
    for (i, (shape, dtype)) in outputs.iter().enumerate().take(2) {
        // `(B, 1, H·D)` and `(B, H, 1, D)` are the same row-major memory: rope reads the
        // projection's output in place, as it would read the reshape's view.
        let mut ins = alloc::vec![heads_view(&inputs[i], shape)?];
        ins.extend(inputs[3..].iter().cloned());
        let o = Data::alloc_for_overwrite(shape, *dtype, OP)?;
        crate::dispatch_float!(*dtype, T => super::rope::<T>(&ins, dims, traditional, base, scale, shape, &o),
            else Err(Error::unsupported(OP, alloc::format!("{OP} does not support {dtype}."))))?;
        out.push(o);
    }
    out.push(heads_view(&inputs[2], &outputs[2].0)?.data()?);
    Ok(out)
}

/// `a` `(B, 1, H·D)` seen as `shape` `(B, H, 1, D)`: a view of its buffer when it is dense
/// (what `reshape` gives), else a dense copy.
fn heads_view(a: &Array, shape: &[usize]) -> Result<Array> {
    const OP: &str = "decode_heads";
    if a.size() != shape.iter().product::<usize>() {
        return Err(Error::runtime(OP, "the heads do not hold the projection's elements"));
    }
    let d = a.data()?;
    let data = if d.is_row_contiguous(a.shape()) {
        Data { buf: d.buf.clone(), offset: d.offset, strides: row_major_strides(shape) }
    } else {
        let dense = Data::alloc_for_overwrite(shape, a.dtype(), OP)?;
        crate::dispatch_all!(a.dtype(), T => {
            let v = d.read::<T>(a.shape())?;
            // SAFETY: a fresh buffer of exactly `a.size()` elements of T, held only here.
            unsafe { dense.slice_mut::<T>(v.len()) }.copy_from_slice(&v);
        });
        dense
    };
    Ok(Array::from_data(shape.to_vec(), a.dtype(), data))
}

/// `kv_write`: inputs the key and value buffers `(B, H, C, D)` and the new keys and values
/// `(B, H, T, D)`; outputs both buffers with rows `at..at + T` written — by `slice_update`'s
/// own kernel, so in place where the op holds a buffer alone — and views of their rows
/// `..at + T` over the same memory (what `slice` gives).
pub(super) fn kv_write(mut inputs: Vec<Array>, at: usize, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    const OP: &str = "kv_write";
    if outputs.len() != 4 || inputs.len() != 4 {
        return Err(Error::runtime(OP, "takes two buffers, keys and values and gives four outputs"));
    }
    let (v, k) = (inputs.pop(), inputs.pop());
    let (vbuf, kbuf) = (inputs.pop(), inputs.pop());
    let mut out = Vec::with_capacity(4);
    for (buf, x) in [(kbuf, k), (vbuf, v)] {
        let (buf, x) = buf.zip(x).ok_or_else(|| Error::runtime(OP, "missing input"))?;
        let start = [0, 0, at as isize, 0];
        // Each input handle is moved into the kernel: the op's only reference to the buffer.
        out.push(crate::cpu::shape::slice_update(alloc::vec![buf, x], &start, &[1; 4], OP)?);
    }
    for i in 0..2 {
        // Rows `..end` of a row-major buffer: the same first element and strides.
        let d = out[i].clone();
        if outputs[i + 2].0.len() != d.strides.len() {
            return Err(Error::runtime(OP, "the views do not match their buffers"));
        }
        out.push(d);
    }
    Ok(out)
}
