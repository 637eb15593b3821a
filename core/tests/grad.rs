//! Reverse-mode autodiff (`transforms`): every vjp rule against central finite differences in
//! float64 with random inputs, plus compositions (grad of grad, argnums, aux outputs, jvp),
//! tracing through `eval`, deep graphs, and the errors.
//!
//! The checked quantity is `L(x) = sum(f(x) · w)` with a fixed random `w`, so every output
//! element's cotangent differs (a plain sum would hide transposed or misplaced cotangents).

use mlx_arm_core::ops::{self, PadMode, SplitSpec};
use mlx_arm_core::transforms::{grad, jvp, value_and_grad, vjp};
use mlx_arm_core::{Array, DType, ErrorKind, Result};

/// Deterministic uniform numbers in [lo, hi) (xorshift), so failures reproduce.
fn rnd(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

fn arr(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice(v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    ops::astype(a, DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

type F = dyn Fn(&[Array]) -> Result<Array>;

/// `sum(f(x) · w)` as a scalar function of the inputs.
fn loss<'a>(f: &'a F, w: &'a Array) -> impl Fn(&[Array]) -> Result<Vec<Array>> + 'a {
    move |x: &[Array]| {
        let y = f(x)?;
        let y = ops::astype(&y, DType::Float64)?;
        Ok(vec![ops::sum(&ops::multiply(&y, w)?, None, false)?])
    }
}

/// Checks the gradient of `sum(f(x)·w)` with respect to every input against central
/// differences with step `h`.
fn check_fd(name: &str, f: &F, inputs: &[Array], h: f64, tol: f64) {
    let y = f(inputs).unwrap_or_else(|e| panic!("{name}: forward: {e}"));
    let w = arr(&rnd(y.size(), -1.0, 1.0, 99), y.shape());
    let l = loss(f, &w);
    let argnums: Vec<usize> = (0..inputs.len()).collect();
    let (val, grads) = value_and_grad(&l, inputs, &argnums).unwrap_or_else(|e| panic!("{name}: grad: {e}"));
    assert_eq!(grads.len(), inputs.len());
    let base = vals(&val[0])[0];
    assert!(base.is_finite(), "{name}: loss {base}");
    for (k, x) in inputs.iter().enumerate() {
        assert_eq!(grads[k].shape(), x.shape(), "{name}: grad {k} shape");
        assert_eq!(grads[k].dtype(), x.dtype(), "{name}: grad {k} dtype");
        let g = vals(&grads[k]);
        let xv = vals(x);
        for i in 0..xv.len() {
            let eval_at = |d: f64| {
                let mut p = xv.clone();
                p[i] += d;
                let mut ins = inputs.to_vec();
                ins[k] = ops::astype(&arr(&p, x.shape()), x.dtype()).unwrap();
                vals(&l(&ins).unwrap()[0])[0]
            };
            let fd = (eval_at(h) - eval_at(-h)) / (2.0 * h);
            let err = (g[i] - fd).abs();
            assert!(err <= tol * (1.0 + fd.abs()), "{name}: d/dx{k}[{i}]: vjp {} vs finite difference {fd}", g[i]);
        }
    }
}

fn fd(name: &str, f: &F, inputs: &[Array]) {
    check_fd(name, f, inputs, 1e-6, 1e-6);
}

#[test]
fn unary_rules_match_finite_differences() {
    let shape = [2, 3];
    let any = arr(&rnd(6, -2.0, 2.0, 1), &shape);
    let pos = arr(&rnd(6, 0.3, 3.0, 2), &shape);
    let unit = arr(&rnd(6, -0.8, 0.8, 3), &shape);
    let big = arr(&rnd(6, 1.2, 3.0, 4), &shape);
    let cases: Vec<(&str, fn(&Array) -> Result<Array>, &Array)> = vec![
        ("abs", ops::abs, &any),
        ("negative", ops::negative, &any),
        ("square", ops::square, &any),
        ("sqrt", ops::sqrt, &pos),
        ("rsqrt", ops::rsqrt, &pos),
        ("reciprocal", ops::reciprocal, &pos),
        ("exp", ops::exp, &any),
        ("expm1", ops::expm1, &any),
        ("log", ops::log, &pos),
        ("log1p", ops::log1p, &pos),
        ("log2", ops::log2, &pos),
        ("log10", ops::log10, &pos),
        ("sin", ops::sin, &any),
        ("cos", ops::cos, &any),
        ("tan", ops::tan, &unit),
        ("arcsin", ops::arcsin, &unit),
        ("arccos", ops::arccos, &unit),
        ("arctan", ops::arctan, &any),
        ("sinh", ops::sinh, &any),
        ("cosh", ops::cosh, &any),
        ("tanh", ops::tanh, &any),
        ("arcsinh", ops::arcsinh, &any),
        ("arccosh", ops::arccosh, &big),
        ("arctanh", ops::arctanh, &unit),
        ("erf", ops::erf, &any),
        ("sigmoid", ops::sigmoid, &any),
        ("degrees", ops::degrees, &any),
        ("radians", ops::radians, &any),
        ("floor", ops::floor, &any),
        ("sign", ops::sign, &any),
    ];
    for (name, op, x) in cases {
        fd(name, &move |v: &[Array]| op(&v[0]), &[x.clone()]);
    }
    // erfinv's kernel is accurate to about float32 precision even in float64: coarser step.
    check_fd("erfinv", &|v: &[Array]| ops::erfinv(&v[0]), &[unit.clone()], 1e-3, 1e-4);
}

#[test]
fn binary_rules_with_broadcasting_match_finite_differences() {
    // a: [3, 1], b: [4] broadcast to [3, 4]: the cotangents must be summed back.
    let a = arr(&rnd(3, 0.5, 2.0, 5), &[3, 1]);
    let b = arr(&rnd(4, 0.5, 2.0, 6), &[4]);
    let s = arr(&rnd(4, -2.0, 2.0, 7), &[4]);
    let cases: Vec<(&str, fn(&Array, &Array) -> Result<Array>, &Array)> = vec![
        ("add", ops::add, &b),
        ("subtract", ops::subtract, &b),
        ("multiply", ops::multiply, &s),
        ("divide", ops::divide, &b),
        ("power", ops::power, &s),
        ("maximum", ops::maximum, &b),
        ("minimum", ops::minimum, &b),
        ("arctan2", ops::arctan2, &s),
        ("logaddexp", ops::logaddexp, &s),
        ("remainder", ops::remainder, &b),
    ];
    for (name, op, y) in cases {
        fd(name, &move |v: &[Array]| op(&v[0], &v[1]), &[a.clone(), y.clone()]);
    }
    // A scalar operand of another dtype: the cast and the broadcast both reverse.
    let x32 = ops::astype(&arr(&rnd(6, -1.0, 1.0, 8), &[2, 3]), DType::Float32).unwrap();
    let scale = Array::scalar(1.5f64).unwrap();
    check_fd("multiply f32*f64 scalar", &|v: &[Array]| ops::multiply(&v[0], &v[1]), &[x32, scale], 1e-3, 2e-3);
}

#[test]
fn where_and_comparisons() {
    let x = arr(&rnd(6, -1.0, 1.0, 9), &[2, 3]);
    let y = arr(&rnd(3, -1.0, 1.0, 10), &[3]);
    fd("where", &|v: &[Array]| ops::where_(&ops::greater(&v[0], &Array::scalar(0.0f64)?)?, &v[0], &v[1]), &[x.clone(), y]);
    fd("clip", &|v: &[Array]| ops::clip(&v[0], Some(&Array::scalar(-0.5f64)?), Some(&Array::scalar(0.5f64)?)), &[x]);
}

#[test]
fn reductions_match_finite_differences() {
    let x = arr(&rnd(24, -2.0, 2.0, 11), &[2, 3, 4]);
    let p = arr(&rnd(24, 0.5, 1.5, 12), &[2, 3, 4]);
    fd("sum axis", &|v: &[Array]| ops::sum(&v[0], Some(&[1]), false), &[x.clone()]);
    fd("sum all keepdims", &|v: &[Array]| ops::sum(&v[0], None, true), &[x.clone()]);
    fd("mean", &|v: &[Array]| ops::mean(&v[0], Some(&[0, 2]), false), &[x.clone()]);
    fd("var", &|v: &[Array]| ops::var(&v[0], Some(&[-1]), false, 1), &[x.clone()]);
    fd("std", &|v: &[Array]| ops::std(&v[0], Some(&[-1]), true, 0), &[x.clone()]);
    fd("max", &|v: &[Array]| ops::max(&v[0], Some(&[2]), false), &[x.clone()]);
    fd("min", &|v: &[Array]| ops::min(&v[0], Some(&[0, 1]), true), &[x.clone()]);
    fd("prod", &|v: &[Array]| ops::prod(&v[0], Some(&[0, 2]), false), &[p.clone()]);
    fd("logsumexp", &|v: &[Array]| ops::logsumexp(&v[0], Some(&[-1]), false), &[x.clone()]);
    fd("softmax", &|v: &[Array]| ops::softmax(&v[0], Some(&[-1]), false), &[x.clone()]);
    fd("cumsum", &|v: &[Array]| ops::cumsum(&v[0], Some(1), false, true, None), &[x.clone()]);
    fd("cumsum reverse exclusive", &|v: &[Array]| ops::cumsum(&v[0], Some(2), true, false, None), &[x.clone()]);
    // precise=True computes in float32: coarser step and tolerance.
    check_fd("softmax precise", &|v: &[Array]| ops::softmax(&v[0], Some(&[1]), true), &[x], 1e-3, 1e-3);
}

#[test]
fn prod_with_zeros_is_exact() {
    // d/dx_i prod(x) = product of the others: with one zero only its own gradient is non-zero.
    let x = arr(&[2.0, 0.0, 3.0, 4.0], &[4]);
    let g = grad(&|v: &[Array]| Ok(vec![ops::prod(&v[0], None, false)?]), &[x], &[0]).unwrap();
    assert_eq!(vals(&g[0]), vec![0.0, 24.0, 0.0, 0.0]);
}

#[test]
fn max_ties_share_the_cotangent() {
    let x = arr(&[1.0, 3.0, 3.0, 2.0], &[4]);
    let g = grad(&|v: &[Array]| Ok(vec![ops::max(&v[0], None, false)?]), &[x], &[0]).unwrap();
    assert_eq!(vals(&g[0]), vec![0.0, 0.5, 0.5, 0.0]);
}

#[test]
fn shape_ops_match_finite_differences() {
    let x = arr(&rnd(24, -2.0, 2.0, 13), &[2, 3, 4]);
    let y = arr(&rnd(8, -2.0, 2.0, 14), &[2, 1, 4]);
    fd("reshape", &|v: &[Array]| ops::reshape(&v[0], &[4, 6]), &[x.clone()]);
    fd("transpose", &|v: &[Array]| ops::transpose(&v[0], Some(&[2, 0, 1])), &[x.clone()]);
    fd("broadcast_to", &|v: &[Array]| ops::broadcast_to(&v[0], &[3, 2, 3, 4]), &[y.clone()]);
    fd("slice step", &|v: &[Array]| ops::slice(&v[0], &[0, 1, 3], &[2, 3, -5], &[1, 1, -2]), &[x.clone()]);
    fd("squeeze/expand_dims", &|v: &[Array]| ops::expand_dims(&ops::squeeze(&v[0], None)?, &[0]), &[y.clone()]);
    fd("concatenate", &|v: &[Array]| ops::concatenate(&[v[0].clone(), v[1].clone(), v[0].clone()], Some(1)), &[x.clone(), y.clone()]);
    fd("stack", &|v: &[Array]| ops::stack(&[v[0].clone(), v[0].clone()], 1), &[y.clone()]);
    fd("split", &|v: &[Array]| {
        let parts = ops::split(&v[0], SplitSpec::Indices(&[1, 3]), -1)?;
        ops::concatenate(&[ops::multiply(&parts[0], &parts[0])?, ops::exp(&parts[1])?, parts[2].clone()], Some(-1))
    }, &[x.clone()]);
    let zero = Array::scalar(0.0f64).unwrap();
    fd("pad constant", &move |v: &[Array]| ops::pad(&v[0], &[(1, 2), (0, 1), (2, 0)], PadMode::Constant, &zero), &[x.clone()]);
    fd("pad reflect", &|v: &[Array]| ops::pad(&v[0], &[(0, 0), (1, 1), (2, 1)], PadMode::Reflect, &Array::scalar(0.0f64)?), &[x.clone()]);
    fd("tile", &|v: &[Array]| ops::tile(&v[0], &[2, 1, 2]), &[y.clone()]);
    fd("repeat", &|v: &[Array]| ops::repeat(&v[0], 2, Some(1)), &[x.clone()]);
    fd("flip/roll", &|v: &[Array]| ops::roll(&ops::flip(&v[0], Some(&[1]))?, &[2], Some(&[2])), &[x.clone()]);
    fd("contiguous", &|v: &[Array]| ops::contiguous(&ops::transpose(&v[0], None)?), &[x.clone()]);
    fd("diagonal/trace", &|v: &[Array]| ops::trace(&v[0], 1, 1, 2, None), &[x.clone()]);
    fd("diagonal neg offset", &|v: &[Array]| ops::diagonal(&v[0], -1, 0, 2), &[x.clone()]);
    fd("tril", &|v: &[Array]| ops::tril(&v[0], 0), &[x.clone()]);
    fd("slice_update", &|v: &[Array]| ops::slice_update(&v[0], &ops::exp(&v[1])?, &[0, 0, 0], &[2, 1, 4], &[1, 1, 1]), &[x.clone(), y.clone()]);
    check_fd("astype roundtrip", &|v: &[Array]| ops::astype(&ops::astype(&v[0], DType::Float32)?, DType::Float64), &[x], 1e-3, 1e-4);
}

#[test]
fn dynamic_slices() {
    let x = arr(&rnd(12, -2.0, 2.0, 15), &[3, 4]);
    let u = arr(&rnd(4, -2.0, 2.0, 16), &[2, 2]);
    fd("slice_at", &|v: &[Array]| ops::slice_at(&v[0], &Array::from_slice(&[1i32, 2], &[2])?, &[0, 1], &[2, 2]), &[x.clone()]);
    fd("slice_update_at", &|v: &[Array]| ops::slice_update_at(&v[0], &v[1], &Array::from_slice(&[1i32], &[1])?, &[1]), &[x, u]);
}

#[test]
fn indexing_matches_finite_differences() {
    let x = arr(&rnd(12, -2.0, 2.0, 17), &[3, 4]);
    // Repeated indices: the gather's cotangent must accumulate.
    fd("take", &|v: &[Array]| ops::take(&v[0], &Array::from_slice(&[2i32, 0, 2, 1], &[2, 2])?, Some(1)), &[x.clone()]);
    fd("take flat", &|v: &[Array]| ops::take(&v[0], &Array::from_slice(&[5i32, 5, 11], &[3])?, None), &[x.clone()]);
    fd("take_along_axis", &|v: &[Array]| {
        ops::take_along_axis(&v[0], &Array::from_slice(&[0i32, 3, 3, 1, 2, 2], &[3, 2])?, Some(1))
    }, &[x.clone()]);
    let u = arr(&rnd(3, -2.0, 2.0, 18), &[3, 1]);
    fd("put_along_axis", &|v: &[Array]| {
        ops::put_along_axis(&v[0], &Array::from_slice(&[1i32, 0, 3], &[3, 1])?, &v[1], Some(1))
    }, &[x.clone(), u.clone()]);
    fd("at add", &|v: &[Array]| ops::at_add(&v[0], &[ops::Index::Array(Array::from_slice(&[0i32, 0, 2], &[3])?)], &v[1]), &[x.clone(), u]);
}

#[test]
fn permutations_and_running_extremes_match_finite_differences() {
    // Distinct random values: the permutation and the running extremes' owners are locally
    // constant, so the derivative exists and central differences find it.
    let x = arr(&rnd(20, -2.0, 2.0, 41), &[4, 5]);
    fd("sort", &|v: &[Array]| ops::sort(&v[0], Some(1)), &[x.clone()]);
    fd("sort axis 0", &|v: &[Array]| ops::sort(&v[0], Some(0)), &[x.clone()]);
    fd("partition", &|v: &[Array]| ops::partition(&v[0], 2, Some(1)), &[x.clone()]);
    fd("topk", &|v: &[Array]| ops::topk(&v[0], 2, Some(0)), &[x.clone()]);
    for (reverse, inclusive) in [(false, true), (true, true), (false, false), (true, false)] {
        // An exclusive scan's identity (±inf) is cut off so the loss stays finite.
        let cut = move |y: Array| -> Result<Array> {
            match (inclusive, reverse) {
                (true, _) => Ok(y),
                (false, false) => ops::slice(&y, &[0, 1], &[4, 5], &[1, 1]),
                (false, true) => ops::slice(&y, &[0, 0], &[4, 4], &[1, 1]),
            }
        };
        fd("cummax", &move |v: &[Array]| cut(ops::cummax(&v[0], Some(1), reverse, inclusive)?), &[x.clone()]);
        fd("cummin", &move |v: &[Array]| cut(ops::cummin(&v[0], Some(1), reverse, inclusive)?), &[x.clone()]);
    }
    fd("cummax axis 0", &|v: &[Array]| ops::cummax(&v[0], Some(0), false, true), &[x.clone()]);
}

#[test]
fn running_extremes_route_ties_to_the_latest_element() {
    // MLX's rule (its cummax indices): each output's cotangent goes to the latest element, in
    // scan order, equal to the running extreme. Hand-computed for [3, 3, 1, 5, 5].
    let x = arr(&[3.0, 3.0, 1.0, 5.0, 5.0], &[5]);
    let g = |f: &dyn Fn(&Array) -> Result<Array>| vals(&grad(&|v: &[Array]| Ok(vec![ops::sum(&f(&v[0])?, None, false)?]), &[x.clone()], &[0]).unwrap()[0]);
    assert_eq!(g(&|a| ops::cummax(a, Some(0), false, true)), vec![1.0, 2.0, 0.0, 1.0, 1.0]);
    assert_eq!(g(&|a| ops::cummax(a, Some(0), true, true)), vec![0.0, 0.0, 0.0, 4.0, 1.0]);
    assert_eq!(g(&|a| ops::cummin(a, Some(0), false, false)), vec![1.0, 1.0, 2.0, 0.0, 0.0]);
    assert_eq!(g(&|a| ops::cummin(a, Some(0), true, false)), vec![0.0, 0.0, 2.0, 1.0, 1.0]);
}

#[test]
fn scatter_extremes_and_products_match_finite_differences() {
    let a = arr(&rnd(12, -2.0, 2.0, 43), &[4, 3]);
    let u = arr(&rnd(9, -2.0, 2.0, 44), &[3, 3]);
    fn at(i: &[i32]) -> ops::Index {
        ops::Index::Array(Array::from_slice(i, &[i.len()]).unwrap())
    }
    fd("at maximum", &|v: &[Array]| ops::at_maximum(&v[0], &[at(&[0, 2, 3])], &v[1]), &[a.clone(), u.clone()]);
    fd("at minimum", &|v: &[Array]| ops::at_minimum(&v[0], &[at(&[3, 1, 0])], &v[1]), &[a.clone(), u.clone()]);
    let pa = arr(&rnd(12, 0.5, 2.0, 45), &[4, 3]);
    let pu = arr(&rnd(9, 0.5, 2.0, 46), &[3, 3]);
    // Repeated indices multiply in turn.
    fd("at multiply", &|v: &[Array]| ops::at_multiply(&v[0], &[at(&[0, 2, 2])], &v[1]), &[pa, pu]);
    // Ties (equal candidates) each take the whole cotangent, as MLX: hand-computed.
    let src = arr(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let up = arr(&[5.0, 4.0], &[2]);
    let f = |v: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::at_maximum(&v[0], &[at(&[1, 3])], &v[1])?]) };
    let (_, g) = vjp(&f, &[src, up], &[arr(&[4.0, 5.0, 6.0, 7.0], &[4])]).unwrap();
    assert_eq!(vals(&g[0]), vec![4.0, 0.0, 6.0, 7.0]);
    assert_eq!(vals(&g[1]), vec![5.0, 7.0]);
}

#[test]
fn integers_are_differentiated_through_sums_and_products() {
    // MLX differentiates integer arrays through +, -, ×, sums, products and extremes.
    let x = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    let f = |v: &[Array]| -> Result<Vec<Array>> {
        let y = ops::add(&ops::multiply(&v[0], &Array::scalar(10i32)?)?, &Array::scalar(1i32)?)?;
        Ok(vec![ops::sum(&y, None, false)?])
    };
    let g = grad(&f, &[x.clone()], &[0]).unwrap();
    assert_eq!(g[0].to_vec::<i32>().unwrap(), vec![10, 10, 10]);
    let (_, t) = jvp(&|v: &[Array]| Ok(vec![ops::prod(&v[0], None, false)?]), &[x.clone()], &[Array::from_slice(&[3i32, 2, 1], &[3]).unwrap()]).unwrap();
    assert_eq!(vals(&t[0]), vec![3.0 * 6.0 + 2.0 * 3.0 + 1.0 * 2.0]);
    // A comparison's tangent is a zero of the tangents' dtype, not a boolean.
    let xf = arr(&[1.0, -2.0], &[2]);
    let (_, t) = jvp(&|v: &[Array]| Ok(vec![ops::greater(&v[0], &Array::scalar(0.0f64)?)?]), &[xf.clone()], &[xf]).unwrap();
    assert_eq!(t[0].dtype(), DType::Float64);
    assert_eq!(vals(&t[0]), vec![0.0, 0.0]);
}

#[test]
fn matmul_family_matches_finite_differences() {
    let a = arr(&rnd(12, -1.0, 1.0, 19), &[2, 2, 3]);
    let b = arr(&rnd(12, -1.0, 1.0, 20), &[3, 4]);
    let c = arr(&rnd(4, -1.0, 1.0, 21), &[4]);
    let v = arr(&rnd(3, -1.0, 1.0, 22), &[3]);
    fd("matmul batched x broadcast", &|x: &[Array]| ops::matmul(&x[0], &x[1]), &[a.clone(), b.clone()]);
    fd("matmul vector", &|x: &[Array]| ops::matmul(&x[0], &x[1]), &[v.clone(), b.clone()]);
    fd("addmm", &|x: &[Array]| ops::addmm(&x[2], &x[0], &x[1], 0.5, 2.0), &[a.clone(), b.clone(), c]);
    fd("outer/inner", &|x: &[Array]| ops::outer(&ops::inner(&x[0], &x[1])?, &x[0]), &[v.clone(), v]);
    fd("einsum", &|x: &[Array]| ops::linalg::einsum("bij,jk->bk", &[x[0].clone(), x[1].clone()]), &[a, b]);
}

#[test]
fn fast_ops_through_their_fallbacks() {
    // The fused ops compute in float32: finite differences with a coarser step and tolerance.
    let f32a = |n: usize, shape: &[usize], seed: u64| ops::astype(&arr(&rnd(n, -1.0, 1.0, seed), shape), DType::Float32).unwrap();
    let x = f32a(24, &[2, 3, 4], 23);
    let w = f32a(4, &[4], 24);
    let b = f32a(4, &[4], 25);
    let (h, tol) = (1e-2, 2e-2);
    check_fd("rms_norm", &|v: &[Array]| ops::rms_norm(&v[0], Some(&v[1]), 1e-5), &[x.clone(), w.clone()], h, tol);
    check_fd("layer_norm", &|v: &[Array]| ops::layer_norm(&v[0], Some(&v[1]), Some(&v[2]), 1e-5), &[x.clone(), w, b], h, tol);
    let xr = f32a(48, &[1, 2, 3, 8], 26);
    check_fd("rope", &|v: &[Array]| ops::rope(&v[0], 8, false, Some(10000.0), 1.0, ops::RopeOffset::Int(2), None), &[xr.clone()], h, tol);
    check_fd("rope traditional partial", &|v: &[Array]| ops::rope(&v[0], 4, true, Some(10000.0), 1.0, ops::RopeOffset::Int(0), None), &[xr], h, tol);
    let q = f32a(24, &[1, 2, 3, 4], 27);
    let k = f32a(40, &[1, 2, 5, 4], 28);
    let vv = f32a(40, &[1, 2, 5, 4], 29);
    check_fd("sdpa", &|v: &[Array]| ops::scaled_dot_product_attention(&v[0], &v[1], &v[2], 0.5, ops::SdpaMask::None), &[q.clone(), k.clone(), vv.clone()], h, tol);
    check_fd("sdpa causal", &|v: &[Array]| ops::scaled_dot_product_attention(&v[0], &v[1], &v[2], 0.5, ops::SdpaMask::Causal), &[q, k, vv], h, tol);
}

#[test]
fn second_derivatives() {
    let xs = rnd(5, 0.2, 1.5, 30);
    let x = arr(&xs, &[5]);
    // d²/dx² of sum(f(x)) against the closed form, through grad of grad.
    let cases: Vec<(&str, fn(&Array) -> Result<Array>, fn(f64) -> f64)> = vec![
        ("sin", ops::sin, |x| -x.sin()),
        ("exp", ops::exp, |x| x.exp()),
        ("log", ops::log, |x| -1.0 / (x * x)),
        ("tanh", ops::tanh, |x| {
            let t = x.tanh();
            -2.0 * t * (1.0 - t * t)
        }),
        ("sqrt", ops::sqrt, |x| -0.25 * x.powf(-1.5)),
        ("sigmoid", ops::sigmoid, |x| {
            let s = 1.0 / (1.0 + (-x).exp());
            s * (1.0 - s) * (1.0 - 2.0 * s)
        }),
    ];
    for (name, op, d2) in cases {
        let g1 = move |v: &[Array]| -> Result<Vec<Array>> {
            let g = grad(&|u: &[Array]| Ok(vec![ops::sum(&op(&u[0])?, None, false)?]), v, &[0])?;
            Ok(vec![ops::sum(&g[0], None, false)?])
        };
        let g2 = grad(&g1, &[x.clone()], &[0]).unwrap();
        for (i, (&xi, gi)) in xs.iter().zip(vals(&g2[0])).enumerate() {
            assert!((gi - d2(xi)).abs() < 1e-10 * (1.0 + d2(xi).abs()), "{name}'' [{i}]: {gi} vs {}", d2(xi));
        }
    }
}

#[test]
fn argnums_aux_and_vjp() {
    let a = arr(&[1.0, 2.0], &[2]);
    let b = arr(&[3.0, 5.0], &[2]);
    let f = |v: &[Array]| -> Result<Vec<Array>> {
        let p = ops::multiply(&v[0], &v[1])?;
        // Output 0 is the loss; output 1 is auxiliary (returned, not differentiated).
        Ok(vec![ops::sum(&ops::multiply(&p, &v[0])?, None, false)?, p])
    };
    let (outs, g) = value_and_grad(&f, &[a.clone(), b.clone()], &[1]).unwrap();
    assert_eq!(vals(&outs[0]), vec![1.0 * 3.0 + 4.0 * 5.0]);
    assert_eq!(vals(&outs[1]), vec![3.0, 10.0]);
    assert_eq!(g.len(), 1);
    assert_eq!(vals(&g[0]), vec![1.0, 4.0]); // d/db sum(a²b) = a²
    let (_, g) = value_and_grad(&f, &[a.clone(), b.clone()], &[1, 0]).unwrap();
    assert_eq!(vals(&g[1]), vec![6.0, 20.0]); // d/da = 2ab
    // vjp with a cotangent per output.
    let h = |v: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::multiply(&v[0], &v[1])?, ops::exp(&v[0])?]) };
    let ct = [arr(&[1.0, -1.0], &[2]), arr(&[0.5, 0.0], &[2])];
    let (outs, vj) = vjp(&h, &[a.clone(), b.clone()], &ct).unwrap();
    assert_eq!(vals(&outs[0]), vec![3.0, 10.0]);
    let e1 = 1f64.exp();
    let va = vals(&vj[0]);
    assert!((va[0] - (3.0 + 0.5 * e1)).abs() < 1e-12 && (va[1] + 5.0).abs() < 1e-12, "{va:?}");
    assert_eq!(vals(&vj[1]), vec![1.0, -2.0]);
    // An unused input gets zeros; an output that is an input passes the cotangent through.
    let (_, vj) = vjp(&|v: &[Array]| Ok(vec![v[0].clone()]), &[a.clone(), b.clone()], &[arr(&[7.0, 8.0], &[2])]).unwrap();
    assert_eq!(vals(&vj[0]), vec![7.0, 8.0]);
    assert_eq!(vals(&vj[1]), vec![0.0, 0.0]);
}

