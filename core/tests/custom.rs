//! `custom_function` / `checkpoint` (`transforms::custom`): the user's vjp, jvp and vmap rules
//! are used by exactly the transform they belong to, the others fall back to transforming
//! the wrapped function; checkpoint gives the plain function's gradients (first and second
//! order) and runs the function again in the backward pass. Values are hand-computed.

use mlx_arm_core::ops;
use mlx_arm_core::transforms::custom::{checkpoint, custom_vjp, ArrayFn, CustomFunction, JvpRule, VjpRule, VmapRule};
use mlx_arm_core::transforms::{grad, jvp, vjp, vmap};
use mlx_arm_core::{Array, DType, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn arr(v: &[f32], shape: &[usize]) -> Array {
    Array::from_slice(v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f32> {
    ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap()
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{got:?} vs {want:?}");
    }
}

fn exp_fn() -> ArrayFn {
    Arc::new(|x: &[Array]| Ok(vec![ops::exp(&x[0])?]))
}

/// `sum(f(x))`: a scalar for `grad`.
fn summed(f: &Arc<CustomFunction>) -> impl Fn(&[Array]) -> Result<Vec<Array>> + '_ {
    move |x: &[Array]| Ok(vec![ops::sum(&f.call(x)?[0], None, false)?])
}

/// An array shaped like `a` filled with `v`.
fn like(a: &Array, v: f64) -> Result<Array> {
    ops::full_like(a, mlx_arm_core::Value::F(v), None)
}

fn e(v: f32) -> f32 {
    v.exp()
}

#[test]
fn no_rules_is_the_plain_function() {
    let f = CustomFunction::new(exp_fn(), None, None, None);
    let x = arr(&[0.0, 1.0], &[2]);
    close(&vals(&f.call(&[x.clone()]).unwrap()[0]), &[1.0, e(1.0)]);
    close(&vals(&grad(&summed(&f), &[x], &[0]).unwrap()[0]), &[1.0, e(1.0)]);
}

#[test]
fn vjp_rule_changes_grad_only() {
    let rule: VjpRule = Arc::new(|p: &[Array], c: &[Array], _o: &[Array]| Ok(vec![ops::multiply(&c[0], &like(&p[0], 42.0)?)?]));
    let f = CustomFunction::new(exp_fn(), Some(rule), None, None);
    let x = arr(&[0.0, 1.0], &[2]);
    close(&vals(&grad(&summed(&f), &[x.clone()], &[0]).unwrap()[0]), &[42.0, 42.0]);
    // The cotangent reaches the rule: vjp with cotangent [1, 2] gives [42, 84].
    let (_, g) = vjp(&|xs: &[Array]| f.call(xs), &[x.clone()], &[arr(&[1.0, 2.0], &[2])]).unwrap();
    close(&vals(&g[0]), &[42.0, 84.0]);
    // jvp and vmap still transform exp itself.
    let (out, t) = jvp(&|xs: &[Array]| f.call(xs), &[x.clone()], &[arr(&[1.0, 3.0], &[2])]).unwrap();
    close(&vals(&out[0]), &[1.0, e(1.0)]);
    close(&vals(&t[0]), &[1.0, 3.0 * e(1.0)]);
    let v = vmap(&|xs: &[Array]| f.call(xs), &[arr(&[0.0, 1.0, 2.0], &[3])], &[], &[]).unwrap();
    close(&vals(&v[0]), &[1.0, e(1.0), e(2.0)]);
}

#[test]
fn jvp_rule_changes_jvp_only() {
    let rule: JvpRule = Arc::new(|p: &[Array], t: &[Array], argnums: &[usize]| {
        assert_eq!(argnums, &[0]);
        Ok(vec![ops::multiply(&t[0], &like(&p[0], 7.0)?)?])
    });
    let f = CustomFunction::new(exp_fn(), None, Some(rule), None);
    let x = arr(&[0.0, 1.0], &[2]);
    let (out, t) = jvp(&|xs: &[Array]| f.call(xs), &[x.clone()], &[arr(&[1.0, 2.0], &[2])]).unwrap();
    close(&vals(&out[0]), &[1.0, e(1.0)]);
    close(&vals(&t[0]), &[7.0, 14.0]);
    close(&vals(&grad(&summed(&f), &[x], &[0]).unwrap()[0]), &[1.0, e(1.0)]);
}

#[test]
fn jvp_rule_inside_a_larger_function() {
    // g(a, b) = sin(f(a, b)) with f(a, b) = a·b and a jvp rule that adds 1: the chain rule
    // around the rule still holds.
    let fab: ArrayFn = Arc::new(|x: &[Array]| Ok(vec![ops::multiply(&x[0], &x[1])?]));
    let rule: JvpRule = Arc::new(|p: &[Array], t: &[Array], argnums: &[usize]| {
        assert_eq!(argnums, &[0, 1]);
        let d = ops::add(&ops::multiply(&t[0], &p[1])?, &ops::multiply(&t[1], &p[0])?)?;
        Ok(vec![ops::add(&d, &like(&d, 1.0)?)?])
    });
    let f = CustomFunction::new(fab, None, Some(rule), None);
    let g = |xs: &[Array]| Ok(vec![ops::sin(&f.call(xs)?[0])?]);
    let (a, b) = (0.5f32, 2.0f32);
    let (ta, tb) = (1.5f32, -0.5f32);
    let (_, t) = jvp(&g, &[arr(&[a], &[]), arr(&[b], &[])], &[arr(&[ta], &[]), arr(&[tb], &[])]).unwrap();
    close(&vals(&t[0]), &[(a * b).cos() * (ta * b + tb * a + 1.0)]);
}

#[test]
fn vmap_rule_is_used() {
    let rule: VmapRule = Arc::new(|x: &[Array], axes: &[i32]| {
        assert_eq!(axes, &[0]);
        Ok((vec![like(&x[0], 3.0)?], vec![0]))
    });
    let f = CustomFunction::new(exp_fn(), None, None, Some(rule));
    let v = vmap(&|xs: &[Array]| f.call(xs), &[arr(&[0.0, 1.0], &[2])], &[], &[]).unwrap();
    close(&vals(&v[0]), &[3.0, 3.0]);
    // A rule may put the mapped axis elsewhere (here: last) or leave an output unmapped.
    let moved: VmapRule = Arc::new(|x: &[Array], _axes: &[i32]| Ok((vec![ops::transpose(&x[0], None)?, ops::sum(&x[0], None, false)?], vec![1, -1])));
    let two: ArrayFn = Arc::new(|x: &[Array]| Ok(vec![x[0].clone(), ops::sum(&x[0], None, false)?]));
    let f = CustomFunction::new(two, None, None, Some(moved));
    let x = arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let v = vmap(&|xs: &[Array]| f.call(xs), &[x], &[], &[]).unwrap();
    assert_eq!(v[0].shape(), &[2, 3]);
    close(&vals(&v[0]), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    close(&vals(&v[1]), &[21.0, 21.0]);
}

#[test]
fn vmap_of_grad_and_grad_of_vmap_through_a_rule() {
    let rule: VjpRule = Arc::new(|p: &[Array], c: &[Array], _o: &[Array]| Ok(vec![ops::multiply(&c[0], &ops::multiply(&p[0], &like(&p[0], 2.0)?)?)?]));
    let sq: ArrayFn = Arc::new(|x: &[Array]| Ok(vec![ops::multiply(&x[0], &x[0])?]));
    let f = CustomFunction::new(sq, Some(rule), None, None);
    let per_example = |xs: &[Array]| grad(&summed(&f), xs, &[0]);
    let v = vmap(&per_example, &[arr(&[1.0, 2.0, 3.0], &[3, 1])], &[], &[]).unwrap();
    close(&vals(&v[0]), &[2.0, 4.0, 6.0]);
    let mapped = |xs: &[Array]| Ok(vec![ops::sum(&vmap(&|ys: &[Array]| f.call(ys), xs, &[], &[])?[0], None, false)?]);
    close(&vals(&grad(&mapped, &[arr(&[1.0, -2.0], &[2])], &[0]).unwrap()[0]), &[2.0, -4.0]);
}

#[test]
fn second_derivative_through_a_vjp_rule() {
    // f(x) = x³ with its exact vjp 3x²·c: d²/dx² sum(f) = 6x.
    let rule: VjpRule = Arc::new(|p: &[Array], c: &[Array], _o: &[Array]| {
        let x2 = ops::multiply(&p[0], &p[0])?;
        Ok(vec![ops::multiply(&c[0], &ops::multiply(&x2, &like(&x2, 3.0)?)?)?])
    });
    let cube: ArrayFn = Arc::new(|x: &[Array]| Ok(vec![ops::multiply(&ops::multiply(&x[0], &x[0])?, &x[0])?]));
    let f = CustomFunction::new(cube, Some(rule), None, None);
    let d1 = |xs: &[Array]| Ok(vec![ops::sum(&grad(&summed(&f), xs, &[0])?[0], None, false)?]);
    close(&vals(&grad(&d1, &[arr(&[1.0, -2.0], &[2])], &[0]).unwrap()[0]), &[6.0, -12.0]);
}

#[test]
fn checkpoint_matches_the_plain_function() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    // h(x, y) = sum(sin(x)·exp(x·y)): two inputs, intermediates worth not keeping.
    let body = |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::multiply(&ops::sin(&x[0])?, &ops::exp(&ops::multiply(&x[0], &x[1])?)?)?]) };
    let counted: ArrayFn = Arc::new(move |x: &[Array]| {
        c2.fetch_add(1, Ordering::SeqCst);
        body(x)
    });
    let ck = checkpoint(counted);
    let x = arr(&[0.3, -0.7, 1.1], &[3]);
    let y = arr(&[0.5, 0.2, -0.4], &[3]);
    let plain = |xs: &[Array]| Ok(vec![ops::sum(&body(xs)?[0], None, false)?]);
    let want = grad(&plain, &[x.clone(), y.clone()], &[0, 1]).unwrap();
    let got = grad(&summed(&ck), &[x.clone(), y.clone()], &[0, 1]).unwrap();
    close(&vals(&got[0]), &vals(&want[0]));
    close(&vals(&got[1]), &vals(&want[1]));
    // Once forward, once again in the backward pass.
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // Hand-computed: ∂/∂x = cos(x)e^{xy} + y·sin(x)e^{xy}.
    let (xs, ys) = (vals(&x), vals(&y));
    let dx: Vec<f32> = xs.iter().zip(&ys).map(|(&a, &b)| (a.cos() + b * a.sin()) * (a * b).exp()).collect();
    close(&vals(&got[0]), &dx);
    // Second order through the recomputation.
    let d1 = |v: &[Array]| Ok(vec![ops::sum(&grad(&summed(&ck), v, &[0])?[0], None, false)?]);
    let d1_plain = |v: &[Array]| Ok(vec![ops::sum(&grad(&plain, v, &[0])?[0], None, false)?]);
    let h = grad(&d1, &[x.clone(), y.clone()], &[0, 1]).unwrap();
    let h_plain = grad(&d1_plain, &[x, y], &[0, 1]).unwrap();
    close(&vals(&h[0]), &vals(&h_plain[0]));
    close(&vals(&h[1]), &vals(&h_plain[1]));
}

