//! The fused reduction kernel: runs a [`FusedReduceOp`] — an elementwise chain reduced over
//! its trailing axes — in one pass. Each block of the chain's values is made in a block
//! buffer by the fused elementwise kernel's block runner (`cpu/fused.rs`) and folded at once,
//! so the chain's result never exists as an array (one read of the inputs, no temporary
//! written and read back).
//!
//! **Same bits as unfused**: the reduction of a dense array over trailing axes folds each
//! run of `inner` elements (or, for sum / max / min runs longer than
//! [`LONG_RUN_PIECE`], each piece of one, combined in order) in 8 interleaved lanes then its
//! tail (`cpu/reduce.rs`, `fold_run`). [`Fold`] makes the same operations in the same order,
//! fed a block at a time, so a fused result equals the unfused one bit for bit, whatever the
//! block size or the number of threads.

use super::elementwise::{OutPtr, GRAIN};
use super::fused::Prepared;
use super::math::{Float, Real};
use super::reduce::{extreme_step, LONG_RUN_PIECE};
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::error::{Error, Result};
use crate::ops::fused::{broadcast_all, FusedReduceOp, NAME};
use crate::ops::reduce::ReduceKind;
use crate::parallel::parallel_for;
use alloc::vec::Vec;

/// Lanes of the interleaved folds (as `cpu/reduce.rs`' `lanes_sum` / `lanes_extreme`).
const L: usize = 8;

