//! The fused elementwise kernel: runs a [`FusedOp`] program block by block. The output is cut
//! into blocks of a few KiB per register (they stay in L1/L2); for each block every step runs
//! its primitive's **slice kernel** — the very function the ordinary unfused kernel runs over
//! the whole array (`cpu/unary.rs`, `binary.rs`, `cast.rs`) — on plain byte slices: dense
//! inputs are read in place, the others gathered into a block buffer, intermediate results
//! live in a few reused block buffers (computed in place where a register dies), and the last
//! step writes straight into the output. Only the inputs are read from, and the result written
//! to, main memory: one pass instead of one per step. Nothing is allocated per block, and each
//! step's kernel is a function pointer chosen once per call.
//!
//! Because each step is the same per-element function on the same values, results are
//! bit-identical to the unfused ones (as long as a kernel's value for an element does not
//! depend on where in its slice the element sits; blocks start at multiples of 64 elements).

use super::binary::{self, Slice2, Slice3};
use super::cast::{self, SliceCast};
use super::elementwise::{OutPtr, GRAIN};
use super::unary::{self, Slice1};
use crate::array::{Array, Data};
use crate::buffer::Buffer;
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::ops::cast::CastOp;
use crate::ops::fused::{FusedOp, Step, NAME};
use crate::ops::unary::UnaryOp;
use crate::primitive::Primitive;
use alloc::vec;
use alloc::vec::Vec;

/// Bytes of the widest register per block: a few block buffers fit in L1/L2.
const BLOCK_BYTES: usize = 16 * 1024;

/// Evaluates the fused program over `inputs`, which broadcast to the output shape.
pub fn eval(op: &FusedOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    op.validate()?;
    let (shape, dtype) = super::out0(outputs, NAME)?.clone();
    if inputs.len() != op.n_inputs {
        return Err(Error::runtime(NAME, "Wrong number of inputs for a fused program."));
    }
    if op.dtype()? != dtype {
        return Err(Error::runtime(NAME, "A fused program's dtype differs from its node's."));
    }
    let n: usize = shape.iter().product();
    // The first input with the output's shape and dtype that nothing else holds lends its
    // buffer as the output (a compiled function writes into its donated argument, as MLX's
    // do). It is gathered block by block like a strided input, before the block's last step
    // writes over those elements, so no step reads the memory the output is written to.
    let mut donated: Option<Data> = None;
    let mut loads = Vec::with_capacity(inputs.len());
    for a in inputs {
        let a = if donated.is_none() && a.shape() == shape.as_slice() && a.dtype() == dtype {
            match a.donate(n * dtype.size()) {
                Ok(d) => {
                    loads.push(Load::donated(d.clone(), dtype, &shape));
                    donated = Some(d);
                    continue;
                }
                Err(a) => a,
            }
        } else {
            a
        };
        loads.push(Load::new(&a, &shape)?);
    }
    let plan = Plan::new(op, &loads)?;
    let out = match donated {
        Some(d) => d,
        None => Data::alloc_for_overwrite(&shape, dtype, NAME)?,
    };
    if n == 0 {
        return Ok(out);
    }
    let prep = Prepared::new(loads, plan, n);
    let blocks = n.div_ceil(prep.block);
    let dst = OutPtr(out.buf.as_mut_ptr());
    let failure: spin::Mutex<Option<Error>> = spin::Mutex::new(None);
    crate::parallel::parallel_for(blocks, 1, &|r| {
        let run = prep.with_runner(|runner| {
            for b in r {
                let start = b * prep.block;
                let len = prep.block.min(n - start);
                let sz = dtype.size();
                let range = start * sz..(start + len) * sz;
                // SAFETY: blocks write disjoint byte ranges of the output buffer (fresh, or a
                // donated input that only `gather` reads, through raw pointers, before the write).
                let out = unsafe { dst.chunk(&range) };
                runner.run(start, len, out)?;
            }
            Ok(())
        });
        if let Err(e) = run {
            failure.lock().get_or_insert(e);
        }
    });
    match failure.into_inner() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// A program over its inputs, ready to run block by block (by the elementwise kernel above
/// and by the fused reduction, `cpu/fused_reduce.rs`): the loads, the plan and the block size.
pub(super) struct Prepared {
    loads: Vec<Load>,
    plan: Plan,
    /// Elements per block: 16 KiB of the widest register, a multiple of 64.
    pub(super) block: usize,
}

impl Prepared {
    /// `op` over `inputs` broadcast to `shape` (never donated: for a result of another shape).
    pub(super) fn new_for(op: &FusedOp, inputs: &[Array], shape: &[usize]) -> Result<Prepared> {
        op.validate()?;
        if inputs.len() != op.n_inputs {
            return Err(Error::runtime(NAME, "Wrong number of inputs for a fused program."));
        }
        let loads = inputs.iter().map(|a| Load::new(a, shape)).collect::<Result<Vec<_>>>()?;
        let plan = Plan::new(op, &loads)?;
        Ok(Prepared::new(loads, plan, shape.iter().product()))
    }

    fn new(loads: Vec<Load>, plan: Plan, n: usize) -> Prepared {
        let widest = plan.sizes.iter().copied().max().unwrap_or(1);
        // No longer than the output (rounded to 64): a small output (a decode step's vectors)
        // must not allocate and clear block buffers sized for a large one.
        let block = ((BLOCK_BYTES / widest.max(1)) / 64 * 64).clamp(64, GRAIN).min(n.div_ceil(64).max(1) * 64);
        Prepared { loads, plan, block }
    }

    /// Calls `f` with a runner owning block buffers (once per range of blocks a thread takes).
    pub(super) fn with_runner<R>(&self, f: impl FnOnce(&mut Runner<'_>) -> Result<R>) -> Result<R> {
        let (plan, block) = (&self.plan, self.block);
        // Block buffers for this range of blocks, 8 bytes per element (the widest dtype), as
        // u64 so every dtype's elements are aligned in them: one block of the buffer cache
        // (a malloc per slot per call cost more than a decode step's small program itself).
        let scratch = Buffer::new_for_overwrite(plan.n_slots.max(1) * block * 8, NAME)?;
        // SAFETY: the buffer is ours alone, 64-byte aligned and initialized (fresh blocks are
        // zeroed, reused ones hold old values), at least `n_slots · block` u64 long.
        let all = unsafe { core::slice::from_raw_parts_mut(scratch.as_mut_ptr() as *mut u64, plan.n_slots * block) };
        let mut slots: Vec<&mut [u64]> = all.chunks_mut(block).collect();
        // Broadcast scalars fill their buffer once.
        for (l, home) in self.loads.iter().zip(&plan.homes) {
            if let (Home::Slot(j), true) = (home, l.constant) {
                l.gather(0, &mut bytes_mut(&mut slots[*j])[..block * l.size]);
            }
        }
        f(&mut Runner { prep: self, slots })
    }
}

/// Runs blocks of a [`Prepared`] program with one thread's block buffers.
pub(super) struct Runner<'a> {
    prep: &'a Prepared,
    slots: Vec<&'a mut [u64]>,
}

impl Runner<'_> {
    /// Computes the program's elements `start..start + len` (`len` at most a block) into
    /// `out` (`len` elements of the result dtype).
    pub(super) fn run(&mut self, start: usize, len: usize, out: &mut [u8]) -> Result<()> {
        self.prep.plan.run_block(&self.prep.loads, &mut self.slots, start, len, out)
    }
}

