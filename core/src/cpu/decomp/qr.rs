//! Householder QR, row-major f64, with LAPACK's reflector convention (`geqrf`/`larfg`:
//! `R[j][j] = -sign(a_jj)·‖x‖`, no reflection when the column below the diagonal is zero), so
//! for full-rank input Q and R equal what MLX's LAPACK call gives, up to rounding.

use alloc::vec::Vec;

/// The reflectors `H_j = I - tau_j·v_j·v_jᵀ` of a QR factorization (`v_j[0] = 1` implied,
/// `v_j` covers rows `j..m`), and the overwritten matrix holding R in its upper triangle.
pub struct Householder {
    /// Rows.
    pub m: usize,
    /// The reflectors' `(tau, v)` (v without its leading 1).
    pub reflectors: Vec<(f64, Vec<f64>)>,
    /// The factored `m × n` matrix: R on and above the diagonal.
    pub r: Vec<f64>,
}

/// Factors the row-major `m × n` matrix `a`.
pub fn householder(a: &[f64], m: usize, n: usize) -> Householder {
    let mut r = a.to_vec();
    let k = m.min(n);
    let mut reflectors = Vec::with_capacity(k);
    for j in 0..k {
        let alpha = r[j * n + j];
        let xnorm = libm::sqrt((j + 1..m).map(|i| r[i * n + j] * r[i * n + j]).sum::<f64>());
        if xnorm == 0.0 {
            reflectors.push((0.0, alloc::vec![0.0; m - j - 1]));
            continue;
        }
        let norm = libm::hypot(alpha, xnorm);
        let beta = if alpha >= 0.0 { -norm } else { norm };
        let tau = (beta - alpha) / beta;
        let scale = 1.0 / (alpha - beta);
        let v: Vec<f64> = (j + 1..m).map(|i| r[i * n + j] * scale).collect();
        r[j * n + j] = beta;
        for i in j + 1..m {
            r[i * n + j] = 0.0;
        }
        // Apply H to the columns right of j: a_c -= tau·(vᵀ a_c)·v.
        for c in j + 1..n {
            let w = r[j * n + c] + v.iter().enumerate().map(|(t, &vi)| vi * r[(j + 1 + t) * n + c]).sum::<f64>();
            let tw = tau * w;
            r[j * n + c] -= tw;
            for (t, &vi) in v.iter().enumerate() {
                r[(j + 1 + t) * n + c] -= tw * vi;
            }
        }
        reflectors.push((tau, v));
    }
    Householder { m, reflectors, r }
}

impl Householder {
    /// The first `cols` columns of `Q = H_0·H_1·…`, row-major `m × cols`.
    pub fn q(&self, cols: usize) -> Vec<f64> {
        let m = self.m;
        let mut q = alloc::vec![0.0; m * cols];
        for i in 0..m.min(cols) {
            q[i * cols + i] = 1.0;
        }
        for (j, (tau, v)) in self.reflectors.iter().enumerate().rev() {
            if *tau == 0.0 {
                continue;
            }
            for c in 0..cols {
                let w = q[j * cols + c] + v.iter().enumerate().map(|(t, &vi)| vi * q[(j + 1 + t) * cols + c]).sum::<f64>();
                let tw = tau * w;
                q[j * cols + c] -= tw;
                for (t, &vi) in v.iter().enumerate() {
                    q[(j + 1 + t) * cols + c] -= tw * vi;
                }
            }
        }
        q
    }
}

/// Reduced QR of the row-major `m × n` matrix `a`: `Q` (`m × k`) and `R` (`k × n`), `k = min(m, n)`.
pub fn qr(a: &[f64], m: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let k = m.min(n);
    let h = householder(a, m, n);
    let q = h.q(k);
    let r = (0..k * n).map(|t| if t % n >= t / n { h.r[t] } else { 0.0 }).collect();
    (q, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_qr() {
        // [[3, 1], [4, 2]]: ‖col0‖ = 5, LAPACK's sign gives R00 = -5, Q col0 = [-0.6, -0.8].
        let (q, r) = qr(&[3.0, 1.0, 4.0, 2.0], 2, 2);
        let (wq, wr) = ([-0.6, -0.8, -0.8, 0.6], [-5.0, -2.2, 0.0, 0.4]);
        assert!(q.iter().zip(wq).all(|(x, y)| (x - y).abs() < 1e-14), "{q:?}");
        assert!(r.iter().zip(wr).all(|(x, y)| (x - y).abs() < 1e-14), "{r:?}");
    }
}
