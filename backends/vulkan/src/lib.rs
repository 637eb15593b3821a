//! Vulkan compute backend for mlx-arm. [`init`] finds a device and registers it as core's `gpu`
//! device; from then on ops recorded on a GPU stream run here when a kernel covers them and on
//! the CPU otherwise (inputs brought over, counted). Design: docs/GPU.md.

mod context;
mod coopmat;
mod defer;
mod fusion;
mod kernels;
mod lm_ops;
mod memory;
mod pipeline_cache;
mod pipelines;
mod profile;
mod queue;
mod subgroup;

pub use context::{DeviceInfo, DEVICE_ENV, MEMORY_ENV};
pub use coopmat::COOPMAT_ENV;
pub use defer::{fusion_enabled, set_fusion, FUSE_ENV};
pub use kernels::coopmat_dispatches;
pub use pipeline_cache::{PipelineCacheStats, PIPELINE_CACHE_ENV};
pub use profile::{batch_times, kernel_times, BatchTimes, KernelTime, PROFILE_ENV};
pub use queue::{stats as queue_stats, QueueStats};
pub use subgroup::{GGML_LANES_ENV, GGML_MV_ENV, GGML_OUTS_ENV, SUBGROUP_ENV};

use context::Context;
use mlx_arm_core::array::Data;
use mlx_arm_core::backend::{self, Backend, OutMeta};
use mlx_arm_core::ops::fast::FastOp;
use mlx_arm_core::ops::index::IndexOp;
use mlx_arm_core::ops::binary::BinaryOp;
use mlx_arm_core::ops::linalg::LinalgOp;
use mlx_arm_core::ops::quantized::QuantizedOp;
use mlx_arm_core::quant::mlx::QuantMode;
use mlx_arm_core::ops::reduce::ReduceOp;
use mlx_arm_core::ops::shape::ShapeOp;
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::{Array, DType, Device, Error, Result, Stream};
use std::sync::{Arc, OnceLock};

/// Locks `m`, recovering the data when a panicking thread poisoned it: every value guarded here
/// (buffer pools, counters, the queue, the pipeline cache) stays valid across a panic, and one
/// caller's panic must not become every later caller's.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

static CTX: OnceLock<std::result::Result<&'static Context, Error>> = OnceLock::new();

fn context() -> Result<&'static Context> {
    CTX.get_or_init(|| {
        let ctx: &'static Context = Box::leak(Box::new(Context::new()?));
        queue::init(ctx)?;
        backend::register(Arc::new(VulkanBackend { ctx }));
        Ok(ctx)
    })
    .clone()
}

/// Finds a Vulkan device (see [`DEVICE_ENV`]) and registers it as the `gpu` device. Idempotent;
/// without a loader, driver or usable device it returns the reason and registers nothing.
pub fn init() -> Result<DeviceInfo> {
    context().map(|c| c.info.clone())
}

/// The chosen device, once [`init`] succeeded.
pub fn device_info() -> Option<DeviceInfo> {
    match CTX.get() {
        Some(Ok(c)) => Some(c.info.clone()),
        _ => None,
    }
}

/// How the on-disk pipeline cache fared in this process (where it lives, what was loaded or
/// refused, saves, pipelines built and their time), or `None` before a successful [`init`].
pub fn pipeline_cache_stats() -> Option<PipelineCacheStats> {
    match CTX.get() {
        Some(Ok(c)) => Some(c.pipeline_cache.stats()),
        _ => None,
    }
}

/// Writes the pipeline cache to disk now if pipelines were built since it was last read or
/// written (the backend also does so at the next host wait); failures go to the stats.
pub fn save_pipeline_cache() {
    if let Some(Ok(c)) = CTX.get() {
        c.pipeline_cache.save(&c.device);
    }
}

/// Whether a GPU kernel exists for `prim` on inputs of `dtypes` (the conformance harness's list).
pub fn claims(prim: &Primitive, dtypes: &[DType]) -> bool {
    match CTX.get() {
        Some(Ok(ctx)) => VulkanBackend { ctx }.supports(prim, dtypes),
        _ => false,
    }
}

struct VulkanBackend {
    ctx: &'static Context,
}

impl VulkanBackend {
    fn float_ok(&self, dtypes: &[DType]) -> bool {
        let Some(&first) = dtypes.first() else { return false };
        dtypes.iter().all(|&d| d == first) && (first == DType::Float32 || (first == DType::Float16 && self.ctx.info.f16))
    }
}

