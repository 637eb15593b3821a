//! Gradients against real MLX 0.32 (goldens from core/tests/data/grad/gen_grad.py): each case
//! is `value_and_grad` of `sum(f(xs) · w)` over all inputs, in float32; plus grad of grad.
//! Tolerance 1e-4 relative (float32 sums in a different order).

mod common;

use common::{array, assert_matches, load};
use mlx_arm_core::ops::{self, Index, PadMode};
use mlx_arm_core::transforms::{grad, value_and_grad, vjp};
use mlx_arm_core::{Array, Result};
use serde_json::Value as J;

fn i32s(v: &[i32], shape: &[usize]) -> Result<Array> {
    Array::from_slice(v, shape)
}

fn run(name: &str, x: &[Array]) -> Result<Array> {
    let s = |v: f32| Array::scalar(v);
    Ok(match name {
        "exp" => ops::exp(&x[0])?,
        "log" => ops::log(&x[0])?,
        "sin" => ops::sin(&x[0])?,
        "cos" => ops::cos(&x[0])?,
        "tanh" => ops::tanh(&x[0])?,
        "sigmoid" => ops::sigmoid(&x[0])?,
        "sqrt" => ops::sqrt(&x[0])?,
        "rsqrt" => ops::rsqrt(&x[0])?,
        "abs" => ops::abs(&x[0])?,
        "square" => ops::square(&x[0])?,
        "erf" => ops::erf(&x[0])?,
        "log1p" => ops::log1p(&x[0])?,
        "arctan" => ops::arctan(&x[0])?,
        "add" => ops::add(&x[0], &x[1])?,
        "subtract" => ops::subtract(&x[0], &x[1])?,
        "multiply" => ops::multiply(&x[0], &x[1])?,
        "divide" => ops::divide(&x[0], &x[1])?,
        "power" => ops::power(&x[0], &x[1])?,
        "maximum" => ops::maximum(&x[0], &x[1])?,
        "minimum" => ops::minimum(&x[0], &x[1])?,
        "arctan2" => ops::arctan2(&x[0], &x[1])?,
        "logaddexp" => ops::logaddexp(&x[0], &x[1])?,
        "remainder" => ops::remainder(&x[0], &x[1])?,
        "sum" => ops::sum(&x[0], Some(&[1]), false)?,
        "mean" => ops::mean(&x[0], Some(&[0, 2]), false)?,
        "max" => ops::max(&x[0], Some(&[2]), false)?,
        "min" => ops::min(&x[0], Some(&[0]), true)?,
        "prod" => ops::prod(&x[0], Some(&[1]), false)?,
        "logsumexp" => ops::logsumexp(&x[0], Some(&[-1]), false)?,
        "softmax" => ops::softmax(&x[0], Some(&[-1]), false)?,
        "var" => ops::var(&x[0], Some(&[-1]), false, 1)?,
        "cumsum" => ops::cumsum(&x[0], Some(1), false, true, None)?,
        "cumsum_rev_excl" => ops::cumsum(&x[0], Some(2), true, false, None)?,
        "reshape" => ops::reshape(&x[0], &[4, 6])?,
        "transpose" => ops::transpose(&x[0], Some(&[2, 0, 1]))?,
        "broadcast_to" => ops::broadcast_to(&x[0], &[3, 2, 3, 4])?,
        "slice" => ops::slice(&x[0], &[0, 1, -1], &[2, 3, isize::MIN], &[1, 1, -2])?,
        "concatenate" => ops::concatenate(&[x[0].clone(), x[1].clone(), x[0].clone()], Some(1))?,
        "pad" => ops::pad(&x[0], &[(1, 2), (0, 1), (2, 0)], PadMode::Constant, &s(0.0)?)?,
        "take" => ops::take(&x[0], &i32s(&[2, 0, 2, 1], &[2, 2])?, Some(1))?,
        "take_along_axis" => ops::take_along_axis(&x[0], &i32s(&[0, 3, 3, 1, 2, 2], &[3, 2])?, Some(1))?,
        "where" => ops::where_(&ops::greater(&x[0], &s(0.0)?)?, &x[0], &x[1])?,
        "matmul" => ops::matmul(&x[0], &x[1])?,
        "addmm" => ops::addmm(&x[2], &x[0], &x[1], 0.5, 2.0)?,
        "trace" => ops::trace(&x[0], 1, 1, 2, None)?,
        "rms_norm" => ops::rms_norm(&x[0], Some(&x[1]), 1e-5)?,
        "layer_norm" => ops::layer_norm(&x[0], Some(&x[1]), Some(&x[2]), 1e-5)?,
        "rope" => ops::rope(&x[0], 8, false, Some(10000.0), 1.0, ops::RopeOffset::Int(2), None)?,
        "sdpa" => ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.5, ops::SdpaMask::None)?,
        "sdpa_causal" => ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.5, ops::SdpaMask::Causal)?,
        "sort" => ops::sort(&x[0], Some(1))?,
        "sort_axis0" => ops::sort(&x[0], Some(0))?,
        "cummax_ties" => ops::cummax(&x[0], Some(1), false, true)?,
        "cummax_rev_excl" => ops::slice(&ops::cummax(&x[0], Some(1), true, false)?, &[0, 0], &[3, 4], &[1, 1])?,
        "cummin_ties" => ops::cummin(&x[0], Some(0), false, true)?,
        "cummin_rev" => ops::cummin(&x[0], Some(1), true, true)?,
        "cummin_excl" => ops::slice(&ops::cummin(&x[0], Some(1), false, false)?, &[0, 1], &[3, 5], &[1, 1])?,
        "scatter_max" => ops::at_maximum(&x[0], &[Index::Array(i32s(&[0, 2, 2], &[3])?)], &x[1])?,
        "scatter_min" => ops::at_minimum(&x[0], &[Index::Array(i32s(&[3, 1, 3], &[3])?)], &x[1])?,
        "slice_multiply" => ops::at_multiply(&x[0], &[Index::slice(Some(1), Some(3), None)], &x[1])?,
        "slice_maximum" => ops::at_maximum(&x[0], &[Index::slice(Some(1), Some(3), None)], &x[1])?,
        other => panic!("unknown case {other}"),
    })
}

