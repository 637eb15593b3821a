//! The decode step's fused ops (core's `fast::lm`) on the GPU: recorded as one node there
//! (the backend supports them) and run as one dispatch each, where their unfused ops take two
//! (with the recorder's own fusion off, `MLX_ARM_VULKAN_FUSE=off`), with results equal bit for
//! bit to those ops' (the same shaders). tests/harness compares them with the CPU kernels.

use mlx_arm_core::ops::fast::lm::{add_rms_norm, add_rms_norm_fallback, decode_heads, decode_heads_fallback, kv_write, kv_write_fallback, HeadsRope};
use mlx_arm_core::{device, ops, Array, DType, Device};
use mlx_arm_vulkan as vkb;

/// The tests here count the process's dispatches and set its fusion: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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

/// A GPU result (device memory of the backend's own, which `kv_write` may write in place).
fn on_device(a: &Array) -> Array {
    device::set_default_device(Device::GPU).unwrap();
    let zero = ops::astype(&Array::scalar(0.0f32).unwrap(), a.dtype()).unwrap();
    let d = ops::add(a, &zero).unwrap();
    d.eval().unwrap();
    device::set_default_device(Device::CPU).unwrap();
    d
}

fn f32s(a: &Array) -> Vec<f32> {
    ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn kv_write_writes_both_buffers_in_one_dispatch_and_matches_the_cpu() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    vkb::set_fusion(true);
    // (batch, heads, capacity, key width, value width, rows written, at, dtype, keys transposed)
    let cases = [
        (1, 3, 16, 64, 64, 1, 5, DType::Float32, false), // the default model's decode write
        (1, 3, 16, 64, 64, 1, 15, DType::Float16, false), // the last row
        (2, 2, 9, 8, 4, 3, 4, DType::Float32, true),      // a chunk of strided keys
    ];
    for (ci, &(b, h, cap, dk, dv, t, at, dt, strided)) in cases.iter().enumerate() {
        let f = |shape: &[usize], seed| ops::astype(&values(shape, seed), dt).unwrap();
        let (kb, vb) = (f(&[b, h, cap, dk], 11), f(&[b, h, cap, dv], 12));
        let k = if strided { ops::transpose(&f(&[b, t, h, dk], 13), Some(&[0, 2, 1, 3])).unwrap() } else { f(&[b, h, t, dk], 13) };
        let v = f(&[b, h, t, dv], 14);
        // The oracle: the unfused ops on the CPU.
        let want: Vec<Vec<f32>> = kv_write_fallback(&kb, &vb, &k, &v, at).unwrap().iter().map(f32s).collect();

        // Buffers the op holds alone: written in place, both windows in one dispatch.
        let (gk, gv) = (on_device(&kb), on_device(&vb));
        let (n, got) = on_gpu(move || kv_write(&gk, &gv, &k, &v, at).unwrap().to_vec());
        assert_eq!(got, want, "case {ci}: donated buffers");
        assert_eq!(n, 1, "case {ci}: dispatches (both windows in one)");

        // Buffers the caller still holds: each copied (one dispatch each), then both windows in
        // one; the unfused ops take a fourth (the first window is recorded before the second
        // copy). The held buffers keep their values.
        let (gk, gv) = (on_device(&kb), on_device(&vb));
        let k = if strided { ops::transpose(&f(&[b, t, h, dk], 13), Some(&[0, 2, 1, 3])).unwrap() } else { f(&[b, h, t, dk], 13) };
        let v = f(&[b, h, t, dv], 14);
        let (n, got) = on_gpu(|| kv_write(&gk, &gv, &k, &v, at).unwrap().to_vec());
        let (n_ops, unfused) = on_gpu(|| kv_write_fallback(&gk, &gv, &k, &v, at).unwrap().to_vec());
        assert_eq!((n, n_ops), (3, 4), "case {ci}: dispatches with held buffers (fused, unfused)");
        assert_eq!(got, want, "case {ci}: held buffers");
        assert_eq!(unfused, want, "case {ci}: the unfused ops");
        assert_eq!((f32s(&gk), f32s(&gv)), (f32s(&kb), f32s(&vb)), "case {ci}: held buffers unchanged");
    }
}

/// A decode step's `decode_heads` of one Q/K/V output (q, k, v views of one GPU array, as the
/// joined projection makes them) followed by `kv_write` into buffers the op holds alone: the
/// held-back rope and both window writes run as one rope_kv.comp dispatch, with every output
/// equal bit for bit to the unfused dispatches' (fusion off: rope, then the two window copies),
/// the windows holding exactly the rotated keys and the values, and every other cache row as
/// it was.
#[test]
fn decode_heads_then_kv_write_is_one_dispatch_and_matches_the_unfused_dispatches() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    // (query heads, KV heads, head dim, rotated dims, capacity, at, dtype)
    let cases = [(9, 3, 64, 64, 16, 5, DType::Float32), (9, 3, 64, 64, 16, 15, DType::Float16), (4, 2, 32, 16, 8, 0, DType::Float32)];
    for (ci, &(hq, hkv, d, dims, cap, at, dt)) in cases.iter().enumerate() {
        let f = |shape: &[usize], seed| ops::astype(&values(shape, seed), dt).unwrap();
        let (nq, nk) = (hq * d, hkv * d);
        let qkv = on_device(&f(&[1, 1, nq + 2 * nk], 21));
        let (kb, vb) = (f(&[1, hkv, cap, d], 22), f(&[1, hkv, cap, d], 23));
        let pos = Array::scalar(at as i32).unwrap();
        let run = |fuse: bool| {
            vkb::set_fusion(fuse);
            let (gk, gv) = (on_device(&kb), on_device(&vb));
            let qkv = qkv.clone();
            let pos = pos.clone();
            let out = on_gpu(move || {
                let part = |a: usize, b: usize| ops::slice(&qkv, &[0, 0, a as isize], &[1, 1, b as isize], &[1, 1, 1]).unwrap();
                let (q, k, v) = (part(0, nq), part(nq, nq + nk), part(nq + nk, nq + 2 * nk));
                let rope = HeadsRope { dims, traditional: false, base: Some(10000.0), scale: 1.0, offset: &pos, freqs: None };
                let [qh, kh, vh] = decode_heads(&q, &k, &v, d, &rope).unwrap();
                let mut outs = vec![qh, kh.clone(), vh.clone()];
                outs.extend(kv_write(&gk, &gv, &kh, &vh, at).unwrap());
                outs
            });
            vkb::set_fusion(true);
            out
        };
        let (n, fused) = run(true);
        let (n_ops, unfused) = run(false);
        assert_eq!((n, n_ops), (1, 3), "case {ci}: dispatches (fused, unfused)");
        assert_eq!(fused, unfused, "case {ci}: outputs");
        // The windows: row `at` of every head is the rotated key / the value; the rest unchanged.
        let (kh, vh, kc, vc) = (&fused[1], &fused[2], &fused[3], &fused[4]);
        let (k0, v0) = (f32s(&kb), f32s(&vb));
        for h in 0..hkv {
            for p in 0..cap {
                let row = (h * cap + p) * d..(h * cap + p + 1) * d;
                let (want_k, want_v) = if p == at { (&kh[h * d..(h + 1) * d], &vh[h * d..(h + 1) * d]) } else { (&k0[row.clone()], &v0[row.clone()]) };
                assert_eq!((&kc[row.clone()], &vc[row.clone()]), (want_k, want_v), "case {ci}: head {h}, row {p}");
            }
        }
    }
}
