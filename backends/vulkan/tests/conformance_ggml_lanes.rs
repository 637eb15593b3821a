//! The GGUF matmul cases of the conformance harness (tests/harness) with 8 invocations a weight
//! row (`MLX_ARM_VULKAN_GGML_LANES=8`): on lavapipe (subgroups of 8) each output is then one
//! subgroup and its sum one `subgroupAdd` with no shared memory, the path an NVIDIA GPU takes
//! by default with its 32-wide subgroups (tests/conformance_ggml_split.rs covers 64 lanes).

mod harness;

#[test]
fn ggml_matmul_matches_cpu_with_8_lanes() {
    std::env::set_var(mlx_arm_vulkan::GGML_LANES_ENV, "8");
    // The lanes matter to the split GEMV only (CPU devices default to ggml_mv_cpu.comp).
    std::env::set_var(mlx_arm_vulkan::GGML_MV_ENV, "split");
    harness::check_matching(|name| name.starts_with("ggml_matmul"));
}