#[test]
fn custom_vjp_gets_primals_cotangents_and_outputs() {
    // f(x) = (2x, x²); the rule returns c0·o1 + c1·p (values it can only get from its arguments).
    let two: ArrayFn = Arc::new(|x: &[Array]| Ok(vec![ops::multiply(&x[0], &like(&x[0], 2.0)?)?, ops::multiply(&x[0], &x[0])?]));
    let rule: VjpRule = Arc::new(|p: &[Array], c: &[Array], o: &[Array]| Ok(vec![ops::add(&ops::multiply(&c[0], &o[1])?, &ops::multiply(&c[1], &p[0])?)?]));
    let f = custom_vjp(two, rule);
    let (outs, g) = vjp(&|xs: &[Array]| f.call(xs), &[arr(&[3.0], &[1])], &[arr(&[2.0], &[1]), arr(&[5.0], &[1])]).unwrap();
    close(&vals(&outs[0]), &[6.0]);
    close(&vals(&outs[1]), &[9.0]);
    close(&vals(&g[0]), &[2.0 * 9.0 + 5.0 * 3.0]);
    // Only the first output used: the second gets a zero cotangent.
    let first = |xs: &[Array]| Ok(vec![ops::sum(&f.call(xs)?[0], None, false)?]);
    close(&vals(&grad(&first, &[arr(&[3.0], &[1])], &[0]).unwrap()[0]), &[9.0]);
}

