//! Compute pipelines, built once per (shader, element type) from the SPIR-V committed under
//! `shaders/spv/`. Every shader binds storage buffers 0..n in set 0 through push descriptors
//! (no descriptor pools to manage) and takes its parameters as push constants. Pipelines are
//! created through the device's pipeline cache, kept on disk (`crate::pipeline_cache`).

use crate::context::{vk_err, Context, MAIN};
use ash::vk;
use mlx_arm_core::{Error, Result};
use std::sync::Mutex;

/// Push-constant bytes every pipeline layout declares (the guaranteed minimum, 128).
pub(crate) const PUSH_BYTES: u32 = 128;

/// A shader family and its storage-buffer count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Shader {
    Unary,
    Binary,
    /// A fused elementwise program (core's `FusedOp`).
    Fused,
    /// Rows of a table by indices on the device.
    Gather,
    Reduce,
    ArgReduce,
    /// argmax / argmin of few long rows over many workgroups (two stages).
    ArgReduceSplit,
    /// rms_norm / layer_norm; `true`: workgroup sums with subgroup arithmetic.
    Norm(bool),
    Rope,
    /// The queries' and keys' rope plus both KV-cache window writes (rope_kv.comp).
    RopeKv,
    /// Two strided copies (a layer's two KV-cache writes) in one dispatch.
    Copy2,
    Sdpa,
    /// Attention split over chunks of keys (decode with long key sequences).
    SdpaSplit,
    Qmm,
    /// GGUF matmul, one row per workgroup, for the GGUF type number (a specialization
    /// constant: each type gets a pipeline with the other types' code folded away); `true`:
    /// partial sums added with subgroup arithmetic (`DeviceInfo::subgroup`).
    GgmlMv(u32, bool),
    /// The same, 8 rows per workgroup.
    GgmlMm(u32, bool),
    /// GGUF GEMV with one invocation per output (CPU drivers), for the GGUF type number.
    GgmlMvCpu(u32),
    /// GGUF GEMV with a subgroup per few outputs (GPUs), for the GGUF type number and the
    /// outputs a subgroup computes.
    GgmlMvSub(u32, u32),
    /// The same with x computed by a held-back FusedOp program (ggml_mv_sub_fx.comp).
    GgmlMvSubFx(u32, u32),
    /// The same with x the rms_norm of a held-back norm dispatch (ggml_mv_sub_nx.comp).
    GgmlMvSubNx(u32, u32),
    /// GGUF blocks to float32, for the GGUF type number.
    GgmlDequant(u32),
    Matmul,
    /// Float16 matmul on tensor cores (VK_NV_cooperative_matrix): specialization constants
    /// fragment M, N, K, then whether A and B are row-major (1) or column-major (0). Float16 only.
    MatmulCoop([u32; 5]),
}

