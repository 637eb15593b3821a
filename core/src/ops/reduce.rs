//! Reductions over axes (sum, prod, max, min, all, any), arg-reductions (argmax, argmin) and
//! scans (cumsum …) as primitives; the statistics (mean, var, std, logsumexp, softmax, median,
//! count_nonzero, minmax) are composed from them as MLX composes them, so dtypes, NaN and
//! empty-array behaviour follow MLX 0.32.

pub(crate) mod grad;
use crate::array::Array;
use crate::dtype::DType;
use crate::element::Value;
use crate::error::{Error, Result};
use crate::ops;
use crate::primitive::Primitive;
use alloc::vec::Vec;

/// Which reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    /// Sum.
    Sum,
    /// Product.
    Prod,
    /// Maximum (NaN propagates).
    Max,
    /// Minimum (NaN propagates).
    Min,
    /// Logical and.
    All,
    /// Logical or.
    Any,
}

/// Which scan (cumulative reduction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// Running sum.
    Sum,
    /// Running product.
    Prod,
    /// Running maximum (NaN propagates).
    Max,
    /// Running minimum (NaN propagates).
    Min,
    /// Running log(sum(exp)).
    LogAddExp,
}

/// The reduce family.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Reduce `axes` (sorted, unique) of the input; the output keeps them as size-1 axes.
    Reduce {
        /// Which reduction.
        kind: ReduceKind,
        /// Axes reduced.
        axes: Vec<usize>,
    },
    /// Index (uint32) of the first maximum / minimum along `axis`, kept as a size-1 axis.
    /// NaN counts as the extreme (the first NaN wins), as in MLX and numpy.
    ArgReduce {
        /// true: argmax; false: argmin.
        max: bool,
        /// The axis reduced.
        axis: usize,
    },
    /// Cumulative reduction along `axis`; the output has the input's shape.
    Scan {
        /// Which scan.
        kind: ScanKind,
        /// The axis scanned.
        axis: usize,
        /// Scan from the end.
        reverse: bool,
        /// Include the current element (else the identity comes first).
        inclusive: bool,
    },
}

impl ReduceOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            ReduceOp::Reduce { kind, .. } => kind_name(*kind),
            ReduceOp::ArgReduce { max, .. } => {
                if *max {
                    "argmax"
                } else {
                    "argmin"
                }
            }
            ReduceOp::Scan { kind, .. } => match kind {
                ScanKind::Sum => "cumsum",
                ScanKind::Prod => "cumprod",
                ScanKind::Max => "cummax",
                ScanKind::Min => "cummin",
                ScanKind::LogAddExp => "logcumsumexp",
            },
        }
    }
}

fn kind_name(kind: ReduceKind) -> &'static str {
    match kind {
        ReduceKind::Sum => "sum",
        ReduceKind::Prod => "prod",
        ReduceKind::Max => "max",
        ReduceKind::Min => "min",
        ReduceKind::All => "all",
        ReduceKind::Any => "any",
    }
}

/// Resolves reduction axes as MLX does: out of range is an IndexError, duplicates a ValueError.
/// `None` means every axis. Returns them sorted.
pub fn reduction_axes(a: &Array, axes: Option<&[isize]>, op: &'static str) -> Result<Vec<usize>> {
    let nd = a.ndim() as isize;
    let Some(ax) = axes else { return Ok((0..a.ndim()).collect()) };
    let mut out = Vec::with_capacity(ax.len());
    for &x in ax {
        let y = if x < 0 { x + nd } else { x };
        if y < 0 || y >= nd {
            return Err(Error::index(op, alloc::format!("Invalid axis {x} for array with {nd} dimensions.")));
        }
        out.push(y as usize);
    }
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid(op, "Duplicate axes detected in reduction."));
    }
    Ok(out)
}

