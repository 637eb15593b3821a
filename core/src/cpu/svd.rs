//! Singular values by one-sided Jacobi rotations, in f64: small, dependency-free and accurate
//! to working precision, which is what `linalg.norm` (ord 2, -2, 'nuc') needs. Real MLX calls
//! LAPACK here; a blocked or LAPACK-backed SVD can replace this kernel in a backend.

use alloc::vec::Vec;

/// Sweeps before giving up; Jacobi converges quadratically, far sooner for any real input.
const MAX_SWEEPS: usize = 60;

/// Singular values of the row-major `rows × cols` matrix `a`, descending.
pub fn singular_values(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    // Work on columns of the taller orientation: k columns of length len.
    let (len, k) = if rows >= cols { (rows, cols) } else { (cols, rows) };
    let mut c: Vec<Vec<f64>> = (0..k)
        .map(|j| (0..len).map(|i| if rows >= cols { a[i * cols + j] } else { a[j * cols + i] }).collect())
        .collect();
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
                let (lo, hi) = c.split_at_mut(q);
                for (x, y) in lo[p].iter_mut().zip(hi[0].iter_mut()) {
                    let (u, v) = (*x, *y);
                    *x = cs * u - sn * v;
                    *y = sn * u + cs * v;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let mut s: Vec<f64> = c.iter().map(|col| libm::sqrt(col.iter().map(|x| x * x).sum())).collect();
    s.sort_by(|a, b| b.total_cmp(a));
    s
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
}