/// A `u64` buffer as bytes.
fn bytes_mut(v: &mut [u64]) -> &mut [u8] {
    // SAFETY: u64 has no padding; any byte pattern is a valid u64.
    unsafe { core::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, v.len() * 8) }
}

/// Read-only twin of [`bytes_mut`].
fn bytes(v: &[u64]) -> &[u8] {
    // SAFETY: as `bytes_mut`.
    unsafe { core::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 8) }
}

/// A step's slice kernel, chosen once per call from its primitive and operand dtypes.
#[derive(Clone, Copy)]
enum Kernel {
    Unary(UnaryOp, Slice1),
    Binary(BinaryOp, Slice2),
    Select(Slice3),
    Cast(SliceCast),
}

impl Kernel {
    /// The kernel of `step` over registers of dtypes `args`; an error if the primitive is not
    /// defined on them.
    fn new(step: &Step, args: &[DType]) -> Result<Kernel> {
        let arity = |k: usize| {
            if args.len() == k {
                Ok(())
            } else {
                Err(Error::runtime(NAME, "A fused step has the wrong number of operands."))
            }
        };
        match &step.prim {
            Primitive::Unary(op) => {
                arity(1)?;
                let k = unary::kernel(args[0]);
                unary::check(k, *op, args[0])?;
                Ok(Kernel::Unary(*op, k))
            }
            Primitive::Binary(op) => {
                arity(2)?;
                if args[0] != args[1] {
                    return Err(Error::runtime(NAME, "A fused binary step over operands of two dtypes."));
                }
                let k = binary::kernel(args[0]);
                binary::check(k, *op, args[0])?;
                Ok(Kernel::Binary(*op, k))
            }
            Primitive::Select => {
                arity(3)?;
                if args[0] != DType::Bool || args[1] != step.dtype || args[2] != step.dtype {
                    return Err(Error::runtime(NAME, "A fused where step over operands of unexpected dtypes."));
                }
                Ok(Kernel::Select(binary::select_kernel(step.dtype)))
            }
            Primitive::Cast(CastOp::AsType) => {
                arity(1)?;
                Ok(Kernel::Cast(cast::kernel(args[0], step.dtype)))
            }
            _ => Err(Error::runtime(NAME, "Malformed fused program.")),
        }
    }