/// Output dtype of a sum/prod: integers of up to 32 bits and bool accumulate in 32 bits.
pub fn sum_dtype(d: DType) -> DType {
    match d {
        DType::Bool | DType::Int8 | DType::Int16 => DType::Int32,
        DType::Uint8 | DType::Uint16 => DType::Uint32,
        other => other,
    }
}

/// float32 for bool and integers, the dtype itself for floats and complex (MLX `at_least_float`).
pub fn at_least_float(d: DType) -> DType {
    if d.is_inexact() {
        d
    } else {
        DType::Float32
    }
}

/// Records `kind` over `axes` of `a`, keeping or dropping the reduced axes.
pub fn reduce(kind: ReduceKind, a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    let name = kind_name(kind);
    let axes = reduction_axes(a, axes, name)?;
    let out_dtype = match kind {
        ReduceKind::Sum | ReduceKind::Prod => sum_dtype(a.dtype()),
        ReduceKind::Max | ReduceKind::Min => a.dtype(),
        ReduceKind::All | ReduceKind::Any => DType::Bool,
    };
    // No axes at all: MLX hands the input back unchanged (sum keeps int8, even).
    if axes.is_empty() {
        return if matches!(kind, ReduceKind::All | ReduceKind::Any) { ops::astype(a, DType::Bool) } else { Ok(a.clone()) };
    }
    if matches!(kind, ReduceKind::Max | ReduceKind::Min) {
        if let Some(&i) = axes.iter().find(|&&i| a.shape()[i] == 0) {
            return Err(Error::invalid(name, alloc::format!("Cannot {name} reduce over axis {i} with size 0.")));
        }
    }
    let kept: Vec<usize> = a.shape().iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
    let out = if kept == a.shape() && !crate::transforms::compile::shape_generic(a) {
        // Every reduced axis has size 1: only the dtype changes (a shapeless trace keeps the
        // reduction, which other shapes need).
        ops::astype(a, out_dtype)?
    } else {
        Array::from_op(Primitive::Reduce(ReduceOp::Reduce { kind, axes: axes.clone() }), alloc::vec![a.clone()], kept, out_dtype)
    };
    if keepdims {
        Ok(out)
    } else {
        // A squeeze (MLX's `Squeeze`), which a shapeless trace asks again on other shapes.
        ops::squeeze(&out, Some(&axes.iter().map(|&i| i as isize).collect::<Vec<_>>()))
    }
}

