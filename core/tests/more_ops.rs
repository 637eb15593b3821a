//! The more-ops area against real MLX 0.32 goldens (core/tests/data/more_ops/gen_more_ops.py):
//! complex64 `linalg.svd` (with the norm / pinv paths on top of it), `unique`,
//! `fast.cross_entropy`, `segmented_mm`, `block_masked_mm` (values, dtypes, shapes, error
//! kinds and exact messages). Unique outputs (singular
//! values, norms, errors) are compared element-wise; U / Vt, unique only up to a phase per
//! singular vector, by their defining identities: `A = U·diag(S)·Vt`, `Uᴴ·U = I`,
//! `Vt·Vtᴴ = I`. Singular values are also compared with numpy.linalg.svd (complex128) stored
//! in the golden. Tolerance 2e-4 (rtol = atol): we compute in f64, MLX in f32 LAPACK.

mod common;

use common::{array, load, same_meta, values};

use mlx_arm_core::ops::linalg as la;
use mlx_arm_core::{ops, Array, DType, Result};
use serde_json::Value as J;

const TOL: f64 = 2e-4;

fn run_case(op: &str, x: &[Array], args: &J) -> Result<Vec<Array>> {
    Ok(match op {
        "svd" => la::svd(&x[0], true)?,
        "svd_values" => la::svd(&x[0], false)?,
        "pinv" => vec![la::pinv(&x[0])?],
        "norm" => {
            let ord = match &args["ord"] {
                J::String(s) if s == "nuc" => la::NormOrd::Nuc,
                J::String(_) => la::NormOrd::Fro,
                v => la::NormOrd::Num(v.as_f64().unwrap()),
            };
            let axes: Option<Vec<isize>> =
                args["axis"].as_array().map(|v| v.iter().map(|d| d.as_i64().unwrap() as isize).collect());
            vec![la::norm(&x[0], Some(ord), axes.as_deref(), args["keepdims"].as_bool().unwrap_or(false))?]
        }
        "unique" => {
            let fill = match &args["fill_value"] {
                J::Null => None,
                J::String(_) => Some(x[1].clone()),
                v => Some(Array::scalar(v.as_f64().unwrap())?),
            };
            let flag = |k: &str| args[k].as_bool().unwrap();
            ops::unique(&x[0], args["size"].as_i64().unwrap(), flag("return_index"), flag("return_inverse"), flag("return_counts"), fill.as_ref())?
        }
        "cross_entropy" => vec![ops::cross_entropy::cross_entropy(&x[0], &x[1])?],
        "segmented_mm" => vec![ops::segmented_mm(&x[0], &x[1], &x[2])?],
        "block_masked_mm" => {
            let names: Vec<&str> = args["masks"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
            let mask = |n: &str| names.iter().position(|&m| m == n).map(|i| x[2 + i].clone());
            let (o, l, r) = (mask("mask_out"), mask("mask_lhs"), mask("mask_rhs"));
            vec![ops::block_masked_mm(&x[0], &x[1], args["block_size"].as_i64().unwrap(), o.as_ref(), l.as_ref(), r.as_ref())?]
        }
        o => panic!("unknown op {o}"),
    })
}

/// Element-wise comparison at `TOL` (float16 results: 2e-3, MLX reduces in float16 too but
/// in its own order). Integers, bool and exact values compare equal at any tolerance.
fn close(name: &str, got: &[(f64, f64)], want: &[(f64, f64)]) -> std::result::Result<(), String> {
    close_at(name, got, want, TOL)
}

fn close_at(name: &str, got: &[(f64, f64)], want: &[(f64, f64)], tol: f64) -> std::result::Result<(), String> {
    common::close_values(name, got, want, tol)
}

/// The conjugate transpose of the last two axes.
fn adjoint(a: &Array) -> Array {
    ops::conjugate(&ops::swapaxes(a, -1, -2).unwrap()).unwrap()
}

/// S against MLX and numpy; A = U·diag(S)·Vt; U and Vt unitary.
fn check_svd(name: &str, x: &Array, got: &[Array], c: &J) -> std::result::Result<(), String> {
    let (u, s, vt) = (&got[0], &got[1], &got[2]);
    close(&format!("{name} S vs MLX"), &values(s), &values(&array(&c["outputs"][1])))?;
    close(&format!("{name} S vs numpy"), &values(s), &values(&array(&c["numpy_s"])))?;
    let nd = x.ndim();
    let (m, n, k) = (x.shape()[nd - 2], x.shape()[nd - 1], s.shape()[s.ndim() - 1]);
    let batch: Vec<isize> = x.shape()[..nd - 2].iter().map(|&d| d as isize).collect();
    let end = |r: usize, c: usize| batch.iter().copied().chain([r as isize, c as isize]).collect::<Vec<_>>();
    let uk = ops::slice(u, &vec![0; nd], &end(m, k), &vec![1; nd]).unwrap();
    let vk = ops::slice(vt, &vec![0; nd], &end(k, n), &vec![1; nd]).unwrap();
    let us = ops::multiply(&uk, &ops::expand_dims(s, &[-2]).unwrap()).unwrap();
    close(&format!("{name} U·S·Vt"), &values(&ops::matmul(&us, &vk).unwrap()), &values(x))?;
    let eye = |d: usize| {
        let shape = [&x.shape()[..nd - 2], &[d, d]].concat();
        ops::broadcast_to(&ops::eye(d, None, 0, DType::Complex64).unwrap(), &shape).unwrap()
    };
    close(&format!("{name} UᴴU"), &values(&ops::matmul(&adjoint(u), u).unwrap()), &values(&eye(m)))?;
    close(&format!("{name} Vt·Vtᴴ"), &values(&ops::matmul(vt, &adjoint(vt)).unwrap()), &values(&eye(n)))
}

#[test]
fn more_ops_match_mlx() {
    let golden = load("more_ops/more_ops.json");
    let cases = golden["cases"].as_array().unwrap();
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let op = c["op"].as_str().unwrap();
        let inputs: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
        let got = common::evaluated(run_case(op, &inputs, &c["args"]));
        let want = common::wanted_outputs(c);
        let res = match (got, c.get("error")) {
            (Ok(g), None) => {
                let meta: std::result::Result<(), String> =
                    g.iter().zip(&want).try_for_each(|(a, w)| same_meta(name, a, w));
                meta.and_then(|()| {
                    if g.len() != want.len() {
                        Err(format!("{name}: {} outputs, want {}", g.len(), want.len()))
                    } else if c["check"] == "numpy" {
                        close_at(name, &values(&g[0]), &values(&array(&c["numpy_output"])), 2e-3)
                    } else if c["check"] == "recon" {
                        check_svd(name, &inputs[0], &g, c)
                    } else {
                        let f16 = c["inputs"].as_array().unwrap().iter().any(|i| i["dtype"] == "float16");
                        let t = if f16 { 2e-3 } else { TOL };
                        g.iter().zip(&want).try_for_each(|(a, w)| close_at(name, &values(a), &values(&array(w)), t))
                    }
                })
            }
            (Ok(_), Some(e)) => Err(format!("{name}: expected {e}, got a result")),
            (Err(e), None) => Err(format!("{name}: unexpected error {e}")),
            // A RuntimeError is raised at evaluation by MLX; by this core when the op is built.
            (Err(e), Some(w)) => common::expect_mlx_error(name, &e, w, c),
        };
        if let Err(e) = res {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
