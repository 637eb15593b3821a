//! Every SIMD level this machine runs, against libm / an f64 oracle, on every tail length.

use super::*;
use crate::cpu::isa;
use alloc::vec;
use alloc::vec::Vec;

/// Row lengths that hit every tail of 4-, 8- and 16-lane kernels and the 2-vector unroll.
const LENS: [usize; 22] = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 1000, 1031];

/// The levels with SIMD kernels, each kernel table once: on aarch64 NEON, dotprod and SVE share
/// the NEON table, and running it three times under qemu only costs CI time.
fn levels() -> Vec<Isa> {
    let mut seen: Vec<*const VecKernels> = Vec::new();
    let mut chosen = Vec::new();
    for level in isa::available() {
        let Some(table) = simd(level) else { continue };
        if !seen.contains(&(table as *const VecKernels)) {
            seen.push(table);
            chosen.push(level);
        }
    }
    chosen
}

/// Deterministic values in [lo, hi) (the GEMM tests' generator, which gives [−2, 2)).
fn vals(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    crate::cpu::gemm::tests::vals(n, seed).into_iter().map(|v| lo + (hi - lo) * (v + 2.0) / 4.0).collect()
}

/// Distance in representable f32s between `a` and `b` (0 when both are NaN or equal;
/// u32::MAX when only one is NaN).
fn ulps(a: f32, b: f32) -> u32 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() { 0 } else { u32::MAX };
    }
    // Map the bits onto a line ordered like the floats (−0 and +0 both to 0).
    let ord = |x: f32| {
        let b = x.to_bits() as i32;
        if b < 0 { -(b & 0x7fff_ffff) as i64 } else { b as i64 }
    };
    (ord(a) - ord(b)).unsigned_abs().min(u32::MAX as u64) as u32
}

/// The largest ulp distance between the SIMD exp at `level` and `libm::expf` over `xs`.
fn exp_max_ulp(level: Isa, xs: &[f32]) -> (u32, f32) {
    let mut y = vec![0f32; xs.len()];
    assert!(exp(level, &mut y, Some(xs)));
    let mut worst = (0u32, 0f32);
    for (&x, &v) in xs.iter().zip(&y) {
        let d = ulps(v, libm::expf(x));
        if d > worst.0 {
            worst = (d, x);
        }
    }
    worst
}

#[test]
fn exp_is_within_the_documented_ulps_of_libm_everywhere() {
    // Edges: zeros, infinities, NaNs, the overflow and underflow thresholds, subnormal
    // outputs, the clamp bounds, and the rounding boundaries of n = round(x·log2 e).
    let mut edges = vec![
        0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::MAX, f32::MIN, f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE, 1e-45, -1e-45, 88.722_83, 88.722_84, 88.72, 88.73, 89.0, 89.5, 100.0, -87.336_55,
        -87.34, -100.0, -103.28, -103.97, -103.973, -104.0, -104.5, -110.0, 1.0, -1.0,
    ];
    for k in -151..=129 {
        let b = (k as f32 + 0.5) * core::f32::consts::LN_2;
        edges.extend([b, f32::from_bits(b.to_bits() + 1), f32::from_bits(b.to_bits() - 1)]);
    }
    for level in levels() {
        let (u, at) = exp_max_ulp(level, &edges);
        assert!(u <= EXP_MAX_ULP, "{}: exp({at}) is {u} ulps from libm", level.name());
        let mut worst = (0, 0.0);
        // Every 61st bit pattern: all exponents, both signs, NaN payloads, subnormals.
        let mut chunk = Vec::with_capacity(1 << 16);
        let mut bits = 0u64;
        while bits <= u32::MAX as u64 {
            chunk.push(f32::from_bits(bits as u32));
            bits += 61;
            if chunk.len() == chunk.capacity() || bits > u32::MAX as u64 {
                let w = exp_max_ulp(level, &chunk);
                if w.0 > worst.0 {
                    worst = w;
                }
                chunk.clear();
            }
        }
        assert!(worst.0 <= EXP_MAX_ULP, "{}: exp({}) is {} ulps from libm", level.name(), worst.1, worst.0);
        // Dense over the range where e^x is finite and non-zero.
        let dense: Vec<f32> = (0..2_000_000).map(|i| -104.0 + 193.0 * i as f32 / 2e6).collect();
        let w = exp_max_ulp(level, &dense);
        assert!(w.0 <= EXP_MAX_ULP, "{}: exp({}) is {} ulps from libm", level.name(), w.1, w.0);
        std::eprintln!("{}: exp max error vs libm::expf {} ulp (sweep) / {} ulp (dense)", level.name(), worst.0, w.0);
    }
}

/// A kernel run on `x` into a buffer with guard floats after it: returns the n results and
/// asserts the guard is untouched and that the in-place run gives the same bits.
fn run_guarded(x: &[f32], f: impl Fn(&mut [f32], Option<&[f32]>) -> bool) -> Vec<f32> {
    const GUARD: f32 = -12345.5;
    let n = x.len();
    let mut y = vec![GUARD; n + 17];
    assert!(f(&mut y[..n], Some(x)));
    assert!(y[n..].iter().all(|&g| g == GUARD), "wrote past the end (n = {n})");
    let mut z = x.to_vec();
    z.extend([GUARD; 17]);
    assert!(f(&mut z[..n], None));
    assert!(z[n..].iter().all(|&g| g == GUARD), "wrote past the end in place (n = {n})");
    assert!(y[..n].iter().zip(&z[..n]).all(|(a, b)| a.to_bits() == b.to_bits()), "in place differs (n = {n})");
    y.truncate(n);
    y
}

