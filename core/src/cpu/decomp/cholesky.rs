//! Cholesky factorization, row-major f64, as LAPACK's `potrf` (which MLX calls): only one
//! triangle of the input is read; a non-positive pivot stops the factorization there and,
//! as in MLX (which ignores potrf's status), the partial result is returned, not an error.

use alloc::vec::Vec;

/// `L` with `A = L·Lᵀ` from the lower triangle of `a` (or `U = Lᵀ` with `A = Uᵀ·U` from the
/// upper triangle when `upper`); the other triangle of the result is zero.
pub fn cholesky(a: &[f64], n: usize, upper: bool) -> Vec<f64> {
    // Work on the lower triangle: entry (i, j), j <= i, of the chosen triangle.
    let mut l: Vec<f64> = (0..n * n)
        .map(|q| {
            let (i, j) = (q / n, q % n);
            match (j <= i, upper) {
                (true, false) => a[q],
                (true, true) => a[j * n + i],
                _ => 0.0,
            }
        })
        .collect();
    for j in 0..n {
        let d = l[j * n + j] - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
        if d <= 0.0 || d.is_nan() {
            l[j * n + j] = d;
            break;
        }
        let d = libm::sqrt(d);
        l[j * n + j] = d;
        for i in j + 1..n {
            let s = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            l[i * n + j] = (l[i * n + j] - s) / d;
        }
    }
    if upper {
        (0..n * n).map(|q| l[(q % n) * n + q / n]).collect()
    } else {
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_factor() {
        // [[4, 2], [2, 5]] = L·Lᵀ with L = [[2, 0], [1, 2]].
        assert_eq!(cholesky(&[4.0, 2.0, 2.0, 5.0], 2, false), [2.0, 0.0, 1.0, 2.0]);
        assert_eq!(cholesky(&[4.0, 2.0, 99.0, 5.0], 2, true), [2.0, 1.0, 0.0, 2.0]);
    }
}
