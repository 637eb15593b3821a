//! The GGUF matmul cases of the conformance harness (tests/harness) with one-row GEMVs in
//! ggml_mv_cpu.comp (`MLX_ARM_VULKAN_GGML_MV=row`, the default on CPU devices such as
//! lavapipe), checking through the per-kernel profile that this shader ran them.

mod harness;

#[test]
fn ggml_matmul_matches_cpu_one_output_per_invocation() {
    std::env::set_var(mlx_arm_vulkan::GGML_MV_ENV, "row");
    std::env::set_var(mlx_arm_vulkan::PROFILE_ENV, "1");
    harness::check_matching(|name| name.starts_with("ggml_matmul"));
    let ran: Vec<&str> = mlx_arm_vulkan::kernel_times().iter().map(|k| k.name).collect();
    assert!(ran.contains(&"ggml_mv_cpu"), "ggml_mv_cpu did not run: {ran:?}");
    assert!(!ran.iter().any(|k| *k == "ggml_mv" || *k == "ggml_mv_sg"), "a split GEMV ran: {ran:?}");
}
