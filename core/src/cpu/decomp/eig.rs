//! General (non-symmetric) eigen-decomposition, in f64: Householder reduction to Hessenberg
//! form, then shifted complex QR iterations (Wilkinson shifts, Givens rotations) to a complex
//! Schur form `A = Z·T·Zᴴ`; eigenvectors by back substitution in `T`. MLX calls LAPACK's
//! `geev` (real Schur form); values agree to rounding (real eigenvalues may carry an
//! imaginary part at rounding level), vectors are normalized as geev's (unit 2-norm, largest
//! component real) but their order can differ.

use alloc::vec::Vec;

/// A complex number (f64 parts).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct C {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl C {
    const ZERO: C = C { re: 0.0, im: 0.0 };
    /// `re + i·im`.
    pub fn new(re: f64, im: f64) -> C {
        C { re, im }
    }
    pub(crate) fn add(self, o: C) -> C {
        C::new(self.re + o.re, self.im + o.im)
    }
    pub(crate) fn sub(self, o: C) -> C {
        C::new(self.re - o.re, self.im - o.im)
    }
    pub(crate) fn mul(self, o: C) -> C {
        C::new(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
    }
    pub(crate) fn scale(self, k: f64) -> C {
        C::new(self.re * k, self.im * k)
    }
    pub(crate) fn conj(self) -> C {
        C::new(self.re, -self.im)
    }
    pub(crate) fn abs(self) -> f64 {
        libm::hypot(self.re, self.im)
    }
    fn div(self, o: C) -> C {
        // Smith's algorithm avoids overflow in |o|².
        if libm::fabs(o.re) >= libm::fabs(o.im) {
            let r = o.im / o.re;
            let d = o.re + o.im * r;
            C::new((self.re + self.im * r) / d, (self.im - self.re * r) / d)
        } else {
            let r = o.re / o.im;
            let d = o.re * r + o.im;
            C::new((self.re * r + self.im) / d, (self.im * r - self.re) / d)
        }
    }
    fn sqrt(self) -> C {
        let m = self.abs();
        if m == 0.0 {
            return C::ZERO;
        }
        let re = libm::sqrt((m + self.re) / 2.0);
        let im = libm::sqrt(libm::fmax((m - self.re) / 2.0, 0.0));
        C::new(re, if self.im < 0.0 { -im } else { im })
    }
}

/// QR iteration did not converge (LAPACK's `geev` reports it as `info > 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoConvergence;

/// Iterations allowed per eigenvalue before reporting no convergence (LAPACK uses 30).
const MAX_ITERS: usize = 30;

/// The eigenvalues of the row-major `n × n` (complex) matrix `a` and, when `vectors`, its
/// eigenvectors (columns of a row-major `n × n` complex matrix).
pub fn eig(a: &[C], n: usize, vectors: bool) -> Result<(Vec<C>, Vec<C>), NoConvergence> {
    let (mut t, mut z) = hessenberg(a, n);
    schur(&mut t, &mut z, n)?;
    let w: Vec<C> = (0..n).map(|i| t[i * n + i]).collect();
    if !vectors {
        return Ok((w, Vec::new()));
    }
    let norm = t.iter().map(|x| x.abs()).fold(0.0, f64::max);
    let small = f64::max(norm * f64::EPSILON, f64::MIN_POSITIVE);
    let mut vecs = alloc::vec![C::ZERO; n * n];
    for k in 0..n {
        // T·x = λ_k·x with x[k] = 1, x[i > k] = 0.
        let mut x = alloc::vec![C::ZERO; k + 1];
        x[k] = C::new(1.0, 0.0);
        for i in (0..k).rev() {
            let mut s = C::ZERO;
            for j in i + 1..=k {
                s = s.add(t[i * n + j].mul(x[j]));
            }
            let mut d = t[i * n + i].sub(w[k]);
            if d.abs() < small {
                d = C::new(small, 0.0);
            }
            x[i] = C::ZERO.sub(s).div(d);
        }
        let mut v: Vec<C> = (0..n).map(|r| (0..=k).fold(C::ZERO, |acc, j| acc.add(z[r * n + j].mul(x[j])))).collect();
        let nrm = libm::sqrt(v.iter().map(|c| c.re * c.re + c.im * c.im).sum::<f64>());
        let big = v.iter().copied().fold(C::ZERO, |b, c| if c.abs() > b.abs() { c } else { b });
        if nrm > 0.0 && big.abs() > 0.0 {
            // Unit norm, largest component real and positive.
            let phase = big.conj().scale(1.0 / (big.abs() * nrm));
            v.iter_mut().for_each(|c| *c = c.mul(phase));
        }
        for r in 0..n {
            vecs[r * n + k] = v[r];
        }
    }
    Ok((w, vecs))
}

