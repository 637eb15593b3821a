//! Shared test helpers: decode golden arrays written by core/tests/data/golden.py (real MLX
//! outputs) and compare our results against them.
#![allow(dead_code)]

use mlx_arm_core::{ops, Array, Complex64, DType};
use serde_json::Value as J;

/// Loads `core/tests/data/<rel>` as JSON.
pub fn load(rel: &str) -> J {
    let path = format!("{}/tests/data/{}", env!("CARGO_MANIFEST_DIR"), rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn num(v: &J) -> f64 {
    match v {
        J::Number(n) => n.as_f64().unwrap(),
        J::String(s) if s == "nan" => f64::NAN,
        J::String(s) if s == "inf" => f64::INFINITY,
        J::String(s) if s == "-inf" => f64::NEG_INFINITY,
        J::Bool(b) => *b as u8 as f64,
        other => panic!("not a number: {other}"),
    }
}

/// Decodes `{"dtype", "shape", "data"}` into an evaluated array.
pub fn array(v: &J) -> Array {
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    let shape: Vec<usize> = v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data = v["data"].as_array().unwrap();
    macro_rules! ints {
        ($t:ty) => {
            Array::from_slice(&data.iter().map(|x| x.as_i64().map(|i| i as $t).unwrap_or_else(|| x.as_u64().unwrap() as $t)).collect::<Vec<$t>>(), &shape)
        };
    }
    let a = match dtype {
        DType::Bool => Array::from_slice(&data.iter().map(|x| x.as_bool().unwrap()).collect::<Vec<_>>(), &shape),
        DType::Uint8 => ints!(u8),
        DType::Uint16 => ints!(u16),
        DType::Uint32 => ints!(u32),
        DType::Uint64 => ints!(u64),
        DType::Int8 => ints!(i8),
        DType::Int16 => ints!(i16),
        DType::Int32 => ints!(i32),
        DType::Int64 => ints!(i64),
        DType::Float16 => Array::from_slice(&data.iter().map(|x| half::f16::from_f64(num(x))).collect::<Vec<_>>(), &shape),
        DType::Bfloat16 => Array::from_slice(&data.iter().map(|x| half::bf16::from_f64(num(x))).collect::<Vec<_>>(), &shape),
        DType::Float32 => Array::from_slice(&data.iter().map(|x| num(x) as f32).collect::<Vec<_>>(), &shape),
        DType::Float64 => Array::from_slice(&data.iter().map(num).collect::<Vec<_>>(), &shape),
        DType::Complex64 => Array::from_slice(
            &data.iter().map(|x| Complex64::new(num(&x[0]) as f32, num(&x[1]) as f32)).collect::<Vec<_>>(),
            &shape,
        ),
    };
    a.unwrap()
}

/// Our array's elements as f64 pairs (re, im), for comparison.
pub fn values(a: &Array) -> Vec<(f64, f64)> {
    let bytes_dtype = a.dtype();
    let f = |v: mlx_arm_core::Value| match v {
        mlx_arm_core::Value::C(re, im) => (re as f64, im as f64),
        other => (other.as_f64(), 0.0),
    };
    mlx_arm_core::dispatch_all!(bytes_dtype, T => {
        use mlx_arm_core::Element;
        a.to_vec::<T>().unwrap().into_iter().map(|x| f(x.to_value())).collect()
    })
}

fn expected_values(v: &J) -> Vec<(f64, f64)> {
    let complex = v["dtype"].as_str() == Some("complex64");
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| if complex { (num(&x[0]), num(&x[1])) } else { (num(x), 0.0) })
        .collect()
}

fn close(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs()
}

/// Asserts dtype, shape and values (NaN equals NaN; infinities must match exactly).
pub fn assert_matches(what: &str, got: &Array, want: &J, rtol: f64, atol: f64) {
    assert_eq!(got.dtype().name(), want["dtype"].as_str().unwrap(), "{what}: dtype");
    let shape: Vec<usize> = want["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    assert_eq!(got.shape(), &shape[..], "{what}: shape");
    let (g, w) = (values(got), expected_values(want));
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        assert!(
            close(x.0, y.0, rtol, atol) && close(x.1, y.1, rtol, atol),
            "{what}: element {i}: got {x:?}, want {y:?}"
        );
    }
}

/// Default tolerances for a dtype: exact for integers/bool, ulp-scale for floats.
pub fn tol(dtype: &str) -> (f64, f64) {
    match dtype {
        "float16" => (2e-3, 1e-4),
        "bfloat16" => (1.6e-2, 1e-3),
        "float32" | "complex64" => (2e-6, 1e-7),
        "float64" => (1e-12, 1e-14),
        _ => (0.0, 0.0),
    }
}

/// The input view a golden case names (`"view"`): none, a transpose, or every second element
/// of the last axis — non-contiguous inputs for the kernels.
pub fn view(a: &Array, v: &J) -> Array {
    match v.as_str() {
        None => a.clone(),
        Some("transpose") => ops::transpose(a, None).unwrap(),
        Some("slice_step2") => {
            let nd = a.ndim();
            let stop: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
            let mut step = vec![1isize; nd];
            step[nd - 1] = 2;
            ops::slice(a, &vec![0; nd], &stop, &step).unwrap()
        }
        Some(o) => panic!("unknown view {o}"),
    }
}

/// Compares a case's outputs with its golden `output` (or `outputs` for several), each at the
/// tolerance `tol_of(dtype)`. A wrong count is an `Err`; a wrong value panics (`assert_matches`).
#[allow(dead_code)] // not every test file uses every helper
pub fn assert_outputs(got: &[Array], c: &J, tol_of: impl Fn(&str) -> (f64, f64)) -> Result<(), String> {
    let want: Vec<&J> = match c.get("outputs") {
        Some(o) => o.as_array().unwrap().iter().collect(),
        None => vec![&c["output"]],
    };
    if want.len() != got.len() {
        return Err(format!("{} outputs, want {}", got.len(), want.len()));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let (rt, at) = tol_of(w["dtype"].as_str().unwrap());
        assert_matches(&format!("output {k}"), g, w, rt, at);
    }
    Ok(())
}

/// A golden error case: `want` is the exception real MLX raised (`"RuntimeError"` is an error
/// at evaluation, anything else an invalid argument) and `c["message"]` its exact text.
pub fn expect_mlx_error(name: &str, e: &mlx_arm_core::Error, want: &J, c: &J) -> Result<(), String> {
    use mlx_arm_core::error::ErrorKind;
    let kind = match want.as_str().unwrap() {
        "RuntimeError" => ErrorKind::Runtime,
        _ => ErrorKind::InvalidArgument,
    };
    if e.kind != kind || e.to_string() != c["message"].as_str().unwrap() {
        Err(format!("{name}: error {:?} '{e}', want {want} '{}'", e.kind, c["message"]))
    } else {
        Ok(())
    }
}

/// A golden case's outputs, each evaluated: an error at evaluation counts as the op's error
/// (MLX raises some only when evaluating).
pub fn evaluated(got: mlx_arm_core::Result<Vec<Array>>) -> mlx_arm_core::Result<Vec<Array>> {
    let v = got?;
    for a in &v {
        a.eval()?;
    }
    Ok(v)
}

/// A golden case's expected outputs: its `outputs` list, or its one `output`.
pub fn wanted_outputs(c: &J) -> Vec<J> {
    match (&c["outputs"], &c["output"]) {
        (J::Array(v), _) => v.clone(),
        (_, J::Object(_)) => vec![c["output"].clone()],
        _ => vec![],
    }
}

/// `got` against `want` element by element (real, imaginary) within `tol` absolute plus `tol`
/// relative; NaN matches NaN.
pub fn close_values(name: &str, got: &[(f64, f64)], want: &[(f64, f64)], tol: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{name}: {} values, want {}", got.len(), want.len()));
    }
    for (i, (x, y)) in got.iter().zip(want).enumerate() {
        let ok = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol + tol * b.abs();
        if !(ok(x.0, y.0) && ok(x.1, y.1)) {
            return Err(format!("{name}: element {i}: got {x:?}, want {y:?}"));
        }
    }
    Ok(())
}

/// `got`'s dtype and shape against a golden output's `dtype` and `shape`.
pub fn same_meta(name: &str, got: &Array, want: &J) -> Result<(), String> {
    let shape: Vec<usize> = want["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    if got.dtype().name() != want["dtype"].as_str().unwrap() || got.shape() != shape.as_slice() {
        return Err(format!("{name}: {} {:?}, want {} {shape:?}", got.dtype().name(), got.shape(), want["dtype"]));
    }
    Ok(())
}
