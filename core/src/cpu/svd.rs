//! The SVD by one-sided Jacobi rotations, in f64 (real) or complex f64: small, dependency-free
//! and accurate to working precision (`linalg.norm` with ord 2, -2, 'nuc' needs the values;
//! `linalg.svd`, `pinv` and `random.multivariate_normal` the vectors too). Real MLX calls
//! LAPACK's `gesdd` (`cgesdd` for complex64) here; a blocked or LAPACK-backed SVD can replace
//! this kernel in a backend. One generic kernel serves both fields: for complex columns the
//! Jacobi step is the real rotation of the pair after turning their inner product real by a
//! phase (a Hermitian rotation), which for real input is exactly the classic real step.

use super::decomp::eig::C;
use alloc::vec::Vec;

/// Sweeps before giving up; Jacobi converges quadratically, far sooner for any real input.
const MAX_SWEEPS: usize = 60;

/// The scalar field of a matrix the kernel decomposes: `f64` or complex [`C`].
pub trait Scalar: Copy {
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// `self + o`.
    fn plus(self, o: Self) -> Self;
    /// `self − o`.
    fn minus(self, o: Self) -> Self;
    /// `self · o`.
    fn times(self, o: Self) -> Self;
    /// `self · k` for a real `k`.
    fn scaled(self, k: f64) -> Self;
    /// The complex conjugate (identity for reals).
    fn conjugate(self) -> Self;
    /// `|self|²`.
    fn norm2(self) -> f64;
    /// `|self|`.
    fn modulus(self) -> f64;
    /// `self / g` for a real `g > 0`, by division (so a real `x / |x|` is exactly ±1).
    fn over(self, g: f64) -> Self;
    /// `U` (`m × m`, row-major) whose first `rank` columns are the orthonormal `thin`
    /// (`m × rank`, row-major) and whose others complete them to an orthonormal basis.
    fn complete(thin: &[Self], m: usize, rank: usize) -> Vec<Self>;
}

impl Scalar for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn plus(self, o: f64) -> f64 {
        self + o
    }
    fn minus(self, o: f64) -> f64 {
        self - o
    }
    fn times(self, o: f64) -> f64 {
        self * o
    }
    fn scaled(self, k: f64) -> f64 {
        self * k
    }
    fn conjugate(self) -> f64 {
        self
    }
    fn norm2(self) -> f64 {
        self * self
    }
    fn modulus(self) -> f64 {
        libm::fabs(self)
    }
    fn over(self, g: f64) -> f64 {
        self / g
    }
    /// The complement comes from a Householder QR of `thin` (its Q spans `thin` first, then
    /// the rest), as LAPACK would build it.
    fn complete(thin: &[f64], m: usize, rank: usize) -> Vec<f64> {
        let full = super::decomp::qr::householder(thin, m, rank).q(m);
        let mut u = alloc::vec![0.0; m * m];
        for i in 0..m {
            u[i * m..i * m + rank].copy_from_slice(&thin[i * rank..(i + 1) * rank]);
            u[i * m + rank..(i + 1) * m].copy_from_slice(&full[i * m + rank..(i + 1) * m]);
        }
        u
    }
}

impl Scalar for C {
    const ZERO: C = C { re: 0.0, im: 0.0 };
    const ONE: C = C { re: 1.0, im: 0.0 };
    fn plus(self, o: C) -> C {
        self.add(o)
    }
    fn minus(self, o: C) -> C {
        self.sub(o)
    }
    fn times(self, o: C) -> C {
        self.mul(o)
    }
    fn scaled(self, k: f64) -> C {
        self.scale(k)
    }
    fn conjugate(self) -> C {
        self.conj()
    }
    fn norm2(self) -> f64 {
        self.re * self.re + self.im * self.im
    }
    fn modulus(self) -> f64 {
        self.abs()
    }
    fn over(self, g: f64) -> C {
        C::new(self.re / g, self.im / g)
    }
    fn complete(thin: &[C], m: usize, rank: usize) -> Vec<C> {
        gram_schmidt_complete(thin, m, rank)
    }
}

/// `conj(x)ᵀ·y`.
fn dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    x.iter().zip(y).fold(T::ZERO, |acc, (&a, &b)| acc.plus(a.conjugate().times(b)))
}