#[test]
fn jvp_by_transposition() {
    let x = arr(&rnd(4, 0.5, 1.5, 31), &[4]);
    let y = arr(&rnd(4, 0.5, 1.5, 32), &[4]);
    let t = [arr(&[1.0, 0.0, -1.0, 2.0], &[4]), arr(&[0.5, 0.5, 0.5, 0.5], &[4])];
    let f = |v: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::multiply(&ops::sin(&v[0])?, &v[1])?]) };
    let (outs, tan) = jvp(&f, &[x.clone(), y.clone()], &t).unwrap();
    let (xv, yv, t0, t1) = (vals(&x), vals(&y), vals(&t[0]), vals(&t[1]));
    let o = vals(&outs[0]);
    let tv = vals(&tan[0]);
    for i in 0..4 {
        assert!((o[i] - xv[i].sin() * yv[i]).abs() < 1e-12);
        let want = xv[i].cos() * yv[i] * t0[i] + xv[i].sin() * t1[i];
        assert!((tv[i] - want).abs() < 1e-12, "jvp[{i}]: {} vs {want}", tv[i]);
    }
}

#[test]
fn stop_gradient_and_constants() {
    let x = arr(&[1.0, 2.0, 3.0], &[3]);
    let c = arr(&[10.0, 20.0, 30.0], &[3]);
    let f = move |v: &[Array]| -> Result<Vec<Array>> {
        let s = ops::stop_gradient(&v[0])?;
        Ok(vec![ops::sum(&ops::add(&ops::multiply(&s, &v[0])?, &ops::multiply(&c, &v[0])?)?, None, false)?])
    };
    let g = grad(&f, &[x], &[0]).unwrap();
    assert_eq!(vals(&g[0]), vec![11.0, 22.0, 33.0]);
}