#[test]
fn bad_rules_are_errors() {
    let wrong_count: VjpRule = Arc::new(|p: &[Array], _c: &[Array], _o: &[Array]| Ok(vec![p[0].clone(), p[0].clone()]));
    let f = CustomFunction::new(exp_fn(), Some(wrong_count), None, None);
    let err = grad(&summed(&f), &[arr(&[1.0], &[1])], &[0]).unwrap_err();
    assert!(err.to_string().contains("returned 2 arrays for 1 inputs"), "{err}");
    let wrong_shape: VjpRule = Arc::new(|_p: &[Array], _c: &[Array], _o: &[Array]| Ok(vec![ops::zeros(&[3], DType::Float32)?]));
    let f = CustomFunction::new(exp_fn(), Some(wrong_shape), None, None);
    let err = grad(&summed(&f), &[arr(&[1.0], &[1])], &[0]).unwrap_err();
    assert!(err.to_string().contains("shape"), "{err}");
    let failing: VjpRule = Arc::new(|_p: &[Array], _c: &[Array], _o: &[Array]| Err(mlx_arm_core::Error::invalid("rule", "boom")));
    let f = CustomFunction::new(exp_fn(), Some(failing), None, None);
    let err = grad(&summed(&f), &[arr(&[1.0], &[1])], &[0]).unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");
    let bad_axes: VmapRule = Arc::new(|x: &[Array], _a: &[i32]| Ok((vec![x[0].clone()], vec![5])));
    let f = CustomFunction::new(exp_fn(), None, None, Some(bad_axes));
    let err = vmap(&|xs: &[Array]| f.call(xs), &[arr(&[1.0, 2.0], &[2])], &[], &[]).unwrap_err();
    assert!(err.to_string().contains("axis 5"), "{err}");
}
