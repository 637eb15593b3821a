//! Shape kernels: views re-stride the input's buffer; copies go through `Data::read`.

use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::error::{Error, Result};
use crate::ops::shape::ShapeOp;
use crate::shape::row_major_strides;
use alloc::vec::Vec;

/// Evaluates a shape op on its single input.
pub fn eval(op: &ShapeOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, dtype) = super::out0(outputs, name)?.clone();
    match op {
        ShapeOp::Concatenate(axis) => return concatenate(&inputs, *axis, &shape, name).map(|d| alloc::vec![d]),
        ShapeOp::SliceUpdate { start, step } => return slice_update(inputs, start, step, name).map(|d| alloc::vec![d]),
        ShapeOp::DynamicSliceUpdate { axes } => {
            return dynamic_slice_update(inputs, axes, name).map(|d| alloc::vec![d]);
        }
        ShapeOp::Depends(n) => return (0..*n).map(|i| super::input(&inputs, i, name)?.data()).collect(),
        _ => {}
    }
    let a = super::input(&inputs, 0, name)?;
    let d = a.data()?;
    let out = match op {
        ShapeOp::Reshape => {
            if d.is_row_contiguous(a.shape()) {
                Data { strides: row_major_strides(&shape), ..d }
            } else {
                let c = dense_copy(a, &d, name)?;
                Data { strides: row_major_strides(&shape), ..c }
            }
        }
        ShapeOp::Transpose(perm) => Data { strides: perm.iter().map(|&p| d.strides[p]).collect(), ..d },
        // BroadcastAxes reads input 0 only (the others gave their shapes).
        ShapeOp::Broadcast | ShapeOp::BroadcastAxes(_) => {
            let lead = shape.len() - a.ndim();
            let mut strides = alloc::vec![0isize; shape.len()];
            for (i, (&n, &s)) in a.shape().iter().zip(&d.strides).enumerate() {
                strides[lead + i] = if n == 1 && shape[lead + i] != 1 { 0 } else { s };
            }
            Data { strides, ..d }
        }
        ShapeOp::Slice { start, step } => slice_view(d, start, step, dtype.size()),
        ShapeOp::DynamicSlice { axes } => {
            let starts = super::input(&inputs, 1, name)?.to_vec::<i64>()?;
            let start = crate::ops::shape::window_starts(a.shape(), &shape, axes, &starts);
            slice_view(d, &start, &alloc::vec![1; shape.len()], dtype.size())
        }
        ShapeOp::AsStrided { strides, offset } => {
            let base = if d.is_row_contiguous(a.shape()) { d } else { dense_copy(a, &d, name)? };
            check_strided_bounds(&shape, strides, *offset, a.size(), name)?;
            let off = base.offset + offset * dtype.size();
            Data { offset: off, strides: strides.clone(), ..base }
        }
        ShapeOp::Copy => dense_copy(a, &d, name)?,
        ShapeOp::StopGradient => d,
        ShapeOp::Diagonal { offset, axis1, axis2 } => {
            let (s1, s2) = (d.strides[*axis1], d.strides[*axis2]);
            let mut strides: Vec<isize> =
                (0..a.ndim()).filter(|i| i != axis1 && i != axis2).map(|i| d.strides[i]).collect();
            strides.push(s1 + s2);
            let start = if *offset >= 0 { offset * s2 } else { -offset * s1 };
            let off = d.offset as isize + start * dtype.size() as isize;
            Data { offset: off as usize, strides, ..d }
        }
        ShapeOp::Concatenate(_) | ShapeOp::SliceUpdate { .. } | ShapeOp::DynamicSliceUpdate { .. } | ShapeOp::Depends(_) => {
            return Err(Error::runtime(name, "Handled above."));
        }
    };
    Ok(alloc::vec![out])
}

/// The strided window `start`/`step` of `d` (a view: new offset and strides).
fn slice_view(d: Data, start: &[isize], step: &[isize], item: usize) -> Data {
    let mut off = d.offset as isize;
    for (i, &s) in start.iter().enumerate() {
        off += s * d.strides[i] * item as isize;
    }
    let strides = d.strides.iter().zip(step).map(|(&s, &k)| s * k).collect();
    Data { offset: off as usize, strides, ..d }
}