impl Shader {
    /// The kernel's name in profiles (`MLX_ARM_VULKAN_PROFILE`).
    pub(crate) fn label(self) -> &'static str {
        match self {
            Shader::Unary => "unary",
            Shader::Binary => "binary",
            Shader::Fused => "fused",
            Shader::Gather => "gather",
            Shader::Reduce => "reduce",
            Shader::ArgReduce => "argreduce",
            Shader::ArgReduceSplit => "argreduce_split",
            Shader::Norm(false) => "norm",
            Shader::Norm(true) => "norm_sg",
            Shader::Rope => "rope",
            Shader::RopeKv => "rope_kv",
            Shader::Copy2 => "copy2",
            Shader::Sdpa => "sdpa",
            Shader::SdpaSplit => "sdpa_split",
            Shader::Qmm => "qmm",
            Shader::GgmlMv(_, false) => "ggml_mv",
            Shader::GgmlMv(_, true) => "ggml_mv_sg",
            Shader::GgmlMm(_, false) => "ggml_mm",
            Shader::GgmlMm(_, true) => "ggml_mm_sg",
            Shader::GgmlMvCpu(_) => "ggml_mv_cpu",
            Shader::GgmlMvSub(..) => "ggml_mv_sub",
            Shader::GgmlMvSubFx(..) => "ggml_mv_sub_fx",
            Shader::GgmlMvSubNx(..) => "ggml_mv_sub_nx",
            Shader::GgmlDequant(_) => "ggml_dequant",
            Shader::Matmul => "matmul",
            Shader::MatmulCoop(_) => "matmul_coopmat",
        }
    }

    fn bindings(self) -> u32 {
        match self {
            Shader::Unary | Shader::Reduce | Shader::ArgReduce | Shader::GgmlDequant(_) => 2,
            Shader::Binary | Shader::Gather | Shader::ArgReduceSplit | Shader::Matmul | Shader::MatmulCoop(_) | Shader::GgmlMv(..) | Shader::GgmlMm(..) | Shader::GgmlMvCpu(_) | Shader::GgmlMvSub(..) => 3,
            Shader::Copy2 => 4,
            Shader::Fused => 5,
            Shader::Norm(_) | Shader::Rope => 6,
            Shader::Qmm => 5,
            Shader::RopeKv => 8,
            Shader::GgmlMvSubFx(..) => 5,
            Shader::GgmlMvSubNx(..) => 7,
            Shader::Sdpa | Shader::SdpaSplit => 6,
        }
    }
    /// Specialization constants 0, 1, …, for shaders that take them.
    fn specialization(self, ctx: &Context) -> Vec<u32> {
        match self {
            Shader::GgmlMv(ty, _) | Shader::GgmlMm(ty, _) => vec![ty, ctx.ggml_lanes],
            Shader::GgmlMvSub(ty, outs) | Shader::GgmlMvSubFx(ty, outs) | Shader::GgmlMvSubNx(ty, outs) => vec![ty, outs],
            Shader::GgmlDequant(ty) | Shader::GgmlMvCpu(ty) => vec![ty],
            Shader::MatmulCoop(shape) => shape.to_vec(),
            _ => Vec::new(),
        }
    }
    /// The committed SPIR-V for (float32, float16); empty where a shader has no such variant.
    pub(crate) fn spirv(self) -> (&'static [u8], &'static [u8]) {
        macro_rules! spv {
            ($n:literal) => {
                (
                    include_bytes!(concat!("../../../shaders/spv/", $n, ".f32.spv")).as_slice(),
                    include_bytes!(concat!("../../../shaders/spv/", $n, ".f16.spv")).as_slice(),
                )
            };
            ($n:literal, f16) => {
                (&[][..], include_bytes!(concat!("../../../shaders/spv/", $n, ".f16.spv")).as_slice())
            };
        }
        match self {
            Shader::Unary => spv!("unary"),
            Shader::Binary => spv!("binary"),
            Shader::Fused => spv!("fused"),
            Shader::Gather => spv!("gather"),
            Shader::Reduce => spv!("reduce"),
            Shader::ArgReduce => spv!("argreduce"),
            Shader::ArgReduceSplit => spv!("argreduce_split"),
            Shader::Norm(false) => spv!("norm"),
            Shader::Norm(true) => spv!("norm_sg"),
            Shader::Rope => spv!("rope"),
            Shader::RopeKv => spv!("rope_kv"),
            Shader::Copy2 => spv!("copy2"),
            Shader::Sdpa => spv!("sdpa"),
            Shader::SdpaSplit => spv!("sdpa_split"),
            Shader::Qmm => spv!("qmm"),
            Shader::GgmlMv(_, false) => spv!("ggml_mv"),
            Shader::GgmlMv(_, true) => spv!("ggml_mv_sg"),
            Shader::GgmlMm(_, false) => spv!("ggml_mm"),
            Shader::GgmlMm(_, true) => spv!("ggml_mm_sg"),
            Shader::GgmlMvCpu(_) => spv!("ggml_mv_cpu"),
            Shader::GgmlMvSub(..) => spv!("ggml_mv_sub"),
            Shader::GgmlMvSubFx(..) => spv!("ggml_mv_sub_fx"),
            Shader::GgmlMvSubNx(..) => spv!("ggml_mv_sub_nx"),
            Shader::GgmlDequant(_) => spv!("ggml_dequant"),
            Shader::Matmul => spv!("matmul"),
            Shader::MatmulCoop(_) => spv!("matmul_coopmat", f16),
        }
    }
}