/// A view op computed from strides alone (no data moves), or `None`.
fn view(op: &ShapeOp, x: &Data, in_shape: &[usize], out_shape: &[usize], itemsize: usize) -> Option<Data> {
    let d = |offset, strides| Some(Data { buf: x.buf.clone(), offset, strides });
    match op {
        ShapeOp::StopGradient => Some(x.clone()),
        ShapeOp::Reshape if x.is_row_contiguous(in_shape) => d(x.offset, kernels::row_major(out_shape)),
        ShapeOp::Transpose(perm) if perm.len() == x.strides.len() => d(x.offset, perm.iter().map(|&p| x.strides[p]).collect()),
        ShapeOp::Broadcast => d(x.offset, kernels::broadcast_strides(in_shape, &x.strides, out_shape)),
        ShapeOp::Slice { start, step } if step.iter().all(|&s| s > 0) && start.iter().all(|&s| s >= 0) => {
            let skip: isize = start.iter().zip(&x.strides).map(|(&a, &s)| a * s).sum();
            let strides = x.strides.iter().zip(step).map(|(&s, &k)| s * k).collect();
            d(x.offset + skip as usize * itemsize, strides)
        }
        _ => None,
    }
}

/// `slice_update` written into its source's own buffer when the source is a dense GPU array
/// nobody else holds (a KV cache's buffer, which the cache hands over each step): one dispatch
/// for the window instead of a copy of the whole array plus the window. `None`: not this case
/// (the inputs are left as they were).
fn slice_update_in_place(inputs: &mut Vec<Array>, start: &[isize], step: &[isize]) -> Result<Option<Data>> {
    let [src, upd] = inputs.as_slice() else { return Ok(None) };
    let dt = src.dtype();
    if upd.dtype() != dt {
        return Ok(None);
    }
    let shape = src.shape().to_vec();
    let upd_data = upd.data_on_device()?;
    let ours = src.data_on_device()?.buf.device_memory().is_some_and(|m| m.as_any().is::<memory::Handle>());
    if !ours || !kernels::slice_update_fits(&shape, (&upd_data, upd.shape()), start, step, dt) {
        return Ok(None);
    }
    let src = inputs.remove(0);
    let d = match src.donate_device(shape.iter().product::<usize>() * dt.size()) {
        Ok(d) => d,
        Err(src) => {
            inputs.insert(0, src);
            return Ok(None);
        }
    };
    let mem = memory::of_buffer(&d.buf).ok_or_else(|| Error::runtime("vulkan", "A donated GPU buffer lost its memory."))?;
    drop(d);
    let mut rec = queue::recorder()?;
    let upd_shape = inputs[0].shape().to_vec();
    kernels::slice_update_into(&mut rec, &mem, &shape, (&upd_data, &upd_shape), start, step, dt).map(Some)
}

impl Backend for VulkanBackend {
    fn name(&self) -> &str {
        "vulkan"
    }

    fn device(&self) -> Device {
        Device::GPU
    }