#[test]
fn eval_inside_the_traced_function_keeps_the_graph() {
    let x = arr(&[0.5, 1.0], &[2]);
    let f = |v: &[Array]| -> Result<Vec<Array>> {
        let y = ops::exp(&v[0])?;
        y.eval()?; // evaluated during the trace: must not detach from the tracer
        let _ = y.to_vec::<f64>()?;
        Ok(vec![ops::sum(&ops::multiply(&y, &v[0])?, None, false)?])
    };
    let g = vals(&grad(&f, &[x], &[0]).unwrap()[0]);
    for (xi, gi) in [0.5f64, 1.0].iter().zip(g) {
        assert!((gi - xi.exp() * (1.0 + xi)).abs() < 1e-12);
    }
    // After the trace, arrays evaluate and detach as usual (no graph kept alive).
    let y = ops::exp(&arr(&[1.0], &[1])).unwrap();
    y.eval().unwrap();
    assert!(!y.is_tracer());
}

#[test]
fn deep_graph_does_not_overflow_the_stack() {
    // 10^5 chained ops: tape building, the reverse walk and the drop are all iterative.
    let n = 100_000;
    let x = Array::scalar(1.0f64).unwrap();
    let step = Array::scalar(1e-6f64).unwrap();
    let f = move |v: &[Array]| -> Result<Vec<Array>> {
        let mut y = v[0].clone();
        for _ in 0..n {
            y = ops::add(&y, &ops::multiply(&y, &step)?)?;
        }
        Ok(vec![y])
    };
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let g = grad(&f, &[x], &[0]).unwrap();
            vals(&g[0])[0]
        })
        .unwrap();
    let g = handle.join().unwrap();
    let want = (1.0f64 + 1e-6).powi(n as i32);
    assert!((g - want).abs() < 1e-9 * want, "{g} vs {want}");
}