/// `slice_update` at run-time starts: inputs are the array, the update (already the window's
/// shape and the array's dtype) and the 1-d int64 starts for `axes`.
fn dynamic_slice_update(mut inputs: Vec<Array>, axes: &[usize], op: &'static str) -> Result<Data> {
    if inputs.len() != 3 {
        return Err(Error::runtime(op, "Expected three inputs."));
    }
    let starts = inputs.pop().ok_or_else(|| Error::runtime(op, "Missing input."))?.to_vec::<i64>()?;
    let (a, up) = (super::input(&inputs, 0, op)?, super::input(&inputs, 1, op)?);
    let start = crate::ops::shape::window_starts(a.shape(), up.shape(), axes, &starts);
    let step = alloc::vec![1; start.len()];
    slice_update(inputs, &start, &step, op)
}

/// A dense row-major copy of `a`'s elements.
pub(crate) fn dense_copy(a: &Array, d: &Data, op: &'static str) -> Result<Data> {
    // Every byte is written below, so the fresh buffer is not zeroed first.
    let out = Data::alloc_for_overwrite(a.shape(), a.dtype(), op)?;
    let sz = a.itemsize();
    let src = d.buf.bytes();
    // SAFETY: fresh buffer of exactly nbytes.
    let dst = unsafe { out.slice_mut::<u8>(a.nbytes()) };
    if !dst.is_empty() && d.strides.iter().zip(a.shape()).all(|(&st, &n)| st == 0 || n == 1) {
        // One element broadcast everywhere (`zeros`, `full`): a fill, not a walk.
        let s = d.offset;
        crate::array::fill_elements(dst, &src[s..s + sz]);
        return Ok(out);
    }
    // SAFETY: the view's offsets lie inside its buffer (checked when it was made); `dst` holds
    // the view's elements.
    unsafe { crate::array::copy_view_dense(a.shape(), &d.strides, src.as_ptr().add(d.offset), sz, dst.as_mut_ptr()) };
    Ok(out)
}


/// Every element an `as_strided` view can reach must lie inside the `size` dense elements.
fn check_strided_bounds(shape: &[usize], strides: &[isize], offset: usize, size: usize, op: &'static str) -> Result<()> {
    if shape.iter().any(|&d| d == 0) {
        return Ok(());
    }
    let (mut lo, mut hi) = (offset as i128, offset as i128);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as i128 - 1) * s as i128;
        if span < 0 { lo += span } else { hi += span }
    }
    if lo < 0 || hi >= size as i128 {
        return Err(Error::invalid(op, "The strided view reaches outside the array's data."));
    }
    Ok(())
}

/// Row-major bytes of `a` (borrowed when dense, else copied into `tmp`).
fn dense_bytes<'a>(a: &Array, d: &'a Data, tmp: &'a mut Option<Data>, op: &'static str) -> Result<&'a [u8]> {
    let src = if d.is_row_contiguous(a.shape()) {
        d
    } else {
        tmp.insert(dense_copy(a, d, op)?)
    };
    let n = a.nbytes();
    src.buf.bytes().get(src.offset..src.offset + n).ok_or_else(|| Error::runtime(op, "View outside its buffer."))
}

/// Copies each input's blocks into place: with `inner` the bytes of one index along `axis`
/// and below, input block `o` lands at `o * out_block + axis_offset * inner`.
fn concatenate(inputs: &[Array], axis: usize, shape: &[usize], op: &'static str) -> Result<Data> {
    // The inputs' blocks tile the output exactly (the op's shape is the axis sizes' sum), so
    // nothing needs zeroing first.
    let out = Data::alloc_for_overwrite(shape, super::input(inputs, 0, op)?.dtype(), op)?;
    let item = super::input(inputs, 0, op)?.itemsize();
    let inner: usize = shape[axis + 1..].iter().product::<usize>() * item;
    let outer: usize = shape[..axis].iter().product();
    let total: usize = shape.iter().product::<usize>() * item;
    // SAFETY: fresh buffer of exactly `total` bytes.
    let dst = unsafe { out.slice_mut::<u8>(total) };
    let out_block = shape[axis] * inner;
    if inputs.iter().map(|a| a.shape().get(axis).copied().unwrap_or(0)).sum::<usize>() != shape[axis] {
        return Err(Error::runtime(op, "The inputs do not tile the output along the axis."));
    }
    let mut at = 0usize;
    for a in inputs {
        let d = a.data()?;
        let mut tmp = None;
        let src = dense_bytes(a, &d, &mut tmp, op)?;
        let block = a.shape()[axis] * inner;
        if block > 0 {
            for o in 0..outer {
                let to = o * out_block + at * inner;
                dst[to..to + block].copy_from_slice(&src[o * block..(o + 1) * block]);
            }
        }
        at += a.shape()[axis];
    }
    Ok(out)
}

