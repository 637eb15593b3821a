//! Subgroup arithmetic for the GGUF matmul shaders' sums (`ggml_mv_sg.comp`, `ggml_mm_sg.comp`):
//! whether the chosen device adds values across a subgroup in compute shaders, and its subgroup
//! size. Where it does not (or [`SUBGROUP_ENV`] says `off`), the shaders add through shared memory.
//! Also how many invocations share a weight row in those shaders ([`ggml_lanes`]), and which shader a
//! one-row GEMV takes ([`ggml_mv`]) and, for ggml_mv_sub.comp, the outputs a subgroup computes
//! ([`ggml_outs`]).

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
    let sub = properties(instance, pdev);
    Ok(usable(sub.subgroup_size, sub.supported_stages, sub.supported_operations).then_some(sub.subgroup_size))
}

/// The device's subgroup size, stages and operations.
fn properties(instance: &ash::Instance, pdev: vk::PhysicalDevice) -> vk::PhysicalDeviceSubgroupProperties<'static> {
    let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut sub);
    // SAFETY: a plain query on a live instance (Vulkan 1.1, checked when the device was picked).
    unsafe { instance.get_physical_device_properties2(pdev, &mut p2) };
    vk::PhysicalDeviceSubgroupProperties { p_next: std::ptr::null_mut(), ..sub }
}

/// Whether ggml_mv_cpu.comp runs on the device: compute-shader subgroups of at least 8 with
/// broadcasts (its lanes 0..7 hand out 8 elements of x).
pub(crate) fn broadcasts_8(instance: &ash::Instance, pdev: vk::PhysicalDevice) -> bool {
    let sub = properties(instance, pdev);
    broadcast_ok(sub.subgroup_size, sub.supported_stages, sub.supported_operations)
}

fn broadcast_ok(size: u32, stages: vk::ShaderStageFlags, ops: vk::SubgroupFeatureFlags) -> bool {
    size >= 8 && stages.contains(vk::ShaderStageFlags::COMPUTE) && ops.contains(vk::SubgroupFeatureFlags::BASIC | vk::SubgroupFeatureFlags::BALLOT)
}

/// Environment variable that sets the invocations sharing one weight row in the GGUF matmul
/// shaders (ggml_matmul.glsl's LANES): 8, 16, 32 or 64.
pub const GGML_LANES_ENV: &str = "MLX_ARM_VULKAN_GGML_LANES";

/// The invocations that share one weight row in the GGUF matmul shaders, per [`GGML_LANES_ENV`];
/// unset: 8 where subgroups are 32 wide (NVIDIA: on an H200 prompts ran 2.7x faster than with 32
/// or 64 lanes — four outputs a subgroup instead of one — and decode at the same speed; session
/// 18 in docs/BENCHMARKS.md), else 64 (the width measured on devices with other subgroup sizes).
pub(crate) fn ggml_lanes(subgroup: Option<u32>) -> Result<u32> {
    lanes_for(std::env::var(GGML_LANES_ENV).ok().as_deref(), subgroup)
}

/// [`ggml_lanes`] for the variable's value `env`.
fn lanes_for(env: Option<&str>, subgroup: Option<u32>) -> Result<u32> {
    match env {
        None | Some("") => Ok(if subgroup == Some(32) { 8 } else { 64 }),
        Some(v) => match v.parse::<u32>() {
            Ok(n @ (8 | 16 | 32 | 64)) => Ok(n),
            _ => Err(Error::invalid("vulkan", format!("{GGML_LANES_ENV}={v}: expected 8, 16, 32 or 64."))),
        },
    }
}

/// Environment variable that picks the GEMV layout of the GGUF matmuls: `split` (a weight row
/// over [`GGML_LANES_ENV`] invocations, ggml_mv.comp), `row` (one invocation per output,
/// ggml_mv_cpu.comp), `subgroup` ([`GGML_OUTS_ENV`] outputs a subgroup, a quarter chunk an
/// invocation, ggml_mv_sub.comp); unset (or `auto`): `row` on CPU devices (lavapipe),
/// `subgroup` on others with subgroup arithmetic, else `split`.
pub const GGML_MV_ENV: &str = "MLX_ARM_VULKAN_GGML_MV";

/// Environment variable that sets the outputs one subgroup computes in ggml_mv_sub.comp: 1, 2,
/// 4 or 8; unset (or `auto`): [`outs_auto`] per weight.
pub const GGML_OUTS_ENV: &str = "MLX_ARM_VULKAN_GGML_OUTS";

/// The shader of a one-row GGUF GEMV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GemvLayout {
    /// ggml_mv.comp / ggml_mv_sg.comp.
    Split,
    /// ggml_mv_cpu.comp.
    Row,
    /// ggml_mv_sub.comp.
    Subgroup,
}

/// The one-row GGUF GEMV's layout, per [`GGML_MV_ENV`], on a device that is (`cpu_device`) or
/// is not a CPU implementation; `broadcasts`: [`broadcasts_8`] (without it `auto` does not pick
/// `row` and `row` is an error); `arithmetic`: the device adds across subgroups
/// ([`choose`] is `Some`; without it `auto` does not pick `subgroup` and `subgroup` is an error).
pub(crate) fn ggml_mv(cpu_device: bool, broadcasts: bool, arithmetic: bool) -> Result<GemvLayout> {
    let env = std::env::var(GGML_MV_ENV).ok();
    let layout = mv_for(env.as_deref(), cpu_device && broadcasts, arithmetic)?;
    if layout == GemvLayout::Row && !broadcasts {
        return Err(Error::invalid("vulkan", format!("{GGML_MV_ENV}=row needs subgroups of at least 8 with broadcasts in compute shaders.")));
    }
    if layout == GemvLayout::Subgroup && !arithmetic {
        return Err(Error::invalid("vulkan", format!("{GGML_MV_ENV}=subgroup needs subgroup arithmetic in compute shaders (and {SUBGROUP_ENV} not `off`).")));
    }
    Ok(layout)
}

