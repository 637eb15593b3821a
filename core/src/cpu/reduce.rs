//! Reduction, arg-reduction and scan kernels. The axes worked on are moved last (a view), the
//! input read densely, and each contiguous run folded (or scanned) independently; runs are
//! spread over `parallel_for`. Semantics follow MLX's CPU backend: NaN propagates through
//! max/min and their scans, argmax/argmin pick the first NaN, complex compares
//! lexicographically, integer sums wrap in their accumulator width.

use super::elementwise::{OutPtr, GRAIN};
use super::math::{Float, Real};
use super::sort::Key;
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::{DType, Kind};
use crate::element::{Complex64, Element, Value};
use crate::error::{Error, Result};
use crate::ops::reduce::{ReduceKind, ReduceOp, ScanKind};
use crate::parallel::parallel_for;
use alloc::vec::Vec;

/// Evaluates a reduce-family primitive.
pub fn eval(op: &ReduceOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, out_dtype) = super::out0(outputs, name)?.clone();
    let a = super::input(&inputs, 0, name)?;
    let out = Data::alloc(&shape, out_dtype, name)?;
    let n_out: usize = shape.iter().product();
    match op {
        ReduceOp::Reduce { kind, axes } => fold(*kind, a, axes, &out, n_out, out_dtype)?,
        ReduceOp::ArgReduce { max, axis } => {
            let o = unsafe { out.slice_mut::<u32>(n_out) };
            crate::dispatch_all!(a.dtype(), T => {
                with_reduced_last::<T, _>(a, &[*axis], |v, inner| fold_rows(v, inner, o, |run| arg_extreme(run, *max)))?;
            })
        }
        ReduceOp::Scan { kind, axis, reverse, inclusive } => {
            scan(*kind, a, *axis, *reverse, *inclusive, &out, out_dtype)?;
        }
    }
    Ok(alloc::vec![out])
}

/// The permutation that moves `axes` last, and the number of reduced elements per output.
pub(crate) fn reduced_last(a: &Array, axes: &[usize]) -> Result<(Vec<isize>, usize)> {
    let mut perm: Vec<isize> = (0..a.ndim()).filter(|i| !axes.contains(i)).map(|i| i as isize).collect();
    perm.extend(axes.iter().map(|&i| i as isize));
    let inner = axes.iter().map(|&i| a.shape()[i]).product();
    Ok((perm, inner))
}

/// Reads `a` with `axes` moved last, densely.
pub(crate) fn read_reduced_last<T: Element>(a: &Array, axes: &[usize]) -> Result<(Vec<T>, usize)> {
    let (perm, inner) = reduced_last(a, axes)?;
    let t = crate::ops::transpose(a, Some(&perm))?;
    let d = t.data()?;
    Ok((d.read::<T>(t.shape())?.into_owned(), inner))
}

/// Calls `f` with `a`'s elements, `axes` moved last, and the run length; borrows the input
/// buffer when that order is already dense (no copy).
pub(crate) fn with_reduced_last<T: Element, R>(a: &Array, axes: &[usize], f: impl FnOnce(&[T], usize) -> R) -> Result<R> {
    let (perm, inner) = reduced_last(a, axes)?;
    let t = crate::ops::transpose(a, Some(&perm))?;
    let d = t.data()?;
    let v = d.read::<T>(t.shape())?;
    Ok(f(&v, inner))
}

/// Writes rows computed with `axis` moved last (`rows[(pre, post, j)]`) back into the
/// row-major output of `shape` (`out[(pre, j, post)]`).
pub(crate) fn scatter_axis_last<T: Copy>(rows: &[T], shape: &[usize], axis: usize, out: &mut [T]) {
    let n = shape[axis];
    let post: usize = shape[axis + 1..].iter().product();
    if post == 1 || n <= 1 {
        out.copy_from_slice(rows);
        return;
    }
    for (r, row) in rows.chunks_exact(n).enumerate() {
        let (pre_i, p) = (r / post, r % post);
        let base = pre_i * n * post + p;
        for (j, &x) in row.iter().enumerate() {
            out[base + j * post] = x;
        }
    }
}

