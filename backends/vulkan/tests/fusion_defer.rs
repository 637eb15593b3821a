//! Dispatches the recorder holds back and fuses with the next op (src/defer.rs): a dense add
//! followed by the rms_norm of its sum, two ropes with the same parameters, two KV-cache
//! window writes. Each fused path must give exactly (bit for bit) what the unfused dispatches
//! give (`set_fusion(false)`), take fewer dispatches, and agree with the CPU kernels.

use mlx_arm_core::ops::fast::RopeOffset;
use mlx_arm_core::{device, eval, ops, Array, DType, Device};
use mlx_arm_vulkan as vkb;

mod common;
use common::{values, normalized_error};

/// The fusion switch and the dispatch counter are global: the tests take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A GPU-resident copy of `v` as `dt` (the result of a GPU op, so binding it uploads nothing).
fn on_gpu(v: &[f32], shape: &[usize], dt: DType) -> Array {
    let host = ops::astype(&Array::from_slice(v, shape).unwrap(), dt).unwrap();
    device::set_default_device(Device::GPU).unwrap();
    let a = ops::multiply(&host, &ops::astype(&Array::scalar(1.0f32).unwrap(), dt).unwrap()).unwrap();
    a.eval().unwrap();
    a
}

/// Builds the graph with fusion `on`, evaluates its outputs on the GPU and reads them back as
/// float32: the values and the dispatches recorded (all flushed by the reads).
fn run(on: bool, build: &dyn Fn() -> Vec<Array>) -> (Vec<Vec<f32>>, usize) {
    device::set_default_device(Device::GPU).unwrap();
    vkb::set_fusion(on);
    let before = vkb::queue_stats().dispatches;
    let outs = build();
    eval(&outs).unwrap();
    let got = outs.iter().map(|a| ops::astype(a, DType::Float32).unwrap()).collect::<Vec<_>>();
    device::set_default_device(Device::CPU).unwrap();
    let vals = got.iter().map(|a| a.to_vec::<f32>().unwrap()).collect();
    let n = vkb::queue_stats().dispatches - before;
    vkb::set_fusion(true);
    (vals, n)
}

/// The same graph on the CPU kernels (the oracle), as float32.
fn on_cpu(build: &dyn Fn() -> Vec<Array>) -> Vec<Vec<f32>> {
    device::set_default_device(Device::CPU).unwrap();
    build().iter().map(|a| ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap()).collect()
}

/// Fused and unfused results are bit-identical, the fused run takes `saved` fewer dispatches,
/// and both agree with the CPU within `tol`.
fn check(name: &str, build: &dyn Fn() -> Vec<Array>, saved: usize, tol: f64) {
    let (fused, n_fused) = run(true, build);
    let (plain, n_plain) = run(false, build);
    let cpu = on_cpu(build);
    eprintln!("{name}: {n_fused} dispatches fused, {n_plain} unfused");
    assert_eq!(n_plain - n_fused, saved, "{name}: {n_fused} dispatches fused, {n_plain} unfused");
    for (i, ((f, p), c)) in fused.iter().zip(&plain).zip(&cpu).enumerate() {
        let same = f.iter().zip(p).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{name}: output {i} differs between the fused and unfused dispatches");
        let e = normalized_error(f, c);
        assert!(e <= tol, "{name}: output {i} differs from the CPU by {e:.2e}");
    }
}

fn dtypes() -> Vec<(DType, f64)> {
    let info = vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    let mut v = vec![(DType::Float32, 1e-5)];
    if info.f16 {
        v.push((DType::Float16, 2e-3));
    }
    v
}

#[test]
fn residual_add_then_rms_norm_is_one_dispatch() {
    let _turn = serial();
    for (dt, tol) in dtypes() {
        // Rows longer than a workgroup (300 > 256) and several rows; then a chain as in a
        // decode step: x += f(norm(x)) twice.
        let x = on_gpu(&values(2 * 3 * 300, 7), &[2, 3, 300], dt);
        let y = on_gpu(&values(2 * 3 * 300, 11), &[2, 3, 300], dt);
        let w = on_gpu(&values(300, 13), &[300], dt);
        let build = || {
            let s = ops::add(&x, &y).unwrap();
            let h = ops::rms_norm(&s, Some(&w), 1e-5).unwrap();
            let s2 = ops::add(&s, &ops::sigmoid(&h).unwrap()).unwrap();
            let h2 = ops::rms_norm(&s2, Some(&w), 1e-5).unwrap();
            vec![s, h, s2, h2]
        };
        check(&format!("add + rms_norm {dt:?}"), &build, 2, tol);
        // Broadcast adds and norms of something else are not fused (and still right).
        let b = on_gpu(&values(300, 17), &[300], dt);
        let other = || {
            let s = ops::add(&x, &b).unwrap();
            let h = ops::rms_norm(&s, Some(&w), 1e-5).unwrap();
            let s2 = ops::add(&x, &y).unwrap();
            let h2 = ops::rms_norm(&x, Some(&w), 1e-5).unwrap();
            vec![h, s2, h2]
        };
        check(&format!("unfusable adds {dt:?}"), &other, 0, tol);
    }
}

