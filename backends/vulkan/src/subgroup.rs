//! Subgroup arithmetic for the GGUF matmul shaders' sums (`ggml_mv_sg.comp`, `ggml_mm_sg.comp`):
//! whether the chosen device adds values across a subgroup in compute shaders, and its subgroup
//! size. Where it does not (or [`SUBGROUP_ENV`] says `off`), the shaders add through shared memory.
//! Also how many invocations share a weight row in those shaders ([`ggml_lanes`]).

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

/// Environment variable that sets the invocations sharing one weight row in the GGUF matmul
/// shaders (ggml_matmul.glsl's LANES): 8, 16, 32 or 64.
pub const GGML_LANES_ENV: &str = "MLX_ARM_VULKAN_GGML_LANES";

/// The invocations that share one weight row in the GGUF matmul shaders, per [`GGML_LANES_ENV`];
/// unset: one subgroup where subgroups are 32 wide (the sums are then one `subgroupAdd`, no
/// barrier; on an H200 prompts ran 5 % faster than with 64 and decode GEMVs 1 % faster), else 64
/// (with a shared-memory tree 32 decoded 3 % slower than 64 on the H200; docs/BENCHMARKS.md).
pub(crate) fn ggml_lanes(subgroup: Option<u32>) -> Result<u32> {
    lanes_for(std::env::var(GGML_LANES_ENV).ok().as_deref(), subgroup)
}

/// [`ggml_lanes`] for the variable's value `env`.
fn lanes_for(env: Option<&str>, subgroup: Option<u32>) -> Result<u32> {
    match env {
        None | Some("") => Ok(if subgroup == Some(32) { 32 } else { 64 }),
        Some(v) => match v.parse::<u32>() {
            Ok(n @ (8 | 16 | 32 | 64)) => Ok(n),
            _ => Err(Error::invalid("vulkan", format!("{GGML_LANES_ENV}={v}: expected 8, 16, 32 or 64."))),
        },
    }
}

/// Whether subgroups of `size` with these stages and operations run the reduction variants.
fn usable(size: u32, stages: vk::ShaderStageFlags, ops: vk::SubgroupFeatureFlags) -> bool {
    let ops_ok = ops.contains(vk::SubgroupFeatureFlags::BASIC | vk::SubgroupFeatureFlags::ARITHMETIC);
    size.is_power_of_two() && (4..=64).contains(&size) && stages.contains(vk::ShaderStageFlags::COMPUTE) && ops_ok
}

#[cfg(test)]
mod tests {
    use super::{lanes_for, usable};
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

    #[test]
    fn lanes_default_to_one_32_wide_subgroup_else_64() {
        assert_eq!(lanes_for(None, Some(32)).unwrap(), 32);
        assert_eq!(lanes_for(None, Some(8)).unwrap(), 64);
        assert_eq!(lanes_for(None, None).unwrap(), 64);
        assert_eq!(lanes_for(Some(""), Some(32)).unwrap(), 32);
        assert_eq!(lanes_for(Some("8"), Some(32)).unwrap(), 8);
        assert_eq!(lanes_for(Some("64"), Some(32)).unwrap(), 64);
        for bad in ["48", "128", "0", "lots"] {
            let e = lanes_for(Some(bad), None).unwrap_err().to_string();
            assert!(e.contains("expected 8, 16, 32 or 64"), "{bad}: {e}");
        }
    }
}
