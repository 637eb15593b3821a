//! Shared elementwise machinery: the slice-kernel helpers every elementwise kernel is written
//! with, and the drivers that run a slice kernel over whole arrays in parallel chunks, into a
//! fresh (or donated) output.

use crate::array::{Array, Data};
use crate::dtype::DType;
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
    // A raw output pointer split across threads; disjointness is the caller's promise above.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn chunk(self, r: &core::ops::Range<usize>) -> &mut [T] {
        core::slice::from_raw_parts_mut(self.0.add(r.start), r.end - r.start)
    }
}

/// The elements of `a` broadcast to `shape` (inputs of binary ops are broadcast views).
pub fn broadcast_read<T: Element>(a: &Array, shape: &[usize]) -> Result<Vec<T>> {
    let d = a.data()?;
    Ok(d.read::<T>(shape)?.into_owned())
}

// ---------------------------------------------------------------------------------------
// Slice kernels. Every elementwise kernel (unary, binary, select, astype) is written once as
// a function over byte slices holding the elements of the dtypes it was chosen for; the
// drivers below run it over whole arrays in parallel chunks, and the fused kernel
// (`cpu/fused.rs`) runs the same functions over its blocks. One source of truth for the
// per-element math keeps compiled and uncompiled results bit-identical.
// ---------------------------------------------------------------------------------------

/// `b` as elements of `T`.
///
/// # Safety
/// `b` must hold valid values of `T` (as every register and array buffer of dtype `T` does).
/// Alignment and length are checked: both are invariants of the callers' buffers.
#[inline]
pub unsafe fn typed<T>(b: &[u8]) -> &[T] {
    if b.is_empty() {
        return &[];
    }
    assert!(b.as_ptr() as usize % core::mem::align_of::<T>() == 0 && b.len() % core::mem::size_of::<T>() == 0, "misaligned slice kernel operand");
    core::slice::from_raw_parts(b.as_ptr() as *const T, b.len() / core::mem::size_of::<T>())
}

/// Mutable twin of [`typed`].
///
/// # Safety
/// As [`typed`].
#[inline]
pub unsafe fn typed_mut<T>(b: &mut [u8]) -> &mut [T] {
    if b.is_empty() {
        return &mut [];
    }
    assert!(b.as_ptr() as usize % core::mem::align_of::<T>() == 0 && b.len() % core::mem::size_of::<T>() == 0, "misaligned slice kernel operand");
    core::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut T, b.len() / core::mem::size_of::<T>())
}

/// `y[i] = f(x[i])`; with `x = None` the input is `y` itself, read as `I` (in place; `I` and
/// `O` then have one size).
///
/// # Safety
/// `y` holds valid `O` values (or valid `I` values in place), `x` valid `I` values; both
/// aligned.
#[inline(always)]
pub unsafe fn apply1<I: Element, O: Element>(y: &mut [u8], x: Option<&[u8]>, f: impl Fn(I) -> O) {
    match x {
        Some(x) => {
            for (o, &i) in typed_mut::<O>(y).iter_mut().zip(typed::<I>(x)) {
                *o = f(i);
            }
        }
        None => {
            assert_eq!(core::mem::size_of::<I>(), core::mem::size_of::<O>(), "in-place kernel over elements of two sizes");
            for v in typed_mut::<I>(y) {
                let o = f(*v);
                *v = core::mem::transmute_copy::<O, I>(&o);
            }
        }
    }
}

/// `y[i] = f(a[i], b[i])`; with `a = None` the first operand is `y` itself (in place).
///
/// # Safety
/// As [`apply1`].
#[inline(always)]
pub unsafe fn apply2<A: Element, B: Element, O: Element>(y: &mut [u8], a: Option<&[u8]>, b: &[u8], f: impl Fn(A, B) -> O) {
    let b = typed::<B>(b);
    match a {
        Some(a) => {
            for ((o, &x), &z) in typed_mut::<O>(y).iter_mut().zip(typed::<A>(a)).zip(b) {
                *o = f(x, z);
            }
        }
        None => {
            assert_eq!(core::mem::size_of::<A>(), core::mem::size_of::<O>(), "in-place kernel over elements of two sizes");
            for (v, &z) in typed_mut::<A>(y).iter_mut().zip(b) {
                let o = f(*v, z);
                *v = core::mem::transmute_copy::<O, A>(&o);
            }
        }
    }
}

