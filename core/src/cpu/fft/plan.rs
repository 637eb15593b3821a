//! FFT plans, pure Rust and `no_std`: a Stockham autosort mixed-radix Cooley-Tukey transform
//! for lengths whose factors are 2, 3, 4 and 5, and Bluestein's chirp-z algorithm (a
//! convolution done with a power-of-two transform) for every other length, primes included.
//!
//! A plan computes its twiddle factors once, in f64 (rounded to the working precision), so a
//! transform only reads tables; the butterflies allocate nothing (the caller owns the scratch
//! buffers, one per worker). Only the forward transform `X_k = Σ x_j e^{-2πijk/n}` exists: the
//! kernels get the inverse by conjugating the input and the output.
//!
//! Bluestein works in f64 whatever the caller's precision: its convolution has roughly three
//! times the rounding of a direct transform, and f64 keeps prime lengths as accurate as smooth ones.

use crate::error::{Error, Result};
use alloc::vec::Vec;
use core::ops::{Add, Mul, Neg, Sub};

/// The real scalar a plan computes in (f32 or f64).
pub trait Real:
    Copy + Default + Send + Sync + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self>
{
    /// Rounds an f64.
    fn from_f64(v: f64) -> Self;
    /// Widens to f64.
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

/// A complex number over [`Real`] (plain data; the kernels convert to and from `Complex64`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Cx<T> {
    /// Real part.
    pub re: T,
    /// Imaginary part.
    pub im: T,
}

impl<T: Real> Cx<T> {
    /// `re + i·im`.
    #[inline(always)]
    pub fn new(re: T, im: T) -> Self {
        Cx { re, im }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Cx::new(self.re + o.re, self.im + o.im)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Cx::new(self.re - o.re, self.im - o.im)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Cx::new(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
    }
    #[inline(always)]
    fn scale(self, k: T) -> Self {
        Cx::new(self.re * k, self.im * k)
    }
    /// `-i · self`.
    #[inline(always)]
    fn mul_neg_i(self) -> Self {
        Cx::new(self.im, -self.re)
    }
    /// The complex conjugate.
    #[inline(always)]
    pub fn conj(self) -> Self {
        Cx::new(self.re, -self.im)
    }
}

/// A vector of `len` default values, or an out-of-memory error (plans for huge lengths must
/// not abort where the array itself could be allocated).
fn zeros<T: Clone + Default>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::out_of_memory("fft", len.saturating_mul(core::mem::size_of::<T>())))?;
    v.resize(len, T::default());
    Ok(v)
}

/// `e^{-2πi·k/n}` computed in f64 (`k` reduced modulo `n` first, so large products stay exact).
fn root(k: u64, n: u64) -> Cx<f64> {
    let k = k % n;
    let a = -2.0 * core::f64::consts::PI * (k as f64) / (n as f64);
    Cx::new(libm::cos(a), libm::sin(a))
}

/// One Stockham pass of radix `p` over sub-transforms of length `len` (`stride` of them
/// interleaved): `tw[q·(p-1) + r - 1] = e^{-2πi·q·r/len}` for `q < len/p`, `1 ≤ r < p`.
struct Stage<T> {
    p: usize,
    len: usize,
    stride: usize,
    tw: Vec<Cx<T>>,
}

/// The radices a length splits into (4 first, then 2, 3, 5), or `None` when another prime divides it.
fn factor(mut n: usize) -> Option<Vec<usize>> {
    let mut f = Vec::new();
    while n % 4 == 0 {
        f.push(4);
        n /= 4;
    }
    for p in [2usize, 3, 5] {
        while n % p == 0 {
            f.push(p);
            n /= p;
        }
    }
    (n == 1).then_some(f)
}

/// A mixed-radix transform of a 2·3·5-smooth length.
struct Stockham<T> {
    n: usize,
    stages: Vec<Stage<T>>,
}

