//! CPU kernels of the matrix decompositions (`mx.linalg` inv, tri_inv, cholesky, qr, svd,
//! eigh, eig, lu). Each batch matrix is read as f64, decomposed by a pure-Rust kernel (no
//! LAPACK: this crate is `no_std`), and stored in the output dtype. A LAPACK-backed backend
//! can replace these by answering the same primitives.

pub mod cholesky;
pub mod eig;
pub mod eigh;
pub mod lu;
pub mod qr;

use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::element::Complex64;
use crate::error::{Error, Result};
use crate::ops::linalg::LinalgOp;
use alloc::format;
use alloc::vec::Vec;

/// Evaluates a decomposition primitive (`op` is one of the decomposition variants).
pub fn eval(op: &LinalgOp, a: &Array, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let nd = a.ndim();
    if nd < 2 {
        return Err(Error::runtime(name, "Decompositions need a matrix input."));
    }
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let x = if a.dtype() == DType::Complex64 { Vec::new() } else { crate::ops::astype(a, DType::Float64)?.to_vec::<f64>()? };
    let count: usize = a.shape()[..nd - 2].iter().product();
    let mats = (0..count).map(|b| &x[b * m * n..(b + 1) * m * n]);
    // One f64 buffer per real output; complex / index outputs are handled per variant.
    let mut outs: Vec<Vec<f64>> = alloc::vec![Vec::new(); outputs.len()];
    match op {
        LinalgOp::Inverse { tri, upper } => {
            for mat in mats {
                let inv = if *tri {
                    lu::tri_inverse(mat, n, *upper)
                } else {
                    lu::inverse(mat, n).map_err(|info| {
                        Error::runtime("Inverse::eval_cpu", format!("LU factorization failed with error code {info}"))
                    })?
                };
                outs[0].extend(inv);
            }
        }
        LinalgOp::Cholesky { upper } => {
            for mat in mats {
                outs[0].extend(cholesky::cholesky(mat, n, *upper));
            }
        }
        LinalgOp::Qr => {
            for mat in mats {
                let (q, r) = qr::qr(mat, m, n);
                outs[0].extend(q);
                outs[1].extend(r);
            }
        }
        LinalgOp::Svd if a.dtype() == DType::Complex64 => {
            let c = complex_input(a)?;
            let (mut u_all, mut s_all, mut vt_all) = (Vec::new(), Vec::new(), Vec::new());
            for b in 0..count {
                let (u, s, vt) = super::svd::svd(&c[b * m * n..(b + 1) * m * n], m, n);
                u_all.extend(u);
                s_all.extend(s);
                vt_all.extend(vt);
            }
            return Ok(alloc::vec![
                store_complex(&outputs[0], &u_all)?,
                store(meta(outputs, 1, name)?, &s_all)?,
                store_complex(meta(outputs, 2, name)?, &vt_all)?,
            ]);
        }
        LinalgOp::Svd => {
            for mat in mats {
                let (u, s, vt) = super::svd::svd(mat, m, n);
                outs[0].extend(u);
                outs[1].extend(s);
                outs[2].extend(vt);
            }
            // Zero-size matrices give identity U / Vᵀ (numpy's convention, as MLX): svd does.
        }
        LinalgOp::Eigh { lower, vectors } if a.dtype() == DType::Complex64 => {
            let c = complex_input(a)?;
            let mut vals = Vec::new();
            let mut vecs = Vec::new();
            for b in 0..count {
                let (w, v) = eigh::eigh_hermitian(&c[b * n * n..(b + 1) * n * n], n, *lower);
                vals.extend(w);
                vecs.extend(v);
            }
            let mut data = alloc::vec![store(&outputs[0], &vals)?];
            if *vectors {
                data.push(store_complex(meta(outputs, 1, name)?, &vecs)?);
            }
            return Ok(data);
        }
        LinalgOp::Eigh { lower, vectors } => {
            for mat in mats {
                let (w, v) = eigh::eigh(mat, n, *lower);
                outs[0].extend(w);
                if *vectors {
                    outs[1].extend(v);
                }
            }
        }
        LinalgOp::Eig { vectors } => {
            let mut vals = Vec::new();
            let mut vecs = Vec::new();
            let c = complex_input(a)?;
            for b in 0..count {
                let mat = &c[b * n * n..(b + 1) * n * n];
                let (w, v) = eig::eig(mat, n, *vectors)
                    .map_err(|_| Error::runtime("Eig::eval_cpu", "Eigenvalue decomposition failed to converge."))?;
                vals.extend(w);
                vecs.extend(v);
            }
            let mut data = alloc::vec![store_complex(&outputs[0], &vals)?];
            if *vectors {
                data.push(store_complex(meta(outputs, 1, name)?, &vecs)?);
            }
            return Ok(data);
        }
        LinalgOp::Lu => {
            let k = m.min(n);
            let mut pivots = Vec::new();
            let mut rows = Vec::new();
            for mat in mats {
                let mut f = mat.to_vec();
                let (piv, _) = lu::lu_in_place(&mut f, m, n);
                outs[0].extend(f);
                // The row permutation P (row i of P·A is row rows[i] of A), as MLX derives it.
                let mut idx: Vec<u32> = (0..m as u32).collect();
                for j in (0..k).rev() {
                    idx.swap(j, piv[j]);
                }
                pivots.extend(piv.iter().map(|&p| p as u32));
                rows.extend(idx);
            }
            return Ok(alloc::vec![
                store(&outputs[0], &outs[0])?,
                store_u32(meta(outputs, 1, name)?, &pivots)?,
                store_u32(meta(outputs, 2, name)?, &rows)?,
            ]);
        }
        _ => return Err(Error::runtime(name, "Not a decomposition.")),
    }
    outputs.iter().zip(&outs).map(|(o, v)| store(o, v)).collect()
}

