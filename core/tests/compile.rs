//! `compile`: compiled and uncompiled functions give bit-identical results (the fused kernel
//! runs the same per-element kernels), on chains with broadcasting, mixed dtypes, strided
//! inputs, size-0 and 0-d inputs, multi-block sizes; traces are cached per signature; grad
//! goes through compiled functions; errors are errors.

use mlx_arm_core::ops;
use mlx_arm_core::transforms::compile::{compile, fused_steps, CompileFn};
use mlx_arm_core::transforms::grad;
use mlx_arm_core::{Array, DType, ErrorKind, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[path = "common/rng.rs"]
mod rng;

/// Deterministic values in [-2, 2) of `shape`.
fn arr(shape: &[usize], seed: u64) -> Array {
    let n = shape.iter().product();
    let mut r = rng::Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    Array::from_slice(&r.row(n, 2.0), shape).unwrap()
}

fn fun(f: impl Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static) -> CompileFn {
    Arc::new(f)
}

/// Runs `f` plain and compiled on `inputs`; asserts equal shapes, dtypes and bytes; returns
/// the compiled outputs and, per output, the steps of the fused node computing it (looked at
/// before evaluation, which drops the graph).
fn check_same(name: &str, f: &CompileFn, inputs: &[Array]) -> (Vec<Array>, Vec<Option<usize>>) {
    let want = f(inputs).unwrap_or_else(|e| panic!("{name}: plain: {e}"));
    let c = compile(f.clone(), false);
    let got = c.call(inputs).unwrap_or_else(|e| panic!("{name}: compiled: {e}"));
    let steps = got.iter().map(fused_steps).collect();
    assert_eq!(got.len(), want.len(), "{name}: output count");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape(), w.shape(), "{name}: shape");
        assert_eq!(g.dtype(), w.dtype(), "{name}: dtype");
        assert_eq!(g.to_bytes().unwrap(), w.to_bytes().unwrap(), "{name}: values differ");
    }
    (got, steps)
}

/// exp(-(x·row + s))·0.5 − x, x is [r, c], row [c], s 0-d: broadcasting of a row and a scalar.
fn chain(x: &[Array]) -> Result<Vec<Array>> {
    let t = ops::add(&ops::multiply(&x[0], &x[1])?, &x[2])?;
    let t = ops::exp(&ops::negative(&t)?)?;
    let half = Array::scalar(0.5f32)?;
    Ok(vec![ops::subtract(&ops::multiply(&t, &half)?, &x[0])?])
}

#[test]
fn chains_with_broadcasting_fuse_and_match() {
    let f = fun(chain);
    // Small, and large enough for many blocks and threads, with an odd row width so blocks
    // cut rows in the middle.
    for &(r, c) in &[(3usize, 5usize), (333, 301)] {
        let inputs = [arr(&[r, c], 1), arr(&[c], 2), Array::scalar(0.25f32).unwrap()];
        let (_, steps) = check_same("chain", &f, &inputs);
        // negative, exp, multiply, subtract and the two of the first line: one kernel.
        assert_eq!(steps[0], Some(6), "the chain is one fused node");
    }
    // A column vector against a row: both broadcast.
    let g = fun(|x| Ok(vec![ops::tanh(&ops::add(&x[0], &x[1])?)?]));
    check_same("outer", &g, &[arr(&[257, 1], 3), arr(&[1, 129], 4)]);
}

#[test]
fn mixed_dtypes_and_casts_match() {
    let f = fun(|x| {
        let h = ops::astype(&x[0], DType::Float16)?;
        let s = ops::sqrt(&ops::abs(&h)?)?; // float16 math
        let i = ops::astype(&ops::multiply(&x[1], &Array::scalar(3i32)?)?, DType::Float32)?;
        let y = ops::add(&ops::astype(&s, DType::Float32)?, &i)?;
        let m = ops::greater(&y, &Array::scalar(1.0f32)?)?;
        Ok(vec![ops::where_(&m, &y, &ops::negative(&y)?)?, ops::logical_not(&m)?])
    });
    let ints: Vec<i32> = (0..40 * 70).map(|i| (i % 13) as i32 - 6).collect();
    check_same("mixed", &f, &[arr(&[40, 70], 5), Array::from_slice(&ints, &[40, 70]).unwrap()]);
    let bf = fun(|x| Ok(vec![ops::sigmoid(&ops::multiply(&x[0], &x[0])?)?]));
    check_same("bfloat16", &bf, &[ops::astype(&arr(&[1000], 6), DType::Bfloat16).unwrap()]);
    let f64s = fun(|x| Ok(vec![ops::log1p(&ops::square(&ops::add(&x[0], &x[1])?)?)?]));
    check_same("float64", &f64s, &[ops::astype(&arr(&[77, 3], 7), DType::Float64).unwrap(), Array::scalar(1.5f64).unwrap()]);
}

#[test]
fn strided_inputs_match() {
    let f = fun(|x| Ok(vec![ops::maximum(&ops::sin(&x[0])?, &ops::cos(&x[1])?)?]));
    let a = ops::transpose(&arr(&[90, 130], 8), None).unwrap(); // [130, 90], column-major
    let b = ops::slice(&arr(&[260, 180], 9), &[0, 1], &[260, 180], &[2, 2]).unwrap(); // [130, 90], stepped
    let (_, steps) = check_same("strided", &f, &[a, b]);
    assert_eq!(steps[0], Some(3));
}

#[test]
fn size_zero_and_scalar_inputs() {
    let f = fun(chain);
    check_same("size 0", &f, &[arr(&[0, 4], 10), arr(&[4], 11), Array::scalar(1.0f32).unwrap()]);
    check_same("0-d", &f, &[Array::scalar(0.3f32).unwrap(), Array::scalar(-1.5f32).unwrap(), Array::scalar(2.0f32).unwrap()]);
}

