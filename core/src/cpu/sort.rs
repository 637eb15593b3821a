//! CPU kernels of the sort family. Rows along the sorted axis are gathered densely (axis
//! last), sorted with `core::slice` (stable `sort_by`, `select_nth_unstable_by`: O(n log n)
//! and O(n)), in parallel over rows, and written back in place of the axis.

use super::elementwise::{OutPtr, GRAIN};
use super::reduce::{read_reduced_last, scatter_axis_last};
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::element::{Complex64, Element};
use crate::error::Result;
use crate::ops::sort::SortOp;
use crate::parallel::parallel_for;
use alloc::vec::Vec;
use core::cmp::Ordering;

/// MLX's element order: `lt` is the plain `<` (lexicographic for complex), `nan` tells
/// which elements sort after everything else.
pub(crate) trait Key: Element {
    /// Plain less-than (false whenever a NaN is involved).
    fn lt(self, other: Self) -> bool;
    /// Whether this is a NaN (never for integers and bool).
    fn nan(self) -> bool {
        false
    }
}

macro_rules! key_plain {
    ($($t:ty),*) => { $( impl Key for $t { #[inline] fn lt(self, o: Self) -> bool { self < o } } )* };
}
key_plain!(bool, u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! key_float {
    ($($t:ty),*) => { $( impl Key for $t {
        #[inline] fn lt(self, o: Self) -> bool { self < o }
        #[inline] fn nan(self) -> bool { self.is_nan() }
    } )* };
}
key_float!(f32, f64, half::f16, half::bf16);

impl Key for Complex64 {
    #[inline]
    fn lt(self, o: Self) -> bool {
        self.re < o.re || (self.re == o.re && self.im < o.im)
    }
    #[inline]
    fn nan(self) -> bool {
        self.re.is_nan() || self.im.is_nan()
    }
}

/// Total order with NaN last (NaNs tie with each other).
#[inline]
pub(crate) fn nan_cmp<T: Key>(a: T, b: T) -> Ordering {
    match (a.nan(), b.nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => {
            if a.lt(b) {
                Ordering::Less
            } else if b.lt(a) {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
    }
}

/// Evaluates a sort primitive.
pub fn eval(op: &SortOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, out_dtype) = super::out0(outputs, name)?.clone();
    let a = super::input(&inputs, 0, name)?;
    let out = Data::alloc(&shape, out_dtype, name)?;
    let total: usize = shape.iter().product();
    match *op {
        SortOp::Sort { axis } | SortOp::Partition { axis, .. } => {
            let kth = if let SortOp::Partition { kth, .. } = *op { Some(kth) } else { None };
            crate::dispatch_all!(a.dtype(), T => {
                let (mut v, n) = read_reduced_last::<T>(a, &[axis])?;
                for_rows(&mut v, n, |row| match kth {
                    None => row.sort_by(|x, y| nan_cmp(*x, *y)),
                    Some(k) => {
                        row.select_nth_unstable_by(k, |x, y| nan_cmp(*x, *y));
                    }
                });
                scatter_axis_last(&v, &shape, axis, unsafe { out.slice_mut::<T>(total) });
            })
        }
        SortOp::ArgSort { axis } | SortOp::ArgPartition { axis, .. } => {
            let kth = if let SortOp::ArgPartition { kth, .. } = *op { Some(kth) } else { None };
            crate::dispatch_all!(a.dtype(), T => {
                let (v, n) = read_reduced_last::<T>(a, &[axis])?;
                // Sort (value, index) pairs: contiguous keys, no indirection in the comparator.
                let mut pairs: Vec<(T, u32)> =
                    v.iter().enumerate().map(|(i, &x)| (x, if n == 0 { 0 } else { (i % n) as u32 })).collect();
                drop(v);
                for_rows(&mut pairs, n, |row| {
                    let cmp = |x: &(T, u32), y: &(T, u32)| nan_cmp(x.0, y.0).then(x.1.cmp(&y.1));
                    match kth {
                        None => row.sort_by(cmp),
                        Some(k) => {
                            row.select_nth_unstable_by(k, cmp);
                        }
                    }
                });
                let idx: Vec<u32> = pairs.iter().map(|p| p.1).collect();
                scatter_axis_last(&idx, &shape, axis, unsafe { out.slice_mut::<u32>(total) });
            })
        }
        SortOp::SearchSorted { right } => {
            let v_in = super::input(&inputs, 1, name)?;
            crate::dispatch_all!(a.dtype(), T => {
                let seq = a.data()?;
                let seq = seq.read::<T>(a.shape())?;
                let vd = v_in.data()?;
                let vals = vd.read::<T>(v_in.shape())?;
                let o = unsafe { out.slice_mut::<u32>(total) };
                for (y, &x) in o.iter_mut().zip(vals.iter()) {
                    // First position whose element is > x (right) or >= x (left).
                    *y = seq.partition_point(|&m| if right { nan_cmp(x, m) != Ordering::Less } else { nan_cmp(m, x) == Ordering::Less }) as u32;
                }
            })
        }
    }
    Ok(alloc::vec![out])
}

/// Runs `f` on every run of `n` elements of `v`, in parallel over runs.
fn for_rows<T: Send + Copy>(v: &mut [T], n: usize, f: impl Fn(&mut [T]) + Sync) {
    if n == 0 {
        return;
    }
    let rows = v.len() / n;
    let p = OutPtr(v.as_mut_ptr());
    // Sorting costs ~n log n per row: aim for GRAIN elements of work per chunk.
    let grain = (GRAIN / (n * 8).max(1)).max(1);
    parallel_for(rows, grain, &|r| {
        // SAFETY: row ranges map to disjoint element ranges of `v`.
        let span = r.start * n..r.end * n;
        let chunk = unsafe { p.chunk(&span) };
        for row in chunk.chunks_exact_mut(n) {
            f(row);
        }
    });
}