/// `mx.sum(a, axis, keepdims)`.
pub fn sum(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Sum, a, axes, keepdims)
}
/// `mx.prod(a, axis, keepdims)`.
pub fn prod(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Prod, a, axes, keepdims)
}
/// `mx.max(a, axis, keepdims)`: NaN propagates; complex compares lexicographically.
pub fn max(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Max, a, axes, keepdims)
}
/// `mx.min(a, axis, keepdims)`.
pub fn min(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Min, a, axes, keepdims)
}
/// `mx.all(a, axis, keepdims)`.
pub fn all(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::All, a, axes, keepdims)
}
/// `mx.any(a, axis, keepdims)`.
pub fn any(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    reduce(ReduceKind::Any, a, axes, keepdims)
}
/// `mx.minmax(a, axis, keepdims)`: `(min, max)`.
pub fn minmax(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<(Array, Array)> {
    Ok((min(a, axes, keepdims)?, max(a, axes, keepdims)?))
}

/// `mx.count_nonzero(a, axis, keepdims)`: int32 counts of `a != 0`.
pub fn count_nonzero(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    let zero = Array::from_value(Value::I(0), a.dtype())?;
    let nz = ops::astype(&ops::not_equal(a, &zero)?, DType::Int32)?;
    sum(&nz, axes, keepdims)
}

/// The number of elements in `axes` of `a` (or its reciprocal) in `dtype`: a 0-d constant —
/// or, in a shapeless trace, counted from `a` in the graph (ones shaped like `a` summed over
/// `axes`, float32 so counts below 2^24 are exact), since a replay on other shapes must not
/// divide by the traced shape's count (MLX's `NumberOfElements`).
fn count_of(a: &Array, axes: &[usize], inverted: bool, dtype: DType, keepdims: bool) -> Result<Array> {
    if axes.is_empty() || !crate::transforms::compile::shape_generic(a) {
        let n: f64 = axes.iter().map(|&i| a.shape()[i] as f64).product();
        return Array::from_value(Value::F(if inverted { 1.0 / n } else { n }), dtype);
    }
    // True everywhere (NaN included): an elementwise function of `a`, so it takes `a`'s shape.
    let b = ops::astype(a, DType::Bool)?;
    let ones = ops::astype(&ops::logical_or(&b, &ops::logical_not(&b)?)?, DType::Float32)?;
    let ax: Vec<isize> = axes.iter().map(|&i| i as isize).collect();
    let n = sum(&ones, Some(&ax), keepdims)?;
    let n = if inverted { ops::reciprocal(&n)? } else { n };
    ops::astype(&n, dtype)
}

/// Checks axes the way `mean`/`median` do before reducing (their own message, IndexError).
fn check_axes_bounds(a: &Array, axes: Option<&[isize]>, op: &'static str) -> Result<()> {
    let nd = a.ndim() as isize;
    for &x in axes.unwrap_or(&[]) {
        if x < -nd || x >= nd {
            return Err(Error::index(op, alloc::format!("axis {x} is out of bounds for array with {nd} dimensions.")));
        }
    }
    Ok(())
}

/// `mx.mean(a, axis, keepdims)`: `sum * (1/n)` in at-least-float32 (empty gives NaN).
pub fn mean(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    check_axes_bounds(a, axes, "mean")?;
    let ax = reduction_axes(a, axes, "mean")?;
    let inv = count_of(a, &ax, true, at_least_float(a.dtype()), keepdims)?;
    ops::multiply(&sum(a, axes, keepdims)?, &inv)
}

/// `mx.var(a, axis, keepdims, ddof)`: mean squared deviation, divided by `max(n - ddof, 0)`
/// when `ddof != 0`. Complex input gives the float32 mean squared magnitude.
pub fn var(a: &Array, axes: Option<&[isize]>, keepdims: bool, ddof: i64) -> Result<Array> {
    let mut dtype = at_least_float(a.dtype());
    let ax = reduction_axes(a, axes, "var")?;
    let mu = mean(a, axes, true)?;
    let d = ops::subtract(a, &mu)?;
    let sq = if dtype.is_complex() {
        dtype = DType::Float32;
        ops::real(&ops::multiply(&d, &ops::conjugate(&d)?)?)?
    } else {
        ops::square(&d)?
    };
    let v = sum(&sq, axes, keepdims)?;
    if ddof != 0 {
        let n = count_of(a, &ax, false, dtype, keepdims)?;
        let denom = ops::maximum(
            &ops::subtract(&n, &Array::from_value(Value::I(ddof), dtype)?)?,
            &Array::from_value(Value::I(0), dtype)?,
        )?;
        ops::divide(&v, &denom)
    } else {
        ops::multiply(&v, &count_of(a, &ax, true, dtype, keepdims)?)
    }
}

/// `mx.std(a, axis, keepdims, ddof)`: `sqrt(var)`.
pub fn std(a: &Array, axes: Option<&[isize]>, keepdims: bool, ddof: i64) -> Result<Array> {
    ops::sqrt(&var(a, axes, keepdims, ddof)?)
}

/// Whether `axes` (as given) is MLX's "last axis only" case for softmax/logsumexp: the last
/// given axis is the final one and any before it are consecutive size-1 axes.
fn reduces_last_dim(a: &Array, axes: &[isize]) -> bool {
    let nd = a.ndim() as isize;
    let Some(&last) = axes.last() else { return false };
    if last != nd - 1 && last != -1 {
        return false;
    }
    for i in (0..axes.len().saturating_sub(1)).rev() {
        let ai = axes[i];
        let size = usize::try_from(if ai < 0 { ai + nd } else { ai }).ok().and_then(|k| a.shape().get(k).copied());
        if ai + 1 != axes[i + 1] || size != Some(1) {
            return false;
        }
    }
    true
}

/// `mx.logsumexp(a, axis, keepdims)`: `log(sum(exp(a - max))) + max`, or `max` where it is infinite.
pub fn logsumexp(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    const OP: &str = "logsumexp";
    if a.size() == 0 {
        return Err(Error::invalid(OP, "Received empty array."));
    }
    let all_axes: Vec<isize> = (0..a.ndim() as isize).collect();
    let given = axes.unwrap_or(&all_axes);
    if a.ndim() == 0 && !given.is_empty() {
        return Err(Error::invalid(OP, "Received non-empty axes for array with 0 dimensions."));
    }
    // MLX's fused last-axis kernel works in at-least-float32; its composed path for other
    // axes subtracts in the input dtype (unsigned inputs wrap there, as in MLX).
    let x = if !a.dtype().is_complex() && reduces_last_dim(a, given) {
        ops::astype(a, at_least_float(a.dtype()))?
    } else {
        a.clone()
    };
    let maxval = max(&x, Some(given), true)?;
    let out = ops::log(&sum(&ops::exp(&ops::subtract(&x, &maxval)?)?, Some(given), keepdims)?)?;
    // A squeeze, not a reshape to the traced shape: a shapeless trace serves other shapes.
    let maxval = if keepdims { maxval } else { ops::squeeze(&maxval, Some(given))? };
    let out = ops::add(&out, &maxval)?;
    ops::where_(&ops::isinf(&maxval)?, &maxval, &out)
}

/// `mx.softmax(a, axis, precise)`: `exp(a - max) / sum(exp(a - max))`. Over the last axis
/// integers become float32 (MLX's fused kernel); over other axes the result is cast back to
/// the input dtype, as MLX does. `precise` computes half types in float32.
pub fn softmax(a: &Array, axes: Option<&[isize]>, precise: bool) -> Result<Array> {
    const OP: &str = "softmax";
    if a.size() == 0 {
        return Ok(a.clone());
    }
    let all_axes: Vec<isize> = (0..a.ndim() as isize).collect();
    let given = axes.unwrap_or(&all_axes);
    if a.ndim() == 0 && !given.is_empty() {
        return Err(Error::invalid(OP, "Received non-empty axes for array with 0 dimensions."));
    }
    let complex = a.dtype().is_complex();
    let (x, out_dtype) = if !complex && reduces_last_dim(a, given) {
        let dt = at_least_float(a.dtype());
        let compute = if precise && matches!(dt, DType::Float16 | DType::Bfloat16) { DType::Float32 } else { dt };
        (ops::astype(a, compute)?, dt)
    } else if precise && !complex {
        (ops::astype(a, DType::Float32)?, a.dtype())
    } else {
        (a.clone(), a.dtype())
    };
    if x.dtype() == DType::Float32 && !complex && reduces_last_dim(a, given) {
        // One pass per row on the CPU (MLX's Softmax primitive); the same ops elsewhere.
        return ops::astype(&ops::fast::softmax_rows(&x)?, out_dtype);
    }
    let m = max(&x, Some(given), true)?;
    let ex = ops::exp(&ops::subtract(&x, &m)?)?;
    ops::astype(&ops::divide(&ex, &sum(&ex, Some(given), true)?)?, out_dtype)
}

/// `mx.median(a, axis, keepdims)`: sorts the reduced axes (flattened) and averages the middle
/// pair; NaN anywhere in a row gives NaN.
pub fn median(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    const OP: &str = "median";
    check_axes_bounds(a, axes, OP)?;
    let nd = a.ndim();
    let sorted_axes: Vec<usize> = match axes {
        None => (0..nd).collect(),
        Some(ax) => {
            let mut v: Vec<usize> = ax.iter().map(|&x| if x < 0 { (x + nd as isize) as usize } else { x as usize }).collect();
            v.sort_unstable();
            v.dedup();
            if v.len() != ax.len() {
                return Err(Error::invalid(OP, "Received duplicate axis."));
            }
            v
        }
    };
    let dtype = at_least_float(a.dtype());
    let mut perm: Vec<isize> = (0..nd).filter(|i| !sorted_axes.contains(i)).map(|i| i as isize).collect();
    let flat_start = perm.len();
    perm.extend(sorted_axes.iter().map(|&i| i as isize));
    let t = ops::transpose(a, Some(&perm))?;
    let flat = if sorted_axes.is_empty() {
        if nd > 0 {
            // MLX flattens an empty axis range and fails there.
            return Err(Error::invalid("flatten", "start_axis must be less than or equal to end_axis"));
        }
        ops::expand_dims(&t, &[-1])?
    } else {
        ops::flatten(&t, flat_start as isize, nd as isize - 1)?
    };
    let n = *flat.shape().last().unwrap_or(&0);
    if n == 0 {
        return Err(Error::invalid(OP, "Cannot take median along empty axis."));
    }
    let sorted = crate::ops::sort::sort(&flat, Some(-1))?;
    let fnd = sorted.ndim();
    let mut start = alloc::vec![0isize; fnd];
    let mut stop: Vec<isize> = sorted.shape().iter().map(|&d| d as isize).collect();
    let step = alloc::vec![1isize; fnd];
    let mp = (n / 2) as isize;
    start[fnd - 1] = mp;
    stop[fnd - 1] = mp + 1;
    let mut med = ops::astype(&ops::slice(&sorted, &start, &stop, &step)?, dtype)?;
    if n % 2 == 0 {
        start[fnd - 1] = mp - 1;
        stop[fnd - 1] = mp;
        let lo = ops::astype(&ops::slice(&sorted, &start, &stop, &step)?, dtype)?;
        med = ops::multiply(&ops::add(&med, &lo)?, &Array::from_value(Value::F(0.5), dtype)?)?;
    }
    if a.dtype().is_inexact() {
        let has_nan = any(&ops::isnan(&flat)?, Some(&[-1]), true)?;
        med = ops::where_(&has_nan, &Array::from_value(Value::F(f64::NAN), dtype)?, &med)?;
    }
    let med = ops::squeeze(&med, Some(&[-1]))?;
    if keepdims {
        let ax: Vec<isize> = sorted_axes.iter().map(|&i| i as isize).collect();
        ops::expand_dims(&med, &ax)
    } else {
        Ok(med)
    }
}

/// argmax/argmin: over the flattened array when `axis` is `None`.
fn arg_reduce(a: &Array, axis: Option<isize>, keepdims: bool, is_max: bool) -> Result<Array> {
    let name = if is_max { "argmax" } else { "argmin" };
    let Some(axis) = axis else {
        let flat = ops::flatten(a, 0, -1)?;
        if keepdims && a.ndim() == 0 {
            // MLX computes `ndim - 1` axes to re-insert and fails on 0-d input.
            return Err(Error::invalid(name, "cannot create std::vector larger than max_size()"));
        }
        // A squeeze and an expand_dims (not reshapes to fixed shapes), so a shapeless compile
        // serves every shape from one trace, as MLX.
        let r = ops::squeeze(&arg_reduce(&flat, Some(0), true, is_max)?, Some(&[0]))?;
        return if keepdims { ops::expand_dims(&r, &(0..a.ndim() as isize).collect::<alloc::vec::Vec<_>>()) } else { Ok(r) };
    };
    if a.size() == 0 {
        return Err(Error::invalid(name, alloc::format!("Cannot {name} reduce zero size array.")));
    }
    let ax = reduction_axes(a, Some(&[axis]), name)?[0];
    let mut kept = a.shape().to_vec();
    kept[ax] = 1;
    let out = if a.shape()[ax] == 1 && !crate::transforms::compile::shape_generic(a) {
        ops::zeros(&kept, DType::Uint32)?
    } else {
        Array::from_op(Primitive::Reduce(ReduceOp::ArgReduce { max: is_max, axis: ax }), alloc::vec![a.clone()], kept, DType::Uint32)
    };
    if keepdims {
        Ok(out)
    } else {
        ops::squeeze(&out, Some(&[ax as isize]))
    }
}

/// `mx.argmax(a, axis, keepdims)`: uint32 index of the first maximum (first NaN if any).
pub fn argmax(a: &Array, axis: Option<isize>, keepdims: bool) -> Result<Array> {
    arg_reduce(a, axis, keepdims, true)
}
/// `mx.argmin(a, axis, keepdims)`: uint32 index of the first minimum (first NaN if any).
pub fn argmin(a: &Array, axis: Option<isize>, keepdims: bool) -> Result<Array> {
    arg_reduce(a, axis, keepdims, false)
}

/// Records a scan; `axis = None` scans the flattened array.
fn scan(kind: ScanKind, a: &Array, axis: Option<isize>, reverse: bool, inclusive: bool, out_dtype: DType) -> Result<Array> {
    let op = ReduceOp::Scan { kind, axis: 0, reverse, inclusive };
    let name = op.name();
    let Some(axis) = axis else {
        let flat = ops::flatten(a, 0, -1)?;
        return scan(kind, &flat, Some(0), reverse, inclusive, out_dtype);
    };
    let nd = a.ndim() as isize;
    if axis >= nd || axis < -nd {
        return Err(Error::index(name, alloc::format!("Axis {axis} is out of bounds for array with {nd} dimensions.")));
    }
    let axis = ((axis + nd) % nd) as usize;
    Ok(Array::from_op(
        Primitive::Reduce(ReduceOp::Scan { kind, axis, reverse, inclusive }),
        alloc::vec![a.clone()],
        a.shape().to_vec(),
        out_dtype,
    ))
}

/// `mx.cumsum(a, axis, reverse, inclusive, dtype)`: bool sums become int32, other dtypes keep
/// theirs (integers wrap, halves round at every step).
pub fn cumsum(a: &Array, axis: Option<isize>, reverse: bool, inclusive: bool, dtype: Option<DType>) -> Result<Array> {
    let x = match dtype {
        Some(d) => ops::astype(a, d)?,
        None => a.clone(),
    };
    let out = if x.dtype() == DType::Bool { DType::Int32 } else { x.dtype() };
    scan(ScanKind::Sum, &x, axis, reverse, inclusive, out)
}
/// `mx.cumprod(a, axis, reverse, inclusive, dtype)`.
pub fn cumprod(a: &Array, axis: Option<isize>, reverse: bool, inclusive: bool, dtype: Option<DType>) -> Result<Array> {
    let x = match dtype {
        Some(d) => ops::astype(a, d)?,
        None => a.clone(),
    };
    let dt = x.dtype();
    scan(ScanKind::Prod, &x, axis, reverse, inclusive, dt)
}
/// `mx.cummax(a, axis, reverse, inclusive)`.
pub fn cummax(a: &Array, axis: Option<isize>, reverse: bool, inclusive: bool) -> Result<Array> {
    scan(ScanKind::Max, a, axis, reverse, inclusive, a.dtype())
}
/// `mx.cummin(a, axis, reverse, inclusive)`.
pub fn cummin(a: &Array, axis: Option<isize>, reverse: bool, inclusive: bool) -> Result<Array> {
    scan(ScanKind::Min, a, axis, reverse, inclusive, a.dtype())
}
/// `mx.logcumsumexp(a, axis, reverse, inclusive)`: integers and bool compute in float32.
pub fn logcumsumexp(a: &Array, axis: Option<isize>, reverse: bool, inclusive: bool) -> Result<Array> {
    let x = ops::astype(a, at_least_float(a.dtype()))?;
    let dt = x.dtype();
    scan(ScanKind::LogAddExp, &x, axis, reverse, inclusive, dt)
}
