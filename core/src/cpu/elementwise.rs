//! Shared elementwise machinery: map one or two inputs into a fresh (or donated) output,
//! in parallel chunks.

use crate::array::{Array, Data};
use crate::element::Element;
use crate::error::Result;
use crate::parallel::parallel_for;
use alloc::vec::Vec;

/// Gives a closure the signature `A -> B` so its body type-checks, while keeping it a concrete
/// (inlinable) closure rather than a function pointer called per element.
#[inline(always)]
pub fn fn1<A, B, F: Fn(A) -> B + Sync>(f: F) -> F {
    f
}

/// Two-argument twin of [`fn1`].
#[inline(always)]
pub fn fn2<A, B, C, F: Fn(A, B) -> C + Sync>(f: F) -> F {
    f
}

/// Elements per parallel chunk: below this, threads cost more than they save.
pub const GRAIN: usize = 1 << 15;

/// A raw output pointer that parallel chunks write disjoint ranges of.
#[derive(Clone, Copy)]
pub(crate) struct OutPtr<T>(pub *mut T);
// SAFETY: chunks write disjoint index ranges; the buffer outlives the parallel region.
unsafe impl<T> Send for OutPtr<T> {}
unsafe impl<T> Sync for OutPtr<T> {}

impl<T> OutPtr<T> {
    /// The sub-slice `r` of the output.
    ///
    /// # Safety
    /// `r` must be in bounds and disjoint from every other live sub-slice.
    #[inline]
    pub unsafe fn chunk(self, r: &core::ops::Range<usize>) -> &mut [T] {
        core::slice::from_raw_parts_mut(self.0.add(r.start), r.end - r.start)
    }
}

/// `out[i] = f(a[i])` over an array of `shape`, reusing `a`'s buffer when it is donatable
/// and the element sizes match.
pub fn map1<I: Element, O: Element>(a: Array, shape: &[usize], op: &'static str, f: impl Fn(I) -> O + Sync) -> Result<Data> {
    let n: usize = shape.iter().product();
    if core::mem::size_of::<I>() == core::mem::size_of::<O>() && core::mem::align_of::<I>() == core::mem::align_of::<O>() {
        match a.donate(n * core::mem::size_of::<I>()) {
            Ok(d) => {
                let p = OutPtr(unsafe { d.buf.as_mut_ptr().add(d.offset) } as *mut I);
                parallel_for(n, GRAIN, &|r| {
                    // SAFETY: donated buffer, uniquely ours; disjoint ranges; I and O have one layout.
                    for x in unsafe { p.chunk(&r) } {
                        let y = f(*x);
                        *x = unsafe { core::mem::transmute_copy::<O, I>(&y) };
                    }
                });
                return Ok(d);
            }
            Err(a) => return map1_fresh(&a, shape, op, f),
        }
    }
    map1_fresh(&a, shape, op, f)
}

fn map1_fresh<I: Element, O: Element>(a: &Array, shape: &[usize], op: &'static str, f: impl Fn(I) -> O + Sync) -> Result<Data> {
    let src = a.data()?;
    let input = src.read::<I>(shape)?;
    let out = Data::alloc_for_overwrite(shape, O::DTYPE, op)?;
    let p = OutPtr(out.buf.as_mut_ptr() as *mut O);
    let input: &[I] = &input;
    parallel_for(input.len(), GRAIN, &|r| {
        // SAFETY: fresh buffer of n elements; disjoint ranges.
        let o = unsafe { p.chunk(&r) };
        for (y, &x) in o.iter_mut().zip(&input[r.clone()]) {
            *y = f(x);
        }
    });
    Ok(out)
}

/// `f(out_chunk, Some(in_chunk))`, or `f(chunk, None)` to transform in place, over chunks of
/// an array of `shape` (one dtype in and out): [`map1`] for kernels that take whole slices
/// (the SIMD ones of `vecmath`). Reuses `a`'s buffer when it is donatable.
pub fn map1_chunks<T: Element>(a: Array, shape: &[usize], op: &'static str, f: impl Fn(&mut [T], Option<&[T]>) + Sync) -> Result<Data> {
    let n: usize = shape.iter().product();
    let a = match a.donate(n * core::mem::size_of::<T>()) {
        Ok(d) => {
            let p = OutPtr(unsafe { d.buf.as_mut_ptr().add(d.offset) } as *mut T);
            // SAFETY: donated buffer, uniquely ours; disjoint ranges.
            parallel_for(n, GRAIN, &|r| f(unsafe { p.chunk(&r) }, None));
            return Ok(d);
        }
        Err(a) => a,
    };
    let src = a.data()?;
    let input = src.read::<T>(shape)?;
    let out = Data::alloc_for_overwrite(shape, T::DTYPE, op)?;
    let p = OutPtr(out.buf.as_mut_ptr() as *mut T);
    let input: &[T] = &input;
    // SAFETY: fresh buffer of n elements; disjoint ranges.
    parallel_for(input.len(), GRAIN, &|r| f(unsafe { p.chunk(&r) }, Some(&input[r.clone()])));
    Ok(out)
}

/// The elements of `a` broadcast to `shape` (inputs of binary ops are broadcast views).
pub fn broadcast_read<T: Element>(a: &Array, shape: &[usize]) -> Result<Vec<T>> {
    let d = a.data()?;
    Ok(d.read::<T>(shape)?.into_owned())
}

/// `out[i] = f(a[i], b[i])` where `a` and `b` already have the output `shape` (possibly as
/// strided views). Writes into `a`'s buffer when it is donatable.
pub fn map2<A: Element, B: Element, O: Element>(
    a: Array,
    b: Array,
    shape: &[usize],
    op: &'static str,
    f: impl Fn(A, B) -> O + Sync,
) -> Result<Data> {
    let n: usize = shape.iter().product();
    let bd = b.data()?;
    let bv = bd.read::<B>(shape)?;
    let bv: &[B] = &bv;
    drop(b);
    let same_layout = core::mem::size_of::<A>() == core::mem::size_of::<O>()
        && core::mem::align_of::<A>() == core::mem::align_of::<O>();
    let a = if same_layout {
        match a.donate(n * core::mem::size_of::<A>()) {
            Ok(d) => {
                let p = OutPtr(unsafe { d.buf.as_mut_ptr().add(d.offset) } as *mut A);
                parallel_for(n, GRAIN, &|r| {
                    // SAFETY: donated, uniquely owned buffer; disjoint ranges.
                    for (x, &y) in unsafe { p.chunk(&r) }.iter_mut().zip(&bv[r.clone()]) {
                        let z = f(*x, y);
                        *x = unsafe { core::mem::transmute_copy::<O, A>(&z) };
                    }
                });
                return Ok(d);
            }
            Err(a) => a,
        }
    } else {
        a
    };
    let ad = a.data()?;
    let av = ad.read::<A>(shape)?;
    let av: &[A] = &av;
    let out = Data::alloc_for_overwrite(shape, O::DTYPE, op)?;
    let p = OutPtr(out.buf.as_mut_ptr() as *mut O);
    parallel_for(n, GRAIN, &|r| {
        // SAFETY: fresh buffer; disjoint ranges.
        let o = unsafe { p.chunk(&r) };
        for ((z, &x), &y) in o.iter_mut().zip(&av[r.clone()]).zip(&bv[r.clone()]) {
            *z = f(x, y);
        }
    });
    Ok(out)
}
