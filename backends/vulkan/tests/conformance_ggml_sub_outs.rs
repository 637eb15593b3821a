//! tests/conformance_ggml_sub.rs with four outputs a subgroup (`MLX_ARM_VULKAN_GGML_OUTS=4`;
//! the default takes one up to 2048 weight rows, which every case here has): the x elements an
//! invocation loads serve four weight rows, and the last workgroup's outputs past N (13, 23, 67
//! rows) are computed and not stored.

mod harness;

#[test]
fn ggml_matmul_matches_cpu_four_outputs_a_subgroup() {
    std::env::set_var(mlx_arm_vulkan::GGML_MV_ENV, "subgroup");
    std::env::set_var(mlx_arm_vulkan::GGML_OUTS_ENV, "4");
    std::env::set_var(mlx_arm_vulkan::PROFILE_ENV, "1");
    harness::check_matching(|name| name.starts_with("ggml_matmul"));
    let ran: Vec<&str> = mlx_arm_vulkan::kernel_times().iter().map(|k| k.name).collect();
    assert!(ran.contains(&"ggml_mv_sub"), "ggml_mv_sub did not run: {ran:?}");
}
