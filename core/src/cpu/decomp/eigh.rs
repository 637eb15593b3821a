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

/// Eigenvalues (ascending) and eigenvectors of the Hermitian matrix given by the `lower` (else
/// upper) triangle of the complex `a` (diagonal imaginary parts ignored, as LAPACK's `heevd`),
/// through the real symmetric embedding `[[Re H, -Im H], [Im H, Re H]]`: each eigenvalue of H
/// appears twice there, and an eigenvector `[x; y]` gives H's eigenvector `x + i·y`.
pub fn eigh_hermitian(a: &[super::eig::C], n: usize, lower: bool) -> (Vec<f64>, Vec<super::eig::C>) {
    let h = |i: usize, j: usize| -> (f64, f64) {
        if i == j {
            (a[i * n + i].re, 0.0)
        } else if (j < i) == lower {
            (a[i * n + j].re, a[i * n + j].im)
        } else {
            (a[j * n + i].re, -a[j * n + i].im)
        }
    };
    let m = 2 * n;
    let mut e = alloc::vec![0.0; m * m];
    for i in 0..n {
        for j in 0..n {
            let (re, im) = h(i, j);
            e[i * m + j] = re;
            e[(i + n) * m + j + n] = re;
            e[i * m + j + n] = -im;
            e[(i + n) * m + j] = im;
        }
    }
    let (w, v) = eigh(&e, m, true);
    let vals = (0..n).map(|k| w[2 * k]).collect();
    let vecs = (0..n * n).map(|q| {
        let (r, k) = (q / n, 2 * (q % n));
        super::eig::C::new(v[r * m + k], v[(r + n) * m + k])
    });
    (vals, vecs.collect())
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
