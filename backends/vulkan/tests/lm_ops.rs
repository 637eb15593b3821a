//! The decode step's fused ops (core's `fast::lm`) on the GPU: recorded as one node there
//! (the backend supports them) and run as one dispatch each, where their unfused ops take two
//! (with the recorder's own fusion off, `MLX_ARM_VULKAN_FUSE=off`), with results equal bit for
//! bit to those ops' (the same shaders). tests/harness compares them with the CPU kernels.

use mlx_arm_core::ops::fast::lm::{add_rms_norm, add_rms_norm_fallback, decode_heads, decode_heads_fallback, HeadsRope};
use mlx_arm_core::{device, ops, Array, DType, Device};
use mlx_arm_vulkan as vkb;

fn values(shape: &[usize], seed: u32) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2000) as f32 / 1000.0 - 1.0).collect();
    let a = Array::from_slice(&v, shape).unwrap();
    a.eval().unwrap();
    a
}

/// Dispatches the GPU recorded while `f`'s outputs were computed, and those outputs as f32.
fn on_gpu(f: impl FnOnce() -> Vec<Array>) -> (usize, Vec<Vec<f32>>) {
    device::set_default_device(Device::GPU).unwrap();
    let before = vkb::queue_stats().dispatches;
    let outs = f();
    mlx_arm_core::eval(&outs).unwrap();
    device::set_default_device(Device::CPU).unwrap();
    let values = outs.iter().map(|o| ops::astype(o, DType::Float32).unwrap().to_vec::<f32>().unwrap()).collect();
    (vkb::queue_stats().dispatches - before, values)
}

#[test]
fn fused_decode_ops_run_as_one_dispatch_each_and_match_their_unfused_ops() {
    vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    vkb::set_fusion(false);
    for dt in [DType::Float32, DType::Float16] {
        let f = |shape: &[usize], seed| ops::astype(&values(shape, seed), dt).unwrap();
        let (x, r, w) = (f(&[1, 1, 576], 1), f(&[1, 1, 576], 2), f(&[576], 3));
        let (n, fused) = on_gpu(|| add_rms_norm(&x, &r, &w, 1e-5).unwrap().to_vec());
        let (n_ops, unfused) = on_gpu(|| add_rms_norm_fallback(&x, &r, &w, 1e-5).unwrap().to_vec());
        assert_eq!((n, n_ops), (1, 2), "{dt}: add_rms_norm dispatches (fused, unfused)");
        assert_eq!(fused, unfused, "{dt}: add_rms_norm");

        let (q, k, v) = (f(&[1, 1, 576], 4), f(&[1, 1, 192], 5), f(&[1, 1, 192], 6));
        let pos = Array::scalar(37i32).unwrap();
        let rope = HeadsRope { dims: 64, traditional: false, base: Some(100000.0), scale: 1.0, offset: &pos, freqs: None };
        let (n, fused) = on_gpu(|| decode_heads(&q, &k, &v, 64, &rope).unwrap().to_vec());
        let (n_ops, unfused) = on_gpu(|| decode_heads_fallback(&q, &k, &v, 64, &rope).unwrap().to_vec());
        assert_eq!((n, n_ops), (1, 2), "{dt}: decode_heads dispatches (fused, unfused)");
        assert_eq!(fused, unfused, "{dt}: decode_heads");
    }
    vkb::set_fusion(true);
}