/// A dense copy of `a` to write into: `a`'s own buffer when it can be donated.
pub(crate) fn writable_copy(a: Array, op: &'static str) -> Result<Data> {
    let n = a.nbytes();
    match a.donate(n) {
        Ok(d) => Ok(d),
        Err(a) => {
            let d = a.data()?;
            dense_copy(&a, &d, op)
        }
    }
}

/// Copy of input 0 with input 1 written over the window `start`/`step`.
pub(crate) fn slice_update(mut inputs: Vec<Array>, start: &[isize], step: &[isize], op: &'static str) -> Result<Data> {
    if inputs.len() != 2 {
        return Err(Error::runtime(op, "Expected two inputs."));
    }
    let up = inputs.pop().ok_or_else(|| Error::runtime(op, "Missing input."))?;
    let a = inputs.pop().ok_or_else(|| Error::runtime(op, "Missing input."))?;
    let (shape, item) = (a.shape().to_vec(), a.itemsize());
    let rm = row_major_strides(&shape);
    let base: isize = start.iter().zip(&rm).map(|(&s, &r)| s * r).sum();
    let wstrides: Vec<isize> = rm.iter().zip(step).map(|(&r, &k)| r * k).collect();
    let n = a.size() as isize;
    check_window(up.shape(), &wstrides, base, n, op)?;
    let out = writable_copy(a, op)?;
    let ud = up.data()?;
    let mut tmp = None;
    let src = dense_bytes(&up, &ud, &mut tmp, op)?;
    // SAFETY: `out` is a fresh or donated dense buffer of n elements, held only here.
    let dst = unsafe { out.slice_mut::<u8>(n as usize * item) };
    // Runs of consecutive elements at a time (a KV-cache write is one run per head).
    let mut k = 0usize;
    crate::array::for_each_run(up.shape(), &wstrides, &mut |off, run| {
        let (to, len) = ((base + off) as usize * item, run * item);
        dst[to..to + len].copy_from_slice(&src[k..k + len]);
        k += len;
    });
    Ok(out)
}

/// Every element of the window must lie in `0..n`.
fn check_window(shape: &[usize], strides: &[isize], base: isize, n: isize, op: &'static str) -> Result<()> {
    if shape.iter().any(|&d| d == 0) {
        return Ok(());
    }
    let (mut lo, mut hi) = (base as i128, base as i128);
    for (&d, &s) in shape.iter().zip(strides) {
        let span = (d as i128 - 1) * s as i128;
        if span < 0 { lo += span } else { hi += span }
    }
    if lo < 0 || hi >= n as i128 {
        return Err(Error::runtime(op, "The update window lies outside the array."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `fill` writes the element at every position, for zero and non-zero elements, element
    /// counts that are and are not powers of two, and multi-byte elements.
    #[test]
    fn fill_repeats_the_element() {
        for elem in [&[0u8, 0, 0, 0][..], &[1, 2, 3, 4], &[7, 0], &[9]] {
            for count in [0usize, 1, 2, 3, 5, 8, 13, 1000] {
                let mut dst = alloc::vec![0xAAu8; elem.len() * count];
                crate::array::fill_elements(&mut dst, elem);
                let want: alloc::vec::Vec<u8> = elem.iter().copied().cycle().take(elem.len() * count).collect();
                assert_eq!(dst, want, "elem {elem:?} x {count}");
            }
        }
    }
}
