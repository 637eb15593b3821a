//! The Vulkan instance, the chosen physical device, its logical device with one compute queue,
//! and the memory sub-allocator. Built once per process; every failure is an `Error`.

use crate::pipeline_cache::DiskCache;
use crate::{coopmat, subgroup};
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use mlx_arm_core::{Error, Result};
use std::ffi::CStr;
use std::sync::Mutex;

/// Environment variable that picks a device: its index in the enumeration or a name substring.
pub const DEVICE_ENV: &str = "MLX_ARM_VULKAN_DEVICE";
/// Environment variable that forces the memory model: `shared` (host-visible, read in place)
/// or `device` (device-local, staged copies). Default: shared on integrated/CPU devices.
pub const MEMORY_ENV: &str = "MLX_ARM_VULKAN_MEMORY";

pub(crate) fn vk_err(op: &'static str, what: &str, r: vk::Result) -> Error {
    Error::runtime(op, format!("Vulkan: {what} failed ({r:?})."))
}

/// What was chosen, for messages and benchmarks.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// The driver's device name.
    pub name: String,
    /// Discrete, integrated, virtual or CPU.
    pub kind: String,
    /// Whether buffers are host-visible memory the CPU reads in place.
    pub shared_memory: bool,
    /// Whether float16 storage is available (f16 kernels).
    pub f16: bool,
    /// The tensor-core fragment shape (M, N, K) float16 matmuls use (VK_NV_cooperative_matrix,
    /// docs/GPU.md), or `None`: the portable shader (no support, or `MLX_ARM_VULKAN_COOPMAT=off`).
    pub coopmat: Option<[u32; 3]>,
    /// The subgroup size the GGUF matmul shaders add their partial sums over (subgroup
    /// arithmetic in compute shaders), or `None`: sums through shared memory (no support, or
    /// `MLX_ARM_VULKAN_SUBGROUP=off`).
    pub subgroup: Option<u32>,
}

pub(crate) struct Context {
    // The entry keeps the loader library loaded for the process lifetime.
    _entry: ash::Entry,
    // Kept for the process lifetime: the device and allocator were made from it.
    _instance: ash::Instance,
    pub device: ash::Device,
    pub queue: Mutex<vk::Queue>,
    pub queue_family: u32,
    pub push: ash::khr::push_descriptor::Device,
    pub allocator: Mutex<Allocator>,
    pub info: DeviceInfo,
    /// Invocations that share one weight row in the GGUF matmul shaders
    /// ([`subgroup::ggml_lanes`]).
    pub ggml_lanes: u32,
    /// The shader of one-row GGUF GEMVs ([`subgroup::ggml_mv`]).
    pub ggml_mv: subgroup::GemvLayout,
    /// Outputs a subgroup computes in ggml_mv_sub.comp, if fixed ([`subgroup::ggml_outs`]).
    pub ggml_outs: Option<u32>,
    /// Nanoseconds per timestamp tick, or `None` where the queue writes no timestamps (then
    /// `MLX_ARM_VULKAN_PROFILE` measures nothing).
    pub timestamp_ns: Option<f64>,
    /// The device's pipeline cache, kept on disk (`crate::pipeline_cache`).
    pub pipeline_cache: DiskCache,
}

fn rank(t: vk::PhysicalDeviceType) -> u32 {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

fn kind_name(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "discrete",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual",
        vk::PhysicalDeviceType::CPU => "cpu",
        _ => "other",
    }
}

struct Candidate {
    pdev: vk::PhysicalDevice,
    index: usize,
    name: String,
    kind: vk::PhysicalDeviceType,
    family: u32,
    timestamp_ns: Option<f64>,
    props: vk::PhysicalDeviceProperties,
}