#[test]
fn errors_are_reported_not_wrong_gradients() {
    let x = arr(&[3.0, 1.0, 2.0], &[3]);
    // No rule in MLX: MLX's error, naming MLX's primitive.
    let e = grad(&|v: &[Array]| Ok(vec![ops::sum(&ops::view(&v[0], DType::Float32)?, None, false)?]), &[x.clone()], &[0]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert_eq!(e.to_string(), "[Primitive::vjp] Not implemented for View float32.");
    let m = arr(&[2.0, 1.0, 1.0, 3.0], &[2, 2]);
    let e = grad(&|v: &[Array]| Ok(vec![ops::sum(&ops::linalg::inv(&v[0])?, None, false)?]), &[m], &[0]).unwrap_err();
    assert_eq!(e.to_string(), "[Primitive::vjp] Not implemented for Inverse.");
    // Towards integer indices: MLX's ValueError (stop_gradient them), not a silent zero.
    let idx = Array::from_slice(&[2i32, 0], &[2]).unwrap();
    let e = vjp(&|v: &[Array]| Ok(vec![ops::take(&v[0], &v[1], None)?]), &[x.clone(), idx.clone()], &[arr(&[1.0, 1.0], &[2])]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("stop_gradient"), "{e}");
    let stopped = |v: &[Array]| Ok(vec![ops::sum(&ops::take(&v[0], &ops::stop_gradient(&v[1])?, None)?, None, false)?]);
    assert_eq!(vals(&vjp(&stopped, &[x.clone(), idx], &[arr(&[1.0], &[])]).unwrap().1[0]), vec![1.0, 0.0, 1.0]);
    // A non-scalar loss.
    let e = grad(&|v: &[Array]| Ok(vec![v[0].clone()]), &[x.clone()], &[0]).unwrap_err();
    assert!(e.to_string().contains("scalar"), "{e}");
    // Bad argnums, wrong cotangent count and shape.
    assert!(grad(&|v: &[Array]| Ok(vec![ops::sum(&v[0], None, false)?]), &[x.clone()], &[1]).is_err());
    assert!(grad(&|v: &[Array]| Ok(vec![ops::sum(&v[0], None, false)?]), &[x.clone(), x.clone()], &[0, 0]).is_err());
    assert!(vjp(&|v: &[Array]| Ok(vec![v[0].clone()]), &[x.clone()], &[]).is_err());
    assert!(vjp(&|v: &[Array]| Ok(vec![v[0].clone()]), &[x.clone()], &[arr(&[1.0], &[1])]).is_err());
    // An error inside the function comes out as is, and tracing ends.
    let e = grad(&|v: &[Array]| Ok(vec![ops::reshape(&v[0], &[7])?]), &[x], &[0]).unwrap_err();
    assert!(e.to_string().contains("reshape"), "{e}");
}

#[test]
fn cumprod_matches_finite_differences_and_is_exact_with_zeros() {
    // A product is multilinear, so central differences are exact enough even at zeros.
    let mut v = rnd(15, 0.5, 2.0, 51);
    v[6] = 0.0;
    v[11] = 0.0;
    v[13] = 0.0;
    let x = arr(&v, &[3, 5]);
    for (reverse, inclusive) in [(false, true), (true, true), (false, false), (true, false)] {
        fd("cumprod", &move |v: &[Array]| ops::cumprod(&v[0], Some(1), reverse, inclusive, None), &[x.clone()]);
    }
    fd("cumprod axis 0", &|v: &[Array]| ops::cumprod(&v[0], Some(0), false, true, None), &[x]);
    // Hand-computed (MLX's test_cumprod_grad values): d/dx sum(cumprod(x)).
    let g = |x: &[f64], reverse: bool, inclusive: bool| {
        let f = move |v: &[Array]| Ok(vec![ops::sum(&ops::cumprod(&v[0], None, reverse, inclusive, None)?, None, false)?]);
        vals(&grad(&f, &[arr(x, &[5])], &[0]).unwrap()[0])
    };
    assert_eq!(g(&[2.0, 0.0, 2.0, 2.0, 3.0], false, true), vec![1.0, 38.0, 0.0, 0.0, 0.0]);
    assert_eq!(g(&[2.0, 0.0, 2.0, 0.0, 3.0], false, true), vec![1.0, 6.0, 0.0, 0.0, 0.0]);
    assert_eq!(g(&[2.0, 0.0, 2.0, 2.0, 3.0], false, false), vec![1.0, 14.0, 0.0, 0.0, 0.0]);
    assert_eq!(g(&[2.0, 0.0, 2.0, 2.0, 3.0], true, true), vec![0.0, 36.0, 6.0, 9.0, 7.0]);
    assert_eq!(g(&[2.0, 0.0, 2.0, 0.0, 3.0], true, false), vec![0.0, 0.0, 0.0, 9.0, 1.0]);
}

#[test]
fn conv_matches_finite_differences() {
    let x = arr(&rnd(2 * 5 * 4 * 4, -1.0, 1.0, 52), &[2, 5, 4, 4]);
    let w = arr(&rnd(6 * 2 * 3 * 2, -1.0, 1.0, 53), &[6, 2, 3, 2]);
    // Strides, padding, both dilations, groups and flip at once.
    fd(
        "conv_general",
        &|v: &[Array]| ops::conv_general(&v[0], &v[1], &[2, 1], &[1, 0], &[0, 2], &[1, 2], &[2, 1], 2, true),
        &[x.clone(), w],
    );
    let w1 = arr(&rnd(3 * 3 * 4, -1.0, 1.0, 54), &[3, 3, 4]);
    let x1 = ops::reshape(&x, &[2, 20, 4]).unwrap();
    fd("conv1d", &|v: &[Array]| ops::conv1d(&v[0], &v[1], 3, 1, 2, 1), &[x1.clone(), w1.clone()]);
    fd("conv1d negative padding", &|v: &[Array]| ops::conv_general(&v[0], &v[1], &[1], &[-2], &[1], &[1], &[1], 1, false), &[x1, w1]);
}

#[test]
fn fft_family_matches_finite_differences() {
    use ops::fft::FftNorm;
    let (x, y) = (arr(&rnd(24, -1.0, 1.0, 55), &[4, 6]), arr(&rnd(24, -1.0, 1.0, 56), &[4, 6]));
    // A complex input from two real ones; a real loss from the real and imaginary parts.
    fn z(v: &[Array]) -> Result<Array> {
        let i = Array::from_value(mlx_arm_core::element::Value::C(0.0, 1.0), DType::Complex64)?;
        ops::add(&ops::astype(&v[0], DType::Complex64)?, &ops::multiply(&ops::astype(&v[1], DType::Complex64)?, &i)?)
    }
    fn parts(c: Array) -> Result<Array> {
        ops::concatenate(&[ops::real(&c)?, ops::multiply(&ops::imag(&c)?, &Array::scalar(0.7f32)?)?], Some(0))
    }
    // The transforms compute in float32: coarser step and tolerance.
    fn check(name: &str, f: &F, ins: &[Array]) {
        check_fd(name, f, ins, 1e-2, 2e-3)
    }
    check("rfft ortho", &|v: &[Array]| parts(ops::fft::rfft(&v[0], None, 1, FftNorm::Ortho)?), &[x.clone()]);
    check("fft2", &|v: &[Array]| parts(ops::fft::fft2(&z(v)?, None, None, FftNorm::Backward)?), &[x.clone(), y.clone()]);
    check("ifft axis 0 forward", &|v: &[Array]| parts(ops::fft::ifft(&z(v)?, None, 0, FftNorm::Forward)?), &[x.clone(), y.clone()]);
    let (xr, yr) = (ops::slice(&x, &[0, 0], &[4, 4], &[1, 1]).unwrap(), ops::slice(&y, &[0, 0], &[4, 4], &[1, 1]).unwrap());
    check("irfft even n", &|v: &[Array]| ops::fft::irfft(&z(v)?, Some(6), 1, FftNorm::Backward), &[xr.clone(), yr.clone()]);
    check("irfft odd n", &|v: &[Array]| ops::fft::irfft(&z(v)?, Some(7), 1, FftNorm::Backward), &[xr.clone(), yr.clone()]);
    check("irfftn", &|v: &[Array]| ops::fft::irfftn(&z(v)?, Some(&[3, 5]), Some(&[0, 1]), FftNorm::Ortho), &[xr, yr]);
}

#[test]
fn gather_qmm_matches_the_gathered_quantized_matmul() {
    // gather_qmm's rule against the same product written with takes (whose rules are
    // checked above): to x, scales and biases.
    let wf = ops::astype(&arr(&rnd(3 * 8 * 64, -1.0, 1.0, 57), &[3, 8, 64]), DType::Float32).unwrap();
    let q = ops::quantize(&wf, Some(32), Some(4), "affine", None).unwrap();
    let (w, s, b) = (q[0].clone(), q[1].clone(), q[2].clone());
    let x = ops::astype(&arr(&rnd(2 * 64, -1.0, 1.0, 58), &[2, 1, 64]), DType::Float32).unwrap();
    let lhs = Array::from_slice(&[1u32, 0, 1], &[3]).unwrap();
    let rhs = Array::from_slice(&[2u32, 0, 2], &[3]).unwrap();
    let cot = ops::astype(&arr(&rnd(3 * 8, -1.0, 1.0, 59), &[3, 1, 8]), DType::Float32).unwrap();
    let (w2, l2, r2) = (w.clone(), lhs.clone(), rhs.clone());
    let fused = move |v: &[Array]| {
        Ok(vec![ops::gather_qmm(&v[0], &w2, &v[1], Some(&v[2]), Some(&l2), Some(&r2), true, Some(32), Some(4), "affine", false)?])
    };
    let composed = move |v: &[Array]| {
        let x = ops::take(&ops::flatten(&v[0], 0, -3)?, &lhs, Some(0))?;
        let t = |a: &Array| ops::take(a, &rhs, Some(0));
        Ok(vec![ops::quantized_matmul(&x, &t(&w)?, &t(&v[1])?, Some(&t(&v[2])?), true, Some(32), Some(4), "affine")?])
    };
    let (_, got) = vjp(&fused, &[x.clone(), s.clone(), b.clone()], &[cot.clone()]).unwrap();
    let (_, want) = vjp(&composed, &[x, s, b], &[cot]).unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape(), w.shape());
        for (a, b) in vals(g).iter().zip(vals(w)) {
            assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }
}