    fn supports(&self, prim: &Primitive, inputs: &[DType]) -> bool {
        match prim {
            Primitive::Shape(ShapeOp::Reshape | ShapeOp::Transpose(_) | ShapeOp::Broadcast | ShapeOp::Slice { .. } | ShapeOp::StopGradient) => {
                inputs.len() == 1
            }
            Primitive::Shape(ShapeOp::Copy) => inputs.len() == 1 && self.float_ok(inputs),
            Primitive::Shape(ShapeOp::SliceUpdate { .. }) => inputs.len() == 2 && self.float_ok(inputs),
            Primitive::Unary(op) => kernels::unary_code(*op).is_some() && inputs.len() == 1 && self.float_ok(inputs),
            Primitive::Binary(op) => kernels::binary_code(*op).is_some() && inputs.len() == 2 && self.float_ok(inputs),
            Primitive::Reduce(ReduceOp::Reduce { kind, axes }) => {
                kernels::reduce_code(*kind).is_some() && axes.len() == 1 && inputs.len() == 1 && self.float_ok(inputs)
            }
            Primitive::Reduce(ReduceOp::ArgReduce { .. }) => inputs.len() == 1 && self.float_ok(inputs),
            Primitive::Fast(FastOp::RmsNorm { .. }) => inputs.len() == 2 && self.float_ok(inputs),
            Primitive::Fast(FastOp::LayerNorm { .. }) => inputs.len() == 3 && self.float_ok(inputs),
            // x, int32 offset [, float32 freqs].
            Primitive::Fast(FastOp::Rope { .. }) => match inputs {
                [x, DType::Int32] => self.float_ok(&[*x]),
                [x, DType::Int32, DType::Float32] => self.float_ok(&[*x]),
                _ => false,
            },
            // x, r, weight.
            Primitive::Fast(FastOp::AddRmsNorm { .. }) => inputs.len() == 3 && self.float_ok(inputs),
            // q, k, v, int32 offset [, float32 freqs].
            Primitive::Fast(FastOp::DecodeHeads { .. }) => match inputs {
                [q, k, v, DType::Int32] | [q, k, v, DType::Int32, DType::Float32] => self.float_ok(&[*q, *k, *v]),
                _ => false,
            },
            // Key and value buffers, keys and values of their buffers' dtypes.
            Primitive::Fast(FastOp::KvWrite { .. }) => matches!(inputs, [kb, vb, k, v] if kb == k && vb == v) && self.float_ok(inputs),
            // q, k, v [, an additive mask]; a boolean mask runs on the CPU.
            Primitive::Fast(FastOp::Sdpa { .. }) => (inputs.len() == 3 || inputs.len() == 4) && self.float_ok(inputs),
            // Affine x @ wᵀ: x, uint32 w, scales, biases.
            Primitive::Quantized(QuantizedOp::QuantizedMatmul { mode: QuantMode::Affine, bits, transpose: true, .. }) => {
                matches!(inputs, [x, DType::Uint32, s, b] if self.float_ok(&[*x, *s, *b])) && *bits > 0 && 32 % *bits == 0
            }
            // x @ Wᵀ with W as GGUF blocks: x, uint8 blocks.
            Primitive::Quantized(QuantizedOp::GgmlMatmul { ty, .. }) => {
                matches!(inputs, [x, DType::Uint8] if self.float_ok(&[*x])) && kernels::ggml_covered(*ty)
            }
            // x @ Wᵢᵀ for several GGUF weights: x, then uint8 blocks of each.
            Primitive::Quantized(QuantizedOp::GgmlMatmulMany { tys, .. }) => match inputs.split_first() {
                Some((x, ws)) => {
                    self.float_ok(&[*x]) && ws.len() == tys.len() && ws.iter().all(|&w| w == DType::Uint8) && tys.iter().all(|&t| kernels::ggml_covered(t))
                }
                None => false,
            },
            // A fused elementwise program (the SwiGLU of a decode step).
            Primitive::Fused(op) => self.float_ok(inputs) && fusion::fused_covered(op, inputs[0]),
            // GGUF rows to float32 (the embedding rows of a GGUF model).
            Primitive::Quantized(QuantizedOp::GgmlDequantize { ty, .. }) => inputs == [DType::Uint8] && kernels::ggml_covered(*ty),
            // Whole rows along axis 0 with integer indices (the embedding lookup), any dtype.
            Primitive::Index(IndexOp::Gather { axes, .. }) => {
                axes.as_slice() == [0] && matches!(inputs, [_, DType::Int32 | DType::Uint32 | DType::Int64])
            }
            Primitive::Linalg(LinalgOp::Matmul) => inputs.len() == 2 && self.float_ok(inputs),
            _ => false,
        }
    }