#[test]
fn several_outputs_and_shared_values() {
    // exp(x) is read by two outputs: it stays a value of its own; CSE merges the repeat.
    let f = fun(|x| {
        let e = ops::exp(&x[0])?;
        let e2 = ops::exp(&x[0])?;
        Ok(vec![ops::add(&e, &e2)?, ops::multiply(&e, &x[1])?, x[1].clone()])
    });
    let inputs = [arr(&[50, 20], 12), arr(&[50, 20], 13)];
    let (out, steps) = check_same("shared", &f, &inputs);
    assert!(out[2].same_node(&inputs[1]), "an input returned as is stays the input");
    assert_eq!(steps, vec![None, None, None], "exp(x) feeds two single-op groups: nothing to fuse");
    let g = fun(|x| {
        let a = ops::exp(&x[0])?;
        Ok(vec![ops::add(&a, &ops::exp(&x[0])?)?])
    });
    let (_, steps) = check_same("cse", &g, &inputs[..1]);
    assert_eq!(steps[0], Some(2), "exp(x) + exp(x) computes exp once");
}

/// One op with a broadcast scalar or row operand is one fused step (MLX's
/// `CompiledBroadcastMultiply`), a column operand or no broadcast leaves the op as it is; the
/// values are the uncompiled op's in every case, over many blocks and an odd row width.
#[test]
fn a_single_op_with_a_broadcast_scalar_or_row_fuses() {
    let mul = fun(|x| Ok(vec![ops::multiply(&x[0], &x[1])?]));
    let sub = fun(|x| Ok(vec![ops::subtract(&x[1], &x[0])?]));
    let x = arr(&[333, 301], 30);
    let cases: [(&str, Array, Option<usize>); 6] = [
        ("scalar", Array::scalar(1.5f32).unwrap(), Some(1)),
        ("row", arr(&[301], 31), Some(1)),
        ("row with a leading 1", arr(&[1, 301], 32), Some(1)),
        ("one element", arr(&[1, 1], 33), Some(1)),
        ("column", arr(&[333, 1], 34), None),
        ("same shape", arr(&[333, 301], 35), None),
    ];
    for (name, b, want) in cases {
        for (f, op) in [(&mul, "multiply"), (&sub, "subtract")] {
            let (_, steps) = check_same(&alloc_name(op, name), f, &[x.clone(), b.clone()]);
            assert_eq!(steps[0], want, "{op} by a {name}");
        }
    }
    // Broadcast on both sides (a column times a row) is not a scalar-or-row case.
    let (_, steps) = check_same("outer", &mul, &[arr(&[333, 1], 36), arr(&[301], 37)]);
    assert_eq!(steps[0], None);
}

fn alloc_name(op: &str, case: &str) -> String {
    format!("{op} by a {case}")
}

#[test]
fn traces_once_per_signature() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let f = fun(move |x| {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(vec![ops::add(&ops::exp(&x[0])?, &x[0])?])
    });
    let c = compile(f.clone(), false);
    let a = arr(&[8, 8], 14);
    let first = c.call(&[a.clone()]).unwrap();
    let again = c.call(&[arr(&[8, 8], 15)]).unwrap();
    assert_eq!((c.traces(), calls.load(Ordering::SeqCst)), (1, 1), "same signature: traced once");
    assert_eq!(first[0].to_bytes().unwrap(), f(&[a]).unwrap()[0].to_bytes().unwrap());
    assert_eq!(again[0].to_bytes().unwrap(), f(&[arr(&[8, 8], 15)]).unwrap()[0].to_bytes().unwrap(), "the replay uses the new input");
    c.call(&[arr(&[4, 8], 16)]).unwrap();
    assert_eq!(c.traces(), 2, "new shape: new trace");
    c.call(&[ops::astype(&arr(&[8, 8], 17), DType::Float16).unwrap()]).unwrap();
    assert_eq!(c.traces(), 3, "new dtype: new trace");
    c.call(&[arr(&[8, 8], 18)]).unwrap();
    assert_eq!(c.traces(), 3, "known signatures stay cached");

    // Shapeless: one trace serves every shape of the same rank, elementwise ops re-broadcast.
    let s = compile(fun(chain), true);
    for &(r, c) in &[(2usize, 3usize), (70, 9), (1, 1)] {
        let inputs = [arr(&[r, c], 19), arr(&[c], 20), Array::scalar(0.5f32).unwrap()];
        let got = s.call(&inputs).unwrap();
        assert_eq!(got[0].shape(), &[r, c]);
        assert_eq!(got[0].to_bytes().unwrap(), chain(&inputs).unwrap()[0].to_bytes().unwrap(), "shapeless {r}x{c}");
    }
    assert_eq!(s.traces(), 1);
    s.call(&[arr(&[6], 21), arr(&[6], 22), Array::scalar(0.5f32).unwrap()]).unwrap();
    assert_eq!(s.traces(), 2, "a different rank traces again");
}

