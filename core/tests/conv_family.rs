//! conv3d, conv_transpose1d/2d/3d and convolve against real MLX 0.32 goldens
//! (core/tests/data/conv_family/gen_conv_family.py): values over strides, paddings, dilations, output
//! paddings, groups and odd sizes, dtype promotion, and MLX's error kinds and messages.

mod common;

use common::{array, assert_outputs, load, tol};
use mlx_arm_core::{ops, Array, ErrorKind, Result};
use serde_json::Value as J;

/// A per-axis argument list of the case as isize values.
fn list(a: &J, k: &str) -> Vec<isize> {
    a[k].as_array().unwrap().iter().map(|x| x.as_i64().unwrap() as isize).collect()
}

fn run_case(c: &J) -> Result<Array> {
    let ins: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
    let a = &c["args"];
    let g = || a["groups"].as_i64().unwrap() as isize;
    let (x, w) = (&ins[0], ins.get(1));
    match c["op"].as_str().unwrap() {
        "conv3d" => {
            let t = |v: Vec<isize>| (v[0], v[1], v[2]);
            ops::conv3d(x, w.unwrap(), t(list(a, "stride")), t(list(a, "padding")), t(list(a, "dilation")), g())
        }
        "conv_transpose1d" => {
            let (s, p, d, o) = (list(a, "stride"), list(a, "padding"), list(a, "dilation"), list(a, "output_padding"));
            ops::conv_transpose1d(x, w.unwrap(), s[0], p[0], d[0], o[0], g())
        }
        "conv_transpose2d" => {
            let t = |k: &str| {
                let v = list(a, k);
                (v[0], v[1])
            };
            ops::conv_transpose2d(x, w.unwrap(), t("stride"), t("padding"), t("dilation"), t("output_padding"), g())
        }
        "conv_transpose3d" => {
            let t = |k: &str| {
                let v = list(a, k);
                (v[0], v[1], v[2])
            };
            ops::conv_transpose3d(x, w.unwrap(), t("stride"), t("padding"), t("dilation"), t("output_padding"), g())
        }
        "convolve" => ops::convolve(x, w.unwrap(), a["mode"].as_str().unwrap()),
        other => panic!("unknown op {other}"),
    }
}

/// MLX 0.32's exception type for a core error kind. MLX reads the transposed convolution's
/// spatial sizes before checking ndim, so too few axes there is its (internal) IndexError.
fn kind_of(py: &str) -> ErrorKind {
    match py {
        "ValueError" => ErrorKind::InvalidArgument,
        "IndexError" => ErrorKind::Index,
        other => panic!("unexpected oracle error {other}"),
    }
}

/// Same error as MLX: kind, and for ValueErrors the message (MLX omits the `[conv]` tag on
/// one of its group messages; the core tags every message with its op).
fn same_error(e: &mlx_arm_core::Error, py: &str, msg: &str) -> bool {
    let text = e.to_string();
    e.kind == kind_of(py) && (py == "IndexError" || text == msg || text == format!("[{}] {msg}", e.op))
}

fn check(c: &J) -> std::result::Result<(), String> {
    let got = run_case(c).and_then(|v| v.eval().map(|_| v));
    match (got, c.get("error")) {
        (Err(e), Some(err)) if same_error(&e, err.as_str().unwrap(), c["message"].as_str().unwrap()) => Ok(()),
        (Err(e), Some(err)) => Err(format!("error {e:?}, MLX {err} ({})", c["message"])),
        (Err(e), None) => Err(format!("unexpected error {e:?}")),
        (Ok(_), Some(err)) => Err(format!("expected {err}: {}", c["message"])),
        (Ok(v), None) => {
            // Sums of up to ~60 products in another order than MLX's kernel: float32 within a
            // few ulps of the sum's magnitude; half types rounded once here (float32 inside).
            let tol_of = |dt: &str| match dt {
                "float32" => (1e-5, 1e-5),
                "float16" | "bfloat16" => (tol(dt).0 * 2.0, 1e-2),
                _ => tol(dt),
            };
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_outputs(&[v], c, tol_of)))
                .map_err(|e| e.downcast_ref::<String>().cloned().unwrap_or_default())?
        }
    }
}

#[test]
fn conv_family_matches_mlx() {
    let g = load("conv_family/conv_family.json");
    let cases = g["cases"].as_array().unwrap();
    let bad: Vec<String> =
        cases.iter().filter_map(|c| check(c).err().map(|e| format!("{}: {e}", c["name"].as_str().unwrap()))).collect();
    assert!(bad.is_empty(), "{} of {} cases differ:\n{}", bad.len(), cases.len(), bad.join("\n"));
}

/// A transposed convolution is the adjoint of the convolution with the same parameters:
/// <conv(x, w), y> = <x, conv_transpose(y, w)> for any x, y (hand identity, no golden).
#[test]
fn conv_transpose_is_adjoint_of_conv() {
    let x = ops::reshape(&ops::sin(&ops::arange(0.0, 1.0 * 7.0 * 3.0, 1.0, mlx_arm_core::DType::Float32).unwrap()).unwrap(), &[1, 7, 3]).unwrap();
    let w = ops::reshape(&ops::cos(&ops::arange(0.0, 4.0 * 3.0 * 3.0, 1.0, mlx_arm_core::DType::Float32).unwrap()).unwrap(), &[4, 3, 3]).unwrap();
    // conv_transpose takes weight [C_out', K, C_in'] with C_in' = 4 (the conv's output channels).
    let wt = ops::transpose(&w, Some(&[2, 1, 0])).unwrap();
    let y = ops::conv1d(&x, &w, 2, 1, 1, 1).unwrap();
    let r = ops::reshape(&ops::cos(&ops::arange(0.0, y.size() as f64, 1.0, mlx_arm_core::DType::Float32).unwrap()).unwrap(), &[1, y.shape()[1] as isize, 4]).unwrap();
    let xt = ops::conv_transpose1d(&r, &wt, 2, 1, 1, 0, 1).unwrap();
    assert_eq!(xt.shape(), x.shape());
    let lhs: f32 = ops::sum(&ops::multiply(&y, &r).unwrap(), None, false).unwrap().to_vec::<f32>().unwrap()[0];
    let rhs: f32 = ops::sum(&ops::multiply(&x, &xt).unwrap(), None, false).unwrap().to_vec::<f32>().unwrap()[0];
    assert!((lhs - rhs).abs() < 1e-4 * lhs.abs().max(1.0), "{lhs} vs {rhs}");
}