#[test]
fn integer_extremes_jvp_and_divmod_carry_mlx_tangents() {
    // MLX's test_reduce_jvp: the tangent of the (unique) extreme's element.
    let a = Array::from_slice(&[0i32, 1, 2, 3], &[4]).unwrap();
    let t = Array::from_slice(&[3i32, 2, 1, 0], &[4]).unwrap();
    let j = |f: &dyn Fn(&Array) -> Result<Array>| {
        let (_, jt) = jvp(&|v: &[Array]| Ok(vec![f(&v[0])?]), &[a.clone()], &[t.clone()]).unwrap();
        vals(&jt[0])
    };
    assert_eq!(j(&|x| ops::min(x, None, false)), vec![3.0]);
    assert_eq!(j(&|x| ops::max(x, None, false)), vec![0.0]);
    // divmod (MLX's DivMod primitive): no tangent through either output.
    let x = arr(&[7.0], &[]);
    let (_, jt) = jvp(&|v: &[Array]| ops::divmod(&v[0], &arr(&[3.0], &[])), &[x.clone()], &[arr(&[1.0], &[])]).unwrap();
    assert_eq!((vals(&jt[0]), vals(&jt[1])), (vec![0.0], vec![0.0]));
}

#[test]
fn logcumsumexp_matches_finite_differences() {
    let x = arr(&rnd(15, -2.0, 2.0, 61), &[3, 5]);
    for reverse in [false, true] {
        fd("logcumsumexp", &move |v: &[Array]| ops::logcumsumexp(&v[0], Some(1), reverse, true), &[x.clone()]);
        fd("logcumsumexp axis 0", &move |v: &[Array]| ops::logcumsumexp(&v[0], Some(0), reverse, true), &[x.clone()]);
        // An exclusive scan's first output (in scan order) is -inf: left out of the loss.
        let (start, stop) = if reverse { (0, 4) } else { (1, 5) };
        fd(
            "logcumsumexp exclusive",
            &move |v: &[Array]| ops::slice(&ops::logcumsumexp(&v[0], Some(1), reverse, false)?, &[0, start], &[3, stop], &[1, 1]),
            &[x.clone()],
        );
    }
    // jvp (the rule transposed at a zero cotangent) against a directional difference.
    let t = arr(&rnd(15, -1.0, 1.0, 65), &[3, 5]);
    for (reverse, inclusive) in [(false, true), (true, true), (false, false)] {
        let f = move |v: &[Array]| Ok(vec![ops::logcumsumexp(&v[0], Some(1), reverse, inclusive)?]);
        let (_, jt) = jvp(&f, &[x.clone()], &[t.clone()]).unwrap();
        let h = 1e-6;
        let at = |s: f64| vals(&f(&[ops::add(&x, &ops::multiply(&t, &arr(&[s], &[])).unwrap()).unwrap()]).unwrap()[0]);
        let (hi, lo, got) = (at(h), at(-h), vals(&jt[0]));
        for i in 0..15 {
            if hi[i].is_infinite() {
                continue; // an exclusive scan's first output
            }
            let want = (hi[i] - lo[i]) / (2.0 * h);
            assert!((got[i] - want).abs() <= 1e-6 * (1.0 + want.abs()), "jvp {reverse} {inclusive} [{i}]: {} vs {want}", got[i]);
        }
    }
    // Second derivative (the rule is made of differentiable ops).
    let f = |v: &[Array]| -> Result<Vec<Array>> {
        let g = grad(&|u: &[Array]| Ok(vec![ops::sum(&ops::square(&ops::logcumsumexp(&u[0], None, false, true)?)?, None, false)?]), v, &[0])?;
        Ok(vec![ops::sum(&ops::multiply(&g[0], &arr(&[0.3, -1.0, 2.0, 0.5], &[4]))?, None, false)?])
    };
    check_fd("logcumsumexp second derivative", &move |v: &[Array]| Ok(f(v)?.remove(0)), &[arr(&[0.1, -0.5, 1.2, 0.3], &[4])], 1e-5, 1e-5);
}

