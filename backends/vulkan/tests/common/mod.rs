//! Helpers shared by the fusion and model tests: seeded inputs, f32 read-back and the
//! normalized error they bound. (Each test file uses a subset.)
#![allow(dead_code)]

use mlx_arm_core::{device, eval, ops, Array, DType, Device};
use mlx_arm_vulkan as vkb;

/// `n` values in [-2, 2) from a xorshift seeded with `seed` (the same for every test file).
pub fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 4000) as f32 / 1000.0 - 2.0
        })
        .collect()
}

/// `a` read back as float32.
pub fn f32s(a: &Array) -> Vec<f32> {
    ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap()
}

/// ‖a − b‖ / ‖b‖ in f64.
pub fn normalized_error(a: &[f32], b: &[f32]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum();
    let den: f64 = b.iter().map(|&y| f64::from(y).powi(2)).sum();
    (num / den.max(1e-30)).sqrt()
}

/// Runs `build` on the GPU (the default device must already be the GPU) with fusion `fuse`,
/// and returns its outputs read back as f32 with the dispatches it took; the default device
/// and fusion are restored (CPU, on).
pub fn counted_on_gpu(fuse: bool, build: impl FnOnce() -> Vec<Array>) -> (Vec<Vec<f32>>, usize) {
    vkb::set_fusion(fuse);
    let before = vkb::queue_stats().dispatches;
    let outs = build();
    eval(&outs).unwrap();
    let vals: Vec<Vec<f32>> = outs.iter().map(f32s).collect();
    device::set_default_device(Device::CPU).unwrap();
    vkb::set_fusion(true);
    (vals, vkb::queue_stats().dispatches - before)
}
