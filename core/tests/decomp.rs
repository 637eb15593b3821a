//! mx.linalg's decompositions against real MLX 0.32 goldens (core/tests/data/decomp/
//! gen_decomp.py; MLX runs LAPACK). Unique results (inv, tri_inv, cholesky, QR and LU with
//! LAPACK's conventions, solve, pinv, det, singular/eigen values) are compared element-wise;
//! non-unique ones (singular and eigen vectors) by their defining identities. Tolerances:
//! float32 rtol = atol = 2e-4 (we compute in f64, MLX in f32 LAPACK), float64 1e-9.

mod common;

use common::{array, load, same_meta, values};

use mlx_arm_core::ops::linalg as la;
use mlx_arm_core::{ops, Array, Result};
use serde_json::Value as J;

fn run_case(op: &str, x: &[Array], args: &J) -> Result<Vec<Array>> {
    let up = args["upper"].as_bool().unwrap_or(false);
    let uplo = args["UPLO"].as_str().unwrap_or("L");
    let pair = |(a, b): (Array, Array)| vec![a, b];
    Ok(match op {
        "inv" => vec![la::inv(&x[0])?],
        "tri_inv" => vec![la::tri_inv(&x[0], up)?],
        "cholesky" => vec![la::cholesky(&x[0], up)?],
        "cholesky_inv" => vec![la::cholesky_inv(&x[0], up)?],
        "solve_triangular" => vec![la::solve_triangular(&x[0], &x[1], up)?],
        "solve" => vec![la::solve(&x[0], &x[1])?],
        "qr" => pair(la::qr(&x[0])?),
        "lu" => la::lu(&x[0])?,
        "lu_factor" => pair(la::lu_factor(&x[0])?),
        "svd" => la::svd(&x[0], true)?,
        "svd_values" => la::svd(&x[0], false)?,
        "pinv" => vec![la::pinv(&x[0])?],
        "eigh" => pair(la::eigh(&x[0], uplo)?),
        "eigvalsh" => vec![la::eigvalsh(&x[0], uplo)?],
        "eig" => pair(la::eig(&x[0])?),
        "eigvals" => vec![la::eigvals(&x[0])?],
        "det" => vec![la::det(&x[0])?],
        "slogdet" => pair(la::slogdet(&x[0])?),
        o => panic!("unknown op {o}"),
    })
}

fn tol(dtype: &str) -> f64 {
    if dtype == "float64" { 1e-9 } else { 2e-4 }
}

fn close(name: &str, got: &[(f64, f64)], want: &[(f64, f64)], t: f64) -> std::result::Result<(), String> {
    common::close_values(name, got, want, t)
}

fn mm(a: &Array, b: &Array) -> Array {
    let c = ops::astype(a, mlx_arm_core::DType::Complex64).unwrap();
    let d = ops::astype(b, mlx_arm_core::DType::Complex64).unwrap();
    ops::matmul(&c, &d).unwrap()
}

