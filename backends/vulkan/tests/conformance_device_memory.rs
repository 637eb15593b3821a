//! The backend-conformance harness (tests/harness) with device-local memory and staged copies
//! (a discrete GPU's path), forced through MLX_ARM_VULKAN_MEMORY=device.

mod harness;

#[test]
fn vulkan_matches_cpu_for_every_claimed_op_with_device_memory() {
    std::env::set_var(mlx_arm_vulkan::MEMORY_ENV, "device");
    harness::check_all();
}