#[test]
fn as_strided_matches_finite_differences() {
    // Overlapping windows (elements read several times add up), an offset, and an input that
    // is a transposed (non-contiguous) view: as_strided reads its row-major order.
    let x = arr(&rnd(12, -1.0, 1.0, 62), &[12]);
    fd("as_strided", &|v: &[Array]| ops::as_strided(&v[0], &[4, 3], &[2, 1], 1), &[x.clone()]);
    let m = arr(&rnd(12, -1.0, 1.0, 63), &[3, 4]);
    fd("as_strided of a transpose", &|v: &[Array]| ops::as_strided(&ops::transpose(&v[0], None)?, &[3, 3], &[1, 2], 2), &[m]);
    // Hand-computed: sum of a sliding window of 2 over 4 elements reads the middle twice.
    let g = grad(&|v: &[Array]| Ok(vec![ops::sum(&ops::as_strided(&v[0], &[3, 2], &[1, 1], 0)?, None, false)?]), &[arr(&[1.0, 2.0, 3.0, 4.0], &[4])], &[0]).unwrap();
    assert_eq!(vals(&g[0]), vec![1.0, 2.0, 2.0, 1.0]);
}

#[test]
fn dequantize_and_quantize_rules() {
    // dequantize is linear in scales and biases: central differences with a wide step are exact
    // up to float32 rounding.
    let wf = ops::astype(&arr(&rnd(4 * 64, -1.0, 1.0, 64), &[4, 64]), DType::Float32).unwrap();
    let q = ops::quantize(&wf, Some(32), Some(4), "affine", None).unwrap();
    let wq = q[0].clone();
    let f = move |v: &[Array]| ops::dequantize(&wq, &v[0], Some(&v[1]), Some(32), Some(4), "affine", None, None);
    check_fd("dequantize", &f, &[q[1].clone(), q[2].clone()], 0.25, 1e-4);
    // quantize's scales and biases: away from rounding changes they are smooth functions of the
    // group's extremes, so the gradient is nonzero only at each group's extremes.
    let (_, g) = value_and_grad(
        &|v: &[Array]| {
            let q = ops::quantize(&v[0], Some(32), Some(4), "affine", None)?;
            Ok(vec![ops::add(&ops::sum(&q[1], None, false)?, &ops::sum(&q[2], None, false)?)?])
        },
        &[wf.clone()],
        &[0],
    )
    .unwrap();
    let gv = vals(&g[0]);
    let nonzero_per_group: Vec<usize> = gv.chunks(32).map(|c| c.iter().filter(|&&d| d != 0.0).count()).collect();
    assert!(nonzero_per_group.iter().all(|&n| (1..=2).contains(&n)), "{nonzero_per_group:?}");
    // The packed codes and an fp mode's outputs are integers: no gradient flows back.
    let (_, g) = value_and_grad(
        &|v: &[Array]| Ok(vec![ops::sum(&ops::astype(&ops::quantize(&v[0], Some(32), None, "mxfp4", None)?[1], DType::Float32)?, None, false)?]),
        &[wf],
        &[0],
    )
    .unwrap();
    assert!(vals(&g[0]).iter().all(|&d| d == 0.0));
}