/// The elements of a (real or complex64) input as complex f64 values.
fn complex_input(a: &Array) -> Result<Vec<eig::C>> {
    if a.dtype() == DType::Complex64 {
        Ok(a.to_vec::<Complex64>()?.iter().map(|z| eig::C::new(z.re as f64, z.im as f64)).collect())
    } else {
        Ok(crate::ops::astype(a, DType::Float64)?.to_vec::<f64>()?.iter().map(|&x| eig::C::new(x, 0.0)).collect())
    }
}

fn meta<'a>(outputs: &'a [OutMeta], i: usize, name: &'static str) -> Result<&'a OutMeta> {
    outputs.get(i).ok_or_else(|| Error::runtime(name, "Missing output."))
}

/// A float output from f64 values.
fn store((shape, dtype): &OutMeta, v: &[f64]) -> Result<Data> {
    let count: usize = shape.iter().product();
    if v.len() != count {
        return Err(Error::runtime("linalg", "Decomposition produced the wrong element count."));
    }
    let out = Data::alloc(shape, *dtype, "linalg")?;
    match dtype {
        // SAFETY: fresh buffer of `count` elements of the output dtype.
        DType::Float32 => unsafe { out.slice_mut::<f32>(count) }.iter_mut().zip(v).for_each(|(o, &x)| *o = x as f32),
        DType::Float64 => unsafe { out.slice_mut::<f64>(count) }.copy_from_slice(v),
        other => return Err(Error::unsupported("linalg", format!("Unsupported output type {other}."))),
    }
    Ok(out)
}

fn store_complex((shape, _): &OutMeta, v: &[eig::C]) -> Result<Data> {
    let count: usize = shape.iter().product();
    if v.len() != count {
        return Err(Error::runtime("linalg", "Decomposition produced the wrong element count."));
    }
    let out = Data::alloc(shape, DType::Complex64, "linalg")?;
    // SAFETY: fresh buffer of `count` complex64 elements.
    for (o, c) in unsafe { out.slice_mut::<Complex64>(count) }.iter_mut().zip(v) {
        *o = Complex64 { re: c.re as f32, im: c.im as f32 };
    }
    Ok(out)
}

fn store_u32((shape, _): &OutMeta, v: &[u32]) -> Result<Data> {
    let count: usize = shape.iter().product();
    if v.len() != count {
        return Err(Error::runtime("linalg", "Decomposition produced the wrong element count."));
    }
    let out = Data::alloc(shape, DType::Uint32, "linalg")?;
    // SAFETY: fresh buffer of `count` uint32 elements.
    unsafe { out.slice_mut::<u32>(count) }.copy_from_slice(v);
    Ok(out)
}