#[test]
fn shapeless_retraces_shape_dependent_ops() {
    // A reshape to a shape computed from the input's: fixed by its trace, so another input
    // shape gets its own trace.
    let s = compile(fun(|x| Ok(vec![ops::reshape(&ops::exp(&x[0])?, &[x[0].size() as isize])?])), true);
    // A reshape asked with -1 keeps it (as MLX): one trace re-infers the axis at every shape.
    let m = compile(fun(|x| Ok(vec![ops::reshape(&ops::exp(&x[0])?, &[-1])?])), true);
    for (k, shape) in [[2usize, 3], [4, 3], [2, 3]].iter().enumerate() {
        let x = arr(shape, 23 + k as u64);
        for c in [&s, &m] {
            let got = c.call(&[x.clone()]).unwrap();
            assert_eq!(got[0].shape(), &[shape[0] * shape[1]]);
            assert_eq!(got[0].to_bytes().unwrap(), ops::exp(&x).unwrap().to_bytes().unwrap());
        }
    }
    assert_eq!(s.traces(), 2, "one trace per shape, the first reused");
    assert_eq!(m.traces(), 1, "the -1 is inferred again on replay");
    // A size the fixed axes do not divide is reshape's error, not a new trace.
    let r = compile(fun(|x| Ok(vec![ops::reshape(&x[0], &[6, -1])?])), true);
    assert_eq!(r.call(&[arr(&[2, 3, 4], 31)]).unwrap()[0].shape(), &[6, 4]);
    assert_eq!(r.call(&[arr(&[2, 3, 8], 32)]).unwrap()[0].shape(), &[6, 8]);
    assert_eq!(r.call(&[arr(&[5, 5, 5], 33)]).unwrap_err().kind, mlx_arm_core::ErrorKind::InvalidArgument);
    assert_eq!(r.traces(), 1);
    // An output that does not read the input (a constant of the traced shape) is shape-fixed too.
    let z = compile(fun(|x| Ok(vec![ops::zeros(x[0].shape(), DType::Float32)?])), true);
    assert_eq!(z.call(&[arr(&[1, 32], 29)]).unwrap()[0].shape(), &[1, 32]);
    assert_eq!(z.call(&[arr(&[2, 16], 30)]).unwrap()[0].shape(), &[2, 16]);
}

#[test]
fn errors_are_errors() {
    // The function's own error surfaces, and a failed trace is not cached.
    let c = compile(fun(|x| Ok(vec![ops::add(&x[0], &x[1])?])), false);
    let err = c.call(&[arr(&[3], 25), arr(&[4], 26)]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgument, "{err}");
    assert!(c.call(&[arr(&[3], 25), arr(&[3], 26)]).is_ok());
}

#[test]
fn grad_goes_through_compiled_functions() {
    let c = Arc::new(compile(fun(chain), false));
    let inner = c.clone();
    let loss_c = move |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&inner.call(x)?[0], None, false)?]) };
    let loss = |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&chain(x)?[0], None, false)?]) };
    let inputs = [arr(&[6, 7], 27), arr(&[7], 28), Array::scalar(0.1f32).unwrap()];
    let want = grad(&loss, &inputs, &[0, 1, 2]).unwrap();
    let got = grad(&loss_c, &inputs, &[0, 1, 2]).unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.to_bytes().unwrap(), w.to_bytes().unwrap());
    }
    // Outside a trace the same compiled function runs fused.
    let y = c.call(&inputs).unwrap();
    assert_eq!(fused_steps(&y[0]), Some(6));
}

#[test]
fn fused_nodes_differentiate_as_their_ops() {
    use mlx_arm_core::ops::binary::BinaryOp;
    use mlx_arm_core::ops::fused::{FusedOp, Step};
    use mlx_arm_core::ops::unary::UnaryOp;
    use mlx_arm_core::primitive::Primitive;
    // exp(x) * y as one fused node.
    let op = Arc::new(FusedOp {
        n_inputs: 2,
        steps: vec![
            Step { prim: Primitive::Unary(UnaryOp::Exp), args: vec![0], dtype: DType::Float32 },
            Step { prim: Primitive::Binary(BinaryOp::Multiply), args: vec![2, 1], dtype: DType::Float32 },
        ],
    });
    let fused = |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&FusedOp::record(&op, x.to_vec())?, None, false)?]) };
    let plain = |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&ops::multiply(&ops::exp(&x[0])?, &x[1])?, None, false)?]) };
    let inputs = [arr(&[4, 5], 31), arr(&[5], 32)];
    let (want, got) = (grad(&plain, &inputs, &[0, 1]).unwrap(), grad(&fused, &inputs, &[0, 1]).unwrap());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape(), w.shape());
        assert_eq!(g.to_bytes().unwrap(), w.to_bytes().unwrap());
    }
    // A malformed program is an error, not a panic.
    let bad = Arc::new(FusedOp { n_inputs: 1, steps: vec![Step { prim: Primitive::Select, args: vec![5], dtype: DType::Float32 }] });
    assert!(FusedOp::record(&bad, vec![arr(&[2], 33)]).and_then(|a| a.eval()).is_err());
}

/// Every dtype the fused steps take: arithmetic, a comparison, `where` and a cast in one
/// chain, over several blocks (the widest dtype's blocks are the smallest), with a broadcast
/// row operand.
#[test]
fn every_dtype_fuses_and_matches() {
    use DType::*;
    let f = fun(|x| {
        let t = ops::add(&x[0], &x[1])?;
        let t = ops::multiply(&t, &x[0])?;
        let t = ops::maximum(&t, &x[1])?;
        let m = ops::greater(&t, &x[0])?;
        let w = ops::where_(&m, &t, &x[1])?;
        Ok(vec![w.clone(), ops::astype(&ops::abs(&w)?, Float32)?])
    });
    for d in [Bool, Uint8, Uint16, Uint32, Uint64, Int8, Int16, Int32, Int64, Float16, Bfloat16, Float32, Float64, Complex64] {
        let x = ops::astype(&ops::multiply(&arr(&[70, 300], 20), &Array::scalar(3.0f32).unwrap()).unwrap(), d).unwrap();
        let y = ops::astype(&ops::multiply(&arr(&[300], 21), &Array::scalar(3.0f32).unwrap()).unwrap(), d).unwrap();
        let name = format!("{d}");
        let (_, steps) = check_same(&name, &f, &[x, y]);
        assert_eq!(steps[0], Some(5), "{name}: the chain is one fused node");
        // abs and astype fuse, unless the astype is a no-op (abs already gives float32).
        let want = if matches!(d, Float32 | Complex64) { None } else { Some(2) };
        assert_eq!(steps[1], want, "{name}: abs and astype");
    }
}

