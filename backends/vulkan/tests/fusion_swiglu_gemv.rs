//! A layer's SwiGLU (a FusedOp program, `g·sigmoid(g)·u`) followed by the one-row GGUF GEMV of
//! its output (the down projection), with the GPUs' GEMV (ggml_mv_sub.comp,
//! `MLX_ARM_VULKAN_GGML_MV=subgroup`): the held-back program runs inside the GEMV
//! (ggml_mv_sub_fx.comp), one dispatch where the unfused ones take two, with both outputs (the
//! program's, which the GEMV also stores, and the GEMV's) equal bit for bit to the unfused
//! dispatches' (`set_fusion(false)`) and to the CPU within its bounds (the program exactly in
//! float32; the GEMV within the CPU's Q8 rounding of x, 1e-2 as in tests/harness) Rows longer
//! than 4096 are not folded (two dispatches, the same checks).

use mlx_arm_core::ops::binary::BinaryOp;
use mlx_arm_core::ops::fused::{FusedOp, Step};
use mlx_arm_core::ops::unary::UnaryOp;
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{device, eval, ops, Array, DType, Device};
use mlx_arm_vulkan as vkb;
use std::sync::Arc;

mod common;
use common::{counted_on_gpu, f32s, normalized_error, values};

/// The fusion switch and the dispatch counter are global: the tests take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// lm's SwiGLU program (lm/src/model.rs): registers g = 0, u = 1.
fn swiglu(dtype: DType) -> Arc<FusedOp> {
    let step = |prim, args: &[usize]| Step { prim, args: args.to_vec(), dtype };
    Arc::new(FusedOp {
        n_inputs: 2,
        steps: vec![
            step(Primitive::Unary(UnaryOp::Sigmoid), &[0]),
            step(Primitive::Binary(BinaryOp::Multiply), &[0, 2]),
            step(Primitive::Binary(BinaryOp::Multiply), &[3, 1]),
        ],
    })
}

#[test]
fn swiglu_runs_inside_the_down_projection_gemv() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var(vkb::GGML_MV_ENV, "subgroup");
    std::env::set_var(vkb::PROFILE_ENV, "1");
    let info = vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    let mut dts = vec![(DType::Float32, 1e-6)];
    if info.f16 {
        dts.push((DType::Float16, 2e-3));
    }
    // (k: the program's length and the weight rows' width, n: weight rows, type)
    // 4096: the longest row folded (x in the workgroup's shared memory); 4128 stays two dispatches.
    for (k, n, ty) in [(1536, 67, GgmlType::Q4_1), (96, 13, GgmlType::Q8_0), (512, 9, GgmlType::Q6_K), (4096, 5, GgmlType::Q8_0), (4128, 5, GgmlType::Q4_1)] {
        let w = ops::ggml_quantize(&Array::from_slice(&values(n * k, 3), &[n, k]).unwrap(), ty).unwrap();
        for &(dt, tol) in &dts {
            let host = |seed| ops::astype(&Array::from_slice(&values(k, seed), &[1, 1, k]).unwrap(), dt).unwrap();
            let (g, u) = (host(5), host(7));
            let build = || {
                let act = FusedOp::record(&swiglu(dt), vec![g.clone(), u.clone()]).unwrap();
                let out = ops::ggml_matmul(&act, &w, ty, k).unwrap();
                vec![act, out]
            };
            let gpu = |fuse: bool| {
                // g and u made on the GPU first (their own dispatches), then the counted pair.
                device::set_default_device(Device::GPU).unwrap();
                counted_on_gpu(fuse, build)
            };
            let (fused, n_fused) = gpu(true);
            let (plain, n_plain) = gpu(false);
            let name = format!("k {k}, n {n}, {ty:?}, {dt:?}");
            let folded = if k <= 4096 { 1 } else { 0 };
            assert_eq!(n_plain - n_fused, folded, "{name}: {n_fused} dispatches fused, {n_plain} unfused");
            for (i, (f, p)) in fused.iter().zip(&plain).enumerate() {
                assert!(f.iter().zip(p).all(|(x, y)| x.to_bits() == y.to_bits()), "{name}: output {i} differs fused / unfused");
            }
            device::set_default_device(Device::CPU).unwrap();
            let cpu: Vec<Vec<f32>> = build().iter().map(f32s).collect();
            let e_act = normalized_error(&fused[0], &cpu[0]);
            let e_out = normalized_error(&fused[1], &cpu[1]);
            assert!(e_act <= tol, "{name}: the program's output differs from the CPU by {e_act:.2e}");
            assert!(e_out <= 1e-2, "{name}: the GEMV differs from the CPU by {e_out:.2e}");
        }
    }
    let ran: Vec<&str> = vkb::kernel_times().iter().map(|k| k.name).collect();
    assert!(ran.contains(&"ggml_mv_sub_fx"), "ggml_mv_sub_fx did not run: {ran:?}");
}

/// A program of another shape (`u·sigmoid(g)·g`: registers wired differently) stays its own
/// dispatch before the GEMV, with the same values as unfused.
#[test]
fn other_programs_are_not_folded() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var(vkb::GGML_MV_ENV, "subgroup");
    // Whichever test starts the backend first: both want the profile on.
    std::env::set_var(vkb::PROFILE_ENV, "1");
    vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    let (k, n, ty, dt) = (96, 13, GgmlType::Q4_1, DType::Float32);
    let step = |prim, args: &[usize]| Step { prim, args: args.to_vec(), dtype: dt };
    let prog = Arc::new(FusedOp {
        n_inputs: 2,
        steps: vec![
            step(Primitive::Unary(UnaryOp::Sigmoid), &[0]),
            step(Primitive::Binary(BinaryOp::Multiply), &[1, 2]),
            step(Primitive::Binary(BinaryOp::Multiply), &[3, 0]),
        ],
    });
    let w = ops::ggml_quantize(&Array::from_slice(&values(n * k, 3), &[n, k]).unwrap(), ty).unwrap();
    let (g, u) = (Array::from_slice(&values(k, 5), &[1, k]).unwrap(), Array::from_slice(&values(k, 7), &[1, k]).unwrap());
    let build = || {
        let act = FusedOp::record(&prog, vec![g.clone(), u.clone()]).unwrap();
        let out = ops::ggml_matmul(&act, &w, ty, k).unwrap();
        vec![act, out]
    };
    let mut got = Vec::new();
    for fuse in [true, false] {
        device::set_default_device(Device::GPU).unwrap();
        vkb::set_fusion(fuse);
        let before = vkb::queue_stats().dispatches;
        let outs = build();
        eval(&outs).unwrap();
        let vals: Vec<Vec<f32>> = outs.iter().map(f32s).collect();
        device::set_default_device(Device::CPU).unwrap();
        vkb::set_fusion(true);
        got.push((vals, vkb::queue_stats().dispatches - before));
    }
    assert_eq!((got[0].1, got[1].1), (2, 2), "dispatches (fusion on, off)");
    assert_eq!(got[0].0, got[1].0);
    let cpu: Vec<Vec<f32>> = build().iter().map(f32s).collect();
    assert!(normalized_error(&got[0].0[0], &cpu[0]) <= 1e-6);
}
