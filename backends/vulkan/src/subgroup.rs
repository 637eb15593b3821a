//! Subgroup arithmetic for the GGUF matmul shaders' sums (`ggml_mv_sg.comp`, `ggml_mm_sg.comp`):
//! whether the chosen device adds values across a subgroup in compute shaders, and its subgroup
//! size. Where it does not (or [`SUBGROUP_ENV`] says `off`), the shaders add through shared memory.

use ash::vk;
use mlx_arm_core::{Error, Result};

/// Environment variable that picks how the GGUF matmul shaders add their partial sums: `off`
/// (or `0`): a tree in shared memory (tests, comparisons); unset (or `auto`): subgroup
/// arithmetic where the device has it in compute shaders.
pub const SUBGROUP_ENV: &str = "MLX_ARM_VULKAN_SUBGROUP";

/// The subgroup size the reduction variants use on this device, or `None` for the shared-memory
/// tree: compute shaders must have basic and arithmetic subgroup operations and the size must be
/// a power of two from 4 to 64 (an output's 32 or 64 invocations are then whole subgroups
/// wherever the size divides them; the kernels check that per dispatch).
pub(crate) fn choose(instance: &ash::Instance, pdev: vk::PhysicalDevice) -> Result<Option<u32>> {
    match std::env::var(SUBGROUP_ENV).as_deref() {
        Ok("off" | "0") => return Ok(None),
        Ok("" | "auto") | Err(_) => {}
        Ok(other) => return Err(Error::invalid("vulkan", format!("{SUBGROUP_ENV}={other}: expected `off` or `auto`."))),
    }
    let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut sub);
    // SAFETY: a plain query on a live instance (Vulkan 1.1, checked when the device was picked).
    unsafe { instance.get_physical_device_properties2(pdev, &mut p2) };
    Ok(usable(sub.subgroup_size, sub.supported_stages, sub.supported_operations).then_some(sub.subgroup_size))
}

/// Whether subgroups of `size` with these stages and operations run the reduction variants.
fn usable(size: u32, stages: vk::ShaderStageFlags, ops: vk::SubgroupFeatureFlags) -> bool {
    let ops_ok = ops.contains(vk::SubgroupFeatureFlags::BASIC | vk::SubgroupFeatureFlags::ARITHMETIC);
    size.is_power_of_two() && (4..=64).contains(&size) && stages.contains(vk::ShaderStageFlags::COMPUTE) && ops_ok
}

#[cfg(test)]
mod tests {
    use super::usable;
    use ash::vk::{ShaderStageFlags as S, SubgroupFeatureFlags as F};

    #[test]
    fn devices_the_reduction_variants_take() {
        let arith = F::BASIC | F::ARITHMETIC | F::BALLOT;
        assert!(usable(32, S::COMPUTE | S::FRAGMENT, arith), "NVIDIA");
        assert!(usable(8, S::COMPUTE, arith), "lavapipe, AVX2");
        assert!(usable(64, S::COMPUTE, arith), "AMD wave64");
        assert!(!usable(32, S::FRAGMENT, arith), "not in compute shaders");
        assert!(!usable(32, S::COMPUTE, F::BASIC | F::BALLOT), "no arithmetic");
        assert!(!usable(128, S::COMPUTE, arith), "wider than an output's invocations");
        assert!(!usable(24, S::COMPUTE, arith), "not a power of two");
        assert!(!usable(1, S::COMPUTE, arith));
    }
}