impl Context {
    pub fn new() -> Result<Context> {
        const OP: &str = "vulkan";
        // SAFETY: loading the system Vulkan loader; failure is reported, not fatal.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| Error::runtime(OP, format!("No Vulkan loader (libvulkan) could be loaded: {e}.")))?;
        let app = vk::ApplicationInfo::default().application_name(c"mlx-arm").api_version(vk::API_VERSION_1_1);
        let ici = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: valid create info; the instance is destroyed never (process lifetime).
        let instance = unsafe { entry.create_instance(&ici, None) }.map_err(|r| match r {
            vk::Result::ERROR_INCOMPATIBLE_DRIVER => {
                Error::runtime(OP, "No Vulkan driver (ICD) was found: install one (e.g. Mesa's lavapipe) or check VK_ICD_FILENAMES.")
            }
            r => vk_err(OP, "vkCreateInstance", r),
        })?;
        match Self::with_instance(entry.clone(), instance.clone()) {
            Ok(c) => Ok(c),
            Err(e) => {
                // SAFETY: nothing made from the instance survives the failed setup.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    fn with_instance(entry: ash::Entry, instance: ash::Instance) -> Result<Context> {
        const OP: &str = "vulkan";
        // SAFETY: plain queries on a live instance.
        let pdevs = unsafe { instance.enumerate_physical_devices() }.map_err(|r| vk_err(OP, "vkEnumeratePhysicalDevices", r))?;
        let mut cands = Vec::new();
        for (index, &pdev) in pdevs.iter().enumerate() {
            let props = unsafe { instance.get_physical_device_properties(pdev) };
            let name = props.device_name_as_c_str().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
            let families = unsafe { instance.get_physical_device_queue_family_properties(pdev) };
            let Some(family) = families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE)) else { continue };
            let exts = unsafe { instance.enumerate_device_extension_properties(pdev) }.unwrap_or_default();
            let has_push = exts.iter().any(|e| e.extension_name_as_c_str() == Ok(ash::khr::push_descriptor::NAME));
            if !has_push || props.api_version < vk::API_VERSION_1_1 {
                continue;
            }
            let stamps = families[family].timestamp_valid_bits > 0 && props.limits.timestamp_period > 0.0;
            let timestamp_ns = stamps.then_some(f64::from(props.limits.timestamp_period));
            cands.push(Candidate { pdev, index, name, kind: props.device_type, family: family as u32, timestamp_ns, props });
        }
        if cands.is_empty() {
            return Err(Error::runtime(
                OP,
                format!("No usable Vulkan device: {} found, none with Vulkan 1.1, a compute queue and VK_KHR_push_descriptor.", pdevs.len()),
            ));
        }
        let chosen = match std::env::var(DEVICE_ENV) {
            Ok(want) if !want.is_empty() => {
                let by_index = want.parse::<usize>().ok();
                let lw = want.to_lowercase();
                let pos = cands.iter().position(|c| Some(c.index) == by_index || c.name.to_lowercase().contains(&lw));
                let Some(pos) = pos else {
                    let names: Vec<String> = cands.iter().map(|c| format!("{}: {}", c.index, c.name)).collect();
                    return Err(Error::invalid(OP, format!("{DEVICE_ENV}={want} matches no Vulkan device (have {}).", names.join(", "))));
                };
                cands.swap_remove(pos)
            }
            _ => {
                cands.sort_by_key(|c| (rank(c.kind), c.index));
                cands.swap_remove(0)
            }
        };

        // Optional float16 storage + arithmetic types (the f16 kernels).
        let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default();
        let mut f16i8 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
        {
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut s16).push_next(&mut f16i8);
            unsafe { instance.get_physical_device_features2(chosen.pdev, &mut f2) };
        }
        let f16 = s16.storage_buffer16_bit_access == vk::TRUE && f16i8.shader_float16 == vk::TRUE;
        let mut s16_on = vk::PhysicalDevice16BitStorageFeatures::default().storage_buffer16_bit_access(f16);
        let mut f16_on = vk::PhysicalDeviceShaderFloat16Int8Features::default().shader_float16(f16);
        // SAFETY: a plain query on a live instance.
        let exts = unsafe { instance.enumerate_device_extension_properties(chosen.pdev) }.unwrap_or_default();
        let coopmat = coopmat::choose(&entry, &instance, chosen.pdev, &exts, f16)?;
        let subgroup = subgroup::choose(&instance, chosen.pdev)?;
        let ggml_lanes = subgroup::ggml_lanes(subgroup)?;
        let ggml_mv = subgroup::ggml_mv(chosen.kind == vk::PhysicalDeviceType::CPU, subgroup::broadcasts_8(&instance, chosen.pdev), subgroup.is_some())?;
        let ggml_outs = subgroup::ggml_outs()?;
        let mut coop_on = coopmat::Features::on();
        let prio = [1.0f32];
        let qci = [vk::DeviceQueueCreateInfo::default().queue_family_index(chosen.family).queue_priorities(&prio)];
        let mut ext_names = vec![ash::khr::push_descriptor::NAME.as_ptr()];
        let mut dci = vk::DeviceCreateInfo::default().queue_create_infos(&qci).push_next(&mut s16_on).push_next(&mut f16_on);
        if coopmat.is_some() {
            ext_names.extend(coopmat::EXTENSIONS.iter().map(|n| n.as_ptr()));
            dci = dci.push_next(&mut coop_on.cm).push_next(&mut coop_on.vmm);
        }
        let dci = dci.enabled_extension_names(&ext_names);
        // SAFETY: valid create info for a device of this instance.
        let device = unsafe { instance.create_device(chosen.pdev, &dci, None) }.map_err(|r| vk_err(OP, "vkCreateDevice", r))?;
        let queue = unsafe { device.get_device_queue(chosen.family, 0) };
        let push = ash::khr::push_descriptor::Device::new(&instance, &device);
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device: chosen.pdev,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        })
        .map_err(|e| Error::runtime(OP, format!("Vulkan memory allocator: {e}.")))?;
        let shared_default = matches!(chosen.kind, vk::PhysicalDeviceType::INTEGRATED_GPU | vk::PhysicalDeviceType::CPU);
        let shared_memory = match std::env::var(MEMORY_ENV).as_deref() {
            Ok("shared") => true,
            Ok("device") => false,
            Ok(other) if !other.is_empty() => {
                return Err(Error::invalid(OP, format!("{MEMORY_ENV}={other}: expected `shared` or `device`.")))
            }
            _ => shared_default,
        };
        let pipeline_cache = DiskCache::open(&device, &chosen.props)?;
        let info = DeviceInfo { name: chosen.name, kind: kind_name(chosen.kind).into(), shared_memory, f16, coopmat, subgroup };
        Ok(Context {
            _entry: entry,
            _instance: instance,
            device,
            queue: Mutex::new(queue),
            queue_family: chosen.family,
            push,
            allocator: Mutex::new(allocator),
            info,
            ggml_lanes,
            ggml_mv,
            ggml_outs,
            timestamp_ns: chosen.timestamp_ns,
            pipeline_cache,
        })
    }
}

/// A C string literal helper for entry points.
pub(crate) const MAIN: &CStr = c"main";
