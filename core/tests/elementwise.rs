//! Unary, binary, where, astype, promotion and creation ops against real MLX 0.32 goldens
//! (core/tests/data/elementwise/gen_elementwise.py).

mod common;

use common::{array, assert_matches, load, tol};
use mlx_arm_core::dtype::promote_types;
use mlx_arm_core::ops::{self, binary::BinaryOp, unary::UnaryOp};
use mlx_arm_core::{Array, DType, Result, Value};
use serde_json::Value as J;

fn dtype(name: &str) -> DType {
    DType::from_name(name).unwrap()
}

fn run_case(case: &J) -> Option<Result<Vec<Array>>> {
    let inputs: Vec<Array> = case["inputs"].as_array().map(|v| v.iter().map(array).collect()).unwrap_or_default();
    let one = |r: Result<Array>| Some(r.map(|a| vec![a]));
    let f = |v: &J| v.as_f64().unwrap();
    let opt = |v: &J| v.as_u64().map(|x| x as usize);
    match case["kind"].as_str().unwrap() {
        "unary" => {
            let op = *UnaryOp::ALL.iter().find(|o| o.name() == case["op"]).unwrap();
            one(ops::unary::unary(op, &inputs[0]))
        }
        "unary_view" => {
            let a = &inputs[0];
            let v = match case["view"].as_str().unwrap() {
                "transpose" => ops::transpose(a, None).unwrap(),
                "slice_step2" => ops::slice(a, &[0, 0], &[3, 4], &[1, 2]).unwrap(),
                _ => unreachable!(),
            };
            let op = *UnaryOp::ALL.iter().find(|o| o.name() == case["op"]).unwrap();
            one(ops::unary::unary(op, &v))
        }
        "binary" => {
            let op = *BinaryOp::ALL.iter().find(|o| o.name() == case["op"]).unwrap();
            one(ops::binary::binary(op, &inputs[0], &inputs[1]))
        }
        "where" => one(ops::where_(&inputs[0], &inputs[1], &inputs[2])),
        "astype" => one(ops::astype(&inputs[0], dtype(case["to"].as_str().unwrap()))),
        "arange" => {
            let a = &case["args"];
            one(ops::arange(f(&a[0]), f(&a[1]), f(&a[2]), dtype(case["dtype"].as_str().unwrap())))
        }
        "linspace" => {
            let a = &case["args"];
            one(ops::linspace(f(&a[0]), f(&a[1]), a[2].as_i64().unwrap(), dtype(case["dtype"].as_str().unwrap())))
        }
        "eye" => {
            let a = &case["args"];
            one(ops::eye(opt(&a[0]).unwrap(), opt(&a[1]), a[2].as_i64().unwrap(), DType::Float32))
        }
        "tri" => {
            let a = &case["args"];
            one(ops::tri(opt(&a[0]).unwrap(), opt(&a[1]), a[2].as_i64().unwrap(), DType::Float32))
        }
        "meshgrid" => Some(ops::meshgrid(&inputs, case["sparse"].as_bool().unwrap(), case["indexing"].as_str().unwrap())),
        "full" => one(ops::full(&[2, 3], Value::F(2.5), DType::Float16)),
        "empty" => {
            let shape: Vec<usize> = case["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
            one(ops::empty(&shape, dtype(case["dtype"].as_str().unwrap())))
        }
        "empty_like" => one(ops::empty_like(&inputs[0], case["dtype"].as_str().map(dtype))),
        "clip" => {
            let b = |v: &J| v.as_f64().map(|x| Array::scalar(x as f32).unwrap());
            let (lo, hi) = (b(&case["lo"]), b(&case["hi"]));
            one(ops::clip(&inputs[0], lo.as_ref(), hi.as_ref()))
        }
        "isclose" => one(ops::isclose(&inputs[0], &inputs[1], 1e-5, 1e-8, case["equal_nan"].as_bool().unwrap())),
        "allclose" => one(ops::allclose(&inputs[0], &inputs[1], 1e-5, 1e-8, case["equal_nan"].as_bool().unwrap())),
        "array_equal" => one(ops::array_equal(&inputs[0], &inputs[1], case["equal_nan"].as_bool().unwrap())),
        "divmod" => Some(ops::divmod(&inputs[0], &inputs[1])),
        "logical_xor" => one(ops::logical_xor(&inputs[0], &inputs[1])),
        "nan_to_num" => one(ops::nan_to_num(&inputs[0], 0.0, None, None)),
        "nan_to_num_args" => one(ops::nan_to_num(&inputs[0], 1.5, Some(9.0), Some(-9.0))),
        "round_decimals" => one(ops::round_decimals(&inputs[0], case["decimals"].as_i64().unwrap() as i32)),
        _ => None,
    }
}

#[test]
fn promotion_table_matches_mlx() {
    let g = load("elementwise/elementwise.json");
    let mut bad = vec![];
    for c in g["cases"].as_array().unwrap().iter().filter(|c| c["kind"] == "promote") {
        let (a, b) = (dtype(c["a"].as_str().unwrap()), dtype(c["b"].as_str().unwrap()));
        let got = promote_types(a, b);
        if got.name() != c["result"].as_str().unwrap() {
            bad.push(format!("{a} + {b}: got {got}, MLX {}", c["result"]));
        }
    }
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn elementwise_and_creation_match_mlx() {
    let g = load("elementwise/elementwise.json");
    let mut bad = vec![];
    let mut checked = 0;
    for c in g["cases"].as_array().unwrap() {
        let Some(result) = run_case(c) else { continue };
        checked += 1;
        let what = format!("{} {} {} {}", c["kind"], c["op"], c["to"], c["inputs"].as_array().map(|v| v.iter().map(|x| x["dtype"].to_string()).collect::<Vec<_>>().join(",")).unwrap_or_default());
        let want: Vec<&J> = if let Some(o) = c.get("output") {
            vec![o]
        } else if let Some(o) = c.get("outputs") {
            o.as_array().unwrap().iter().collect()
        } else {
            // MLX raised: we must raise too.
            if let Ok(outs) = result.and_then(|o| { mlx_arm_core::eval(&o)?; Ok(o) }) {
                bad.push(format!("{what}: MLX raised {} but we returned {:?}", c["error"], outs));
            }
            continue;
        };
        match result {
            Err(e) => bad.push(format!("{what}: we raised {e}, MLX returned a value")),
            Ok(outs) => {
                for (o, w) in outs.iter().zip(want) {
                    // Real MLX's CPU computes float64 transcendentals in float32; we keep double
                    // precision (documented), so compare float64 at float32 tolerance.
                    let dt = w["dtype"].as_str().unwrap();
                    let (rtol, atol) = tol(if dt == "float64" { "float32" } else { dt });
                    // Transcendentals: MLX uses its own approximations; allow a few ulp.
                    let (rtol, atol) = (rtol * 8.0, atol * 8.0);
                    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_matches(&what, o, w, rtol, atol))) {
                        bad.push(p.downcast_ref::<String>().cloned().unwrap_or_default());
                    }
                }
            }
        }
    }
    assert!(checked > 1000);
    assert!(bad.is_empty(), "{} of {checked} cases differ from MLX:\n{}", bad.len(), bad.join("\n"));
}

