//! `slice_update` of a GPU array nobody else holds (what a KV cache's write is each decode
//! step) goes into the array's own buffer: one dispatch, no copy of the rest. A source someone
//! still holds is copied first and keeps its values.

use mlx_arm_core::{device, ops, Array, Device};
use mlx_arm_vulkan as vkb;

#[test]
fn slice_update_writes_an_unshared_gpu_array_in_place() {
    vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    device::set_default_device(Device::GPU).unwrap();
    let vals: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let host = Array::from_slice(&vals, &[2, 3, 4]).unwrap();
    let upd_vals = [100.0f32, 101.0, 102.0, 103.0, 200.0, 201.0, 202.0, 203.0];
    let upd = Array::from_slice(&upd_vals, &[2, 1, 4]).unwrap();
    // Row 1 of each batch item replaced.
    let mut want = vals.clone();
    for b in 0..2 {
        want[b * 12 + 4..b * 12 + 8].copy_from_slice(&upd_vals[b * 4..b * 4 + 4]);
    }
    let zero = Array::scalar(0.0f32).unwrap();
    // A GPU result, so that its buffer is device memory.
    let gpu_copy = || {
        let a = ops::add(&host, &zero).unwrap();
        a.eval().unwrap();
        a
    };
    let update = |src: &Array| ops::slice_update(src, &upd, &[0, 1, 0], &[2, 2, 4], &[1, 1, 1]).unwrap();

    // Unshared: the source's only handle goes with the op.
    let src = gpu_copy();
    let before = vkb::queue_stats().dispatches;
    let out = update(&src);
    drop(src);
    out.eval().unwrap();
    // Read first: the recorder may hold the write back until then (src/defer.rs).
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
    assert_eq!(vkb::queue_stats().dispatches - before, 1, "the window alone is written");

    // Shared: the caller still holds the source, which must not change.
    let src = gpu_copy();
    let before = vkb::queue_stats().dispatches;
    let out = update(&src);
    out.eval().unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
    assert_eq!(vkb::queue_stats().dispatches - before, 2, "a copy of the source, then the window");
    assert_eq!(src.to_vec::<f32>().unwrap(), vals);
    device::set_default_device(Device::CPU).unwrap();
}