/// Completes the orthonormal columns of `thin` (`m × rank`) to a unitary `m × m` matrix with
/// unit vectors `e_i` orthogonalized (twice, for stability) against the basis so far. One pass
/// over `i` suffices with the acceptance threshold `‖residual‖² > 1/(2m)`: the residuals'
/// squares of all `e_i` sum to the dimension still missing (≥ 1), and they only shrink.
fn gram_schmidt_complete<T: Scalar>(thin: &[T], m: usize, rank: usize) -> Vec<T> {
    let mut basis: Vec<Vec<T>> = (0..rank).map(|k| (0..m).map(|i| thin[i * rank + k]).collect()).collect();
    for i in 0..m {
        if basis.len() == m {
            break;
        }
        let mut w: Vec<T> = (0..m).map(|r| if r == i { T::ONE } else { T::ZERO }).collect();
        for _ in 0..2 {
            for q in &basis {
                let d = dot(q, &w);
                w.iter_mut().zip(q).for_each(|(x, &y)| *x = x.minus(y.times(d)));
            }
        }
        let norm2: f64 = w.iter().map(|x| x.norm2()).sum();
        if norm2 > 0.5 / m as f64 {
            let inv = 1.0 / libm::sqrt(norm2);
            basis.push(w.into_iter().map(|x| x.scaled(inv)).collect());
        }
    }
    let mut u = alloc::vec![T::ZERO; m * m];
    for (k, col) in basis.iter().enumerate() {
        for (i, &x) in col.iter().enumerate() {
            u[i * m + k] = x;
        }
    }
    u
}

/// One-sided Jacobi: rotates pairs of columns of `c` until they are mutually orthogonal,
/// applying each rotation to the same pair of columns of `v` too (when given: accumulating
/// `V`). Afterwards the column norms of `c` are the singular values.
fn orthogonalize<T: Scalar>(c: &mut [Vec<T>], mut v: Option<&mut [Vec<T>]>) {
    let k = c.len();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..k {
            for q in p + 1..k {
                let (alpha, beta, gamma) = c[p].iter().zip(&c[q]).fold((0.0, 0.0, T::ZERO), |(a, b, g), (&x, &y)| {
                    (a + x.norm2(), b + y.norm2(), g.plus(x.conjugate().times(y)))
                });
                let g = gamma.modulus();
                if g == 0.0 || g <= f64::EPSILON * libm::sqrt(alpha * beta) {
                    continue;
                }
                rotated = true;
                // With phase = γ/|γ|, the columns x and phase⁻¹·y have the real inner product
                // |γ|: the real Jacobi rotation of that pair, phase restored on y.
                let phase = gamma.over(g);
                let zeta = (beta - alpha) / (2.0 * g);
                let t = zeta.signum() / (zeta.abs() + libm::sqrt(1.0 + zeta * zeta));
                let cs = 1.0 / libm::sqrt(1.0 + t * t);
                let sn = cs * t;
                let (a, b) = (phase.conjugate().scaled(sn), phase.scaled(sn));
                rotate(c, p, q, cs, a, b);
                if let Some(v) = v.as_deref_mut() {
                    rotate(v, p, q, cs, a, b);
                }
            }
        }
        if !rotated {
            break;
        }
    }
}

/// Columns `p < q` of `cols` become `cs·x − a·y` and `b·x + cs·y`.
fn rotate<T: Scalar>(cols: &mut [Vec<T>], p: usize, q: usize, cs: f64, a: T, b: T) {
    let (lo, hi) = cols.split_at_mut(q);
    for (x, y) in lo[p].iter_mut().zip(hi[0].iter_mut()) {
        let (u, w) = (*x, *y);
        *x = u.scaled(cs).minus(a.times(w));
        *y = b.times(u).plus(w.scaled(cs));
    }
}

/// Singular values of the row-major `rows × cols` matrix `a`, descending.
pub fn singular_values<T: Scalar>(a: &[T], rows: usize, cols: usize) -> Vec<f64> {
    // Work on columns of the taller orientation: k columns of length len (a transpose has the
    // same singular values, no conjugation needed).
    let (len, k) = if rows >= cols { (rows, cols) } else { (cols, rows) };
    let mut c: Vec<Vec<T>> = (0..k)
        .map(|j| (0..len).map(|i| if rows >= cols { a[i * cols + j] } else { a[j * cols + i] }).collect())
        .collect();
    orthogonalize(&mut c, None);
    let mut s: Vec<f64> = c.iter().map(|col| libm::sqrt(col.iter().map(|x| x.norm2()).sum())).collect();
    s.sort_by(|a, b| b.total_cmp(a));
    s
}