/// Registers read twice by one step, read again steps later, and dying at different steps
/// (the kernel's block buffers are reused and steps run in place where a register dies),
/// on a size that spreads over many blocks and threads and does not end on a block.
#[test]
fn register_reuse_matches() {
    let f = fun(|x| {
        let t1 = ops::exp(&ops::multiply(&x[0], &Array::scalar(0.5f32)?)?)?;
        let t2 = ops::multiply(&t1, &t1)?; // t1 read twice
        let t3 = ops::add(&t2, &t1)?; // t1's last read
        let t4 = ops::sin(&t3)?;
        let t5 = ops::subtract(&t4, &t2)?; // t2 read long after it was made
        let t6 = ops::sigmoid(&ops::divide(&t5, &x[1])?)?;
        Ok(vec![ops::multiply(&t6, &t6)?])
    });
    let n = 100_003;
    let (_, steps) = check_same("reuse", &f, &[arr(&[n], 22), ops::add(&arr(&[n], 23), &Array::scalar(3.0f32).unwrap()).unwrap()]);
    assert_eq!(steps[0], Some(9));
}

/// MLX's test_vmap_compiled: a compiled function defined inside a vmapped one captures the
/// vmapped value from its scope; each example must see its own value (tracer inputs run the
/// function itself, as in MLX, instead of replaying a trace that froze the capture).
#[test]
fn compiled_function_inside_vmap_sees_captured_tracers() {
    let x = Array::from_slice(&[1.0f32, -3.0, 0.5, -0.5], &[2, 2]).unwrap();
    let outer = |v: &[Array]| -> Result<Vec<Array>> {
        let a = ops::abs(&v[0])?;
        let cap = a.clone();
        let inner = compile(fun(move |_z| Ok(vec![ops::negative(&ops::exp(&cap)?)?])), false);
        inner.call(&[a])
    };
    let got = mlx_arm_core::transforms::vmap(&outer, &[x.clone()], &[0], &[]).unwrap();
    let want = ops::negative(&ops::exp(&ops::abs(&x).unwrap()).unwrap()).unwrap();
    assert_eq!(got[0].to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
}

fn vals(a: &Array) -> Vec<f64> {
    ops::astype(a, DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

/// Equal lengths and every pair within 1e-6 (absolute and relative), NaN matching NaN.
fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-6 * (1.0 + y.abs()))
}

/// A shapeless trace made where an op is a no-op (reducing size-1 axes, reshaping or
/// broadcasting to the same shape, a full slice, an empty slice update, a length-1 Hadamard)
/// must still give the function's own result on other shapes — the op must not vanish from
/// the trace (it once became a cast, and bigger inputs came back unreduced). Each case is
/// traced first on a shape where the op is a no-op, then called on shapes where it is not;
/// the compiled result (or error) must equal the plain function's.
#[test]
fn shapeless_traces_keep_ops_that_are_no_ops_at_the_traced_shape() {
    type F = fn(&[Array]) -> Result<Vec<Array>>;
    let cases: Vec<(&str, F, Vec<Vec<usize>>)> = vec![
        ("sum keepdims", |x| Ok(vec![ops::sum(&x[0], Some(&[0]), true)?]), vec![vec![1, 3], vec![4, 3], vec![2, 5]]),
        ("sum", |x| Ok(vec![ops::sum(&x[0], Some(&[0]), false)?]), vec![vec![1, 3], vec![4, 3]]),
        ("x * sum(x, -1)", |x| Ok(vec![ops::multiply(&x[0], &ops::sum(&x[0], Some(&[-1]), true)?)?]), vec![vec![3, 1], vec![3, 4], vec![1, 2]]),
        ("mean keepdims", |x| Ok(vec![ops::mean(&x[0], Some(&[0]), true)?]), vec![vec![1, 3], vec![4, 3], vec![7, 3]]),
        ("mean all", |x| Ok(vec![ops::mean(&x[0], None, true)?]), vec![vec![1], vec![2], vec![4], vec![7]]),
        ("var ddof", |x| Ok(vec![ops::var(&x[0], Some(&[1]), true, 1)?]), vec![vec![3, 1], vec![3, 4]]),
        ("std", |x| Ok(vec![ops::std(&x[0], Some(&[0]), true, 0)?]), vec![vec![1, 2], vec![5, 2]]),
        ("max", |x| Ok(vec![ops::max(&x[0], Some(&[1]), true)?]), vec![vec![2, 1], vec![2, 6]]),
        ("min", |x| Ok(vec![ops::min(&x[0], Some(&[1]), true)?]), vec![vec![2, 1], vec![2, 6]]),
        ("prod", |x| Ok(vec![ops::prod(&x[0], Some(&[0]), true)?]), vec![vec![1, 4], vec![3, 4]]),
        ("any", |x| Ok(vec![ops::any(&ops::greater(&x[0], &Array::scalar(1.0f32)?)?, Some(&[0]), true)?]), vec![vec![1, 4], vec![6, 4]]),
        ("logsumexp", |x| Ok(vec![ops::logsumexp(&x[0], Some(&[0]), true)?]), vec![vec![1, 3], vec![4, 3]]),
        ("softmax axis 0", |x| Ok(vec![ops::softmax(&x[0], Some(&[0]), false)?]), vec![vec![1, 3], vec![4, 3]]),
        ("reshape to the traced shape", |x| Ok(vec![ops::reshape(&x[0], &[1, 3])?]), vec![vec![1, 3], vec![4, 3]]),
        ("broadcast_to the traced shape", |x| Ok(vec![ops::broadcast_to(&x[0], &[1, 3])?]), vec![vec![1, 3], vec![4, 3]]),
        ("slice [0:1]", |x| Ok(vec![ops::slice(&x[0], &[0, 0], &[1, 3], &[1, 1])?]), vec![vec![1, 3], vec![4, 3]]),
        ("slice_update [2:] = 0", |x| {
            let z = Array::scalar(0.0f32)?;
            Ok(vec![ops::slice_update(&x[0], &z, &[2], &[isize::MAX], &[1])?])
        }, vec![vec![1], vec![5]]),
        ("hadamard", |x| Ok(vec![ops::hadamard_transform(&x[0], None)?]), vec![vec![3, 1], vec![3, 4]]),
    ];
    for (name, f, shapes) in cases {
        let c = compile(fun(f), true);
        for (k, shape) in shapes.iter().enumerate() {
            let x = arr(shape, 40 + k as u64);
            let want = f(&[x.clone()]);
            let got = c.call(&[x]);
            match (want, got) {
                (Ok(w), Ok(g)) => {
                    assert_eq!(g[0].shape(), w[0].shape(), "{name} at {shape:?}: shape");
                    assert_eq!(g[0].dtype(), w[0].dtype(), "{name} at {shape:?}: dtype");
                    let (g, w) = (vals(&g[0]), vals(&w[0]));
                    assert!(close(&g, &w), "{name} at {shape:?}: compiled {g:?} vs plain {w:?}");
                }
                (Err(_), Err(_)) => {}
                (w, g) => panic!("{name} at {shape:?}: plain {:?} but compiled {:?}", w.map(|_| ()), g.map(|_| ())),
            }
        }
    }
}

/// Reductions kept by the dims replay on new shapes without a new trace (MLX infers their
/// output shapes), and `mean` then divides by the new count, not the traced one.
#[test]
fn shapeless_reductions_and_mean_serve_every_shape_from_one_trace() {
    let m = compile(fun(|x| Ok(vec![ops::mean(&x[0], None, true)?])), true);
    for n in [2usize, 4, 7, 1] {
        let got = m.call(&[ops::ones(&[n], DType::Float32).unwrap()]).unwrap();
        assert_eq!(vals(&got[0]), vec![1.0], "mean of {n} ones");
    }
    assert_eq!(m.traces(), 1, "one trace for every length");
    // x + y.sum(0, keepdims) + z, z captured at trace time (MLX's test: the trace keeps z = 1).
    let z = Array::scalar(1i32).unwrap();
    let s = compile(fun(move |x| Ok(vec![ops::add(&ops::add(&x[0], &ops::sum(&x[1], Some(&[0]), true)?)?, &z)?])), true);
    for n in [2usize, 3, 1] {
        let ones = ops::ones(&[n, n], DType::Int32).unwrap();
        let got = s.call(&[ones.clone(), ones]).unwrap();
        assert_eq!(got[0].shape(), &[n, n]);
        assert!(vals(&got[0]).iter().all(|&v| v == (n + 2) as f64), "sum over {n} rows");
    }
    assert_eq!(s.traces(), 1);
}

/// The gradient of a matmul whose batch axes broadcast, traced in a shapeless compile, serves
/// other shapes of the same ranks from its one trace (as MLX), with the values of the
/// uncompiled gradient (upstream-style operands: (B, 1, M, K) @ (N, K, P)).
#[test]
fn shapeless_grad_of_a_broadcasting_matmul_traces_once() {
    let loss = |x: &[Array]| -> Result<Vec<Array>> {
        let y = ops::matmul(&x[0], &x[1])?;
        Ok(vec![ops::sum(&ops::multiply(&y, &y)?, None, false)?])
    };
    let g = move |x: &[Array]| mlx_arm_core::transforms::grad(&loss, x, &[0, 1]);
    let c = compile(fun(g), true);
    let shapes: [(&[usize], &[usize]); 3] =
        [(&[2, 1, 3, 4], &[5, 4, 2]), (&[3, 1, 2, 3], &[4, 3, 1]), (&[1, 1, 5, 2], &[2, 2, 3])];
    for (k, (a, b)) in shapes.iter().enumerate() {
        let inputs = [arr(a, 40 + k as u64), arr(b, 50 + k as u64)];
        let got = c.call(&inputs).unwrap();
        let want = g(&inputs).unwrap();
        for (o, w) in got.iter().zip(&want) {
            assert_eq!(o.shape(), w.shape(), "{a:?} @ {b:?}");
            assert_eq!(o.to_bytes().unwrap(), w.to_bytes().unwrap(), "{a:?} @ {b:?}");
        }
        assert_eq!((got[0].shape(), got[1].shape()), (*a, *b));
    }
    assert_eq!(c.traces(), 1, "one trace for every shape of these ranks");
    // Upstream test_compile_shapeless_with_broadcast: the loss is the plain sum, whose
    // cotangent (its seed broadcast to the traced shape, made during the trace) feeds a
    // matmul: a new shape traces again rather than reading that shape (MLX reuses its trace).
    let plain_sum = |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&ops::matmul(&x[0], &x[1])?, None, false)?]) };
    let g = move |x: &[Array]| mlx_arm_core::transforms::grad(&plain_sum, x, &[0, 1]);
    let c = compile(fun(g), true);
    for (a, b) in [(&[2usize, 1, 4, 2][..], &[3usize, 2, 5][..]), (&[3, 1, 4, 2], &[2, 2, 5])] {
        let inputs = [arr(a, 60), arr(b, 61)];
        let (got, want) = (c.call(&inputs).unwrap(), g(&inputs).unwrap());
        assert_eq!((got[0].shape(), got[1].shape()), (a, b));
        assert_eq!(got[0].to_bytes().unwrap(), want[0].to_bytes().unwrap());
        assert_eq!(got[1].to_bytes().unwrap(), want[1].to_bytes().unwrap());
    }
}