/// The bytes of `v` (what slice kernels take).
pub fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: elements are plain data with no padding; any initialized memory reads as bytes.
    unsafe { core::slice::from_raw_parts(v.as_ptr() as *const u8, core::mem::size_of_val(v)) }
}

/// Runs `f(bytes)` on the elements of `d` viewed with `shape`, row-major and aligned for
/// elements of `size` bytes: the buffer itself when it is dense, else a gathered copy.
fn with_dense<R>(d: &Data, shape: &[usize], size: usize, op: &'static str, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
    Ok(match size {
        1 => f(as_bytes(&d.read::<u8>(shape)?)),
        2 => f(as_bytes(&d.read::<u16>(shape)?)),
        4 => f(as_bytes(&d.read::<u32>(shape)?)),
        8 => f(as_bytes(&d.read::<u64>(shape)?)),
        _ => return Err(crate::error::Error::unsupported(op, "No elementwise kernel for this element size.")),
    })
}

/// The element bytes of a fresh or donated buffer, for parallel chunks to write.
fn out_bytes(d: &Data) -> OutPtr<u8> {
    OutPtr(unsafe { d.buf.as_mut_ptr().add(d.offset) })
}

/// Runs a one-input slice kernel `f(y, x)` (see [`apply1`]) over an array of `shape`, in
/// parallel chunks: in place when `a` is donatable and its elements have the output's size,
/// else into a fresh `out` buffer.
pub fn map1_slices(a: Array, shape: &[usize], out: DType, op: &'static str, f: &(dyn Fn(&mut [u8], Option<&[u8]>) + Sync)) -> Result<Data> {
    let n: usize = shape.iter().product();
    let (isz, osz) = (a.dtype().size(), out.size());
    let a = if isz == osz {
        match a.donate(n * isz) {
            Ok(d) => {
                let p = out_bytes(&d);
                // SAFETY: donated buffer, uniquely ours; disjoint ranges.
                parallel_for(n, GRAIN, &|r| f(unsafe { p.chunk(&(r.start * osz..r.end * osz)) }, None));
                return Ok(d);
            }
            Err(a) => a,
        }
    } else {
        a
    };
    let src = a.data()?;
    let dst = Data::alloc_for_overwrite(shape, out, op)?;
    let p = out_bytes(&dst);
    with_dense(&src, shape, isz, op, |x| {
        // SAFETY: fresh buffer of n elements; disjoint ranges.
        parallel_for(n, GRAIN, &|r| f(unsafe { p.chunk(&(r.start * osz..r.end * osz)) }, Some(&x[r.start * isz..r.end * isz])));
    })?;
    Ok(dst)
}

/// Runs a two-input slice kernel `f(y, a, b)` (see [`apply2`]) over `a` and `b`, which
/// already have the output `shape` (possibly as strided views): in `a`'s buffer when it is
/// donatable and its elements have the output's size.
pub fn map2_slices(
    a: Array,
    b: Array,
    shape: &[usize],
    out: DType,
    op: &'static str,
    f: &(dyn Fn(&mut [u8], Option<&[u8]>, &[u8]) + Sync),
) -> Result<Data> {
    let n: usize = shape.iter().product();
    let (asz, bsz, osz) = (a.dtype().size(), b.dtype().size(), out.size());
    let bd = b.data()?;
    drop(b);
    with_dense(&bd, shape, bsz, op, |bv| {
        let a = if asz == osz {
            match a.donate(n * asz) {
                Ok(d) => {
                    let p = out_bytes(&d);
                    // SAFETY: donated, uniquely owned buffer; disjoint ranges.
                    parallel_for(n, GRAIN, &|r| f(unsafe { p.chunk(&(r.start * osz..r.end * osz)) }, None, &bv[r.start * bsz..r.end * bsz]));
                    return Ok(d);
                }
                Err(a) => a,
            }
        } else {
            a
        };
        let ad = a.data()?;
        let dst = Data::alloc_for_overwrite(shape, out, op)?;
        let p = out_bytes(&dst);
        with_dense(&ad, shape, asz, op, |av| {
            // SAFETY: fresh buffer; disjoint ranges.
            parallel_for(n, GRAIN, &|r| {
                f(unsafe { p.chunk(&(r.start * osz..r.end * osz)) }, Some(&av[r.start * asz..r.end * asz]), &bv[r.start * bsz..r.end * bsz])
            });
        })?;
        Ok(dst)
    })?
}