/// Checks the identities of non-unique outputs.
fn recon(name: &str, op: &str, x: &Array, got: &[Array], want: &[J], upper: bool, t: f64) -> std::result::Result<(), String> {
    let sorted = |mut v: Vec<(f64, f64)>| {
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        v
    };
    // Eigen-pairs are compared per batch after sorting; a batch holds n values.
    let batch_sorted = |v: Vec<(f64, f64)>, n: usize| -> Vec<(f64, f64)> {
        if n == 0 { return v; }
        v.chunks(n).flat_map(|c| sorted(c.to_vec())).collect()
    };
    let n = x.shape()[x.ndim() - 1];
    match op {
        "svd" => {
            let (u, s, vt) = (&got[0], &got[1], &got[2]);
            close(&format!("{name} S"), &values(s), &values(&array(&want[1])), t)?;
            let k = s.shape()[s.ndim() - 1];
            let m = x.shape()[x.ndim() - 2];
            let nd = x.ndim() as isize;
            let uk = ops::slice(u, &vec![0; nd as usize], &x.shape()[..x.ndim() - 2].iter().map(|&d| d as isize).chain([m as isize, k as isize]).collect::<Vec<_>>(), &vec![1; nd as usize]).unwrap();
            let vk = ops::slice(vt, &vec![0; nd as usize], &x.shape()[..x.ndim() - 2].iter().map(|&d| d as isize).chain([k as isize, n as isize]).collect::<Vec<_>>(), &vec![1; nd as usize]).unwrap();
            let us = ops::multiply(&uk, &ops::expand_dims(s, &[-2]).unwrap()).unwrap();
            close(&format!("{name} USVt"), &values(&ops::matmul(&us, &vk).unwrap()), &values(x), t)?;
            let eye = |d: usize| ops::broadcast_to(&ops::eye(d, None, 0, u.dtype()).unwrap(), &[&x.shape()[..x.ndim() - 2], &[d, d]].concat()).unwrap();
            close(&format!("{name} UᵀU"), &values(&ops::matmul(&ops::swapaxes(u, -1, -2).unwrap(), u).unwrap()), &values(&eye(m)), t)?;
            close(&format!("{name} VVᵀ"), &values(&ops::matmul(vt, &ops::swapaxes(vt, -1, -2).unwrap()).unwrap()), &values(&eye(n)), t)
        }
        "eigh" | "eig" | "eigvals" => {
            let w = &got[0];
            let (gw, ww) = (values(w), values(&array(&want[0])));
            if op == "eigh" {
                close(&format!("{name} w"), &gw, &ww, t)?;
            } else {
                close(&format!("{name} w"), &batch_sorted(gw, n), &batch_sorted(ww, n), t * 10.0)?;
            }
            if op == "eigvals" {
                return Ok(());
            }
            // A·V = V·diag(w), with A the symmetric matrix of the chosen triangle for eigh.
            let a = if op == "eigh" {
                let l = if upper { ops::triu(x, 1).unwrap() } else { ops::tril(x, -1).unwrap() };
                ops::add(&ops::add(&l, &ops::conjugate(&ops::swapaxes(&l, -1, -2).unwrap()).unwrap()).unwrap(), &ops::multiply(x, &ops::eye(n, None, 0, x.dtype()).unwrap()).unwrap()).unwrap()
            } else {
                x.clone()
            };
            let v = &got[1];
            let lhs = mm(&a, v);
            let rhs = ops::multiply(&ops::astype(v, mlx_arm_core::DType::Complex64).unwrap(), &ops::expand_dims(&ops::astype(w, mlx_arm_core::DType::Complex64).unwrap(), &[-2]).unwrap()).unwrap();
            close(&format!("{name} AV=VΛ"), &values(&lhs), &values(&rhs), t * 10.0)
        }
        o => panic!("no identity check for {o}"),
    }
}

#[test]
fn decompositions_match_mlx() {
    let golden = load("decomp/decomp.json");
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
                let t = tol(want[0]["dtype"].as_str().unwrap());
                let meta: std::result::Result<(), String> =
                    g.iter().zip(&want).try_for_each(|(a, w)| same_meta(name, a, w));
                meta.and_then(|()| {
                    if g.len() != want.len() {
                        return Err(format!("{name}: {} outputs, want {}", g.len(), want.len()));
                    }
                    if c["check"] == "recon" {
                        recon(name, op, &inputs[0], &g, &want, c["args"]["UPLO"] == "U", t)
                    } else {
                        g.iter().zip(&want).try_for_each(|(a, w)| close(name, &values(a), &values(&array(w)), t))
                    }
                })
            }
            (Ok(_), Some(e)) => Err(format!("{name}: expected {e}, got a result")),
            (Err(e), None) => Err(format!("{name}: unexpected error {e}")),
            (Err(e), Some(w)) => common::expect_mlx_error(name, &e, w, c),
        };
        if let Err(e) = res {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