/// `out[i] = f(run i)` over consecutive runs of `inner` elements, in parallel.
fn fold_rows<T: Sync, O: Send + Copy>(v: &[T], inner: usize, out: &mut [O], f: impl Fn(&[T]) -> O + Sync) {
    let n_out = out.len();
    let p = OutPtr(out.as_mut_ptr());
    let grain = (GRAIN / inner.max(1)).max(1);
    parallel_for(n_out, grain, &|r| {
        // SAFETY: disjoint ranges of `out`, which outlives the parallel region.
        let o = unsafe { p.chunk(&r) };
        for (k, y) in o.iter_mut().enumerate() {
            let i = r.start + k;
            *y = f(&v[i * inner..(i + 1) * inner]);
        }
    });
}

/// Index of the first extreme of a run: a NaN as soon as one is met, else the first strictly
/// greater (max) or smaller (min) element.
fn arg_extreme<T: Key>(run: &[T], max: bool) -> u32 {
    let mut best = 0usize;
    for (j, &x) in run.iter().enumerate().skip(1) {
        let b = run[best];
        if b.nan() {
            break;
        }
        let better = x.nan() || if max { b.lt(x) } else { x.lt(b) };
        if better {
            best = j;
        }
    }
    best as u32
}

fn fold(kind: ReduceKind, a: &Array, axes: &[usize], out: &Data, n_out: usize, out_dtype: DType) -> Result<()> {
    match (kind, a.dtype()) {
        (ReduceKind::All | ReduceKind::Any, dt) => {
            let o = unsafe { out.slice_mut::<bool>(n_out) };
            crate::dispatch_all!(dt, T => {
                let nz = |x: &T| bool::from_value(x.to_value());
                with_reduced_last::<T, _>(a, axes, |v, inner| {
                    if kind == ReduceKind::All {
                        fold_rows(v, inner, o, |run| run.iter().all(nz));
                    } else {
                        fold_rows(v, inner, o, |run| run.iter().any(nz));
                    }
                })?;
            });
            Ok(())
        }
        (_, DType::Complex64) => {
            let o = unsafe { out.slice_mut::<Complex64>(n_out) };
            with_reduced_last::<Complex64, _>(a, axes, |v, inner| {
                fold_rows(v, inner, o, |run| {
                    let first = run.first().copied().unwrap_or_default();
                    match kind {
                        ReduceKind::Sum => run.iter().fold(Complex64::new(0.0, 0.0), |s, &z| cadd(s, z)),
                        ReduceKind::Prod => run.iter().fold(Complex64::new(1.0, 0.0), |s, &z| cmul(s, z)),
                        // NaN propagates as in MLX and numpy: an element with a NaN part wins.
                        ReduceKind::Max => run.iter().fold(first, |m, &z| if cnan(m) { m } else if cnan(z) || m.lt(z) { z } else { m }),
                        _ => run.iter().fold(first, |m, &z| if cnan(m) { m } else if cnan(z) || z.lt(m) { z } else { m }),
                    }
                })
            })
        }
        (_, dt) if dt.is_float() => {
            crate::dispatch_float!(dt, T => float_fold::<T>(kind, a, axes, out, n_out), else Ok(()))
        }
        (_, dt) => {
            crate::dispatch_all!(dt, T => {
                crate::dispatch_all!(out_dtype, O => {
                    let o = unsafe { out.slice_mut::<O>(n_out) };
                    with_reduced_last::<T, _>(a, axes, |v, inner| fold_rows(v, inner, o, |run| int_fold::<T, O>(kind, run)))
                })
            })
        }
    }
}

/// MLX's complex logaddexp: `hi + log1p(exp(lo - hi))` with `hi`/`lo` ordered
/// lexicographically; `hi` itself when `lo` is -inf or `hi` is +inf.
fn clogaddexp(y: Complex64, x: Complex64) -> Complex64 {
    let (hi, lo) = if y.lt(x) { (x, y) } else { (y, x) };
    let inf = f32::INFINITY;
    if (lo.re == -inf && lo.im == 0.0) || (hi.re == inf && hi.im == 0.0) {
        return hi;
    }
    let (dr, di) = (lo.re - hi.re, lo.im - hi.im);
    let m = libm::expf(dr);
    let (er, ei) = (1.0 + m * libm::cosf(di), m * libm::sinf(di));
    let (lr, li) = (libm::logf(libm::hypotf(er, ei)), libm::atan2f(ei, er));
    Complex64::new(hi.re + lr, hi.im + li)
}

