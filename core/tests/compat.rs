//! Behaviours where mlx-arm differed from real MLX 0.32 in MLX's own Python tests (see
//! docs/COMPAT.md), checked against goldens from `data/compat/gen_compat.py` (real MLX):
//! complex refusals and values, complex max/min NaN propagation, bool views, roll's rules,
//! array-bound randint/truncated_normal and complex normal (bit-exact), gather_mm, qqmm and
//! the 32-bit shape-dimension overflow.

mod common;

use common::{array, assert_matches, load, tol};
use mlx_arm_core::ops::{self, random};
use mlx_arm_core::{Array, DType, ErrorKind};
use serde_json::Value as J;

fn key_of(c: &J) -> Array {
    let w: Vec<u32> = c["key"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
    Array::from_slice(&w, &[2]).unwrap()
}

fn opt_array(v: &J) -> Option<Array> {
    if v.is_null() {
        None
    } else {
        Some(array(v))
    }
}

/// Bit-exact at float32 precision: the 1e-12 only absorbs serde_json's last-bit error when
/// it parses a decimal double (far below one f32 ulp, 6e-8 relative).
fn exact(what: &str, got: &Array, want: &J) {
    assert_matches(what, got, want, 1e-12, 0.0);
}

#[test]
fn complex_refusals_match_mlx() {
    let g = load("compat/compat.json");
    let c = array(&g["complex_unary"]["input"]);
    for (name, want) in g["complex_refusals"]["unary"].as_object().unwrap() {
        let op = ops::UnaryOp::ALL.iter().find(|u| u.name() == name).unwrap();
        let got = ops::unary(*op, &c).and_then(|r| r.eval().map(|_| r));
        match want.as_str() {
            Some("ValueError") => assert_eq!(got.unwrap_err().kind, ErrorKind::InvalidArgument, "{name}"),
            _ => assert!(got.is_ok(), "{name}: {:?}", got.err()),
        }
    }
    for (name, want) in g["complex_refusals"]["binary"].as_object().unwrap() {
        let op = ops::BinaryOp::ALL.iter().find(|b| b.name() == name).unwrap();
        let got = ops::binary(*op, &c, &c).and_then(|r| r.eval().map(|_| r));
        match want.as_str() {
            Some("ValueError") => assert_eq!(got.unwrap_err().kind, ErrorKind::InvalidArgument, "{name}"),
            _ => assert!(got.is_ok(), "{name}: {:?}", got.err()),
        }
    }
}

#[test]
fn complex_values_match_mlx() {
    let g = load("compat/compat.json");
    let c = array(&g["complex_unary"]["input"]);
    let ops_j = &g["complex_unary"]["ops"];
    assert_matches("arctan", &ops::arctan(&c).unwrap(), &ops_j["arctan"], 2e-6, 1e-6);
    assert_matches("arctanh", &ops::arctanh(&c).unwrap(), &ops_j["arctanh"], 2e-6, 1e-6);
    let inf = array(&g["complex_inf"]["input"]);
    exact("isposinf", &ops::isposinf(&inf).unwrap(), &g["complex_inf"]["isposinf"]);
    exact("isneginf", &ops::isneginf(&inf).unwrap(), &g["complex_inf"]["isneginf"]);
}

#[test]
fn complex_max_min_propagate_nan() {
    let g = load("compat/compat.json");
    for c in g["complex_minmax"].as_array().unwrap() {
        let a = array(&c["input"]);
        let ax = [c["axis"].as_i64().unwrap() as isize];
        for (name, got) in [("max", ops::max(&a, Some(&ax), false)), ("min", ops::min(&a, Some(&ax), false))] {
            let got = got.unwrap();
            let isnan_got: Vec<bool> = ops::isnan(&got).unwrap().to_vec().unwrap();
            let want = array(&c[name]);
            let isnan_want: Vec<bool> = ops::isnan(&want).unwrap().to_vec().unwrap();
            // MLX's NaN payload differs by axis (nan+0j, nan+nanj): numpy's equal_nan only
            // asks that NaN stay NaN; the other elements must match exactly.
            assert_eq!(isnan_got, isnan_want, "{name} axis {ax:?}");
            let keep = ops::logical_not(&ops::isnan(&want).unwrap()).unwrap();
            let zero = ops::zeros_like(&want).unwrap();
            let g2 = ops::where_(&keep, &got, &zero).unwrap();
            let w2 = ops::where_(&keep, &want, &zero).unwrap();
            assert!(ops::array_equal(&g2, &w2, false).unwrap().to_vec::<bool>().unwrap()[0], "{name} axis {ax:?}");
        }
    }
}

#[test]
fn bool_view_keeps_bytes() {
    let g = load("compat/compat.json");
    let v = array(&g["bool_view"]["input"]);
    let t = ops::transpose(&v, None).unwrap();
    exact("T", &ops::view(&ops::view(&t, DType::Bool).unwrap(), DType::Int32).unwrap(), &g["bool_view"]["roundtrip_T"]);
    exact("plain", &ops::view(&ops::view(&v, DType::Bool).unwrap(), DType::Int16).unwrap(), &g["bool_view"]["roundtrip"]);
}

#[test]
fn roll_follows_mlx_rules() {
    let g = load("compat/compat.json");
    let x = array(&g["roll_input"]);
    for c in g["roll"].as_array().unwrap() {
        let shift: Vec<isize> = c["shift"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap() as isize).collect();
        let got = match c["axis_kind"].as_str().unwrap() {
            "none" => ops::roll(&x, &shift, None),
            "int" => ops::roll_summed(&x, &shift, c["axis"].as_i64().unwrap() as isize),
            _ => {
                let axes: Vec<isize> = c["axis"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap() as isize).collect();
                ops::roll(&x, &shift, Some(&axes))
            }
        };
        exact(&format!("roll {c}"), &got.unwrap(), &c["output"]);
    }
    // Fewer shifts than axes (and more than one) is MLX's error.
    assert!(ops::roll(&x, &[1, 2], Some(&[0, 1, 0])).is_err());
}

#[test]
fn random_array_bounds_are_bit_exact() {
    let g = load("compat/compat.json");
    for c in g["randint"].as_array().unwrap() {
        let shape: Vec<usize> = c["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        let dt = DType::from_name(c["dtype"].as_str().unwrap()).unwrap();
        let got = random::randint_bounds(&array(&c["low"]), &array(&c["high"]), &shape, dt, Some(&key_of(c))).unwrap();
        exact("randint", &got, &c["output"]);
    }
    for c in g["truncated_normal"].as_array().unwrap() {
        let shape: Option<Vec<usize>> =
            c["shape"].as_array().map(|s| s.iter().map(|d| d.as_u64().unwrap() as usize).collect());
        let dt = DType::from_name(c["dtype"].as_str().unwrap()).unwrap();
        let got = random::truncated_normal_bounds(&array(&c["lower"]), &array(&c["upper"]), shape.as_deref(), dt, Some(&key_of(c)))
            .unwrap();
        exact("truncated_normal", &got, &c["output"]);
    }
    for c in g["complex_normal"].as_array().unwrap() {
        let shape: Vec<usize> = c["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        let loc = opt_array(&c["loc"]).map(random::Param::Array);
        let scale = opt_array(&c["scale"]).map(random::Param::Array);
        let got = random::normal(&shape, DType::Complex64, loc, scale, Some(&key_of(c))).unwrap();
        exact("complex normal", &got, &c["output"]);
    }
}

#[test]
fn gather_mm_and_qqmm_match_mlx() {
    let g = load("compat/compat.json");
    for c in g["gather_mm"].as_array().unwrap() {
        let got = ops::gather_mm(
            &array(&c["a"]),
            &array(&c["b"]),
            opt_array(&c["lhs"]).as_ref(),
            opt_array(&c["rhs"]).as_ref(),
            false,
        )
        .unwrap();
        let (r, a) = tol("float32");
        assert_matches("gather_mm", &got, &c["output"], r * 10.0, a * 10.0);
    }
    for c in g["qqmm"].as_array().unwrap() {
        let mode = c["mode"].as_str().unwrap();
        let q = ops::quantize(&array(&c["w"]), None, None, mode, None).unwrap();
        let got = ops::qqmm(&array(&c["x"]), &q[0], Some(&q[1]), None, None, mode, None, None).unwrap();
        assert_matches(mode, &got, &c["output"], 1e-5, 1e-4);
        // MLX's CPU refuses several rows (`general_error`); here each row of a stack of the
        // golden's row equals MLX's result for it.
        let x = array(&c["x"]);
        let rows = ops::concatenate(&[x.clone(), x.clone(), x], Some(0)).unwrap();
        let got = ops::qqmm(&rows, &q[0], Some(&q[1]), None, None, mode, None, None).unwrap();
        for r in 0..3 {
            let row = ops::slice(&got, &[r, 0], &[r + 1, got.shape()[1] as isize], &[1, 1]).unwrap();
            assert_matches(mode, &row, &c["output"], 1e-5, 1e-4);
        }
    }
}

#[test]
fn dimensions_beyond_int32_overflow() {
    let g = load("compat/compat.json");
    assert_eq!(g["overflow"]["concatenate3"], "OverflowError");
    let big = ops::zeros(&[1 << 30], DType::Float32).unwrap();
    let e = ops::concatenate(&[big.clone(), big.clone(), big.clone()], Some(0)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overflow);
    assert!(e.msg.contains(&(3u64 << 30).to_string()), "{}", e.msg);
    let e = ops::repeat(&big, 2, Some(0)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overflow);
    assert!(e.msg.contains(&(2u64 << 30).to_string()), "{}", e.msg);
    let s = ops::zeros(&[1 << 16], DType::Float32).unwrap();
    let e = ops::kron(&s, &s).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overflow);
    assert!(e.msg.contains(&(1u64 << 32).to_string()), "{}", e.msg);
}