/// Householder reduction `A = Q·H·Qᴴ` with `H` upper Hessenberg; returns `(H, Q)` row-major.
fn hessenberg(a: &[C], n: usize) -> (Vec<C>, Vec<C>) {
    let mut h = a.to_vec();
    let mut q: Vec<C> = (0..n * n).map(|t| if t / n == t % n { C::new(1.0, 0.0) } else { C::ZERO }).collect();
    for k in 0..n.saturating_sub(2) {
        let x: Vec<C> = (k + 1..n).map(|i| h[i * n + k]).collect();
        if x[1..].iter().all(|v| *v == C::ZERO) {
            continue;
        }
        let xn = libm::sqrt(x.iter().map(|v| v.re * v.re + v.im * v.im).sum::<f64>());
        // alpha = -e^{i·arg(x0)}·‖x‖ avoids cancellation in v = x - alpha·e1.
        let x0 = x[0].abs();
        let phase = if x0 == 0.0 { C::new(1.0, 0.0) } else { x[0].scale(1.0 / x0) };
        let alpha = phase.scale(-xn);
        let mut v = x;
        v[0] = v[0].sub(alpha);
        let vn2: f64 = v.iter().map(|t| t.re * t.re + t.im * t.im).sum();
        if vn2 == 0.0 {
            continue;
        }
        let f = 2.0 / vn2;
        // H ← P·H·P, Q ← Q·P with P = I - f·v·vᴴ acting on indices k+1..n.
        for c in 0..n {
            let d = v.iter().enumerate().fold(C::ZERO, |s, (t, vi)| s.add(vi.conj().mul(h[(k + 1 + t) * n + c]))).scale(f);
            for (t, vi) in v.iter().enumerate() {
                h[(k + 1 + t) * n + c] = h[(k + 1 + t) * n + c].sub(vi.mul(d));
            }
        }
        for m in [&mut h, &mut q] {
            for r in 0..n {
                let d = v.iter().enumerate().fold(C::ZERO, |s, (t, vi)| s.add(m[r * n + k + 1 + t].mul(*vi))).scale(f);
                for (t, vi) in v.iter().enumerate() {
                    m[r * n + k + 1 + t] = m[r * n + k + 1 + t].sub(d.mul(vi.conj()));
                }
            }
        }
        for i in k + 2..n {
            h[i * n + k] = C::ZERO;
        }
    }
    (h, q)
}

