//! The float32 ops that run on the `vecmath` SIMD kernels (exp, sigmoid, the attention
//! softmax, rms_norm, layer_norm, rope), through the public API at every ISA level this
//! machine has: each level against the portable level (the reference kernels) within the
//! kernels' error bounds, and 2 threads bit-identical to 1. One test function, because the
//! ISA level and the thread count are process-wide.

use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::cpu::vecmath::EXP_MAX_ULP;
use mlx_arm_core::ops::{self, RopeOffset, SdpaMask};
use mlx_arm_core::parallel::set_num_threads;
use mlx_arm_core::{Array, Result};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;
#[path = "common/levels.rs"]
mod levels;

/// Deterministic values in [lo, hi).
fn arr(shape: &[usize], seed: u64, lo: f32, hi: f32) -> Array {
    let v = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1).row(shape.iter().product(), (hi - lo) / 2.0);
    let v: Vec<f32> = v.into_iter().map(|x| x + (hi + lo) / 2.0).collect();
    Array::from_slice(&v, shape).unwrap()
}

/// How far a level's result may be from the portable level's.
#[derive(Clone, Copy)]
enum Tol {
    /// Representable f32s apart, element by element (exp and sigmoid: the kernel's bound).
    Ulps(u32),
    /// Times 2⁻²³ times the output's largest magnitude (sums in another order).
    Rel(f32),
}

/// Every case: a name, the op, and its tolerance.
type Case = (&'static str, Box<dyn Fn() -> Result<Array>>, Tol);

/// Distance in representable f32s (−0 and +0 equal).
fn ulps(a: f32, b: f32) -> u64 {
    let ord = |x: f32| {
        let b = x.to_bits() as i32;
        if b < 0 { -(b & 0x7fff_ffff) as i64 } else { b as i64 }
    };
    (ord(a) - ord(b)).unsigned_abs()
}

fn cases() -> Vec<Case> {
    // Lengths with every 4/8/16-lane tail; rows long enough to be split over threads.
    let x1 = arr(&[100_003], 1, -90.0, 90.0);
    let xs = arr(&[3, 1031], 2, -6.0, 6.0);
    let xr = arr(&[37, 4099], 3, -3.0, 5.0);
    let w = arr(&[4099], 4, -2.0, 2.0);
    let b = arr(&[4099], 5, -1.0, 1.0);
    let rx = arr(&[2, 8, 33, 64], 6, -2.0, 2.0);
    let q = arr(&[1, 4, 3, 64], 7, -1.0, 1.0);
    let k = arr(&[1, 2, 1027, 64], 8, -1.0, 1.0);
    let v = arr(&[1, 2, 1027, 64], 9, -1.0, 1.0);
    let ex = EXP_MAX_ULP;
    let x1b = x1.clone();
    let (xr2, w2) = (xr.clone(), w.clone());
    let (rx2, rx3) = (rx.clone(), rx.clone());
    let xs2 = xs.clone();
    vec![
        ("exp", Box::new(move || ops::exp(&x1)), Tol::Ulps(ex)),
        // A fresh intermediate: its buffer is donated and overwritten in place.
        ("exp(donated)", Box::new(move || ops::exp(&ops::multiply(&xs, &Array::scalar(2.0f32)?)?)), Tol::Ulps(ex)),
        ("sigmoid", Box::new(move || ops::sigmoid(&x1b)), Tol::Ulps(ex + 2)),
        ("rms_norm", Box::new(move || ops::rms_norm(&xr, Some(&w), 1e-5)), Tol::Rel(64.0)),
        ("layer_norm", Box::new(move || ops::layer_norm(&xr2, Some(&w2), Some(&b), 1e-5)), Tol::Rel(64.0)),
        ("rope", Box::new(move || ops::rope(&rx, 48, false, Some(10000.0), 1.0, RopeOffset::Int(5), None)), Tol::Ulps(0)),
        // 38 rotated dims: 19 pairs, a tail at every vector width.
        ("rope(19 pairs)", Box::new(move || ops::rope(&rx3, 38, false, Some(10000.0), 1.0, RopeOffset::Int(3), None)), Tol::Ulps(0)),
        ("softmax", Box::new(move || ops::softmax(&xs2, Some(&[-1]), false)), Tol::Rel(16.0)),
        ("rope(traditional)", Box::new(move || ops::rope(&rx2, 64, true, Some(500.0), 0.5, RopeOffset::Int(0), None)), Tol::Ulps(0)),
        ("sdpa", Box::new(move || ops::scaled_dot_product_attention(&q, &k, &v, 0.125, SdpaMask::Causal)), Tol::Rel(256.0)),
    ]
}

fn run(case: &Case) -> Vec<f32> {
    let y = (case.1)().unwrap();
    y.to_vec::<f32>().unwrap()
}

#[test]
fn every_level_matches_the_portable_kernels_and_threads_do_not_change_bits() {
    let cases = cases();
    isa::set_isa(Isa::Portable).unwrap();
    set_num_threads(1);
    let reference: Vec<Vec<f32>> = cases.iter().map(run).collect();
    let mut failures = Vec::new();
    for level in levels::levels() {
        isa::set_isa(level).unwrap();
        for (case, want) in cases.iter().zip(&reference) {
            set_num_threads(1);
            let one = run(case);
            set_num_threads(2);
            let two = run(case);
            if one.iter().zip(&two).any(|(a, b)| a.to_bits() != b.to_bits()) {
                failures.push(format!("{} {}: 2 threads differ from 1", level.name(), case.0));
            }
            assert_eq!(one.len(), want.len());
            let row_max = want.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (i, (&a, &b)) in one.iter().zip(want).enumerate() {
                let ok = (a.is_nan() && b.is_nan())
                    || match case.2 {
                        Tol::Ulps(n) => ulps(a, b) <= n as u64,
                        Tol::Rel(r) => (a - b).abs() <= r * f32::EPSILON * row_max,
                    };
                if !ok {
                    failures.push(format!("{} {}[{i}]: {a} vs portable {b}", level.name(), case.0));
                    break;
                }
            }
        }
    }
    isa::set_isa(isa::best()).unwrap();
    set_num_threads(0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