impl<T: Real> Stockham<T> {
    fn new(n: usize, radices: &[usize]) -> Result<Self> {
        let mut stages = Vec::with_capacity(radices.len());
        let (mut len, mut stride) = (n, 1usize);
        for &p in radices {
            let m = len / p;
            let mut tw = zeros::<Cx<T>>(m * (p - 1))?;
            for q in 0..m {
                for r in 1..p {
                    let w = root((q * r) as u64, len as u64);
                    tw[q * (p - 1) + r - 1] = Cx::new(T::from_f64(w.re), T::from_f64(w.im));
                }
            }
            stages.push(Stage { p, len, stride, tw });
            stride *= p;
            len = m;
        }
        Ok(Stockham { n, stages })
    }

    /// Transforms `x` in place, using `work` (at least `n` long) as the ping-pong buffer.
    fn run(&self, x: &mut [Cx<T>], work: &mut [Cx<T>]) {
        let (x, work) = (&mut x[..self.n], &mut work[..self.n]);
        let mut in_x = true;
        for st in &self.stages {
            if in_x {
                st.apply(x, work);
            } else {
                st.apply(work, x);
            }
            in_x = !in_x;
        }
        if !in_x {
            x.copy_from_slice(work);
        }
    }
}

impl<T: Real> Stage<T> {
    /// One pass from `x` into `y`: element `(q, j)` of each length-`len` sub-transform is read at
    /// `k + s·(q + j·m)` and output `r` written at `k + s·(p·q + r)`, so no reordering is needed.
    #[inline]
    fn apply(&self, x: &[Cx<T>], y: &mut [Cx<T>]) {
        let (s, m) = (self.stride, self.len / self.p);
        match self.p {
            2 => {
                for q in 0..m {
                    let w1 = self.tw[q];
                    let (xa, xb) = (&x[s * q..s * q + s], &x[s * (q + m)..s * (q + m) + s]);
                    let (ya, yb) = y[s * 2 * q..s * 2 * q + 2 * s].split_at_mut(s);
                    for k in 0..s {
                        let (a0, a1) = (xa[k], xb[k]);
                        ya[k] = a0.add(a1);
                        yb[k] = a0.sub(a1).mul(w1);
                    }
                }
            }
            3 => {
                let c = T::from_f64(-0.5);
                let sn = T::from_f64(0.866_025_403_784_438_6); // sin(2π/3)
                for q in 0..m {
                    let (w1, w2) = (self.tw[2 * q], self.tw[2 * q + 1]);
                    let out = &mut y[s * 3 * q..s * 3 * q + 3 * s];
                    for k in 0..s {
                        let a0 = x[k + s * q];
                        let a1 = x[k + s * (q + m)];
                        let a2 = x[k + s * (q + 2 * m)];
                        let t1 = a1.add(a2);
                        let t2 = a1.sub(a2).mul_neg_i().scale(sn);
                        let m1 = a0.add(t1.scale(c));
                        out[k] = a0.add(t1);
                        out[k + s] = m1.add(t2).mul(w1);
                        out[k + 2 * s] = m1.sub(t2).mul(w2);
                    }
                }
            }
            4 => {
                for q in 0..m {
                    let (w1, w2, w3) = (self.tw[3 * q], self.tw[3 * q + 1], self.tw[3 * q + 2]);
                    let out = &mut y[s * 4 * q..s * 4 * q + 4 * s];
                    let (o0, rest) = out.split_at_mut(s);
                    let (o1, rest) = rest.split_at_mut(s);
                    let (o2, o3) = rest.split_at_mut(s);
                    let x0 = &x[s * q..s * q + s];
                    let x1 = &x[s * (q + m)..s * (q + m) + s];
                    let x2 = &x[s * (q + 2 * m)..s * (q + 2 * m) + s];
                    let x3 = &x[s * (q + 3 * m)..s * (q + 3 * m) + s];
                    if q == 0 {
                        for k in 0..s {
                            let (t0, t1) = (x0[k].add(x2[k]), x0[k].sub(x2[k]));
                            let (t2, t3) = (x1[k].add(x3[k]), x1[k].sub(x3[k]).mul_neg_i());
                            o0[k] = t0.add(t2);
                            o1[k] = t1.add(t3);
                            o2[k] = t0.sub(t2);
                            o3[k] = t1.sub(t3);
                        }
                    } else {
                        for k in 0..s {
                            let (t0, t1) = (x0[k].add(x2[k]), x0[k].sub(x2[k]));
                            let (t2, t3) = (x1[k].add(x3[k]), x1[k].sub(x3[k]).mul_neg_i());
                            o0[k] = t0.add(t2);
                            o1[k] = t1.add(t3).mul(w1);
                            o2[k] = t0.sub(t2).mul(w2);
                            o3[k] = t1.sub(t3).mul(w3);
                        }
                    }
                }
            }
            _ => {
                // Radix 5 (the only other radix `factor` yields).
                let c1 = T::from_f64(0.309_016_994_374_947_45); // cos(2π/5)
                let c2 = T::from_f64(-0.809_016_994_374_947_5); // cos(4π/5)
                let s1 = T::from_f64(0.951_056_516_295_153_5); // sin(2π/5)
                let s2 = T::from_f64(0.587_785_252_292_473_1); // sin(4π/5)
                for q in 0..m {
                    let tw = &self.tw[4 * q..4 * q + 4];
                    let out = &mut y[s * 5 * q..s * 5 * q + 5 * s];
                    for k in 0..s {
                        let a0 = x[k + s * q];
                        let a1 = x[k + s * (q + m)];
                        let a2 = x[k + s * (q + 2 * m)];
                        let a3 = x[k + s * (q + 3 * m)];
                        let a4 = x[k + s * (q + 4 * m)];
                        let (t1, t2) = (a1.add(a4), a2.add(a3));
                        let (t3, t4) = (a1.sub(a4), a2.sub(a3));
                        let u1 = a0.add(t1.scale(c1)).add(t2.scale(c2));
                        let u2 = a0.add(t1.scale(c2)).add(t2.scale(c1));
                        let v1 = t3.scale(s1).add(t4.scale(s2)).mul_neg_i();
                        let v2 = t3.scale(s2).sub(t4.scale(s1)).mul_neg_i();
                        out[k] = a0.add(t1).add(t2);
                        out[k + s] = u1.add(v1).mul(tw[0]);
                        out[k + 2 * s] = u2.add(v2).mul(tw[1]);
                        out[k + 3 * s] = u2.sub(v2).mul(tw[2]);
                        out[k + 4 * s] = u1.sub(v1).mul(tw[3]);
                    }
                }
            }
        }
    }
}

