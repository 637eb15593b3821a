//! The fused elementwise kernel: runs a [`FusedOp`] program block by block. Each block is a
//! few KiB of every register (small enough to stay in L1/L2), each step calls the ordinary
//! CPU kernel of its primitive on that block, and only the inputs are read from and the
//! result written to main memory — one pass instead of one per step. Blocks run in parallel
//! through `parallel_for`; each step's kernel sees at most [`GRAIN`] elements, so it runs
//! inline on the block's thread.
//!
//! Because every step is the very kernel the unfused graph would run, on the same element
//! values, the results are bit-identical to the unfused ones (as long as a kernel's value for
//! an element does not depend on where in its slice the element sits; blocks start at
//! multiples of 64 elements to keep SIMD bodies and tails where they would be).

use super::elementwise::{OutPtr, GRAIN};
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::fused::{FusedOp, NAME};
use alloc::vec;
use alloc::vec::Vec;

/// Bytes of the widest register per block.
const BLOCK_BYTES: usize = 32 * 1024;

/// Evaluates the fused program over `inputs`, which broadcast to the output shape.
pub fn eval(op: &FusedOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    op.validate()?;
    let (shape, dtype) = super::out0(outputs, NAME)?.clone();
    if inputs.len() != op.n_inputs {
        return Err(Error::runtime(NAME, "Wrong number of inputs for a fused program."));
    }
    let out = Data::alloc_for_overwrite(&shape, dtype, NAME)?;
    let n: usize = shape.iter().product();
    if n == 0 {
        return Ok(out);
    }
    let loads = inputs.iter().map(|a| Load::new(a, &shape)).collect::<Result<Vec<_>>>()?;
    drop(inputs);
    let last_use = last_uses(op);
    let widest = op.steps.iter().map(|s| s.dtype.size()).chain(loads.iter().map(|l| l.dtype.size())).max().unwrap_or(1);
    let block = ((BLOCK_BYTES / widest.max(1)) / 64 * 64).clamp(64, GRAIN);
    let blocks = n.div_ceil(block);
    let dst = OutPtr(out.buf.as_mut_ptr());
    let failure: spin::Mutex<Option<Error>> = spin::Mutex::new(None);
    crate::parallel::parallel_for(blocks, 1, &|r| {
        for b in r {
            let start = b * block;
            let len = block.min(n - start);
            let res = run_block(op, &loads, &last_use, start, len).and_then(|reg| {
                // SAFETY: blocks write disjoint byte ranges of the fresh output buffer.
                store(&reg, unsafe { dst.chunk(&(start * dtype.size()..(start + len) * dtype.size())) })
            });
            if let Err(e) = res {
                failure.lock().get_or_insert(e);
                return;
            }
        }
    });
    match failure.into_inner() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// For each register, the index of the last step that reads it (`usize::MAX`: none), so a
/// step can take the register by value and the kernel may write in place (donation).
fn last_uses(op: &FusedOp) -> Vec<usize> {
    let mut last = vec![usize::MAX; op.n_inputs + op.steps.len()];
    for (k, s) in op.steps.iter().enumerate() {
        for &r in &s.args {
            last[r] = k;
        }
    }
    last
}

/// Runs the program on elements `start..start + len`; returns the result register.
fn run_block(op: &FusedOp, loads: &[Load], last_use: &[usize], start: usize, len: usize) -> Result<Array> {
    let mut regs: Vec<Option<Array>> = Vec::with_capacity(last_use.len());
    for l in loads {
        regs.push(Some(l.block(start, len)?));
    }
    for (k, s) in op.steps.iter().enumerate() {
        let mut args = Vec::with_capacity(s.args.len());
        for (j, &r) in s.args.iter().enumerate() {
            // Take the register on its last read (and not read again by this step), else share.
            let again = s.args[j + 1..].contains(&r);
            let reg = if last_use[r] == k && !again { regs[r].take() } else { regs[r].clone() };
            args.push(reg.ok_or_else(|| Error::runtime(NAME, "A fused register was read after its last use."))?);
        }
        let metas = [(vec![len], s.dtype)];
        let mut datas = super::eval(&s.prim, args, &metas)?;
        let d = datas.pop().ok_or_else(|| Error::runtime(NAME, "A step produced no output."))?;
        regs.push(Some(Array::from_data(vec![len], s.dtype, d)));
    }
    regs.pop().flatten().ok_or_else(|| Error::runtime(NAME, "A fused program has no steps."))
}

/// Copies the block's result register into its place in the output.
fn store(reg: &Array, dst: &mut [u8]) -> Result<()> {
    let d = reg.data()?;
    if !d.is_row_contiguous(reg.shape()) {
        return Err(Error::runtime(NAME, "A fused step produced a strided block."));
    }
    // SAFETY: the register is dense with `len` elements of the output dtype: exactly
    // `dst.len()` bytes from its offset.
    unsafe { core::ptr::copy_nonoverlapping(d.buf.as_ptr().add(d.offset), dst.as_mut_ptr(), dst.len()) };
    Ok(())
}

/// How one input is read block by block: its data and its strides broadcast to the output.
struct Load {
    data: Data,
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    /// Element offsets are row-major over the output: a block is a plain window.
    dense: bool,
    /// Every stride is 0 (a broadcast scalar): a block is a zero-stride view.
    constant: bool,
}

impl Load {
    fn new(a: &Array, shape: &[usize]) -> Result<Load> {
        let data = a.data()?;
        let pad = shape.len().checked_sub(a.ndim()).ok_or_else(|| Error::runtime(NAME, "An input has more axes than the output."))?;
        let mut strides = vec![0isize; shape.len()];
        for (i, (&d, &s)) in a.shape().iter().zip(&data.strides).enumerate() {
            if d == shape[pad + i] {
                strides[pad + i] = s;
            } else if d != 1 {
                return Err(Error::runtime(NAME, "An input does not broadcast to the output."));
            }
        }
        let probe = Data { buf: data.buf.clone(), offset: data.offset, strides: strides.clone() };
        let dense = probe.is_row_contiguous(shape);
        let constant = strides.iter().zip(shape).all(|(&s, &d)| s == 0 || d == 1);
        Ok(Load { data, dtype: a.dtype(), shape: shape.to_vec(), strides, dense, constant })
    }

    /// Elements `start..start + len` of the broadcast input, as a 1-d array: a view when the
    /// input is dense, else a gathered copy (a broadcast scalar is filled in, so the step's
    /// kernel reads a dense block rather than a zero-stride view element by element).
    fn block(&self, start: usize, len: usize) -> Result<Array> {
        let sz = self.dtype.size();
        if self.dense {
            let d = Data { buf: self.data.buf.clone(), offset: self.data.offset + start * sz, strides: vec![1] };
            return Ok(Array::from_data(vec![len], self.dtype, d));
        }
        let out = Data::alloc_for_overwrite(&[len], self.dtype, NAME)?;
        // SAFETY: fresh buffer of `len` elements, written once each below.
        let dst = unsafe { out.slice_mut::<u8>(len * sz) };
        let strides: &[isize] = if self.constant { &[] } else { &self.strides };
        let shape: &[usize] = if self.constant { &[] } else { &self.shape };
        match sz {
            1 => gather::<u8>(&self.data, shape, strides, start, dst),
            2 => gather::<u16>(&self.data, shape, strides, start, dst),
            4 => gather::<u32>(&self.data, shape, strides, start, dst),
            8 => gather::<u64>(&self.data, shape, strides, start, dst),
            _ => return Err(Error::unsupported(NAME, alloc::format!("No fused load for {}.", self.dtype))),
        }
        Ok(Array::from_data(vec![len], self.dtype, out))
    }
}

/// Copies elements `start..` (row-major over `shape`, as many as `dst` holds) of a strided
/// view of `T`-sized elements into `dst`, a run of the innermost axis at a time. An empty
/// `shape` repeats the first element (a broadcast scalar).
fn gather<T: Copy>(data: &Data, shape: &[usize], strides: &[isize], start: usize, dst: &mut [u8]) {
    let total = dst.len() / core::mem::size_of::<T>();
    // SAFETY: `dst` is a fresh, 64-byte aligned buffer of `total` elements of `T`'s size.
    let dst = unsafe { core::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut T, total) };
    let base = unsafe { data.buf.as_ptr().add(data.offset) } as *const T;
    // SAFETY (reads below): every offset of the view lies inside its buffer (checked when the
    // view was made); unaligned reads, as views may start anywhere.
    let nd = shape.len();
    if nd == 0 {
        dst.fill(unsafe { base.read_unaligned() });
        return;
    }
    let mut idx = vec![0usize; nd];
    let mut rest = start;
    for ax in (0..nd).rev() {
        idx[ax] = rest % shape[ax];
        rest /= shape[ax];
    }
    let (inner, step) = (shape[nd - 1], strides[nd - 1]);
    let mut k = 0;
    while k < total {
        let run = (inner - idx[nd - 1]).min(total - k);
        let mut off: isize = idx.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum();
        for d in &mut dst[k..k + run] {
            *d = unsafe { base.offset(off).read_unaligned() };
            off += step;
        }
        k += run;
        // Advance to the next row like an odometer.
        idx[nd - 1] = 0;
        let mut ax = nd - 1;
        while ax > 0 {
            ax -= 1;
            idx[ax] += 1;
            if idx[ax] < shape[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
}