/// Evaluates the fused reduction over `inputs` (which broadcast to the chain's shape).
pub fn eval(op: &FusedReduceOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Data> {
    let dt = op.validate()?;
    let (shape, dtype) = super::out0(outputs, NAME)?.clone();
    if dtype != dt {
        return Err(Error::runtime(NAME, "A fused reduction's dtype differs from its node's."));
    }
    let chain = broadcast_all(inputs.iter().map(|a| a.shape()), NAME)?;
    let axes = op.reduced_axes(chain.len())?;
    let inner: usize = axes.iter().map(|&i| chain[i]).product();
    let rows: usize = chain[..chain.len() - axes.len()].iter().product();
    if shape.iter().product::<usize>() != rows {
        return Err(Error::runtime(NAME, "A fused reduction's output shape differs from its node's."));
    }
    let prep = Prepared::new_for(&op.program, &inputs, &chain)?;
    let out = Data::alloc_for_overwrite(&shape, dtype, NAME)?;
    crate::dispatch_float!(dtype, T => reduce::<T>(op.kind, &prep, rows, inner, &out)?, else {
        return Err(Error::runtime(NAME, "Malformed fused reduction."));
    });
    Ok(out)
}

/// Folds `rows` runs of `inner` chain values each into `out` (`rows` elements of `T`).
fn reduce<T: Real + Send + Sync>(kind: ReduceKind, prep: &Prepared, rows: usize, inner: usize, out: &Data) -> Result<()> {
    // SAFETY: a fresh buffer of `rows` elements of `T`, written once per element below.
    let o = unsafe { out.slice_mut::<T>(rows) };
    if rows == 0 {
        return Ok(());
    }
    if inner == 0 {
        // Runs of no elements: the fold of nothing (sum 0, prod 1; max/min of nothing is
        // refused when the graph is built).
        o.fill(T::from_acc(Fold::<T>::new(kind, 0).finish()));
        return Ok(());
    }
    let failure: spin::Mutex<Option<Error>> = spin::Mutex::new(None);
    let fail = |e: Error| {
        failure.lock().get_or_insert(e);
    };
    let long = matches!(kind, ReduceKind::Sum | ReduceKind::Max | ReduceKind::Min) && inner > LONG_RUN_PIECE;
    if long {
        // Every piece of every run in parallel, then each run's pieces combined in order
        // (`fold_long_runs`).
        let per_run = inner.div_ceil(LONG_RUN_PIECE);
        let mut pieces = alloc::vec![<T::Acc as Float>::ZERO; rows * per_run];
        let p = OutPtr(pieces.as_mut_ptr());
        parallel_for(pieces.len(), 1, &|r| {
            // SAFETY: disjoint ranges of `pieces`, which outlives the parallel region.
            let dst = unsafe { p.chunk(&r) };
            let run = prep.with_runner(|runner| {
                let mut vals = block_buffer::<T>(prep.block);
                for (k, y) in dst.iter_mut().enumerate() {
                    let (run, piece) = ((r.start + k) / per_run, (r.start + k) % per_run);
                    let start = run * inner + piece * LONG_RUN_PIECE;
                    let end = (start + LONG_RUN_PIECE).min((run + 1) * inner);
                    fold_range(runner, &mut vals, kind, start, end, end - start, &mut |_, acc| *y = acc)?;
                }
                Ok(())
            });
            if let Err(e) = run {
                fail(e);
            }
        });
        let is_max = kind == ReduceKind::Max;
        for (y, run) in o.iter_mut().zip(pieces.chunks_exact(per_run)) {
            let acc = run[1..].iter().fold(run[0], |a, &b| if kind == ReduceKind::Sum { a + b } else { extreme_step(is_max, a, b) });
            *y = T::from_acc(acc);
        }
    } else {
        let p = OutPtr(o.as_mut_ptr());
        parallel_for(rows, (GRAIN / inner.max(1)).max(1), &|r| {
            // SAFETY: disjoint ranges of `o`, which outlives the parallel region.
            let dst = unsafe { p.chunk(&r) };
            let first = r.start;
            let run = prep.with_runner(|runner| {
                let mut vals = block_buffer::<T>(prep.block);
                fold_range(runner, &mut vals, kind, r.start * inner, r.end * inner, inner, &mut |i, acc| {
                    dst[i - first] = T::from_acc(acc)
                })
            });
            if let Err(e) = run {
                fail(e);
            }
        });
    }
    match failure.into_inner() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A block buffer of chain values (`T` elements).
fn block_buffer<T: Real>(block: usize) -> Vec<T> {
    alloc::vec![T::from_acc(<T::Acc as Float>::ZERO); block]
}

/// Folds the chain's elements `start..end`, cut into segments of `seg > 0` elements from
/// `start` (runs, or one piece), calling `done(start / seg + segments done before, value)` as
/// each segment ends.
fn fold_range<T: Real>(
    runner: &mut super::fused::Runner<'_>,
    vals: &mut [T],
    kind: ReduceKind,
    start: usize,
    end: usize,
    seg: usize,
    done: &mut dyn FnMut(usize, T::Acc),
) -> Result<()> {
    let mut index = start / seg;
    let mut fold = Fold::<T>::new(kind, seg);
    let mut at = start;
    while at < end {
        let len = vals.len().min(end - at);
        // SAFETY: `vals` holds `len` or more `T`s; viewed as their bytes for the block runner.
        let bytes = unsafe { core::slice::from_raw_parts_mut(vals.as_mut_ptr() as *mut u8, len * core::mem::size_of::<T>()) };
        runner.run(at, len, bytes)?;
        let mut block = &vals[..len];
        while !block.is_empty() {
            let take = block.len().min(seg - fold.pos);
            fold.feed(&block[..take]);
            block = &block[take..];
            if fold.pos == seg {
                done(index, fold.finish());
                index += 1;
                fold = Fold::new(kind, seg);
            }
        }
        at += len;
    }
    Ok(())
}

/// `cpu/reduce.rs`' `fold_run` of one run of `len` elements, fed in order a slice at a time:
/// sum and max/min in [`L`] interleaved lanes over the first `len - len % L` elements, the
/// lanes combined, then the tail one by one; prod one by one.
struct Fold<T: Real> {
    kind: ReduceKind,
    /// Elements fed so far.
    pos: usize,
    /// Where the tail starts (`len - len % L`).
    tail: usize,
    lanes: [T::Acc; L],
    /// The running value once the lanes are combined (and prod's).
    acc: T::Acc,
    /// max/min: the first NaN met (the result, as in `lanes_extreme`).
    nan: Option<T::Acc>,
}

impl<T: Real> Fold<T> {
    fn new(kind: ReduceKind, len: usize) -> Fold<T> {
        let zero = <T::Acc as Float>::ZERO;
        let acc = if kind == ReduceKind::Prod { <T::Acc as Float>::ONE } else { zero };
        Fold { kind, pos: 0, tail: len - len % L, lanes: [zero; L], acc, nan: None }
    }

    fn feed(&mut self, xs: &[T]) {
        match self.kind {
            ReduceKind::Prod => {
                self.acc = xs.iter().fold(self.acc, |s, &x| s * x.acc());
                self.pos += xs.len();
            }
            ReduceKind::Sum => self.feed_lanes(xs, |l, x| l + x, |s, x| s + x),
            ReduceKind::Max => self.feed_extreme::<true>(xs),
            _ => self.feed_extreme::<false>(xs),
        }
    }

    /// Sum's lanes: lane `pos % L` takes each element before the tail; at the tail the
    /// lanes are summed from zero in lane order, then the tail added in order.
    fn feed_lanes(&mut self, xs: &[T], lane: impl Fn(T::Acc, T::Acc) -> T::Acc, tail: impl Fn(T::Acc, T::Acc) -> T::Acc) {
        let mut xs = xs;
        // Up to a lane boundary, one by one.
        while !xs.is_empty() && self.pos % L != 0 && self.pos < self.tail {
            let j = self.pos % L;
            self.lanes[j] = lane(self.lanes[j], xs[0].acc());
            self.pos += 1;
            xs = &xs[1..];
        }
        // Whole chunks of L before the tail (the loop `lanes_sum_map` runs: it vectorizes).
        let whole = ((self.tail - self.pos.min(self.tail)) / L).min(xs.len() / L);
        let (body, rest) = xs.split_at(whole * L);
        // The lanes in a local, so they stay in registers through the loop.
        let mut lanes = self.lanes;
        for c in body.chunks_exact(L) {
            for (l, &x) in lanes.iter_mut().zip(c) {
                *l = lane(*l, x.acc());
            }
        }
        self.lanes = lanes;
        self.pos += body.len();
        for &x in rest {
            if self.pos < self.tail {
                let j = self.pos % L;
                self.lanes[j] = lane(self.lanes[j], x.acc());
            } else {
                if self.pos == self.tail {
                    self.acc = self.combined();
                }
                self.acc = tail(self.acc, x.acc());
            }
            self.pos += 1;
        }
    }

    /// max/min: lanes start at the run's first element; a NaN anywhere makes the first NaN
    /// the result; otherwise the lanes are combined from lane 0, then the tail folded in.
    fn feed_extreme<const MAX: bool>(&mut self, xs: &[T]) {
        let better = |x: T::Acc, m: T::Acc| if MAX { x > m } else { x < m };
        if self.pos == 0 {
            if let Some(x) = xs.first() {
                self.lanes = [x.acc(); L];
            }
        }
        if self.nan.is_none() {
            self.nan = xs.iter().map(|x| x.acc()).find(|x| x.is_nan());
        }
        self.feed_lanes(xs, |l, x| if better(x, l) { x } else { l }, |m, x| if better(x, m) { x } else { m });
    }

    /// The lanes combined: summed from zero (sum), or folded from lane 0 (max/min).
    fn combined(&self) -> T::Acc {
        match self.kind {
            ReduceKind::Sum => self.lanes.iter().fold(<T::Acc as Float>::ZERO, |s, &l| s + l),
            kind => {
                let is_max = kind == ReduceKind::Max;
                let better = |x: T::Acc, m: T::Acc| if is_max { x > m } else { x < m };
                self.lanes.iter().fold(self.lanes[0], |m, &x| if better(x, m) { x } else { m })
            }
        }
    }

    /// The run's value (all of it fed).
    fn finish(&self) -> T::Acc {
        match self.kind {
            ReduceKind::Prod => self.acc,
            _ if self.nan.is_some() => self.nan.unwrap_or(self.acc),
            // No tail: the lanes were never combined.
            _ if self.pos == self.tail => self.combined(),
            _ => self.acc,
        }
    }
}
