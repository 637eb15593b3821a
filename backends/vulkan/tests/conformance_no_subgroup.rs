//! The cases of the conformance harness (tests/harness) whose shaders have a subgroup variant
//! (GGUF matmul, rms_norm, layer_norm), with sums added through shared memory
//! (`MLX_ARM_VULKAN_SUBGROUP=off`): the path of devices without subgroup arithmetic, which
//! tests/conformance.rs does not take where the device has it (lavapipe does).

mod harness;

#[test]
fn shared_memory_sums_match_cpu() {
    std::env::set_var(mlx_arm_vulkan::SUBGROUP_ENV, "off");
    // Sums of the split GEMV (CPU devices default to ggml_mv_cpu.comp, which has none).
    std::env::set_var(mlx_arm_vulkan::GGML_MV_ENV, "split");
    let info = mlx_arm_vulkan::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    assert_eq!(info.subgroup, None, "{}=off must leave subgroup sums unused", mlx_arm_vulkan::SUBGROUP_ENV);
    harness::check_matching(|name| ["ggml_matmul", "rms_norm", "layer_norm"].iter().any(|p| name.starts_with(p)));
}