/// The conjugate transpose of the row-major `rows × cols` matrix `m` (`cols × rows`).
fn adjoint<T: Scalar>(m: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..rows * cols).map(|q| m[(q % rows) * cols + q / rows].conjugate()).collect()
}

/// Full SVD of the row-major `rows × cols` matrix `a`: `U` (`rows × rows`), the singular values
/// (descending, `min(rows, cols)`) and `Vᴴ` (`cols × cols`), all row-major, `A = U·diag(S)·Vᴴ`
/// (`Vᵀ` for real input).
pub fn svd<T: Scalar>(a: &[T], rows: usize, cols: usize) -> (Vec<T>, Vec<f64>, Vec<T>) {
    if rows < cols {
        // Aᴴ = U'·S·V'ᴴ gives A = V'·S·U'ᴴ.
        let (u, s, vt) = svd(&adjoint(a, rows, cols), cols, rows);
        return (adjoint(&vt, rows, rows), s, adjoint(&u, cols, cols));
    }
    let (m, n) = (rows, cols);
    // Columns of A (length m) and of V (length n), rotated together.
    let mut c: Vec<Vec<T>> = (0..n).map(|j| (0..m).map(|i| a[i * n + j]).collect()).collect();
    let mut v: Vec<Vec<T>> = (0..n).map(|j| (0..n).map(|i| if i == j { T::ONE } else { T::ZERO }).collect()).collect();
    orthogonalize(&mut c, Some(&mut v));
    let norms: Vec<f64> = c.iter().map(|col| libm::sqrt(col.iter().map(|x| x.norm2()).sum())).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    let s: Vec<f64> = order.iter().map(|&j| norms[j]).collect();
    // Columns of U for the numerically nonzero values; the rest is an orthonormal complement.
    let smax = s.first().copied().unwrap_or(0.0);
    let tiny = smax * f64::EPSILON * m as f64;
    let rank = s.iter().take_while(|&&x| x > tiny && x > 0.0).count();
    let mut thin = alloc::vec![T::ZERO; m * rank];
    for (k, &j) in order.iter().take(rank).enumerate() {
        for i in 0..m {
            thin[i * rank + k] = c[j][i].over(norms[j]);
        }
    }
    let u = T::complete(&thin, m, rank);
    // Row k of Vᴴ is the conjugate of column order[k] of V.
    let mut vt = alloc::vec![T::ZERO; n * n];
    for (k, &j) in order.iter().enumerate() {
        for (o, &x) in vt[k * n..(k + 1) * n].iter_mut().zip(&v[j]) {
            *o = x.conjugate();
        }
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
    #[test]
    fn complex_svd_reconstructs_and_is_unitary() {
        // [[1+i, 2], [0, 3i], [1, -1+2i]] and its 2×3 transpose (the wide path).
        let z = [C::new(1.0, 1.0), C::new(2.0, 0.0), C::new(0.0, 0.0), C::new(0.0, 3.0), C::new(1.0, 0.0), C::new(-1.0, 2.0)];
        let zt: Vec<C> = (0..6).map(|q| z[(q % 3) * 2 + q / 3]).collect();
        for (a, m, n) in [(z.to_vec(), 3, 2), (zt, 2, 3)] {
            let (u, s, vt) = svd(&a, m, n);
            let sv = singular_values(&a, m, n);
            assert!(s.iter().zip(&sv).all(|(x, y)| (x - y).abs() < 1e-12));
            // ‖A‖_F² = Σ s².
            let fro: f64 = a.iter().map(|x| x.norm2()).sum();
            assert!((fro - s.iter().map(|x| x * x).sum::<f64>()).abs() < 1e-12);
            for i in 0..m {
                for j in 0..n {
                    let r = (0..m.min(n)).fold(C::ZERO, |acc, k| acc.plus(u[i * m + k].times(vt[k * n + j]).scaled(s[k])));
                    assert!(r.minus(a[i * n + j]).modulus() < 1e-12, "{m}x{n}");
                }
            }
            for (w, d) in [(&u, m), (&vt, n)] {
                for i in 0..d {
                    for k in 0..d {
                        let g = (0..d).fold(C::ZERO, |acc, t| acc.plus(w[t * d + i].conjugate().times(w[t * d + k])));
                        assert!(g.minus(if i == k { C::ONE } else { C::ZERO }).modulus() < 1e-12);
                    }
                }
            }
        }
    }
}
