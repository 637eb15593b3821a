//! With no Vulkan driver to load, `init` returns a clear error, registers nothing, and the GPU
//! stays unavailable (core's error) — no crash, no hang. Its own test binary: the driver path
//! is read from the environment when the loader starts.

use mlx_arm_core::{device, Device};

#[test]
fn no_driver_is_a_clear_error() {
    // Both names the loader reads (older and newer); the file does not exist.
    std::env::set_var("VK_ICD_FILENAMES", "/nonexistent/mlx-arm-no-such-icd.json");
    std::env::set_var("VK_DRIVER_FILES", "/nonexistent/mlx-arm-no-such-icd.json");
    let err = mlx_arm_vulkan::init().expect_err("no driver, so no device");
    let msg = err.to_string();
    assert!(
        msg.contains("No Vulkan driver") || msg.contains("No usable Vulkan device") || msg.contains("No Vulkan loader"),
        "unclear message: {msg}"
    );
    // Asking again gives the same answer (nothing half-initialized).
    assert_eq!(mlx_arm_vulkan::init().unwrap_err().to_string(), msg);
    assert!(mlx_arm_vulkan::device_info().is_none());
    assert!(device::set_default_device(Device::GPU).is_err(), "no backend was registered");
}
