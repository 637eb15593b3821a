//! The device-local memory model (a discrete GPU's), forced on lavapipe with
//! MLX_ARM_VULKAN_MEMORY=device: inputs are uploaded once through staging buffers, results
//! stay on the device until read, each copy is counted, and reads give the right values.

use mlx_arm_core::buffer;
use mlx_arm_core::{device, ops, Array, Device};

#[test]
fn device_local_results_move_only_when_read() {
    std::env::set_var(mlx_arm_vulkan::MEMORY_ENV, "device");
    let info = mlx_arm_vulkan::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    assert!(!info.shared_memory);
    let xs: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.37).sin()).collect();
    let x = Array::from_slice(&xs, &[64, 64]).unwrap();
    buffer::reset_transfer_stats();
    device::set_default_device(Device::GPU).unwrap();
    // x is used three times but uploaded once (kept as its device mirror).
    let y = ops::add(&ops::exp(&x).unwrap(), &x).unwrap();
    let z = ops::matmul(&y, &x).unwrap();
    let s = ops::sum(&z, Some(&[1]), false).unwrap();
    s.eval().unwrap();
    device::set_default_device(Device::CPU).unwrap();
    let t = buffer::transfer_stats();
    assert_eq!((t.host_to_device, t.host_to_device_bytes), (1, 4096 * 4), "{t:?}");
    assert_eq!(t.device_to_host, 0, "nothing read yet: {t:?}");
    assert!(buffer::device_active_memory() >= 64 * 4);

    let got = s.to_vec::<f32>().unwrap();
    let t = buffer::transfer_stats();
    assert_eq!((t.device_to_host, t.device_to_host_bytes), (1, 64 * 4), "{t:?}");

    // The same on the CPU (the oracle).
    let want = ops::sum(&ops::matmul(&ops::add(&ops::exp(&x).unwrap(), &x).unwrap(), &x).unwrap(), Some(&[1]), false)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{g} vs {w}");
    }
}
