//! Reduction kernels: the reduced axes are moved last (a view), the input read densely, and
//! each contiguous run of `inner` elements folded into one output.

use super::math::Real;
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::element::{Complex64, Element, Value};
use crate::error::{Error, Result};
use crate::ops::reduce::{ReduceKind, ReduceOp};
use alloc::vec::Vec;

/// Evaluates a reduction.
pub fn eval(op: &ReduceOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, out_dtype) = super::out0(outputs, name)?.clone();
    let a = super::input(&inputs, 0, name)?;
    match op {
        ReduceOp::Reduce { kind, axes } => {
            let (vals, inner) = reduced_last(a, axes)?;
            let out = Data::alloc(&shape, out_dtype, name)?;
            let n_out: usize = shape.iter().product();
            let _ = vals;
            fold(*kind, a, axes, inner, &out, n_out, out_dtype)?;
            Ok(alloc::vec![out])
        }
    }
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
    Ok((d.read::<T>(t.shape()).into_owned(), inner))
}

fn fold(kind: ReduceKind, a: &Array, axes: &[usize], inner: usize, out: &Data, n_out: usize, out_dtype: DType) -> Result<()> {
    let name = ReduceOp::Reduce { kind, axes: Vec::new() }.name();
    match (kind, a.dtype()) {
        (ReduceKind::All | ReduceKind::Any, dt) => {
            let (v, _) = crate::dispatch_all!(dt, T => {
                let (v, inner) = read_reduced_last::<T>(a, axes)?;
                (v.iter().map(|x| bool::from_value(x.to_value())).collect::<Vec<bool>>(), inner)
            });
            let o = unsafe { out.slice_mut::<bool>(n_out) };
            for (i, y) in o.iter_mut().enumerate() {
                let run = &v[i * inner..(i + 1) * inner];
                *y = if kind == ReduceKind::All { run.iter().all(|&b| b) } else { run.iter().any(|&b| b) };
            }
            Ok(())
        }
        (_, DType::Complex64) => {
            let (v, _) = read_reduced_last::<Complex64>(a, axes)?;
            let o = unsafe { out.slice_mut::<Complex64>(n_out) };
            for (i, y) in o.iter_mut().enumerate() {
                let run = &v[i * inner..(i + 1) * inner];
                *y = match kind {
                    ReduceKind::Sum => run.iter().fold(Complex64::new(0.0, 0.0), |s, z| Complex64::new(s.re + z.re, s.im + z.im)),
                    ReduceKind::Prod => run.iter().fold(Complex64::new(1.0, 0.0), |s, z| {
                        Complex64::new(s.re * z.re - s.im * z.im, s.re * z.im + s.im * z.re)
                    }),
                    _ => return Err(Error::unsupported(name, "max/min of complex64 is not supported.")),
                };
            }
            Ok(())
        }
        (_, dt) if dt.is_float() => {
            crate::dispatch_float!(dt, T => float_fold::<T>(kind, a, axes, inner, out, n_out), else Ok(()))
        }
        (_, dt) => {
            // Integers and bool: accumulate in the output dtype through i128/u128-free wrapping.
            crate::dispatch_all!(dt, T => {
                let (v, _) = read_reduced_last::<T>(a, axes)?;
                crate::dispatch_all!(out_dtype, O => int_fold::<T, O>(kind, &v, inner, unsafe { out.slice_mut::<O>(n_out) }))
            })
        }
    }
}

fn float_fold<T: Real>(kind: ReduceKind, a: &Array, axes: &[usize], inner: usize, out: &Data, n_out: usize) -> Result<()> {
    use super::math::Float;
    let (v, _) = read_reduced_last::<T>(a, axes)?;
    let o = unsafe { out.slice_mut::<T>(n_out) };
    for (i, y) in o.iter_mut().enumerate() {
        let run = &v[i * inner..(i + 1) * inner];
        let acc = match kind {
            ReduceKind::Sum => run.iter().fold(T::Acc::ZERO, |s, &x| s + x.acc()),
            ReduceKind::Prod => run.iter().fold(T::Acc::ONE, |s, &x| s * x.acc()),
            ReduceKind::Max => run.iter().skip(1).fold(run[0].acc(), |m, &x| {
                let x = x.acc();
                if m.is_nan() || x.is_nan() { if m.is_nan() { m } else { x } } else if x > m { x } else { m }
            }),
            ReduceKind::Min => run.iter().skip(1).fold(run[0].acc(), |m, &x| {
                let x = x.acc();
                if m.is_nan() || x.is_nan() { if m.is_nan() { m } else { x } } else if x < m { x } else { m }
            }),
            ReduceKind::All | ReduceKind::Any => T::Acc::ZERO,
        };
        *y = T::from_acc(acc);
    }
    Ok(())
}

fn int_fold<T: Element, O: Element>(kind: ReduceKind, v: &[T], inner: usize, o: &mut [O]) -> Result<()> {
    for (i, y) in o.iter_mut().enumerate() {
        let run = &v[i * inner..(i + 1) * inner];
        let as_i = |x: &T| match x.to_value() {
            Value::Bool(b) => b as i128,
            Value::U(u) => u as i128,
            Value::I(s) => s as i128,
            other => other.as_f64() as i128,
        };
        let r: i128 = match kind {
            // Wrap in the output width, as C++ accumulation does.
            ReduceKind::Sum => run.iter().fold(0i128, |s, x| s.wrapping_add(as_i(x))),
            ReduceKind::Prod => run.iter().fold(1i128, |s, x| s.wrapping_mul(as_i(x))),
            ReduceKind::Max => run.iter().map(as_i).max().unwrap_or(0),
            ReduceKind::Min => run.iter().map(as_i).min().unwrap_or(0),
            ReduceKind::All | ReduceKind::Any => 0,
        };
        *y = if O::DTYPE.kind() == crate::dtype::Kind::Unsigned { O::from_value(Value::U(r as u64)) } else { O::from_value(Value::I(r as i64)) };
    }
    Ok(())
}
