//! The GGUF matmul cases of the conformance harness (tests/harness) with 8 invocations a weight
//! row (`MLX_ARM_VULKAN_GGML_LANES=8`): on lavapipe (subgroups of 8) each output is then one
//! subgroup and its sum one `subgroupAdd` with no shared memory, the path an NVIDIA GPU takes
//! by default with its 32-wide subgroups (tests/conformance.rs covers 64 lanes).

mod harness;

#[test]
fn ggml_matmul_matches_cpu_with_8_lanes() {
    std::env::set_var(mlx_arm_vulkan::GGML_LANES_ENV, "8");
    harness::check_matching(|name| name.starts_with("ggml_matmul"));
}
