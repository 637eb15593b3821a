//! The GGUF matmul cases of the conformance harness (tests/harness) with one-row GEMVs in
//! ggml_mv_sub.comp (`MLX_ARM_VULKAN_GGML_MV=subgroup`, the default on GPUs with subgroup
//! arithmetic: a subgroup per two outputs, a quarter chunk an invocation), checking through the
//! per-kernel profile that this shader ran them. On lavapipe subgroups are 8 wide, so a
//! workgroup's 16 subgroups cover its 4 subgroups' worth of outputs by looping; widths that do
//! not divide a row's quarters (K = 64, 96) and outputs past the last (N = 13, 37, 67) are among
//! the cases.

mod harness;

#[test]
fn ggml_matmul_matches_cpu_subgroup_per_output() {
    std::env::set_var(mlx_arm_vulkan::GGML_MV_ENV, "subgroup");
    std::env::set_var(mlx_arm_vulkan::PROFILE_ENV, "1");
    harness::check_matching(|name| name.starts_with("ggml_matmul"));
    let ran: Vec<&str> = mlx_arm_vulkan::kernel_times().iter().map(|k| k.name).collect();
    assert!(ran.contains(&"ggml_mv_sub"), "ggml_mv_sub did not run: {ran:?}");
    // Several rows of x below the tiled kernel's threshold still take the split GEMV.
    assert!(!ran.contains(&"ggml_mv_cpu"), "ggml_mv_cpu ran: {ran:?}");
}