/// Reduces the Hessenberg `t` to upper triangular by shifted QR, accumulating into `z`.
fn schur(t: &mut [C], z: &mut [C], n: usize) -> Result<(), NoConvergence> {
    if n == 0 {
        return Ok(());
    }
    let mut hi = n - 1;
    let mut iters = 0;
    while hi > 0 {
        // Deflate: find the start of the unreduced block ending at hi.
        let mut l = hi;
        while l > 0 {
            let sub = t[l * n + l - 1].abs();
            let diag = t[(l - 1) * n + l - 1].abs() + t[l * n + l].abs();
            if sub <= f64::EPSILON * diag || sub < f64::MIN_POSITIVE {
                t[l * n + l - 1] = C::ZERO;
                break;
            }
            l -= 1;
        }
        if l == hi {
            hi -= 1;
            iters = 0;
            continue;
        }
        iters += 1;
        if iters > MAX_ITERS * n.max(1) {
            return Err(NoConvergence);
        }
        let mu = if iters % 11 == 0 {
            // Exceptional shift to break cycles.
            t[hi * n + hi].add(C::new(t[hi * n + hi - 1].abs() * 0.75, 0.0))
        } else {
            wilkinson(t[(hi - 1) * n + hi - 1], t[(hi - 1) * n + hi], t[hi * n + hi - 1], t[hi * n + hi])
        };
        for i in l..=hi {
            t[i * n + i] = t[i * n + i].sub(mu);
        }
        let mut rots = Vec::with_capacity(hi - l);
        for k in l..hi {
            let (x, y) = (t[k * n + k], t[(k + 1) * n + k]);
            let (c, s) = givens(x, y);
            for j in k..n {
                let (u, w) = (t[k * n + j], t[(k + 1) * n + j]);
                t[k * n + j] = u.scale(c).add(s.mul(w));
                t[(k + 1) * n + j] = w.scale(c).sub(s.conj().mul(u));
            }
            t[(k + 1) * n + k] = C::ZERO;
            rots.push((c, s));
        }
        for (idx, &(c, s)) in rots.iter().enumerate() {
            let k = l + idx;
            let rows = (k + 2).min(hi + 1);
            for (m, upto) in [(&mut *t, rows), (&mut *z, n)] {
                for i in 0..upto {
                    let (u, w) = (m[i * n + k], m[i * n + k + 1]);
                    m[i * n + k] = u.scale(c).add(w.mul(s.conj()));
                    m[i * n + k + 1] = w.scale(c).sub(u.mul(s));
                }
            }
        }
        for i in l..=hi {
            t[i * n + i] = t[i * n + i].add(mu);
        }
    }
    Ok(())
}

/// The eigenvalue of `[[a, b], [c, d]]` closer to `d`.
fn wilkinson(a: C, b: C, c: C, d: C) -> C {
    let half = a.sub(d).scale(0.5);
    let disc = half.mul(half).add(b.mul(c)).sqrt();
    let mid = a.add(d).scale(0.5);
    let (e1, e2) = (mid.add(disc), mid.sub(disc));
    if e1.sub(d).abs() <= e2.sub(d).abs() { e1 } else { e2 }
}

/// `(c, s)` with `[[c, s], [-s̄, c]]·[x, y] = [r, 0]`, `c` real.
fn givens(x: C, y: C) -> (f64, C) {
    let (ax, ay) = (x.abs(), y.abs());
    if ay == 0.0 {
        return (1.0, C::ZERO);
    }
    if ax == 0.0 {
        return (0.0, C::new(1.0, 0.0));
    }
    let nrm = libm::hypot(ax, ay);
    (ax / nrm, x.scale(1.0 / ax).mul(y.conj()).scale(1.0 / nrm))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_has_complex_pair() {
        // [[1, -1], [1, 1]] has eigenvalues 1 ± i.
        let real = |v: &[f64]| v.iter().map(|&x| C::new(x, 0.0)).collect::<Vec<C>>();
        let (w, v) = eig(&real(&[1.0, -1.0, 1.0, 1.0]), 2, true).unwrap();
        let mut ims: Vec<f64> = w.iter().map(|c| c.im).collect();
        ims.sort_by(f64::total_cmp);
        assert!(w.iter().all(|c| (c.re - 1.0).abs() < 1e-14));
        assert!((ims[0] + 1.0).abs() < 1e-14 && (ims[1] - 1.0).abs() < 1e-14);
        // A·v = λ·v for each column.
        let a = [1.0, -1.0, 1.0, 1.0];
        for k in 0..2 {
            for r in 0..2 {
                let av = (0..2).fold(C::ZERO, |s, j| s.add(v[j * 2 + k].scale(a[r * 2 + j])));
                assert!(av.sub(w[k].mul(v[r * 2 + k])).abs() < 1e-13);
            }
        }
    }
}