#[test]
fn queries_and_keys_rope_in_one_dispatch() {
    let _turn = serial();
    for (dt, tol) in dtypes() {
        // A decode step's heads: q (1, 9, 1, 64), k (1, 3, 1, 64), views of one projection.
        let qkv = on_gpu(&values(15 * 64, 23), &[1, 1, 15 * 64], dt);
        let q = ops::reshape(&ops::slice(&qkv, &[0, 0, 0], &[1, 1, 576], &[1, 1, 1]).unwrap(), &[1, 9, 1, 64]).unwrap();
        let k = ops::reshape(&ops::slice(&qkv, &[0, 0, 576], &[1, 1, 768], &[1, 1, 1]).unwrap(), &[1, 3, 1, 64]).unwrap();
        let off = Array::scalar(37i32).unwrap();
        for (dims, traditional) in [(64, false), (32, true)] {
            let build = || {
                let rq = ops::rope(&q, dims, traditional, Some(10000.0), 1.0, RopeOffset::Array(&off), None).unwrap();
                let rk = ops::rope(&k, dims, traditional, Some(10000.0), 1.0, RopeOffset::Array(&off), None).unwrap();
                vec![rq, rk]
            };
            check(&format!("rope q + k dims {dims} traditional {traditional} {dt:?}"), &build, 1, 10.0 * tol);
        }
        // Different parameters (base) or a rope of the other's output: two dispatches.
        let other = || {
            let rq = ops::rope(&q, 64, false, Some(10000.0), 1.0, RopeOffset::Array(&off), None).unwrap();
            let rk = ops::rope(&k, 64, false, Some(500.0), 1.0, RopeOffset::Array(&off), None).unwrap();
            let rr = ops::rope(&rq, 64, false, Some(10000.0), 1.0, RopeOffset::Array(&off), None).unwrap();
            vec![rk, rr]
        };
        check(&format!("unfusable ropes {dt:?}"), &other, 0, 10.0 * tol);
    }
}

#[test]
fn two_kv_cache_writes_are_one_dispatch() {
    let _turn = serial();
    for (dt, tol) in dtypes() {
        let (kv, upd) = (values(3 * 8 * 64, 29), values(3 * 64, 31));
        let (kv2, upd2) = (values(3 * 8 * 64, 37), values(3 * 64, 41));
        let uk = on_gpu(&upd, &[1, 3, 1, 64], dt);
        let uv = on_gpu(&upd2, &[1, 3, 1, 64], dt);
        // Unshared caches (their buffers are handed to the op, as the KV cache does): the
        // windows alone are written, both in one dispatch when fused.
        let build = || {
            let ck = on_gpu(&kv, &[1, 3, 8, 64], dt);
            let cv = on_gpu(&kv2, &[1, 3, 8, 64], dt);
            device::set_default_device(Device::GPU).unwrap();
            let ok = ops::slice_update(&ck, &uk, &[0, 0, 5, 0], &[1, 3, 6, 64], &[1, 1, 1, 1]).unwrap();
            let ov = ops::slice_update(&cv, &uv, &[0, 0, 5, 0], &[1, 3, 6, 64], &[1, 1, 1, 1]).unwrap();
            drop((ck, cv));
            vec![ok, ov]
        };
        // Each run also makes its two caches (two dispatches, not fused).
        check(&format!("KV-cache writes {dt:?}"), &build, 1, tol);
        // Hand-computed: position 5 of each head replaced.
        let (vals, _) = run(true, &build);
        for (got, (base, u)) in vals.iter().zip([(&kv, &upd), (&kv2, &upd2)]) {
            let mut want = base.clone();
            for h in 0..3 {
                want[h * 512 + 5 * 64..h * 512 + 6 * 64].copy_from_slice(&u[h * 64..h * 64 + 64]);
            }
            let want = ops::astype(&Array::from_slice(&want, &[want.len()]).unwrap(), dt).unwrap();
            let want: Vec<f32> = ops::astype(&want, DType::Float32).unwrap().to_vec().unwrap();
            assert_eq!(got, &want, "{dt:?}");
        }
    }
}