/// Bluestein's algorithm: `X_k = w_k · Σ_j (x_j w_j) conj(w_{k-j})` with the chirp
/// `w_k = e^{-πi·k²/n}`; the convolution runs as a length-`m` power-of-two transform.
struct Bluestein {
    n: usize,
    chirp: Vec<Cx<f64>>,
    /// The transform of the conjugate chirp (wrapped to length `m`), already divided by `m`.
    kernel: Vec<Cx<f64>>,
    inner: Stockham<f64>,
}

impl Bluestein {
    fn new(n: usize) -> Result<Self> {
        let m = n
            .checked_mul(2)
            .and_then(|v| (v - 1).checked_next_power_of_two())
            .ok_or_else(|| Error::out_of_memory("fft", usize::MAX))?;
        let two_n = 2 * n as u128;
        // k² mod 2n keeps the angle exact for large k.
        let mut chirp = zeros::<Cx<f64>>(n)?;
        for (k, c) in chirp.iter_mut().enumerate() {
            *c = root(((k as u128 * k as u128) % two_n) as u64, two_n as u64);
        }
        let inner = Stockham::new(m, &factor(m).unwrap_or_default())?;
        let mut kernel = zeros::<Cx<f64>>(m)?;
        let inv_m = 1.0 / m as f64;
        kernel[0] = chirp[0].conj().scale(inv_m);
        for k in 1..n {
            let v = chirp[k].conj().scale(inv_m);
            kernel[k] = v;
            kernel[m - k] = v;
        }
        let mut work = zeros::<Cx<f64>>(m)?;
        inner.run(&mut kernel, &mut work);
        Ok(Bluestein { n, chirp, kernel, inner })
    }