/// The complex cases: `f` of the golden's inputs.
fn run_complex(name: &str, z: &[Array]) -> Result<Array> {
    Ok(match name {
        "exp" => ops::exp(&z[0])?,
        "log" => ops::log(&z[0])?,
        "sin" => ops::sin(&z[0])?,
        "square" => ops::square(&z[0])?,
        "tanh" => ops::tanh(&z[0])?,
        "sqrt" => ops::sqrt(&z[0])?,
        "reciprocal" => ops::reciprocal(&z[0])?,
        "abs" => ops::abs(&z[0])?,
        "real" => ops::real(&z[0])?,
        "imag" => ops::imag(&z[0])?,
        "multiply" => ops::multiply(&z[0], &z[1])?,
        "divide" => ops::divide(&z[0], &z[1])?,
        "prod" => ops::prod(&z[0], Some(&[0]), false)?,
        other => panic!("unknown complex case {other}"),
    })
}

#[test]
fn complex_vjps_match_mlx() {
    // MLX's convention: g · conj(f'(z)) for holomorphic f; abs/real/imag give the gradients
    // with respect to Re z and Im z as one complex number.
    let golden = load("grad/grad.json");
    let cases = golden["complex"].as_array().unwrap();
    assert!(cases.len() >= 13);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let zs: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
        let cot = array(&c["cotangent"]);
        let f = |v: &[Array]| -> Result<Vec<Array>> { Ok(vec![run_complex(name, v)?]) };
        let (_, vjps) = vjp(&f, &zs, &[cot]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = c["vjps"].as_array().unwrap();
        assert_eq!(vjps.len(), want.len(), "{name}");
        for (k, (g, w)) in vjps.iter().zip(want).enumerate() {
            assert_matches(&format!("complex {name} vjp {k}"), g, w, 1e-4, 1e-5);
        }
    }
}