/// A complex value with a NaN part (what `isnan` reports).
fn cnan(z: Complex64) -> bool {
    z.re.is_nan() || z.im.is_nan()
}
fn cadd(a: Complex64, b: Complex64) -> Complex64 {
    Complex64::new(a.re + b.re, a.im + b.im)
}
fn cmul(a: Complex64, b: Complex64) -> Complex64 {
    Complex64::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// One max/min step with NaN propagation (the first NaN met is kept).
#[inline]
pub(super) fn extreme_step<F: Float>(is_max: bool, m: F, x: F) -> F {
    if m.is_nan() {
        m
    } else if x.is_nan() || (is_max && x > m) || (!is_max && x < m) {
        x
    } else {
        m
    }
}

/// Reduces the leading `rows` axes of dense data in place order: `out[j] = fold_i v[i*m + j]`,
/// in parallel over column blocks. Avoids the strided gather of moving the axes last.
fn float_fold_leading<T: Real>(kind: ReduceKind, v: &[T], rows: usize, o: &mut [T]) {
    let m = o.len();
    let p = OutPtr(o.as_mut_ptr());
    parallel_for(m, (GRAIN / rows.max(1)).max(64), &|r| {
        // SAFETY: disjoint column ranges of `o`.
        let oc = unsafe { p.chunk(&r) };
        let mut acc: Vec<T::Acc> = match kind {
            ReduceKind::Sum => alloc::vec![T::Acc::ZERO; oc.len()],
            ReduceKind::Prod => alloc::vec![T::Acc::ONE; oc.len()],
            _ => v[r.clone()].iter().map(|x| x.acc()).collect(),
        };
        let first = if matches!(kind, ReduceKind::Max | ReduceKind::Min) { 1 } else { 0 };
        for i in first..rows {
            let row = &v[i * m + r.start..i * m + r.end];
            match kind {
                ReduceKind::Sum => acc.iter_mut().zip(row).for_each(|(s, &x)| *s = *s + x.acc()),
                ReduceKind::Prod => acc.iter_mut().zip(row).for_each(|(s, &x)| *s = *s * x.acc()),
                _ => {
                    let is_max = kind == ReduceKind::Max;
                    acc.iter_mut().zip(row).for_each(|(s, &x)| *s = extreme_step(is_max, *s, x.acc()))
                }
            }
        }
        for (y, &s) in oc.iter_mut().zip(&acc) {
            *y = T::from_acc(s);
        }
    });
}

fn float_fold<T: Real>(kind: ReduceKind, a: &Array, axes: &[usize], out: &Data, n_out: usize) -> Result<()> {
    let o = unsafe { out.slice_mut::<T>(n_out) };
    let leading = axes.iter().enumerate().all(|(i, &x)| i == x) && axes.len() < a.ndim();
    if leading && n_out > 1 && !matches!(kind, ReduceKind::All | ReduceKind::Any) {
        let d = a.data()?;
        if d.is_row_contiguous(a.shape()) {
            let v = d.read::<T>(a.shape())?;
            let rows: usize = axes.iter().map(|&i| a.shape()[i]).product();
            if rows > 0 {
                float_fold_leading::<T>(kind, &v, rows, o);
                return Ok(());
            }
        }
    }
    with_reduced_last::<T, _>(a, axes, |v, inner| {
        let long = matches!(kind, ReduceKind::Sum | ReduceKind::Max | ReduceKind::Min) && inner > LONG_RUN_PIECE;
        if long {
            return fold_long_runs(kind, v, inner, o);
        }
        fold_rows(v, inner, o, |run| T::from_acc(fold_run(kind, run)))
    })
}

/// Elements per piece of a long float sum / max / min run (256 KiB of f32): the pieces are
/// folded in parallel and their results combined in order, so one long reduction (`mx.sum` of a
/// whole array) uses every thread, and the result does not depend on how many there are. A
/// sum over a run longer than this is the in-order sum of its pieces' 8-lane sums.
pub(super) const LONG_RUN_PIECE: usize = 1 << 16;

/// The accumulated fold of one run.
fn fold_run<T: Real>(kind: ReduceKind, run: &[T]) -> T::Acc {
    match kind {
        ReduceKind::Sum => lanes_sum(run),
        ReduceKind::Prod => run.iter().fold(T::Acc::ONE, |s, &x| s * x.acc()),
        // Empty max/min runs are refused when the graph is built; `run[0]` is safe then,
        // but stay total anyway.
        ReduceKind::Max => lanes_extreme::<T, true>(run),
        ReduceKind::Min => lanes_extreme::<T, false>(run),
        ReduceKind::All | ReduceKind::Any => T::Acc::ZERO,
    }
}

/// The max (`MAX`) or min of a run in 8 interleaved lanes, which vectorize (a fold through
/// [`extreme_step`]'s NaN test does not): a NaN anywhere gives the first NaN, as the
/// one-by-one fold does; otherwise the extreme value (order does not change it).
fn lanes_extreme<T: Real, const MAX: bool>(run: &[T]) -> T::Acc {
    const L: usize = 8;
    let Some(first) = run.first() else { return T::Acc::ZERO };
    let better = |x: T::Acc, m: T::Acc| if MAX { x > m } else { x < m };
    let mut lanes = [first.acc(); L];
    let mut nan = false;
    let chunks = run.chunks_exact(L);
    let tail = chunks.remainder();
    for c in chunks {
        for (l, &x) in lanes.iter_mut().zip(c) {
            let x = x.acc();
            nan |= x.is_nan();
            *l = if better(x, *l) { x } else { *l };
        }
    }
    if nan || tail.iter().any(|x| x.acc().is_nan()) {
        return run.iter().map(|x| x.acc()).find(|x| x.is_nan()).unwrap_or(first.acc());
    }
    let m = lanes.iter().fold(lanes[0], |m, &x| if better(x, m) { x } else { m });
    tail.iter().fold(m, |m, &x| if better(x.acc(), m) { x.acc() } else { m })
}

/// [`fold_run`] of runs longer than [`LONG_RUN_PIECE`] (sum, max, min): every piece of every
/// run in parallel, then each run's pieces combined in order.
fn fold_long_runs<T: Real>(kind: ReduceKind, v: &[T], inner: usize, o: &mut [T]) {
    let per_run = inner.div_ceil(LONG_RUN_PIECE);
    let mut pieces = alloc::vec![T::Acc::ZERO; o.len() * per_run];
    let p = OutPtr(pieces.as_mut_ptr());
    parallel_for(pieces.len(), 1, &|r| {
        // SAFETY: disjoint ranges of `pieces`, which outlives the parallel region.
        let dst = unsafe { p.chunk(&r) };
        for (k, y) in dst.iter_mut().enumerate() {
            let (run, piece) = ((r.start + k) / per_run, (r.start + k) % per_run);
            let start = run * inner + piece * LONG_RUN_PIECE;
            let end = (start + LONG_RUN_PIECE).min((run + 1) * inner);
            *y = fold_run(kind, &v[start..end]);
        }
    });
    let is_max = kind == ReduceKind::Max;
    for (y, run) in o.iter_mut().zip(pieces.chunks_exact(per_run)) {
        let acc = run[1..].iter().fold(run[0], |a, &b| if kind == ReduceKind::Sum { a + b } else { extreme_step(is_max, a, b) });
        *y = T::from_acc(acc);
    }
}

/// Sum in 8 interleaved lanes, then the lanes, then the tail: faster than one running sum
/// and closer to MLX's SIMD order (and error) on long runs.
fn lanes_sum<T: Real>(run: &[T]) -> T::Acc {
    lanes_sum_map(run, T::Acc::ZERO, |x| x.acc())
}

/// [`lanes_sum`] of `f(x)`: the one summation order of `mx.sum` over floats, shared by the
/// fused kernels (`fast.rms_norm`) so they round exactly as the composite ops they replace.
pub(crate) fn lanes_sum_map<X: Copy, A: Copy + core::ops::Add<Output = A>>(run: &[X], zero: A, f: impl Fn(X) -> A) -> A {
    const L: usize = 8;
    let mut lanes = [zero; L];
    let chunks = run.chunks_exact(L);
    let tail = chunks.remainder();
    for c in chunks {
        for (l, &x) in lanes.iter_mut().zip(c) {
            *l = *l + f(x);
        }
    }
    let s = lanes.iter().fold(zero, |s, &l| s + l);
    tail.iter().fold(s, |s, &x| s + f(x))
}

fn as_i128<T: Element>(x: T) -> i128 {
    match x.to_value() {
        Value::Bool(b) => b as i128,
        Value::U(u) => u as i128,
        Value::I(s) => s as i128,
        other => other.as_f64() as i128,
    }
}

/// Wraps an exact integer into `O` (two's complement truncation, as C++ accumulation does).
fn from_i128<O: Element>(r: i128) -> O {
    match O::DTYPE.kind() {
        Kind::Unsigned => O::from_value(Value::U(r as u64)),
        Kind::Bool => O::from_value(Value::Bool(r != 0)),
        _ => O::from_value(Value::I(r as i64)),
    }
}

fn int_fold<T: Element, O: Element>(kind: ReduceKind, run: &[T]) -> O {
    let r: i128 = match kind {
        // i128 holds any 64-bit product modulo 2^128, so truncation gives the wrapped value.
        ReduceKind::Sum => run.iter().fold(0i128, |s, &x| s.wrapping_add(as_i128(x))),
        ReduceKind::Prod => run.iter().fold(1i128, |s, &x| s.wrapping_mul(as_i128(x))),
        ReduceKind::Max => run.iter().map(|&x| as_i128(x)).max().unwrap_or(0),
        ReduceKind::Min => run.iter().map(|&x| as_i128(x)).min().unwrap_or(0),
        ReduceKind::All | ReduceKind::Any => 0,
    };
    from_i128::<O>(r)
}

// ---- scans -------------------------------------------------------------------------------

/// Scans every run of `n` elements: inclusive `out[j] = op(out[j-1], x[j])`, exclusive
/// `out[j] = op(out[j-1], x[j-1])` with `out[0] = init`; reversed runs go from the end.
fn scan_rows<U: Copy + Send + Sync>(v: &[U], n: usize, reverse: bool, inclusive: bool, init: U, op: impl Fn(U, U) -> U + Sync) -> Vec<U> {
    let mut out = v.to_vec();
    if n == 0 {
        return out;
    }
    let rows = v.len() / n;
    let p = OutPtr(out.as_mut_ptr());
    let grain = (GRAIN / n).max(1);
    parallel_for(rows, grain, &|r| {
        // SAFETY: each row range maps to a disjoint element range of `out`.
        let span = r.start * n..r.end * n;
        let o = unsafe { p.chunk(&span) };
        for (row, src) in o.chunks_exact_mut(n).zip(v[r.start * n..r.end * n].chunks_exact(n)) {
            let idx = |j: usize| if reverse { n - 1 - j } else { j };
            if inclusive {
                let mut acc = src[idx(0)];
                row[idx(0)] = acc;
                for j in 1..n {
                    acc = op(acc, src[idx(j)]);
                    row[idx(j)] = acc;
                }
            } else {
                let mut acc = init;
                for j in 0..n {
                    row[idx(j)] = acc;
                    acc = op(acc, src[idx(j)]);
                }
            }
        }
    });
    out
}

fn scan(kind: ScanKind, a: &Array, axis: usize, reverse: bool, inclusive: bool, out: &Data, out_dtype: DType) -> Result<()> {
    let name = crate::ops::reduce::ReduceOp::Scan { kind, axis, reverse, inclusive }.name();
    let shape = a.shape().to_vec();
    let total: usize = shape.iter().product();
    let n = shape[axis];
    macro_rules! finish {
        ($U:ty, $rows:expr) => {{
            let rows: Vec<$U> = $rows;
            let o = unsafe { out.slice_mut::<$U>(total) };
            scatter_axis_last(&rows, &shape, axis, o);
            Ok(())
        }};
    }
    match a.dtype() {
        DType::Bool => {
            let (v, _) = read_reduced_last::<bool>(a, &[axis])?;
            if out_dtype == DType::Int32 {
                let w: Vec<i32> = v.iter().map(|&b| b as i32).collect();
                finish!(i32, scan_rows(&w, n, reverse, inclusive, 0, |x, y| x.wrapping_add(y)))
            } else {
                let (init, f): (bool, fn(bool, bool) -> bool) = match kind {
                    ScanKind::Prod | ScanKind::Min => (true, |x, y| x & y),
                    ScanKind::Max => (false, |x, y| x | y),
                    _ => (false, |x, y| x | y),
                };
                finish!(bool, scan_rows(&v, n, reverse, inclusive, init, f))
            }
        }
        DType::Complex64 => {
            let (v, _) = read_reduced_last::<Complex64>(a, &[axis])?;
            let inf = f32::INFINITY;
            let rows = match kind {
                ScanKind::Sum => scan_rows(&v, n, reverse, inclusive, Complex64::new(0.0, 0.0), cadd),
                ScanKind::Prod => scan_rows(&v, n, reverse, inclusive, Complex64::new(1.0, 0.0), cmul),
                ScanKind::Max => scan_rows(&v, n, reverse, inclusive, Complex64::new(-inf, -inf), |y, x| if x.lt(y) { y } else { x }),
                ScanKind::Min => scan_rows(&v, n, reverse, inclusive, Complex64::new(inf, inf), |y, x| if x.lt(y) { x } else { y }),
                ScanKind::LogAddExp => scan_rows(&v, n, reverse, inclusive, Complex64::new(-inf, 0.0), clogaddexp),
            };
            finish!(Complex64, rows)
        }
        dt if dt.is_float() => crate::dispatch_float!(dt, T => {
            let (v, _) = read_reduced_last::<T>(a, &[axis])?;
            finish!(T, float_scan::<T>(kind, &v, n, reverse, inclusive))
        }, else Ok(())),
        dt => crate::dispatch_int!(dt, T => {
            let (v, _) = read_reduced_last::<T>(a, &[axis])?;
            finish!(T, int_scan::<T>(kind, &v, n, reverse, inclusive))
        }, else Err(Error::runtime(name, "Unexpected dtype."))),
    }
}

fn float_scan<T: Real>(kind: ScanKind, v: &[T], n: usize, reverse: bool, inclusive: bool) -> Vec<T> {
    let nan = T::from_acc(T::Acc::of(f64::NAN));
    let inf_t = T::from_acc(T::Acc::of(f64::INFINITY));
    let ninf_t = T::from_acc(T::Acc::of(f64::NEG_INFINITY));
    // Each step rounds to T, as MLX accumulates halves in their own type.
    match kind {
        ScanKind::Sum => scan_rows(v, n, reverse, inclusive, T::from_acc(T::Acc::ZERO), |y, x| T::from_acc(y.acc() + x.acc())),
        ScanKind::Prod => scan_rows(v, n, reverse, inclusive, T::from_acc(T::Acc::ONE), |y, x| T::from_acc(y.acc() * x.acc())),
        ScanKind::Max => scan_rows(v, n, reverse, inclusive, ninf_t, move |y, x| {
            if y.acc().is_nan() || x.acc().is_nan() { nan } else if x.acc() < y.acc() { y } else { x }
        }),
        ScanKind::Min => scan_rows(v, n, reverse, inclusive, inf_t, move |y, x| {
            if y.acc().is_nan() || x.acc().is_nan() { nan } else if x.acc() < y.acc() { x } else { y }
        }),
        ScanKind::LogAddExp => scan_rows(v, n, reverse, inclusive, ninf_t, move |y, x| {
            let (a, b) = (y.acc(), x.acc());
            let inf = T::Acc::of(f64::INFINITY);
            if a.is_nan() || b.is_nan() {
                return nan;
            }
            let (hi, lo) = if a > b { (a, b) } else { (b, a) };
            if lo == -inf || hi == inf {
                T::from_acc(hi)
            } else {
                T::from_acc(hi + (lo - hi).exp().ln_1p())
            }
        }),
    }
}

fn int_scan<T: Element>(kind: ScanKind, v: &[T], n: usize, reverse: bool, inclusive: bool) -> Vec<T> {
    let bits = 8 * T::DTYPE.size() as u32;
    let signed = T::DTYPE.kind() == Kind::Signed;
    let (lo, hi): (i128, i128) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let w = |r: i128| from_i128::<T>(r);
    match kind {
        ScanKind::Sum => scan_rows(v, n, reverse, inclusive, w(0), |y, x| w(as_i128(y).wrapping_add(as_i128(x)))),
        ScanKind::Prod => scan_rows(v, n, reverse, inclusive, w(1), |y, x| w(as_i128(y).wrapping_mul(as_i128(x)))),
        ScanKind::Max => scan_rows(v, n, reverse, inclusive, w(lo), |y, x| if as_i128(x) < as_i128(y) { y } else { x }),
        // LogAddExp never reaches integers (cast to float32 when recorded).
        ScanKind::Min | ScanKind::LogAddExp => {
            scan_rows(v, n, reverse, inclusive, w(hi), |y, x| if as_i128(x) < as_i128(y) { x } else { y })
        }
    }
}
