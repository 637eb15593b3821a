//! A decode step's residual add and rms_norm of one row (two ops, or the language models'
//! `add_rms_norm`, or the rms_norm alone), followed by the
//! one-row GGUF GEMV of the norm (the Q/K/V or gate/up projection), with the GPUs' GEMV
//! (ggml_mv_sub.comp, `MLX_ARM_VULKAN_GGML_MV=subgroup`): the held-back norm runs inside the
//! GEMV (ggml_mv_sub_nx.comp), one dispatch where the unfused ones take three (add, norm,
//! GEMV) or two, with every output (the sum, the norm, the GEMV's) equal bit for bit to the
//! unfused dispatches' (`set_fusion(false)`) and to the CPU within its bounds (sum and norm as
//! tests/fusion_defer.rs; the GEMV within the CPU's Q8 rounding of x, 1e-2 as in tests/harness).
//! Rows longer than 4096 and GEMVs of more than 2048 workgroups are not folded.

use mlx_arm_core::ops::fast::lm::add_rms_norm;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{device, eval, ops, Array, DType, Device};
use mlx_arm_vulkan as vkb;

mod common;
use common::{counted_on_gpu, f32s, normalized_error, values};

#[test]
fn rms_norm_runs_inside_the_next_gemv() {
    std::env::set_var(vkb::GGML_MV_ENV, "subgroup");
    std::env::set_var(vkb::PROFILE_ENV, "1");
    let info = vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    let mut dts = vec![(DType::Float32, 1e-5)];
    if info.f16 {
        dts.push((DType::Float16, 2e-3));
    }
    // (k: the row's length, n: weight rows, type, folded). 576 and 300: rows longer than 256
    // (the norm's two sums an invocation) and not a multiple of it; 4096 the longest folded,
    // 4128 not; 40960 rows of 32 are 2560 workgroups: too many to fold.
    let cases = [
        (576, 67, GgmlType::Q4_1, true),
        (320, 13, GgmlType::Q8_0, true),
        (512, 9, GgmlType::Q6_K, true),
        (4096, 5, GgmlType::Q8_0, true),
        (4128, 37, GgmlType::Q8_0, false),
        (32, 40960, GgmlType::Q8_0, false),
    ];
    for (k, n, ty, folds) in cases {
        let w = ops::ggml_quantize(&Array::from_slice(&values(n * k, 3), &[n, k]).unwrap(), ty).unwrap();
        for &(dt, tol) in &dts {
            let host = |seed, len| ops::astype(&Array::from_slice(&values(len, seed), &[1, 1, len]).unwrap(), dt).unwrap();
            let (x, y) = (host(5, k), host(7, k));
            let g = ops::reshape(&host(11, k), &[k as isize]).unwrap();
            // "add": ops::add then ops::rms_norm (the add joins the norm in crate::defer), "lm":
            // the language models' add_rms_norm (one op), "none": the norm alone.
            for mode in ["add", "lm", "none"] {
                let build = |x: &Array, y: &Array, g: &Array| {
                    let (s, h) = match mode {
                        "add" => {
                            let s = ops::add(x, y).unwrap();
                            let h = ops::rms_norm(&s, Some(g), 1e-5).unwrap();
                            (s, h)
                        }
                        "lm" => {
                            let [s, h] = add_rms_norm(x, y, g, 1e-5).unwrap();
                            (s, h)
                        }
                        _ => (x.clone(), ops::rms_norm(x, Some(g), 1e-5).unwrap()),
                    };
                    let out = ops::ggml_matmul(&h, &w, ty, k).unwrap();
                    vec![s, h, out]
                };
                let gpu = |fuse: bool| {
                    device::set_default_device(Device::GPU).unwrap();
                    // The inputs on the GPU first (their own dispatches), then the counted ops.
                    let ins: Vec<Array> = [&x, &y, &g].iter().map(|a| ops::multiply(a, &ops::astype(&Array::scalar(1.0f32).unwrap(), dt).unwrap()).unwrap()).collect();
                    eval(&ins).unwrap();
                    counted_on_gpu(fuse, || build(&ins[0], &ins[1], &ins[2]))
                };
                let (fused, n_fused) = gpu(true);
                let (plain, n_plain) = gpu(false);
                let name = format!("k {k}, n {n}, {ty:?}, {dt:?}, {mode}");
                // The add joins the norm (fusion_defer.rs) whether or not the GEMV takes both.
                let saved = usize::from(mode == "add") + usize::from(folds);
                assert_eq!(n_plain - n_fused, saved, "{name}: {n_fused} dispatches fused, {n_plain} unfused");
                for (i, (f, p)) in fused.iter().zip(&plain).enumerate() {
                    assert!(f.iter().zip(p).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: output {i} differs fused / unfused");
                }
                device::set_default_device(Device::CPU).unwrap();
                let cpu: Vec<Vec<f32>> = build(&x, &y, &g).iter().map(f32s).collect();
                for (i, lim) in [(0, tol), (1, tol), (2, 1e-2)] {
                    let e = normalized_error(&fused[i], &cpu[i]);
                    assert!(e <= lim, "{name}: output {i} differs from the CPU by {e:.2e}");
                }
            }
        }
    }
    let ran: Vec<&str> = vkb::kernel_times().iter().map(|k| k.name).collect();
    assert!(ran.contains(&"ggml_mv_sub_nx"), "ggml_mv_sub_nx did not run: {ran:?}");
}
