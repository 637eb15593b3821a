//! Tensor-core float16 matmul through `VK_NV_cooperative_matrix` (shaders/matmul_coopmat.comp):
//! whether the chosen device can run it, and with which fragment shape. The extension and its
//! features are enabled at device creation only when everything the shader needs is there;
//! otherwise (lavapipe, most non-NVIDIA drivers) every matmul takes the portable shader.

use ash::vk;
use mlx_arm_core::{Error, Result};
use std::ffi::CStr;

/// Environment variable that picks the float16 matmul shader: `off` (or `0`) leaves the
/// cooperative-matrix variant unused even where the device has it (tests, comparisons);
/// `require` makes device setup fail, saying why, where the variant cannot be used; unset (or
/// `auto`): the variant where the device has it.
pub const COOPMAT_ENV: &str = "MLX_ARM_VULKAN_COOPMAT";

/// What the shader's tiling takes: fragment sizes that divide a subgroup's 64 x 32 output tile
/// and the 32-deep K slice, in whole 16-byte chunks (multiples of 8 halves).
fn shape_fits(m: u32, n: u32, k: u32) -> bool {
    let ok = |v: u32, tile: u32| v > 0 && v % 8 == 0 && tile % v == 0;
    ok(m, 64) && ok(n, 32) && ok(k, 32)
}

/// Shared memory the shader declares (two staged slices of A and of B, 16-byte chunks).
const SHARED_BYTES: u32 = 40 * 1024;
/// Invocations per subgroup the shader's tiling assumes (8 subgroups of 256 invocations).
const SUBGROUP: u32 = 32;

/// The extensions to enable for the variant, when present.
pub(crate) const EXTENSIONS: [&CStr; 2] = [ash::nv::cooperative_matrix::NAME, ash::khr::vulkan_memory_model::NAME];

/// The fragment shape (M, N, K) float16 matmuls use on this device, per [`COOPMAT_ENV`]:
/// `Ok(None)` for the portable shader, an error for a bad value or where `require` cannot be met.
pub(crate) fn choose(entry: &ash::Entry, instance: &ash::Instance, pdev: vk::PhysicalDevice, exts: &[vk::ExtensionProperties], f16: bool) -> Result<Option<[u32; 3]>> {
    let required = match std::env::var(COOPMAT_ENV).as_deref() {
        Ok("off" | "0") => return Ok(None),
        Ok("require") => true,
        Ok("" | "auto") | Err(_) => false,
        Ok(other) => return Err(Error::invalid("vulkan", format!("{COOPMAT_ENV}={other}: expected `off`, `auto` or `require`."))),
    };
    match probe(entry, instance, pdev, exts, f16) {
        Ok(shape) => Ok(Some(shape)),
        Err(why) if required => Err(Error::runtime("vulkan", format!("{COOPMAT_ENV}=require: no tensor-core matmul on this device: {why}."))),
        Err(_) => Ok(None),
    }
}