    /// Runs the kernel: `y = f(first, rest…)`, with `first = None` in place (`y` holds it).
    /// False where the op is not defined on the dtype (ruled out by [`Kernel::new`]).
    ///
    /// # Safety
    /// The slices hold valid, aligned elements of the dtypes the kernel was chosen for, one
    /// element count; in place only where the first operand's elements have `y`'s size.
    unsafe fn run(self, y: &mut [u8], first: Option<&[u8]>, rest: &[&[u8]]) -> bool {
        match self {
            Kernel::Unary(op, k) => k(op, y, first),
            Kernel::Binary(op, k) => k(op, y, first, rest[0]),
            Kernel::Select(k) => match first {
                Some(c) => {
                    k(y, c, rest[0], rest[1]);
                    true
                }
                None => false,
            },
            Kernel::Cast(k) => {
                k(y, first);
                true
            }
        }
    }

    /// Whether the kernel may compute in place over its first operand.
    fn in_place_ok(self) -> bool {
        !matches!(self, Kernel::Select(_))
    }
}

/// Where a register's block lives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Home {
    /// An input read in place (dense and aligned): a window of its buffer.
    Input,
    /// Block buffer `j`.
    Slot(usize),
    /// The output (the last step).
    Out,
}

/// The program prepared for running: each step's kernel, where each register lives, and
/// which steps compute in place.
struct Plan {
    kernels: Vec<Kernel>,
    steps: Vec<Vec<usize>>,
    homes: Vec<Home>,
    in_place: Vec<bool>,
    /// Element size of each register.
    sizes: Vec<usize>,
    n_slots: usize,
}

impl Plan {
    fn new(op: &FusedOp, loads: &[Load]) -> Result<Plan> {
        let n_regs = op.n_inputs + op.steps.len();
        let mut dtypes: Vec<DType> = loads.iter().map(|l| l.dtype).collect();
        dtypes.extend(op.steps.iter().map(|s| s.dtype));
        let mut kernels = Vec::with_capacity(op.steps.len());
        for s in &op.steps {
            let args: Vec<DType> = s.args.iter().map(|&r| dtypes[r]).collect();
            kernels.push(Kernel::new(s, &args)?);
        }
        // The last step reading each register (usize::MAX: none).
        let mut last = vec![usize::MAX; n_regs];
        for (k, s) in op.steps.iter().enumerate() {
            for &r in &s.args {
                last[r] = k;
            }
        }
        let mut n_slots = 0;
        let mut free: Vec<usize> = Vec::new();
        let mut alloc = |free: &mut Vec<usize>| {
            free.pop().unwrap_or_else(|| {
                n_slots += 1;
                n_slots - 1
            })
        };
        let mut homes = Vec::with_capacity(n_regs);
        for l in loads {
            // Input buffers are never freed: scalars are filled once per range of blocks.
            homes.push(if l.in_place { Home::Input } else { Home::Slot(alloc(&mut free)) });
        }
        let mut in_place = Vec::with_capacity(op.steps.len());
        let final_step = op.steps.len() - 1;
        for (k, s) in op.steps.iter().enumerate() {
            let a0 = s.args[0];
            let reuse = k != final_step
                && kernels[k].in_place_ok()
                && a0 >= op.n_inputs
                && last[a0] == k
                && !s.args[1..].contains(&a0)
                && dtypes[a0].size() == s.dtype.size();
            let home = if reuse {
                homes[a0]
            } else if k == final_step {
                Home::Out
            } else {
                Home::Slot(alloc(&mut free))
            };
            homes.push(home);
            in_place.push(reuse);
            // Step registers read for the last time give their buffer back (after the output
            // took one, so a step never writes a buffer it reads).
            for (j, &r) in s.args.iter().enumerate() {
                if r >= op.n_inputs && last[r] == k && !s.args[..j].contains(&r) && !(reuse && r == a0) {
                    if let Home::Slot(b) = homes[r] {
                        free.push(b);
                    }
                }
            }
        }
        Ok(Plan { kernels, steps: op.steps.iter().map(|s| s.args.clone()).collect(), homes, in_place, sizes: dtypes.iter().map(|d| d.size()).collect(), n_slots })
    }