    fn run<T: Real>(&self, x: &mut [Cx<T>], a: &mut [Cx<f64>], work: &mut [Cx<f64>]) {
        let m = self.inner.n;
        let (a, work) = (&mut a[..m], &mut work[..m]);
        for k in 0..self.n {
            a[k] = Cx::new(x[k].re.to_f64(), x[k].im.to_f64()).mul(self.chirp[k]);
        }
        a[self.n..].fill(Cx::default());
        self.inner.run(a, work);
        // Inverse transform of A·K through conjugation: ifft(y) = conj(fft(conj(y))) / m
        // (the 1/m is folded into `kernel`).
        for (v, k) in a.iter_mut().zip(&self.kernel) {
            *v = v.mul(*k).conj();
        }
        self.inner.run(a, work);
        for k in 0..self.n {
            let y = a[k].conj().mul(self.chirp[k]);
            x[k] = Cx::new(T::from_f64(y.re), T::from_f64(y.im));
        }
    }
}

enum Kind<T> {
    /// n ≤ 1: the transform is the identity.
    Identity,
    Radix(Stockham<T>),
    Bluestein(Bluestein),
}

/// A forward transform of one length, reusable across lines and threads.
pub struct Plan<T> {
    n: usize,
    kind: Kind<T>,
}

/// Per-worker buffers for [`Plan::forward`], sized by [`Plan::scratch`].
pub struct Scratch<T> {
    work: Vec<Cx<T>>,
    a: Vec<Cx<f64>>,
    b: Vec<Cx<f64>>,
}

impl<T: Real> Plan<T> {
    /// Plans a length-`n` transform (twiddles and, for Bluestein, the chirp transform); an
    /// out-of-memory error when the tables cannot be allocated.
    pub fn new(n: usize) -> Result<Self> {
        let kind = if n <= 1 {
            Kind::Identity
        } else if let Some(f) = factor(n) {
            Kind::Radix(Stockham::new(n, &f)?)
        } else {
            Kind::Bluestein(Bluestein::new(n)?)
        };
        Ok(Plan { n, kind })
    }

    /// The transform length.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the length is 0.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Scratch buffers for one worker (an out-of-memory error if they cannot be allocated).
    pub fn scratch(&self) -> Result<Scratch<T>> {
        Ok(match &self.kind {
            Kind::Identity => Scratch { work: Vec::new(), a: Vec::new(), b: Vec::new() },
            Kind::Radix(_) => Scratch { work: zeros(self.n)?, a: Vec::new(), b: Vec::new() },
            Kind::Bluestein(b) => Scratch { work: Vec::new(), a: zeros(b.inner.n)?, b: zeros(b.inner.n)? },
        })
    }

    /// The forward DFT of `x[..n]`, in place. `scratch` must come from this plan.
    pub fn forward(&self, x: &mut [Cx<T>], scratch: &mut Scratch<T>) {
        match &self.kind {
            Kind::Identity => {}
            Kind::Radix(s) => s.run(x, &mut scratch.work),
            Kind::Bluestein(b) => b.run(x, &mut scratch.a, &mut scratch.b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[Cx<f64>]) -> Vec<Cx<f64>> {
        let n = x.len() as u64;
        (0..n)
            .map(|k| x.iter().enumerate().fold(Cx::default(), |acc, (j, &v)| acc.add(v.mul(root(j as u64 * k, n)))))
            .collect()
    }

    /// Every code path (each radix, mixed radices, Bluestein for primes and odd composites)
    /// against the O(n²) definition.
    #[test]
    fn matches_definition() {
        for n in [1usize, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 25, 30, 49, 60, 64, 97, 120, 128, 210, 243, 250] {
            let x: Vec<Cx<f64>> = (0..n).map(|i| Cx::new(libm::sin(i as f64 * 0.37), libm::cos(i as f64 * 1.3))).collect();
            let want = naive(&x);
            let plan = Plan::<f64>::new(n).unwrap();
            let mut s = plan.scratch().unwrap();
            let mut got = x.clone();
            plan.forward(&mut got, &mut s);
            for (g, w) in got.iter().zip(&want) {
                assert!((g.re - w.re).abs() < 1e-9 * n as f64 && (g.im - w.im).abs() < 1e-9 * n as f64, "n={n}: {g:?} vs {w:?}");
            }
        }
    }
}