/// astype between float32 and float16/bfloat16 runs on the `half` crate's slice conversions
/// (F16C / NEON): bit for bit what converting one element at a time gives, over f32 patterns
/// that hit every rounding case (ties, subnormal results, overflow to inf, inf, NaN), and
/// back from every 16-bit pattern; with 1 and 3 threads and a length with SIMD tails.
#[test]
fn half_casts_equal_the_per_element_conversion() {
    // Every 4099th f32 pattern plus the edges: about a million values.
    let mut xs: Vec<f32> = (0..=u32::MAX).step_by(4099).map(f32::from_bits).collect();
    xs.extend([0.0, -0.0, 65504.0, 65520.0, 65519.99, 5.96e-8, 2.98e-8, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1.0 + 1.0 / 2048.0]);
    let every16: Vec<u16> = (0..=u16::MAX).collect();
    for threads in [1usize, 3] {
        mlx_arm_core::parallel::set_num_threads(threads);
        let x = Array::from_slice(&xs, &[xs.len()]).unwrap();
        let h = ops::astype(&x, DType::Float16).unwrap().to_vec::<half::f16>().unwrap();
        let b = ops::astype(&x, DType::Bfloat16).unwrap().to_vec::<half::bf16>().unwrap();
        for (i, &v) in xs.iter().enumerate() {
            let (wh, wb) = (half::f16::from_f32(v), half::bf16::from_f32(v));
            assert!(h[i].to_bits() == wh.to_bits() || (h[i].is_nan() && wh.is_nan()), "f16 of {v:e}: {:#x} vs {:#x}", h[i].to_bits(), wh.to_bits());
            assert!(b[i].to_bits() == wb.to_bits() || (b[i].is_nan() && wb.is_nan()), "bf16 of {v:e}: {:#x} vs {:#x}", b[i].to_bits(), wb.to_bits());
        }
        let hs: Vec<half::f16> = every16.iter().map(|&u| half::f16::from_bits(u)).collect();
        let bs: Vec<half::bf16> = every16.iter().map(|&u| half::bf16::from_bits(u)).collect();
        let hf = ops::astype(&Array::from_slice(&hs, &[hs.len()]).unwrap(), DType::Float32).unwrap().to_vec::<f32>().unwrap();
        let bf = ops::astype(&Array::from_slice(&bs, &[bs.len()]).unwrap(), DType::Float32).unwrap().to_vec::<f32>().unwrap();
        for i in 0..every16.len() {
            let (wh, wb) = (hs[i].to_f32(), bs[i].to_f32());
            assert!(hf[i].to_bits() == wh.to_bits() || (hf[i].is_nan() && wh.is_nan()), "f32 of f16 {:#x}", every16[i]);
            assert!(bf[i].to_bits() == wb.to_bits() || (bf[i].is_nan() && wb.is_nan()), "f32 of bf16 {:#x}", every16[i]);
        }
    }
    mlx_arm_core::parallel::set_num_threads(0);
}