    /// Runs the program on elements `start..start + len`, writing the result into `out`.
    fn run_block(&self, loads: &[Load], slots: &mut [&mut [u64]], start: usize, len: usize, out: &mut [u8]) -> Result<()> {
        for (l, home) in loads.iter().zip(&self.homes) {
            if let (Home::Slot(j), false) = (home, l.constant) {
                l.gather(start, &mut bytes_mut(&mut slots[*j])[..len * l.size]);
            }
        }
        let n_inputs = loads.len();
        for (k, args) in self.steps.iter().enumerate() {
            let reg = n_inputs + k;
            let ysz = self.sizes[reg];
            // Take the step's own buffer out so its operands can be borrowed beside it.
            let mut own = match self.homes[reg] {
                Home::Slot(j) => Some((j, core::mem::take(&mut slots[j]))),
                _ => None,
            };
            let operand = |r: usize| -> &[u8] {
                let sz = self.sizes[r];
                match self.homes[r] {
                    Home::Input => loads[r].window(start, len),
                    Home::Slot(j) => &bytes(&slots[j])[..len * sz],
                    // Only the last step writes the output and nothing reads it.
                    Home::Out => &[],
                }
            };
            let mut rest: [&[u8]; 2] = [&[], &[]];
            for (i, &r) in args.iter().skip(1).enumerate() {
                rest[i] = operand(r);
            }
            let first = if self.in_place[k] { None } else { Some(operand(args[0])) };
            let y: &mut [u8] = match &mut own {
                Some((_, v)) => &mut bytes_mut(v)[..len * ysz],
                None => &mut *out,
            };
            // SAFETY: every register's block holds `len` valid elements of its dtype, aligned
            // (u64 buffers, or inputs checked aligned); the kernel was chosen for these dtypes.
            let ok = unsafe { self.kernels[k].run(y, first, &rest[..args.len() - 1]) };
            if let Some((j, v)) = own {
                slots[j] = v;
            }
            if !ok {
                return Err(Error::runtime(NAME, "A fused step is not defined on its operands."));
            }
        }
        Ok(())
    }
}

/// How one input is read block by block: its data and its strides broadcast to the output.
struct Load {
    data: Data,
    dtype: DType,
    size: usize,
    shape: Vec<usize>,
    strides: Vec<isize>,
    /// Dense over the output and aligned: a block is a window of the buffer, read in place.
    in_place: bool,
    /// Every stride is 0 (a broadcast scalar): its block buffer is filled once.
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
        let dtype = a.dtype();
        let align = crate::dispatch_all!(dtype, T => core::mem::align_of::<T>());
        let base = data.buf.as_ptr() as usize + data.offset;
        let in_place = probe.is_row_contiguous(shape) && base % align == 0;
        let constant = strides.iter().zip(shape).all(|(&s, &d)| s == 0 || d == 1);
        Ok(Load { data, dtype, size: dtype.size(), shape: shape.to_vec(), strides, in_place, constant })
    }

    /// A donated input: the output's own buffer (dense, row-major, the output's shape), so
    /// never read in place (see [`eval`]).
    fn donated(data: Data, dtype: DType, shape: &[usize]) -> Load {
        let strides = crate::shape::row_major_strides(shape);
        let constant = shape.iter().all(|&d| d == 1);
        Load { data, dtype, size: dtype.size(), shape: shape.to_vec(), strides, in_place: false, constant }
    }

    /// Elements `start..start + len` of a dense input, in its buffer.
    fn window(&self, start: usize, len: usize) -> &[u8] {
        // SAFETY: a dense view's row-major elements lie in its buffer from its offset.
        unsafe { core::slice::from_raw_parts(self.data.buf.as_ptr().add(self.data.offset + start * self.size), len * self.size) }
    }

    /// Copies elements `start..` of the broadcast input (as many as `dst` holds) into `dst`
    /// (a broadcast scalar repeats its one element).
    fn gather(&self, start: usize, dst: &mut [u8]) {
        let strides: &[isize] = if self.constant { &[] } else { &self.strides };
        let shape: &[usize] = if self.constant { &[] } else { &self.shape };
        match self.size {
            1 => gather::<u8>(&self.data, shape, strides, start, dst),
            2 => gather::<u16>(&self.data, shape, strides, start, dst),
            4 => gather::<u32>(&self.data, shape, strides, start, dst),
            _ => gather::<u64>(&self.data, shape, strides, start, dst),
        }
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