pub(crate) struct Pipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
}

/// Built pipelines by (shader, f16). A process uses a few dozen, so a linear scan of plain
/// keys (no hashing) finds one in a few nanoseconds; pipelines live for the process, so the
/// cache hands out `&'static` references (no reference count to bump per dispatch).
static CACHE: Mutex<Vec<((Shader, bool), &'static Pipeline)>> = Mutex::new(Vec::new());

/// The pipeline of `shader` for float16 (`f16`) or float32 elements.
pub(crate) fn get(ctx: &'static Context, shader: Shader, f16: bool) -> Result<&'static Pipeline> {
    let mut cache = crate::lock(&CACHE);
    if let Some((_, p)) = cache.iter().find(|(k, _)| *k == (shader, f16)) {
        return Ok(p);
    }
    let p: &'static Pipeline = Box::leak(Box::new(build(ctx, shader, f16)?));
    cache.push(((shader, f16), p));
    Ok(p)
}

fn build(ctx: &Context, shader: Shader, f16: bool) -> Result<Pipeline> {
    const OP: &str = "vulkan pipeline";
    let d = &ctx.device;
    let (s32, s16) = shader.spirv();
    let bytes = if f16 { s16 } else { s32 };
    if bytes.is_empty() {
        return Err(Error::runtime(OP, format!("{shader:?} has no {} variant.", if f16 { "float16" } else { "float32" })));
    }
    let code = ash::util::read_spv(&mut std::io::Cursor::new(bytes))
        .map_err(|e| Error::runtime(OP, format!("{shader:?}: bad SPIR-V: {e}.")))?;
    let bindings: Vec<_> = (0..shader.bindings())
        .map(|i| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    let dsl = vk::DescriptorSetLayoutCreateInfo::default()
        .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
        .bindings(&bindings);
    // SAFETY: plain object creation on a live device; objects live for the process.
    unsafe {
        let set_layout = d.create_descriptor_set_layout(&dsl, None).map_err(|r| vk_err(OP, "vkCreateDescriptorSetLayout", r))?;
        let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(PUSH_BYTES)];
        let layouts = [set_layout];
        let pli = vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&ranges);
        let layout = d.create_pipeline_layout(&pli, None).map_err(|r| vk_err(OP, "vkCreatePipelineLayout", r))?;
        let smi = vk::ShaderModuleCreateInfo::default().code(&code);
        let module = d.create_shader_module(&smi, None).map_err(|r| vk_err(OP, "vkCreateShaderModule", r))?;
        let values = shader.specialization(ctx);
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let entries: Vec<_> =
            (0..values.len() as u32).map(|i| vk::SpecializationMapEntry::default().constant_id(i).offset(4 * i).size(4)).collect();
        let spec = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(MAIN);
        if !values.is_empty() {
            stage = stage.specialization_info(&spec);
        }
        let ci = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout)];
        let t = std::time::Instant::now();
        let made = d.create_compute_pipelines(ctx.pipeline_cache.cache, &ci, None);
        d.destroy_shader_module(module, None);
        if made.is_ok() {
            ctx.pipeline_cache.built(t.elapsed().as_nanos() as u64);
        }
        let pipeline = made.map_err(|(_, r)| vk_err(OP, "vkCreateComputePipelines", r))?[0];
        Ok(Pipeline { pipeline, layout })
    }
}