    fn eval(&self, prim: &Primitive, mut inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
        let t = std::time::Instant::now();
        if let Primitive::Shape(ShapeOp::SliceUpdate { start, step }) = prim {
            if let Some(d) = slice_update_in_place(&mut inputs, start, step)? {
                queue::count_record(t);
                return Ok(vec![d]);
            }
        }
        if let Primitive::Fast(FastOp::KvWrite { at }) = prim {
            if let Some(outs) = lm_ops::kv_write(&mut inputs, *at, outputs)? {
                queue::count_record(t);
                return Ok(outs);
            }
        }
        // Input views first: never call into core while holding the recorder (a CPU read of a
        // device buffer waits on the queue, which needs the recorder).
        let datas: Vec<Data> = inputs.iter().map(|a| a.data_on_device()).collect::<Result<_>>()?;
        let shapes: Vec<&[usize]> = inputs.iter().map(|a| a.shape()).collect();
        let (out_shape, out_dt) = outputs.first().ok_or_else(|| Error::runtime("vulkan", "No output requested."))?;
        let dt = inputs.first().map(|a| a.dtype()).unwrap_or(*out_dt);
        if let Primitive::Shape(op) = prim {
            if let Some(v) = view(op, &datas[0], shapes[0], out_shape, dt.size()) {
                queue::count_record(t);
                return Ok(vec![v]);
            }
        }
        // The decode step's fused ops (two and three outputs).
        let lm = match prim {
            Primitive::Fast(FastOp::AddRmsNorm { eps }) if *out_dt == dt && datas.len() == 3 => {
                let arg = |i: usize| (&datas[i], shapes[i]);
                lm_ops::add_rms_norm(&mut *queue::recorder()?, arg(0), arg(1), arg(2), eps.get() as f32, dt)?.map(Vec::from)
            }
            Primitive::Fast(FastOp::DecodeHeads { head_dim, dims, traditional, base, scale }) if *out_dt == dt && datas.len() >= 4 => {
                let arg = |i: usize| (&datas[i], shapes[i]);
                let rp = kernels::RopeParams { dims: *dims, traditional: *traditional, base: base.get() as f32, scale: scale.get() as f32 };
                let freqs = datas.get(4).map(|f| (f, shapes[4]));
                lm_ops::decode_heads(&mut *queue::recorder()?, [arg(0), arg(1), arg(2)], arg(3), freqs, *head_dim, &rp, dt)?.map(Vec::from)
            }
            _ => None,
        };
        if let Some(outs) = lm {
            queue::count_record(t);
            return Ok(outs);
        }
        // The other op with several outputs.
        if let Primitive::Quantized(QuantizedOp::GgmlMatmulMany { tys, k }) = prim {
            let ws: Vec<(&Data, &[usize])> = datas[1..].iter().zip(&shapes[1..]).map(|(d, s)| (d, *s)).collect();
            let done = {
                let mut rec = queue::recorder()?;
                if *out_dt == dt { fusion::ggml_matmul_many(&mut rec, (&datas[0], shapes[0]), &ws, tys, *k, dt)? } else { None }
            };
            if let Some(outs) = done {
                queue::count_record(t);
                return Ok(outs);
            }
            drop(ws);
            drop(datas);
            return mlx_arm_core::cpu::eval(prim, inputs, outputs);
        }
        let done = {
            let mut rec = queue::recorder()?;
            let r = &mut *rec;
            match prim {
                Primitive::Fused(op) if *out_dt == dt => {
                    let args: Vec<(&Data, &[usize])> = datas.iter().zip(&shapes).map(|(d, s)| (d, *s)).collect();
                    fusion::fused(r, op, &args, out_shape, dt)?
                }
                Primitive::Shape(ShapeOp::Copy) => kernels::unary(r, 0, &datas[0], shapes[0], dt)?,
                Primitive::Shape(ShapeOp::SliceUpdate { start, step }) if datas.len() == 2 => {
                    kernels::slice_update(r, (&datas[0], shapes[0]), (&datas[1], shapes[1]), start, step, dt)?
                }
                // A reshape of a strided view: a dense copy, then the reshape is free.
                Primitive::Shape(ShapeOp::Reshape) => kernels::unary(r, 0, &datas[0], shapes[0], dt)?
                    .map(|d| Data { strides: kernels::row_major(out_shape), ..d }),
                Primitive::Unary(op) if *out_dt == dt => match kernels::unary_code(*op) {
                    Some(code) => kernels::unary(r, code, &datas[0], shapes[0], dt)?,
                    None => None,
                },
                // A residual add is held back for the rms_norm that usually follows it.
                Primitive::Binary(BinaryOp::Add) if *out_dt == dt && defer::fusion_enabled() => {
                    match kernels::add_deferred(r, (&datas[0], shapes[0]), (&datas[1], shapes[1]), out_shape, dt)? {
                        Some(d) => Some(d),
                        None => kernels::binary(r, 0, (&datas[0], shapes[0]), (&datas[1], shapes[1]), out_shape, dt)?,
                    }
                }
                Primitive::Binary(op) if *out_dt == dt => match kernels::binary_code(*op) {
                    Some(code) => kernels::binary(r, code, (&datas[0], shapes[0]), (&datas[1], shapes[1]), out_shape, dt)?,
                    None => None,
                },
                Primitive::Reduce(ReduceOp::Reduce { kind, axes }) if axes.len() == 1 && *out_dt == dt => {
                    match kernels::reduce_code(*kind) {
                        Some(code) => kernels::reduce(r, code, &datas[0], shapes[0], axes[0], dt)?,
                        None => None,
                    }
                }
                Primitive::Reduce(ReduceOp::ArgReduce { max, axis }) if *out_dt == DType::Uint32 && *axis < shapes[0].len() => {
                    kernels::arg_reduce(r, *max, &datas[0], shapes[0], *axis, dt)?
                }
                Primitive::Fast(FastOp::RmsNorm { eps }) if *out_dt == dt => {
                    let (x, w, e) = ((&datas[0], shapes[0]), (&datas[1], shapes[1]), eps.get() as f32);
                    match kernels::norm_after_add(r, x, w, e, dt)? {
                        Some(d) => Some(d),
                        None => kernels::norm(r, x, w, None, e, dt)?,
                    }
                }
                Primitive::Fast(FastOp::LayerNorm { eps }) if *out_dt == dt => {
                    let b = Some((&datas[2], shapes[2]));
                    kernels::norm(r, (&datas[0], shapes[0]), (&datas[1], shapes[1]), b, eps.get() as f32, dt)?
                }
                Primitive::Fast(FastOp::Rope { dims, traditional, base, scale }) if *out_dt == dt => {
                    let rp = kernels::RopeParams { dims: *dims, traditional: *traditional, base: base.get() as f32, scale: scale.get() as f32 };
                    let freqs = datas.get(2).map(|f| (f, shapes[2]));
                    kernels::rope(r, (&datas[0], shapes[0]), (&datas[1], shapes[1]), freqs, &rp, dt)?
                }
                Primitive::Fast(FastOp::Sdpa { scale, causal }) if *out_dt == dt && inputs.iter().all(|a| a.dtype() == dt) => {
                    let (q, k, v) = ((&datas[0], shapes[0]), (&datas[1], shapes[1]), (&datas[2], shapes[2]));
                    let mask = datas.get(3).map(|m| (m, shapes[3]));
                    kernels::sdpa(r, q, k, v, mask, scale.get() as f32, *causal, dt)?
                }
                Primitive::Quantized(QuantizedOp::QuantizedMatmul { mode: QuantMode::Affine, group_size, bits, transpose: true })
                    if *out_dt == dt && datas.len() == 4 =>
                {
                    let arg = |i: usize| (&datas[i], shapes[i]);
                    kernels::quantized_matmul(r, arg(0), arg(1), arg(2), arg(3), *group_size, *bits, dt)?
                }
                Primitive::Quantized(QuantizedOp::GgmlMatmul { ty, k }) if *out_dt == dt && datas.len() == 2 => {
                    kernels::ggml_matmul(r, (&datas[0], shapes[0]), (&datas[1], shapes[1]), *ty, *k, dt)?
                }
                Primitive::Quantized(QuantizedOp::GgmlDequantize { ty, k }) if datas.len() == 1 => {
                    kernels::ggml_dequantize(r, (&datas[0], shapes[0]), *ty, *k)?
                }
                Primitive::Index(IndexOp::Gather { axes, slice_sizes }) if axes.as_slice() == [0] && inputs.len() == 2 => {
                    kernels::gather_rows(r, (&datas[0], shapes[0]), &inputs[1], slice_sizes, dt.size())?
                }
                Primitive::Linalg(LinalgOp::Matmul) if *out_dt == dt => {
                    kernels::matmul(r, (&datas[0], shapes[0]), (&datas[1], shapes[1]), dt)?
                }
                _ => None,
            }
        };
        match done {
            Some(d) => {
                queue::count_record(t);
                Ok(vec![d])
            }
            // Not covered by a GPU kernel: the CPU kernel, which brings its inputs over.
            None => {
                drop(datas);
                mlx_arm_core::cpu::eval(prim, inputs, outputs)
            }
        }
    }

    fn synchronize(&self, _stream: Stream) -> Result<()> {
        queue::finish()
    }
}