/// Functions that real MLX 0.32.4 serves from ONE shapeless trace over three shapes of the
/// same rank (counted with a side effect, tests/python/golden/grad/grad_cases.py
/// `shapeless_trace_counts`): reductions without keepdims (a squeeze, not a reshape to the
/// traced shape), `x ** 2` and its gradient (the `2` read unbroadcast), the gradient of a sum
/// (its cotangent broadcast against the input, not to the traced shape), `zeros_like`, and the
/// gradient of a (broadcasting) matmul's plain sum, argmax/argmin with no axis and a whole
/// flatten. Values equal the uncompiled function's.
#[test]
fn shapeless_traces_once_where_mlx_does() {
    type F = fn(&[Array]) -> Result<Vec<Array>>;
    let cases: Vec<(&str, F, [Vec<Vec<usize>>; 3])> = vec![
        ("sum", |x| Ok(vec![ops::sum(&x[0], None, false)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("max(1)", |x| Ok(vec![ops::max(&x[0], Some(&[1]), false)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("var", |x| Ok(vec![ops::var(&x[0], None, false, 0)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("argmax", |x| Ok(vec![ops::argmax(&x[0], Some(-1), false)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("argmax()", |x| Ok(vec![ops::argmax(&x[0], None, false)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("argmin(keepdims)", |x| Ok(vec![ops::argmin(&x[0], None, true)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("flatten", |x| Ok(vec![ops::flatten(&x[0], 0, -1)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("logsumexp", |x| Ok(vec![ops::logsumexp(&x[0], Some(&[-1]), false)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("x**2", |x| Ok(vec![ops::power(&x[0], &Array::from_slice(&[2.0f32], &[])?)?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        ("zeros_like+x", |x| Ok(vec![ops::add(&ops::zeros_like(&x[0])?, &x[0])?]), [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]]),
        (
            "sum(matmul)",
            |x| Ok(vec![ops::sum(&ops::matmul(&x[0], &x[1])?, None, false)?]),
            [vec![vec![2, 3], vec![3, 4]], vec![vec![4, 5], vec![5, 2]], vec![vec![3, 7], vec![7, 6]]],
        ),
        (
            "grad sum(x**2)",
            |x| grad(&|z: &[Array]| Ok(vec![ops::sum(&ops::power(&z[0], &Array::from_slice(&[2.0f32], &[])?)?, None, false)?]), x, &[0]),
            [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]],
        ),
        (
            "grad sum(bmatmul)",
            |x| grad(&|z: &[Array]| Ok(vec![ops::sum(&ops::matmul(&z[0], &z[1])?, None, false)?]), x, &[0, 1]),
            [vec![vec![2, 1, 3, 4], vec![5, 4, 2]], vec![vec![3, 1, 2, 3], vec![4, 3, 1]], vec![vec![2, 1, 2, 5], vec![3, 5, 4]]],
        ),
        (
            "grad sum(bmatmul**2)",
            |x| grad(&|z: &[Array]| Ok(vec![ops::sum(&ops::power(&ops::matmul(&z[0], &z[1])?, &Array::from_slice(&[2.0f32], &[])?)?, None, false)?]), x, &[0, 1]),
            [vec![vec![2, 1, 3, 4], vec![5, 4, 2]], vec![vec![3, 1, 2, 3], vec![4, 3, 1]], vec![vec![2, 1, 2, 5], vec![3, 5, 4]]],
        ),
        (
            "grad sum(softmax*x)",
            |x| grad(&|z: &[Array]| Ok(vec![ops::sum(&ops::multiply(&ops::softmax(&z[0], Some(&[-1]), false)?, &z[0])?, None, false)?]), x, &[0]),
            [vec![vec![2, 3]], vec![vec![4, 5]], vec![vec![3, 7]]],
        ),
    ];
    for (name, f, calls) in cases {
        let c = compile(fun(f), true);
        for (k, shapes) in calls.iter().enumerate() {
            let inputs: Vec<Array> = shapes.iter().enumerate().map(|(i, s)| arr(s, 70 + 10 * k as u64 + i as u64)).collect();
            let got = c.call(&inputs).unwrap();
            let want = f(&inputs).unwrap();
            for (o, w) in got.iter().zip(&want) {
                assert_eq!(o.shape(), w.shape(), "{name} {shapes:?}");
                let f32s = |a: &Array| ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap();
                let (o, w) = (f32s(o), f32s(w));
                for (a, b) in o.iter().zip(&w) {
                    assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{name} {shapes:?}: {a} vs {b}");
                }
            }
        }
        assert_eq!(c.traces(), 1, "{name}: one shapeless trace for every shape of these ranks, as MLX");
    }
}

/// A shapeless export traced where a reduction is a no-op still reduces on other shapes.
#[test]
fn shapeless_export_keeps_size_one_reductions() {
    use mlx_arm_core::transforms::export::ExportedFunction;
    let f = |x: &[Array]| Ok(vec![ops::mean(&x[0], Some(&[0]), true)?]);
    let mut e = ExportedFunction::new();
    e.add(&f, &[arr(&[1, 3], 60)], &[], true).unwrap();
    let e = ExportedFunction::from_bytes(&e.to_bytes().unwrap()).unwrap();
    let x = arr(&[4, 3], 61);
    let got = e.call(&[x.clone()], &[]).unwrap();
    let want = f(&[x]).unwrap();
    assert_eq!(got[0].shape(), &[1, 3]);
    let (g, w) = (vals(&got[0]), vals(&want[0]));
    assert!(close(&g, &w), "{g:?} vs {w:?}");
}

/// One compiled function called from several threads at once (it is `Send + Sync`): every
/// call gives the plain function's values. The function captures a lazy constant (evaluated
/// once, when the trace is made, never by two threads at once), the threads race to trace
/// the same signatures, and each thread also uses shapes of its own (new traces while others
/// replay).
#[test]
fn one_compiled_function_serves_several_threads() {
    let base = arr(&[8], 70);
    let captured = ops::exp(&base).unwrap(); // lazy until the first trace
    let f = move |x: &[Array]| -> Result<Vec<Array>> {
        let y = ops::multiply(&ops::tanh(&x[0])?, &captured)?;
        Ok(vec![ops::add(&y, &ops::sum(&x[0], Some(&[-1]), true)?)?])
    };
    // The same function over its own copy of the constant, for the expected values.
    let own = ops::exp(&base).unwrap();
    let expected = move |x: &Array| -> Vec<f64> {
        let y = ops::multiply(&ops::tanh(x).unwrap(), &own).unwrap();
        vals(&ops::add(&y, &ops::sum(x, Some(&[-1]), true).unwrap()).unwrap())
    };
    let inputs: Vec<Array> = (0..4).map(|t| arr(&[3 + t, 8], 80 + t as u64)).chain([arr(&[2, 8], 90)]).collect();
    let want: Vec<Vec<f64>> = inputs.iter().map(&expected).collect();
    for x in &inputs {
        x.eval().unwrap();
    }
    let c = Arc::new(compile(fun(f), false));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (c, inputs, want) = (c.clone(), inputs.clone(), want.clone());
            std::thread::spawn(move || {
                for round in 0..20 {
                    // The shared shape [2, 8] every round, and this thread's own shape.
                    for i in [4, t] {
                        let got = c.call(&[inputs[i].clone()]).unwrap();
                        assert_eq!(vals(&got[0]), want[i], "thread {t}, round {round}, input {i}");
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a thread failed");
    }
    assert!((5..=8).contains(&c.traces()), "one trace per signature (two threads may race to one): {}", c.traces());
}

// ---- reductions fused with their elementwise prologue (helper fu29) ----------------------

use mlx_arm_core::transforms::compile::kernels;

/// Runs `f` plain and compiled; asserts the same shapes, dtypes and bits, and that the
/// compiled graph is `want` (kernels in graph order, `kernels`).
fn check_fused(name: &str, f: &CompileFn, inputs: &[Array], want: &[&str]) {
    let plain = f(inputs).unwrap_or_else(|e| panic!("{name}: plain: {e}"));
    let c = compile(f.clone(), false);
    let got = c.call(inputs).unwrap_or_else(|e| panic!("{name}: compiled: {e}"));
    assert_eq!(kernels(&got), want, "{name}: kernels");
    for (g, w) in got.iter().zip(&plain) {
        assert_eq!(g.shape(), w.shape(), "{name}: shape");
        assert_eq!(g.dtype(), w.dtype(), "{name}: dtype");
        assert_eq!(g.to_bytes().unwrap(), w.to_bytes().unwrap(), "{name}: values differ");
    }
}

fn two() -> Array {
    Array::scalar(2.0f32).unwrap()
}

/// `sum(x * y)`, `sqrt(sum(x ** 2, -1))`, `mean(square(a - b))`: the chain and the sum are
/// one kernel, and the result has the unfused bits — over whole arrays (long runs folded in
/// pieces), rows of every length around the 8 lanes, rows longer than a block, and runs
/// longer than a piece.
#[test]
fn sums_of_chains_fuse_into_one_kernel_and_match() {
    let dot = fun(|x| Ok(vec![ops::sum(&ops::multiply(&x[0], &x[1])?, None, false)?]));
    let norm = fun(|x| Ok(vec![ops::sqrt(&ops::sum(&ops::power(&x[0], &two())?, Some(&[-1]), false)?)?]));
    let mse = fun(|x| Ok(vec![ops::mean(&ops::square(&ops::subtract(&x[0], &x[1])?)?, None, false)?]));
    for shape in [vec![1usize, 3], vec![3, 5], vec![7, 8], vec![5, 9], vec![4, 17], vec![333, 301], vec![2, 9000], vec![3, 70_001], vec![1, 300_007]] {
        let (a, b) = (arr(&shape, 40), arr(&shape, 41));
        let s = format!("{shape:?}");
        check_fused(&format!("dot {s}"), &dot, &[a.clone(), b.clone()], &["fused_sum(1)", "reshape"]);
        check_fused(&format!("norm {s}"), &norm, &[a.clone()], &["fused_sum(1)", "reshape", "sqrt"]);
        check_fused(&format!("mse {s}"), &mse, &[a, b], &["fused_sum(2)", "reshape", "multiply"]);
    }
    // Two trailing axes of three, and a row operand broadcast in the chain.
    let f = fun(|x| Ok(vec![ops::sum(&ops::exp(&ops::multiply(&x[0], &x[1])?)?, Some(&[1, 2]), true)?]));
    check_fused("trailing two", &f, &[arr(&[6, 50, 31], 42), arr(&[31], 43)], &["fused_sum(2)"]);
}

/// max, min and prod of chains, with NaNs (the first NaN of a run is the result, as unfused),
/// -0.0 against 0.0, and float16 / bfloat16 / float64 chains (accumulated as unfused).
#[test]
fn max_min_prod_of_chains_match_with_nans_and_every_float() {
    let mx = fun(|x| Ok(vec![ops::max(&ops::multiply(&x[0], &x[1])?, Some(&[-1]), false)?]));
    let mn = fun(|x| Ok(vec![ops::min(&ops::subtract(&x[0], &x[1])?, Some(&[-1]), true)?]));
    let pr = fun(|x| {
        // Factors near 1, so products of long rows stay finite.
        let t = ops::add(&ops::multiply(&ops::multiply(&x[0], &x[1])?, &Array::scalar(0.01f32)?)?, &Array::scalar(1.0f32)?)?;
        Ok(vec![ops::prod(&t, Some(&[-1]), false)?])
    });
    for shape in [[5usize, 13], [64, 1000], [2, 70_001]] {
        let n: usize = shape.iter().product();
        let mut v: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 / 100.0 - 5.0).collect();
        // NaNs of two payloads in some rows (the first one met wins), zeros of both signs.
        v[3] = f32::NAN;
        v[n / 2 + 1] = f32::from_bits(0x7fc0_0123);
        v[n / 2 + 9] = f32::NAN;
        v[1] = -0.0;
        v[2] = 0.0;
        let a = Array::from_slice(&v, &shape).unwrap();
        let b = arr(&shape, 44);
        for (name, f, k) in [("max", &mx, "fused_max(1)"), ("min", &mn, "fused_min(1)"), ("prod", &pr, "fused_prod(3)")] {
            let want: &[&str] = if name == "min" { &[k] } else { &[k, "reshape"] };
            check_fused(&format!("{name} {shape:?}"), f, &[a.clone(), b.clone()], want);
        }
    }
    for d in [DType::Float16, DType::Bfloat16, DType::Float64] {
        let f = fun(move |x| Ok(vec![ops::sum(&ops::multiply(&ops::astype(&x[0], d)?, &ops::astype(&x[1], d)?)?, Some(&[-1]), false)?]));
        check_fused(&format!("{d}"), &f, &[arr(&[37, 1001], 45), arr(&[37, 1001], 46)], &["fused_sum(3)", "reshape"]);
    }
}

/// Reductions that stay as they were: over leading axes (folded column-wise by the reduce
/// kernel, another order), of integers, of a value something else reads too, and all/any.
#[test]
fn reductions_the_fused_kernel_does_not_take_stay_unfused() {
    let lead = fun(|x| Ok(vec![ops::sum(&ops::multiply(&x[0], &x[1])?, Some(&[0]), false)?]));
    check_fused("leading", &lead, &[arr(&[40, 30], 47), arr(&[40, 30], 48)], &["multiply", "sum", "reshape"]);
    let ints = fun(|x| Ok(vec![ops::sum(&ops::multiply(&x[0], &x[0])?, None, false)?]));
    let i: Vec<i32> = (0..600).map(|k| k % 17 - 8).collect();
    check_fused("int32", &ints, &[Array::from_slice(&i, &[20, 30]).unwrap()], &["multiply", "sum", "reshape"]);
    // exp(x - m) is read by the sum and by the division (hand-written softmax): the sum
    // cannot take it; the division's chain fuses on its own.
    let softmax = fun(|x| {
        let m = ops::max(&x[0], Some(&[-1]), true)?;
        let e = ops::exp(&ops::subtract(&x[0], &m)?)?;
        Ok(vec![ops::divide(&e, &ops::sum(&e, Some(&[-1]), true)?)?])
    });
    check_fused("softmax", &softmax, &[arr(&[30, 100], 49)], &["max", "fused(2)", "sum", "broadcast_to", "divide"]);
    // logsumexp by hand: exp(x - m) is read by the sum alone, so it fuses into it.
    let lse = fun(|x| {
        let m = ops::max(&x[0], Some(&[-1]), true)?;
        let s = ops::sum(&ops::exp(&ops::subtract(&x[0], &m)?)?, Some(&[-1]), true)?;
        Ok(vec![ops::add(&ops::log(&s)?, &m)?])
    });
    check_fused("logsumexp", &lse, &[arr(&[30, 100], 50)], &["max", "fused_sum(2)", "fused(2)"]);
    let anyf = fun(|x| Ok(vec![ops::any(&ops::greater(&x[0], &x[1])?, None, false)?]));
    check_fused("any", &anyf, &[arr(&[30, 100], 51), arr(&[30, 100], 52)], &["greater", "any", "reshape"]);
}

/// A fused reduction replays on other shapes from one shapeless trace; a vjp through one
/// (a compiled output differentiated later) is the vjp of its ops; a malformed one errors.
#[test]
fn fused_reductions_replay_shapeless_and_differentiate() {
    let f = fun(|x| Ok(vec![ops::sum(&ops::multiply(&x[0], &x[1])?, Some(&[-1]), false)?]));
    let c = compile(f.clone(), true);
    for (k, shape) in [[3usize, 40], [9, 1000], [1, 7]].iter().enumerate() {
        let inputs = [arr(shape, 53 + k as u64), arr(shape, 60 + k as u64)];
        let got = c.call(&inputs).unwrap();
        assert_eq!(kernels(&got), ["fused_sum(1)", "reshape"]);
        assert_eq!(got[0].to_bytes().unwrap(), f(&inputs).unwrap()[0].to_bytes().unwrap(), "{shape:?}");
    }
    assert_eq!(c.traces(), 1);

    use mlx_arm_core::ops::binary::BinaryOp;
    use mlx_arm_core::ops::fused::{FusedOp, FusedReduceOp, Step};
    use mlx_arm_core::ops::reduce::ReduceKind;
    use mlx_arm_core::primitive::Primitive;
    let program = FusedOp { n_inputs: 2, steps: vec![Step { prim: Primitive::Binary(BinaryOp::Multiply), args: vec![0, 1], dtype: DType::Float32 }] };
    let op = Arc::new(FusedReduceOp { program: program.clone(), kind: ReduceKind::Sum, axes: 1 });
    let fused = |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&FusedReduceOp::record(&op, x.to_vec())?, None, false)?]) };
    let plain = |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&ops::multiply(&x[0], &x[1])?, None, false)?]) };
    let inputs = [arr(&[4, 5], 70), arr(&[5], 71)];
    let (want, got) = (grad(&plain, &inputs, &[0, 1]).unwrap(), grad(&fused, &inputs, &[0, 1]).unwrap());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape(), w.shape());
        assert_eq!(g.to_bytes().unwrap(), w.to_bytes().unwrap());
    }
    // Errors, not panics: more axes than the input has, an integer chain, all/any.
    let bad = Arc::new(FusedReduceOp { program: program.clone(), kind: ReduceKind::Sum, axes: 3 });
    assert!(FusedReduceOp::record(&bad, inputs.to_vec()).is_err());
    let any = Arc::new(FusedReduceOp { program, kind: ReduceKind::Any, axes: 1 });
    assert!(FusedReduceOp::record(&any, inputs.to_vec()).is_err());
    let ip = FusedOp { n_inputs: 1, steps: vec![Step { prim: Primitive::Binary(BinaryOp::Multiply), args: vec![0, 0], dtype: DType::Int32 }] };
    let int = Arc::new(FusedReduceOp { program: ip, kind: ReduceKind::Sum, axes: 1 });
    assert!(FusedReduceOp::record(&int, vec![Array::from_slice(&[1i32, 2], &[2]).unwrap()]).is_err());
}
