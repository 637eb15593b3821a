//! The GGUF matmul cases of the conformance harness (tests/harness) with one-row GEMVs split
//! over invocations (`MLX_ARM_VULKAN_GGML_MV=split`, ggml_mv.comp: the GPUs' layout, which CPU
//! devices such as lavapipe leave for ggml_mv_cpu.comp by default), with the default lanes
//! (64 where subgroups are not 32 wide: several subgroups' sums added in shared memory).

mod harness;

#[test]
fn ggml_matmul_matches_cpu_split_rows() {
    std::env::set_var(mlx_arm_vulkan::GGML_MV_ENV, "split");
    std::env::set_var(mlx_arm_vulkan::PROFILE_ENV, "1");
    harness::check_matching(|name| name.starts_with("ggml_matmul"));
    let ran: Vec<&str> = mlx_arm_vulkan::kernel_times().iter().map(|k| k.name).collect();
    assert!(ran.iter().any(|k| *k == "ggml_mv" || *k == "ggml_mv_sg"), "no split GEMV ran: {ran:?}");
    assert!(!ran.contains(&"ggml_mv_cpu"), "ggml_mv_cpu ran: {ran:?}");
}
