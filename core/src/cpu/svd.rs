//! The SVD by one-sided Jacobi rotations, in f64: small, dependency-free and accurate to
//! working precision (`linalg.norm` with ord 2, -2, 'nuc' needs the values; `linalg.svd`,
//! `pinv` and `random.multivariate_normal` the vectors too). Real MLX calls LAPACK's `gesdd`
//! here; a blocked or LAPACK-backed SVD can replace this kernel in a backend.

use alloc::vec::Vec;

/// Sweeps before giving up; Jacobi converges quadratically, far sooner for any real input.
const MAX_SWEEPS: usize = 60;

/// One-sided Jacobi: rotates pairs of columns of `c` until they are mutually orthogonal,
/// applying each rotation to the same pair of columns of `v` too (when given: accumulating
/// `V`). Afterwards the column norms of `c` are the singular values.
fn orthogonalize(c: &mut [Vec<f64>], mut v: Option<&mut [Vec<f64>]>) {
    let k = c.len();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..k {
            for q in p + 1..k {
                let (alpha, beta, gamma) = c[p].iter().zip(&c[q]).fold((0.0, 0.0, 0.0), |(a, b, g), (&x, &y)| {
                    (a + x * x, b + y * y, g + x * y)
                });
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * libm::sqrt(alpha * beta) {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + libm::sqrt(1.0 + zeta * zeta));
                let cs = 1.0 / libm::sqrt(1.0 + t * t);
                let sn = cs * t;
                rotate(c, p, q, cs, sn);
                if let Some(v) = v.as_deref_mut() {
                    rotate(v, p, q, cs, sn);
                }
            }
        }
        if !rotated {
            break;
        }
    }
}

/// Columns `p < q` of `cols` become `cs·x − sn·y` and `sn·x + cs·y`.
fn rotate(cols: &mut [Vec<f64>], p: usize, q: usize, cs: f64, sn: f64) {
    let (lo, hi) = cols.split_at_mut(q);
    for (x, y) in lo[p].iter_mut().zip(hi[0].iter_mut()) {
        let (u, w) = (*x, *y);
        *x = cs * u - sn * w;
        *y = sn * u + cs * w;
    }
}

/// Singular values of the row-major `rows × cols` matrix `a`, descending.
pub fn singular_values(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    // Work on columns of the taller orientation: k columns of length len.
    let (len, k) = if rows >= cols { (rows, cols) } else { (cols, rows) };
    let mut c: Vec<Vec<f64>> = (0..k)
        .map(|j| (0..len).map(|i| if rows >= cols { a[i * cols + j] } else { a[j * cols + i] }).collect())
        .collect();
    orthogonalize(&mut c, None);
    let mut s: Vec<f64> = c.iter().map(|col| libm::sqrt(col.iter().map(|x| x * x).sum())).collect();
    s.sort_by(|a, b| b.total_cmp(a));
    s
}

/// Full SVD of the row-major `rows × cols` matrix `a`: `U` (`rows × rows`), the singular values
/// (descending, `min(rows, cols)`) and `Vᵀ` (`cols × cols`), all row-major, `A = U·diag(S)·Vᵀ`.
pub fn svd(a: &[f64], rows: usize, cols: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    if rows < cols {
        // Aᵀ = U'·S·V'ᵀ gives A = V'·S·U'ᵀ.
        let t: Vec<f64> = (0..rows * cols).map(|q| a[(q % rows) * cols + q / rows]).collect();
        let (u, s, vt) = svd(&t, cols, rows);
        let transpose = |m: &[f64], n: usize| (0..n * n).map(|q| m[(q % n) * n + q / n]).collect::<Vec<f64>>();
        return (transpose(&vt, rows), s, transpose(&u, cols));
    }
    let (m, n) = (rows, cols);
    // Columns of A (length m) and of V (length n), rotated together.
    let mut c: Vec<Vec<f64>> = (0..n).map(|j| (0..m).map(|i| a[i * n + j]).collect()).collect();
    let mut v: Vec<Vec<f64>> = (0..n).map(|j| (0..n).map(|i| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    orthogonalize(&mut c, Some(&mut v));
    let norms: Vec<f64> = c.iter().map(|col| libm::sqrt(col.iter().map(|x| x * x).sum())).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    let s: Vec<f64> = order.iter().map(|&j| norms[j]).collect();
    // Columns of U for the numerically nonzero values; the rest is an orthonormal complement,
    // taken from a Householder QR of those columns (its Q spans them first, then the rest).
    let smax = s.first().copied().unwrap_or(0.0);
    let tiny = smax * f64::EPSILON * m as f64;
    let rank = s.iter().take_while(|&&x| x > tiny && x > 0.0).count();
    let mut thin = alloc::vec![0.0; m * rank];
    for (k, &j) in order.iter().take(rank).enumerate() {
        for i in 0..m {
            thin[i * rank + k] = c[j][i] / norms[j];
        }
    }
    let h = super::decomp::qr::householder(&thin, m, rank);
    let full = h.q(m);
    let mut u = alloc::vec![0.0; m * m];
    for i in 0..m {
        u[i * m..i * m + rank].copy_from_slice(&thin[i * rank..(i + 1) * rank]);
        u[i * m + rank..(i + 1) * m].copy_from_slice(&full[i * m + rank..(i + 1) * m]);
    }
    let mut vt = alloc::vec![0.0; n * n];
    for (k, &j) in order.iter().enumerate() {
        vt[k * n..(k + 1) * n].copy_from_slice(&v[j]);
    }
    (u, s, vt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_singular_values() {
        // [[3, 0], [4, 5]] has singular values sqrt(45) and sqrt(5).
        let s = singular_values(&[3.0, 0.0, 4.0, 5.0], 2, 2);
        assert!((s[0] - 45f64.sqrt()).abs() < 1e-12 && (s[1] - 5f64.sqrt()).abs() < 1e-12);
        // A wide rank-1 matrix u·vᵀ (u = [1, 2], v = [1, 2, 2]): one value, |u|·|v| = 3·√5.
        let s = singular_values(&[1.0, 2.0, 2.0, 2.0, 4.0, 4.0], 2, 3);
        assert!((s[0] - 3.0 * 5f64.sqrt()).abs() < 1e-12 && s[1].abs() < 1e-12);
    }

    #[test]
    fn full_svd_reconstructs() {
        for (m, n) in [(4, 3), (3, 4), (3, 3)] {
            // Rank 2: rows/cols beyond the second are combinations.
            let a: Vec<f64> = (0..m * n).map(|q| ((q / n) + 2 * (q % n)) as f64 + 1.0).collect();
            let (u, s, vt) = svd(&a, m, n);
            for i in 0..m {
                for j in 0..n {
                    let r: f64 = (0..m.min(n)).map(|k| u[i * m + k] * s[k] * vt[k * n + j]).sum();
                    assert!((r - a[i * n + j]).abs() < 1e-12, "{m}x{n}");
                }
                for k in 0..m {
                    let d: f64 = (0..m).map(|t| u[t * m + i] * u[t * m + k]).sum();
                    assert!((d - if i == k { 1.0 } else { 0.0 }).abs() < 1e-12);
                }
            }
        }
    }
}