#[test]
fn gradients_match_mlx() {
    let golden = load("grad/grad.json");
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() >= 50);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let xs: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
        let w = array(&c["w"]);
        let f = |v: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&ops::multiply(&run(name, v)?, &w)?, None, false)?]) };
        let argnums: Vec<usize> = (0..xs.len()).collect();
        let (val, grads) = value_and_grad(&f, &xs, &argnums).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_matches(&format!("{name} value"), &val[0], &c["value"], 1e-4, 1e-5);
        let want: &Vec<J> = c["grads"].as_array().unwrap();
        assert_eq!(grads.len(), want.len(), "{name}");
        for (k, (g, w)) in grads.iter().zip(want).enumerate() {
            assert_matches(&format!("{name} grad {k}"), g, w, 1e-4, 1e-5);
        }
    }
}

#[test]
fn second_derivatives_match_mlx() {
    let golden = load("grad/grad.json");
    for c in golden["second"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap().to_string();
        let x = array(&c["x"]);
        let op = move |a: &Array| -> Result<Array> {
            match name.as_str() {
                "sin" => ops::sin(a),
                "exp" => ops::exp(a),
                "tanh" => ops::tanh(a),
                "sigmoid" => ops::sigmoid(a),
                "log" => ops::log(a),
                o => panic!("{o}"),
            }
        };
        let g1 = |v: &[Array]| -> Result<Vec<Array>> {
            let g = grad(&|u: &[Array]| Ok(vec![ops::sum(&op(&u[0])?, None, false)?]), v, &[0])?;
            Ok(vec![ops::sum(&g[0], None, false)?])
        };
        let g2 = grad(&g1, &[x], &[0]).unwrap();
        assert_matches(c["name"].as_str().unwrap(), &g2[0], &c["grad2"], 1e-4, 1e-5);
    }
}

/// The functions of `gen_grad_rules.py`'s cases.
fn run_rules(name: &str, x: &[Array]) -> Result<Array> {
    let sl = |a: &Array, start: &[isize], stop: &[isize]| ops::slice(a, start, stop, &[1, 1]);
    Ok(match name {
        "logcumsumexp" => ops::logcumsumexp(&x[0], Some(1), false, true)?,
        "logcumsumexp_rev" => ops::logcumsumexp(&x[0], Some(0), true, true)?,
        "logcumsumexp_excl" => sl(&ops::logcumsumexp(&x[0], Some(1), false, false)?, &[0, 1], &[3, 5])?,
        "logcumsumexp_rev_excl" => sl(&ops::logcumsumexp(&x[0], Some(1), true, false)?, &[0, 0], &[3, 4])?,
        "as_strided" => ops::as_strided(&x[0], &[4, 3], &[2, 1], 1)?,
        "as_strided_2d" => ops::as_strided(&x[0], &[2, 5], &[3, 1], 1)?,
        "dequantize" => ops::dequantize(&x[0], &x[1], Some(&x[2]), Some(32), Some(4), "affine", None, None)?,
        "quantize_scales" => ops::quantize(&x[0], Some(32), Some(4), "affine", None)?[1].clone(),
        "quantize_biases" => ops::quantize(&x[0], Some(32), Some(4), "affine", None)?[2].clone(),
        "quantize_both_8bit" => {
            let q = ops::quantize(&x[0], Some(64), Some(8), "affine", None)?;
            ops::concatenate(&[q[1].clone(), q[2].clone()], Some(1))?
        }
        other => panic!("unknown case {other}"),
    })
}

#[test]
fn more_rules_match_mlx() {
    // logcumsumexp, as_strided, dequantize and quantize (gen_grad_rules.py): MLX's rules and,
    // for quantize, the gradient of MLX's fallback.
    let golden = load("grad/grad_rules.json");
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let xs: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
        let argnums: Vec<usize> = c["argnums"].as_array().unwrap().iter().map(|a| a.as_u64().unwrap() as usize).collect();
        let w = array(&c["w"]);
        let f = |v: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&ops::multiply(&run_rules(name, v)?, &w)?, None, false)?]) };
        let (val, grads) = value_and_grad(&f, &xs, &argnums).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_matches(&format!("{name} value"), &val[0], &c["value"], 1e-4, 1e-5);
        let want: &Vec<J> = c["grads"].as_array().unwrap();
        assert_eq!(grads.len(), want.len(), "{name}");
        for (k, (g, w)) in grads.iter().zip(want).enumerate() {
            assert_matches(&format!("{name} grad {k}"), g, w, 1e-4, 1e-5);
        }
    }
}