/// [`ggml_mv`] for the variable's value `env`.
fn mv_for(env: Option<&str>, cpu_device: bool, arithmetic: bool) -> Result<GemvLayout> {
    match env {
        None | Some("" | "auto") => Ok(if cpu_device {
            GemvLayout::Row
        } else if arithmetic {
            GemvLayout::Subgroup
        } else {
            GemvLayout::Split
        }),
        Some("row") => Ok(GemvLayout::Row),
        Some("split") => Ok(GemvLayout::Split),
        Some("subgroup") => Ok(GemvLayout::Subgroup),
        Some(v) => Err(Error::invalid("vulkan", format!("{GGML_MV_ENV}={v}: expected `split`, `row`, `subgroup` or `auto`."))),
    }
}

/// The outputs a subgroup computes in ggml_mv_sub.comp, per [`GGML_OUTS_ENV`]: `None` for
/// [`outs_auto`].
pub(crate) fn ggml_outs() -> Result<Option<u32>> {
    outs_for(std::env::var(GGML_OUTS_ENV).ok().as_deref())
}

/// Outputs a subgroup for a weight of `n` rows, unless [`GGML_OUTS_ENV`] says: one up to 2048
/// rows (more workgroups in flight: on an H200 a 576-row Q4_1 GEMV took 5.2 µs of GPU time
/// against 5.8 with two and 7.2 with four), two up to 8192 (5632 × 2048: 13.0 µs against 17.6
/// with one, 14.7 with four), four above (the loads of x shared by four rows: 49152 × 576 in
/// 23.5 µs against 25.3 with two, 37.4 with one; docs/BENCHMARKS.md, vk26).
pub(crate) fn outs_auto(n: usize) -> u32 {
    match n {
        0..=2048 => 1,
        2049..=8192 => 2,
        _ => 4,
    }
}

/// [`ggml_outs`] for the variable's value `env`.
fn outs_for(env: Option<&str>) -> Result<Option<u32>> {
    match env {
        None | Some("" | "auto") => Ok(None),
        Some(v) => match v.parse::<u32>() {
            Ok(n @ (1 | 2 | 4 | 8)) => Ok(Some(n)),
            _ => Err(Error::invalid("vulkan", format!("{GGML_OUTS_ENV}={v}: expected 1, 2, 4, 8 or `auto`."))),
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
    use super::{broadcast_ok, lanes_for, mv_for, outs_for, usable};
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
        assert_eq!(lanes_for(None, Some(32)).unwrap(), 8);
        assert_eq!(lanes_for(None, Some(8)).unwrap(), 64);
        assert_eq!(lanes_for(None, None).unwrap(), 64);
        assert_eq!(lanes_for(Some(""), Some(32)).unwrap(), 8);
        assert_eq!(lanes_for(Some("8"), Some(32)).unwrap(), 8);
        assert_eq!(lanes_for(Some("64"), Some(32)).unwrap(), 64);
        for bad in ["48", "128", "0", "lots"] {
            let e = lanes_for(Some(bad), None).unwrap_err().to_string();
            assert!(e.contains("expected 8, 16, 32 or 64"), "{bad}: {e}");
        }
    }

    #[test]
    fn gemv_layout_is_one_output_per_invocation_on_cpu_devices_a_subgroup_on_gpus() {
        use super::GemvLayout::{Row, Split, Subgroup};
        assert_eq!(mv_for(None, true, true).unwrap(), Row);
        assert_eq!(mv_for(None, false, true).unwrap(), Subgroup);
        assert_eq!(mv_for(None, false, false).unwrap(), Split);
        assert_eq!(mv_for(Some("auto"), true, false).unwrap(), Row);
        assert_eq!(mv_for(Some("row"), false, true).unwrap(), Row);
        assert_eq!(mv_for(Some("split"), true, true).unwrap(), Split);
        assert_eq!(mv_for(Some("subgroup"), true, true).unwrap(), Subgroup);
        assert_eq!(outs_for(None).unwrap(), None);
        assert_eq!(outs_for(Some("auto")).unwrap(), None);
        assert_eq!(outs_for(Some("4")).unwrap(), Some(4));
        assert_eq!([576, 2048, 3072, 8192, 32000, 49152].map(super::outs_auto), [1, 1, 2, 2, 4, 4]);
        for bad in ["0", "3", "16", "two"] {
            let e = outs_for(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("expected 1, 2, 4, 8 or `auto`"), "{bad}: {e}");
        }
        let bc = F::BASIC | F::BALLOT;
        assert!(broadcast_ok(8, S::COMPUTE, bc), "lavapipe, AVX2");
        assert!(broadcast_ok(32, S::COMPUTE, bc | F::ARITHMETIC));
        assert!(!broadcast_ok(4, S::COMPUTE, bc), "lavapipe, 128-bit vectors");
        assert!(!broadcast_ok(8, S::COMPUTE, F::BASIC | F::ARITHMETIC), "no broadcasts");
        assert!(!broadcast_ok(8, S::FRAGMENT, bc));
        let e = mv_for(Some("fast"), true, true).unwrap_err().to_string();
        assert!(e.contains("expected `split`, `row`, `subgroup` or `auto`"), "{e}");
    }
}