#[test]
fn exp_and_sigmoid_every_tail_against_the_oracle() {
    for level in levels() {
        for (i, &n) in LENS.iter().enumerate() {
            let x = vals(n, 3 + i as u64, -30.0, 30.0);
            let y = run_guarded(&x, |y, x| exp(level, y, x));
            for (&a, &v) in x.iter().zip(&y) {
                assert!(ulps(v, libm::expf(a)) <= EXP_MAX_ULP, "{}: exp({a}) = {v}", level.name());
            }
            let y = run_guarded(&x, |y, x| sigmoid(level, y, x));
            for (&a, &v) in x.iter().zip(&y) {
                let want = (1.0 / (1.0 + (-(a as f64)).exp())) as f32;
                assert!(ulps(v, want) <= SIGMOID_MAX_ULP, "{}: sigmoid({a}) = {v}, want {want}", level.name());
            }
        }
        // The edges of sigmoid: saturation, ±inf, NaN.
        // Below −88.72, e^−x overflows f32 and the result is 0 (as the portable formula).
        let x = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 200.0, -200.0, 0.0, -0.0, -100.0, -80.0];
        let y = run_guarded(&x, |y, x| sigmoid(level, y, x));
        assert_eq!(&y[..2], &[1.0, 0.0]);
        assert!(y[2].is_nan());
        assert_eq!(&y[3..8], &[1.0, 0.0, 0.5, 0.5, 0.0]);
        assert!(ulps(y[8], (1.0 / (1.0 + 80f64.exp())) as f32) <= SIGMOID_MAX_ULP);
    }
}

/// Sigmoid's bound against the rounded f64 value: exp's ulps plus the add and the divide.
const SIGMOID_MAX_ULP: u32 = EXP_MAX_ULP + 2;

#[test]
fn softmax_rows_against_an_f64_oracle() {
    for level in levels() {
        for (i, &n) in LENS.iter().enumerate() {
            let x = vals(n, 11 + i as u64, -20.0, 20.0);
            let mut y = x.clone();
            assert!(softmax_in_place(level, &mut y));
            // The difference x − max is rounded to f32 by every implementation (the portable
            // one too): the oracle starts from it.
            let m = x.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let e: Vec<f64> = x.iter().map(|&v| ((v - m) as f64).exp()).collect();
            let total: f64 = e.iter().sum();
            // Relative: exp (2 ulps), the sum (n roundings), the reciprocal and the scale.
            let tol = (n as f64 + 8.0) * f64::powi(2.0, -24);
            for (j, (&v, &ej)) in y.iter().zip(&e).enumerate() {
                let want = ej / total;
                assert!((v as f64 - want).abs() <= tol * want + 1e-40, "{}: n {n} [{j}] {v} vs {want}", level.name());
            }
        }
        let mut y = vec![1.0, f32::NAN, 3.0, 0.5, 0.0, 2.0, 1.0, 1.0, 9.0];
        assert!(softmax_in_place(level, &mut y));
        assert!(y.iter().all(|v| v.is_nan()), "{}: a NaN makes the row NaN", level.name());
    }
}

#[test]
fn norm_rows_against_an_f64_oracle() {
    let (eps, u) = (1e-5f32, f64::powi(2.0, -24));
    for level in levels() {
        for (i, &n) in LENS.iter().enumerate() {
            let x = vals(n, 21 + i as u64, -3.0, 5.0);
            let w = vals(n, 22 + i as u64, -2.0, 2.0);
            let b = vals(n, 23 + i as u64, -1.0, 1.0);
            let inv_d = (1.0 / n.max(1) as f64) as f32;
            let tol = (n as f64 + 8.0) * u;

            let mut y = vec![0f32; n];
            assert!(rms_norm_row(level, &x, &w, eps, inv_d, &mut y));
            let ss: f64 = x.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() * inv_d as f64;
            let inv = 1.0 / (ss + eps as f64).sqrt();
            for j in 0..n {
                let want = x[j] as f64 * inv * w[j] as f64;
                assert!((y[j] as f64 - want).abs() <= tol * want.abs() + 1e-30, "{}: rms n {n} [{j}] {} vs {want}", level.name(), y[j]);
            }

            assert!(layer_norm_row(level, &x, &w, &b, eps, inv_d, &mut y));
            let mu = x.iter().map(|&v| v as f64).sum::<f64>() * inv_d as f64;
            let var = x.iter().map(|&v| (v as f64 - mu).powi(2)).sum::<f64>() * inv_d as f64;
            let inv = 1.0 / (var + eps as f64).sqrt();
            for j in 0..n {
                let t = (x[j] as f64 - mu) * inv * w[j] as f64;
                let want = t + b[j] as f64;
                // μ's error is relative to the row's magnitude, not to x − μ.
                let scale = (x[j].abs() as f64 + mu.abs()) * inv * (w[j].abs() as f64) + b[j].abs() as f64;
                assert!((y[j] as f64 - want).abs() <= 2.0 * tol * scale + 1e-30, "{}: layer n {n} [{j}] {} vs {want}", level.name(), y[j]);
            }
        }
    }
}

#[test]
fn the_portable_level_has_no_simd_kernels() {
    let mut y = [1.0f32];
    assert!(!exp(Isa::Portable, &mut y, None));
    assert!(!softmax_in_place(Isa::Portable, &mut y));
    assert_eq!(y, [1.0]);
}