/// The fragment shape (M, N, K) for float16 × float16 → float32 at subgroup scope the device
/// reports and the shader takes, the largest; or why there is none (missing extensions,
/// features, subgroup size, shared memory or float16 storage).
fn probe(entry: &ash::Entry, instance: &ash::Instance, pdev: vk::PhysicalDevice, exts: &[vk::ExtensionProperties], f16: bool) -> std::result::Result<[u32; 3], String> {
    if !f16 {
        return Err("no float16 storage and arithmetic".into());
    }
    let has = |name: &CStr| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
    if let Some(missing) = EXTENSIONS.iter().find(|n| !has(n)) {
        return Err(format!("no {}", missing.to_string_lossy()));
    }
    let mut cm = vk::PhysicalDeviceCooperativeMatrixFeaturesNV::default();
    let mut vmm = vk::PhysicalDeviceVulkanMemoryModelFeatures::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut cm).push_next(&mut vmm);
    // SAFETY: plain queries on a live instance; the extensions are present.
    unsafe { instance.get_physical_device_features2(pdev, &mut f2) };
    if cm.cooperative_matrix != vk::TRUE || vmm.vulkan_memory_model != vk::TRUE {
        return Err("the cooperativeMatrix or vulkanMemoryModel feature is off".into());
    }
    let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
    let shared = {
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut sub);
        unsafe { instance.get_physical_device_properties2(pdev, &mut p2) };
        p2.properties.limits.max_compute_shared_memory_size
    };
    if sub.subgroup_size != SUBGROUP || !sub.supported_stages.contains(vk::ShaderStageFlags::COMPUTE) {
        return Err(format!("subgroups of {} invocations (the shader needs {SUBGROUP} in compute)", sub.subgroup_size));
    }
    if shared < SHARED_BYTES {
        return Err(format!("{shared} bytes of shared memory (the shader needs {SHARED_BYTES})"));
    }
    let fp = ash::nv::cooperative_matrix::Instance::new(entry, instance);
    let get = fp.fp().get_physical_device_cooperative_matrix_properties_nv;
    let mut n = 0u32;
    // SAFETY: the two-call idiom with a count and then a buffer of that many structures.
    let r = unsafe { get(pdev, &mut n, std::ptr::null_mut()) };
    if r != vk::Result::SUCCESS {
        return Err(format!("vkGetPhysicalDeviceCooperativeMatrixPropertiesNV failed ({r:?})"));
    }
    let mut props = vec![vk::CooperativeMatrixPropertiesNV::default(); n as usize];
    let r = unsafe { get(pdev, &mut n, props.as_mut_ptr()) };
    if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
        return Err(format!("vkGetPhysicalDeviceCooperativeMatrixPropertiesNV failed ({r:?})"));
    }
    props.truncate(n as usize);
    let f16t = vk::ComponentTypeNV::FLOAT16;
    let f32t = vk::ComponentTypeNV::FLOAT32;
    let usable = |p: &&vk::CooperativeMatrixPropertiesNV| {
        p.a_type == f16t && p.b_type == f16t && p.c_type == f32t && p.d_type == f32t && p.scope == vk::ScopeNV::SUBGROUP
    };
    props.iter().filter(usable).map(|p| [p.m_size, p.n_size, p.k_size]).filter(|&[m, n, k]| shape_fits(m, n, k)).max_by_key(|&[m, n, k]| m * n * k).ok_or_else(|| {
        let listed: Vec<String> = props
            .iter()
            .map(|p| format!("{}x{}x{} {:?}x{:?}->{:?} {:?}", p.m_size, p.n_size, p.k_size, p.a_type, p.b_type, p.d_type, p.scope))
            .collect();
        format!("no float16 x float16 -> float32 subgroup shape the shader takes among [{}]", listed.join(", "))
    })
}

/// The features to chain into `VkDeviceCreateInfo` when the variant is used.
pub(crate) struct Features {
    pub cm: vk::PhysicalDeviceCooperativeMatrixFeaturesNV<'static>,
    pub vmm: vk::PhysicalDeviceVulkanMemoryModelFeatures<'static>,
}

impl Features {
    pub fn on() -> Features {
        Features {
            cm: vk::PhysicalDeviceCooperativeMatrixFeaturesNV::default().cooperative_matrix(true),
            vmm: vk::PhysicalDeviceVulkanMemoryModelFeatures::default().vulkan_memory_model(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shape_fits;

    #[test]
    fn shapes_the_tiling_takes() {
        assert!(shape_fits(16, 8, 16));
        assert!(shape_fits(16, 16, 16));
        assert!(shape_fits(16, 8, 8));
        assert!(!shape_fits(16, 8, 64), "K over the 32-deep slice");
        assert!(!shape_fits(16, 12, 16), "not whole chunks");
        assert!(!shape_fits(48, 8, 16), "does not divide the subgroup's 64 rows");
        assert!(!shape_fits(0, 8, 16));
    }
}
