//! Symmetric eigen-decomposition by cyclic two-sided Jacobi rotations, in f64: simple and
//! accurate to working precision (relative accuracy for well-conditioned input). MLX calls
//! LAPACK's `syevd`; the values match, the vectors may differ in sign.

use alloc::vec::Vec;

/// Sweeps before giving up (convergence is quadratic; real inputs finish in ~10).
const MAX_SWEEPS: usize = 100;

/// Eigenvalues (ascending) and eigenvectors (columns of a row-major `n × n` matrix) of the
/// symmetric matrix whose `lower` (else upper) triangle is that of `a`.
pub fn eigh(a: &[f64], n: usize, lower: bool) -> (Vec<f64>, Vec<f64>) {
    let mut s: Vec<f64> = (0..n * n)
        .map(|q| {
            let (i, j) = (q / n, q % n);
            if (j <= i) == lower { a[q] } else { a[j * n + i] }
        })
        .collect();
    let mut v: Vec<f64> = (0..n * n).map(|q| if q / n == q % n { 1.0 } else { 0.0 }).collect();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let apq = s[p * n + q];
                let (app, aqq) = (s[p * n + p], s[q * n + q]);
                if apq == 0.0 || libm::fabs(apq) <= f64::EPSILON * libm::sqrt(libm::fabs(app * aqq)) {
                    if apq != 0.0 && libm::fabs(apq) < f64::MIN_POSITIVE {
                        s[p * n + q] = 0.0;
                        s[q * n + p] = 0.0;
                    }
                    continue;
                }
                rotated = true;
                let tau = (aqq - app) / (2.0 * apq);
                let t = if tau >= 0.0 { 1.0 } else { -1.0 } / (libm::fabs(tau) + libm::sqrt(1.0 + tau * tau));
                let c = 1.0 / libm::sqrt(1.0 + t * t);
                let sn = t * c;
                // S ← Jᵀ·S·J and V ← V·J, J rotating columns p and q.
                for k in 0..n {
                    let (x, y) = (s[k * n + p], s[k * n + q]);
                    s[k * n + p] = c * x - sn * y;
                    s[k * n + q] = sn * x + c * y;
                    let (x, y) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * x - sn * y;
                    v[k * n + q] = sn * x + c * y;
                }
                for k in 0..n {
                    let (x, y) = (s[p * n + k], s[q * n + k]);
                    s[p * n + k] = c * x - sn * y;
                    s[q * n + k] = sn * x + c * y;
                }
                s[p * n + q] = 0.0;
                s[q * n + p] = 0.0;
            }
        }
        if !rotated {
            break;
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| s[i * n + i].total_cmp(&s[j * n + j]));
    let w = order.iter().map(|&i| s[i * n + i]).collect();
    let vecs = (0..n * n).map(|q| v[(q / n) * n + order[q % n]]).collect();
    (w, vecs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_eigenpairs() {
        // [[2, 1], [1, 2]]: 1 with (1, -1)/√2, 3 with (1, 1)/√2.
        let (w, v) = eigh(&[2.0, 1.0, 1.0, 2.0], 2, true);
        assert!((w[0] - 1.0).abs() < 1e-14 && (w[1] - 3.0).abs() < 1e-14);
        assert!((v[0] + v[2]).abs() < 1e-14 && (v[1] - v[3]).abs() < 1e-14);
        // Only the chosen triangle is read.
        let (w, _) = eigh(&[2.0, 1.0, 99.0, 2.0], 2, false);
        assert!((w[0] - 1.0).abs() < 1e-14);
    }
}
