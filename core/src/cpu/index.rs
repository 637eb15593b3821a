//! CPU kernels of the index family. Gather copies element bytes (dtype-agnostic) through
//! the input's strides; scatter writes into a dense copy of the input (donated when
//! possible) and combines typed elements. Every index is wrapped once when negative and
//! checked against its axis before any access: a bad index is an `Index` error.

use crate::array::{for_each_strided, Array, Data};
use crate::backend::OutMeta;
use crate::element::{Complex64, Element};
use crate::error::{Error, Result};
use crate::ops::index::{IndexOp, ScatterMode};
use crate::shape::row_major_strides;
use alloc::vec::Vec;
use half::{bf16, f16};

/// Evaluates an index primitive.
pub fn eval(op: &IndexOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, _) = super::out0(outputs, name)?.clone();
    match op {
        IndexOp::Gather { axes, slice_sizes } => gather(&inputs, axes, slice_sizes, &shape, name).map(|d| alloc::vec![d]),
        IndexOp::Scatter { axes, mode } => scatter(inputs, axes, *mode, name).map(|d| alloc::vec![d]),
    }
}

/// Reads an index array as i64 row-major (u64 beyond i64 saturates, then fails the check).
fn read_indices(a: &Array, op: &'static str) -> Result<Vec<i64>> {
    let d = a.data()?;
    crate::dispatch_int!(a.dtype(), T => {
        Ok(d.read::<T>(a.shape())?.iter().map(|&x| i64::try_from(x).unwrap_or(i64::MAX)).collect())
    }, else Err(Error::invalid(op, "Indices must be integral.")))
}

/// For each index position, the element offset of its window origin: `Σ idx_j · stride[axes_j]`
/// after wrapping negatives and checking `0 ≤ i` and `i + window ≤ dim`.
fn window_origins(
    idx: &[Array],
    axes: &[usize],
    dims: &[usize],
    window: &[usize],
    strides: &[isize],
    count: usize,
    op: &'static str,
) -> Result<Vec<isize>> {
    let mut base = alloc::vec![0isize; count];
    for (arr, &ax) in idx.iter().zip(axes) {
        let v = read_indices(arr, op)?;
        if v.len() != count {
            return Err(Error::runtime(op, "Index arrays were not broadcast."));
        }
        let n = dims[ax] as i64;
        for (b, &i) in base.iter_mut().zip(&v) {
            let w = if i < 0 { i + n } else { i };
            if w < 0 || w.checked_add(window[ax] as i64).map_or(true, |end| end > n) {
                return Err(Error::index(op, alloc::format!("index {i} is out of bounds for axis {ax} with size {n}")));
            }
            *b += w as isize * strides[ax];
        }
    }
    Ok(base)
}

fn gather(inputs: &[Array], axes: &[usize], sizes: &[usize], shape: &[usize], op: &'static str) -> Result<Data> {
    let a = super::input(inputs, 0, op)?;
    let idx = &inputs[1..];
    let count: usize = shape[..shape.len() - sizes.len()].iter().product();
    let d = a.data()?;
    let base = window_origins(idx, axes, a.shape(), sizes, &d.strides, count, op)?;
    let item = a.itemsize();
    let out = Data::alloc(shape, a.dtype(), op)?;
    let total: usize = shape.iter().product::<usize>() * item;
    // SAFETY: fresh buffer of exactly `total` bytes.
    let dst = unsafe { out.slice_mut::<u8>(total) };
    let src = d.buf.bytes();
    let mut k = 0usize;
    for &b in &base {
        let origin = d.offset as isize + b * item as isize;
        for_each_strided(sizes, &d.strides, &mut |off| {
            let s = (origin + off * item as isize) as usize;
            dst[k..k + item].copy_from_slice(&src[s..s + item]);
            k += item;
        });
    }
    Ok(out)
}

/// The combine rules of scatter, per element type (MLX's semantics, see `ScatterMode`).
trait Combine: Element {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn gt(self, o: Self) -> bool;
    fn lt(self, o: Self) -> bool;
}

macro_rules! combine_int {
    ($($t:ty),*) => {$(
        impl Combine for $t {
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn gt(self, o: Self) -> bool { self > o }
            fn lt(self, o: Self) -> bool { self < o }
        }
    )*};
}
combine_int!(u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! combine_float {
    ($($t:ty),*) => {$(
        impl Combine for $t {
            fn add(self, o: Self) -> Self { self + o }
            fn mul(self, o: Self) -> Self { self * o }
            fn gt(self, o: Self) -> bool { self > o }
            fn lt(self, o: Self) -> bool { self < o }
        }
    )*};
}
combine_float!(f32, f64, f16, bf16);

impl Combine for bool {
    fn add(self, o: Self) -> Self { self | o }
    fn mul(self, o: Self) -> Self { self & o }
    fn gt(self, o: Self) -> bool { self & !o }
    fn lt(self, o: Self) -> bool { !self & o }
}

impl Combine for Complex64 {
    fn add(self, o: Self) -> Self {
        Complex64::new(self.re + o.re, self.im + o.im)
    }
    fn mul(self, o: Self) -> Self {
        Complex64::new(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
    }
    fn gt(self, o: Self) -> bool {
        self.re > o.re || (self.re == o.re && self.im > o.im)
    }
    fn lt(self, o: Self) -> bool {
        self.re < o.re || (self.re == o.re && self.im < o.im)
    }
}

fn scatter(mut inputs: Vec<Array>, axes: &[usize], mode: ScatterMode, op: &'static str) -> Result<Data> {
    if inputs.len() < 2 {
        return Err(Error::runtime(op, "Missing input."));
    }
    let idx: Vec<Array> = inputs.split_off(2);
    let up = inputs.pop().ok_or_else(|| Error::runtime(op, "Missing input."))?;
    let a = inputs.pop().ok_or_else(|| Error::runtime(op, "Missing input."))?;
    let dims = a.shape().to_vec();
    let window = up.shape()[up.ndim() - dims.len()..].to_vec();
    let count: usize = up.shape()[..up.ndim() - dims.len()].iter().product();
    let rm = row_major_strides(&dims);
    let base = window_origins(&idx, axes, &dims, &window, &rm, count, op)?;
    let (n, dtype) = (a.size(), a.dtype());
    let out = super::shape::writable_copy(a, op)?;
    let ud = up.data()?;
    crate::dispatch_all!(dtype, T => {
        let u = ud.read::<T>(up.shape())?;
        // SAFETY: `out` is a fresh or donated dense buffer of n elements of T, held only here.
        let o = unsafe { out.slice_mut::<T>(n) };
        apply::<T>(o, &u, &base, &window, &rm, mode);
    });
    Ok(out)
}

fn apply<T: Combine>(o: &mut [T], u: &[T], base: &[isize], window: &[usize], rm: &[isize], mode: ScatterMode) {
    let mut k = 0usize;
    for &b in base {
        for_each_strided(window, rm, &mut |off| {
            let at = (b + off) as usize;
            let (x, y) = (o[at], u[k]);
            o[at] = match mode {
                ScatterMode::Set => y,
                ScatterMode::Add => x.add(y),
                ScatterMode::Prod => x.mul(y),
                ScatterMode::Max => if x.gt(y) { x } else { y },
                ScatterMode::Min => if x.lt(y) { x } else { y },
            };
            k += 1;
        });
    }
}
