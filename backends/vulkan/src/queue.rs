//! Command recording and submission. Dispatches are recorded into one open command buffer and
//! submitted when it holds `MLX_ARM_VULKAN_BATCH` of them (default 64) or when the host needs a
//! result. A barrier is recorded only where a dispatch reads or overwrites a buffer written
//! (or, for writes, read) since the last barrier. Each submitted batch keeps the memory it
//! uses alive until its fence signals.
//!
//! Core's `Backend::eval` carries no stream, so every GPU stream shares this one recorder on
//! the one compute queue (in order, which is what MLX promises within a stream).

use crate::context::{vk_err, Context};
use crate::memory::VkMemory;
use ash::vk;
use gpu_allocator::MemoryLocation;
use mlx_arm_core::{Error, Result};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

const OP: &str = "vulkan";

struct Batch {
    fence: vk::Fence,
    cb: vk::CommandBuffer,
    _keep: Vec<Arc<VkMemory>>,
}

pub(crate) struct Recorder {
    ctx: &'static Context,
    pool: vk::CommandPool,
    open: Option<vk::CommandBuffer>,
    count: usize,
    written: HashSet<vk::Buffer>,
    read: HashSet<vk::Buffer>,
    keep: Vec<Arc<VkMemory>>,
    in_flight: Vec<Batch>,
    threshold: usize,
}

// SAFETY: Vulkan handles are plain values; the recorder is used under its mutex only.
unsafe impl Send for Recorder {}

static RECORDER: OnceLock<Mutex<Recorder>> = OnceLock::new();

/// Dispatches recorded so far, and batches submitted (for tests and benchmarks).
static STATS: Mutex<(usize, usize, usize)> = Mutex::new((0, 0, 0));

/// `(dispatches, barriers, submits)` since start.
pub fn stats() -> (usize, usize, usize) {
    *crate::lock(&STATS)
}

pub(crate) fn init(ctx: &'static Context) -> Result<()> {
    let pci = vk::CommandPoolCreateInfo::default()
        .queue_family_index(ctx.queue_family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid create info.
    let pool = unsafe { ctx.device.create_command_pool(&pci, None) }.map_err(|r| vk_err(OP, "vkCreateCommandPool", r))?;
    let threshold = std::env::var("MLX_ARM_VULKAN_BATCH").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(64);
    let rec = Recorder {
        ctx,
        pool,
        open: None,
        count: 0,
        written: HashSet::new(),
        read: HashSet::new(),
        keep: Vec::new(),
        in_flight: Vec::new(),
        threshold,
    };
    let _ = RECORDER.set(Mutex::new(rec));
    Ok(())
}

/// The recorder, locked.
pub(crate) fn recorder() -> Result<std::sync::MutexGuard<'static, Recorder>> {
    RECORDER
        .get()
        .ok_or_else(|| Error::runtime(OP, "The Vulkan backend is not initialized."))?
        .lock()
        .map_err(|_| Error::runtime(OP, "The Vulkan command recorder was poisoned by an earlier panic."))
}

/// Submits everything recorded and waits for all of it.
pub(crate) fn finish() -> Result<()> {
    recorder()?.finish()
}

/// Copies device memory into `dst` through a host-visible staging buffer (or directly when
/// mapped), after all queued work.
pub(crate) fn download(mem: &Arc<VkMemory>, dst: &mut [u8]) -> Result<()> {
    let mut rec = recorder()?;
    let n = dst.len().min(mem.size);
    if let Some(p) = mem.mapped() {
        rec.finish()?;
        // SAFETY: the mapping holds mem.size bytes and the queue is idle.
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), dst.as_mut_ptr(), n) };
        return Ok(());
    }
    let staging = VkMemory::new(rec.ctx, n, MemoryLocation::GpuToCpu, "download")?;
    rec.copy(mem, &staging, n)?;
    rec.finish()?;
    let p = staging.mapped().ok_or_else(|| Error::runtime("download", "Vulkan staging memory is not host-visible."))?;
    // SAFETY: the staging mapping holds n bytes and the copy has completed.
    unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), dst.as_mut_ptr(), n) };
    Ok(())
}

impl Recorder {
    pub fn ctx(&self) -> &'static Context {
        self.ctx
    }

    fn begin(&mut self) -> Result<vk::CommandBuffer> {
        if let Some(cb) = self.open {
            return Ok(cb);
        }
        let d = &self.ctx.device;
        let ai = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid pool; the buffer is freed when its batch completes.
        let cb = unsafe { d.allocate_command_buffers(&ai) }.map_err(|r| vk_err(OP, "vkAllocateCommandBuffers", r))?[0];
        let bi = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        unsafe { d.begin_command_buffer(cb, &bi) }.map_err(|r| vk_err(OP, "vkBeginCommandBuffer", r))?;
        self.open = Some(cb);
        Ok(cb)
    }

    /// Opens (or continues) the batch for work that reads `reads` and writes `writes`,
    /// recording a barrier first if that work depends on earlier work in the batch.
    pub fn access(&mut self, reads: &[&Arc<VkMemory>], writes: &[&Arc<VkMemory>]) -> Result<vk::CommandBuffer> {
        let cb = self.begin()?;
        let raw = reads.iter().any(|m| self.written.contains(&m.buffer));
        let war_waw = writes.iter().any(|m| self.written.contains(&m.buffer) || self.read.contains(&m.buffer));
        if raw || war_waw {
            let mb = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_READ)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE);
            let stages = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
            // SAFETY: recording into the open command buffer.
            unsafe { self.ctx.device.cmd_pipeline_barrier(cb, stages, stages, vk::DependencyFlags::empty(), &[mb], &[], &[]) };
            self.written.clear();
            self.read.clear();
            crate::lock(&STATS).1 += 1;
        }
        for m in reads {
            self.read.insert(m.buffer);
            self.keep.push((*m).clone());
        }
        for m in writes {
            self.written.insert(m.buffer);
            self.keep.push((*m).clone());
        }
        Ok(cb)
    }

    /// Counts one recorded dispatch (or copy) and submits the batch when it is full.
    pub fn recorded(&mut self) -> Result<()> {
        self.count += 1;
        crate::lock(&STATS).0 += 1;
        if self.count >= self.threshold {
            self.submit()?;
        }
        Ok(())
    }

    /// Records a copy of `n` bytes from `src` to `dst`.
    pub fn copy(&mut self, src: &Arc<VkMemory>, dst: &Arc<VkMemory>, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let cb = self.access(&[src], &[dst])?;
        let region = [vk::BufferCopy::default().size(n as u64)];
        // SAFETY: both buffers hold at least n bytes.
        unsafe { self.ctx.device.cmd_copy_buffer(cb, src.buffer, dst.buffer, &region) };
        self.recorded()
    }

    /// Submits the open batch without waiting.
    pub fn submit(&mut self) -> Result<()> {
        let Some(cb) = self.open.take() else { return Ok(()) };
        let d = &self.ctx.device;
        // Make every write visible to the host once the fence signals.
        let mb = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        let keep = std::mem::take(&mut self.keep);
        self.count = 0;
        self.written.clear();
        self.read.clear();
        let result = (|| {
            unsafe {
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                    vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &[mb],
                    &[],
                    &[],
                );
                d.end_command_buffer(cb).map_err(|r| vk_err(OP, "vkEndCommandBuffer", r))?;
                let fence = d.create_fence(&vk::FenceCreateInfo::default(), None).map_err(|r| vk_err(OP, "vkCreateFence", r))?;
                let cbs = [cb];
                let si = [vk::SubmitInfo::default().command_buffers(&cbs)];
                let q = crate::lock(&self.ctx.queue);
                if let Err(r) = d.queue_submit(*q, &si, fence) {
                    d.destroy_fence(fence, None);
                    return Err(vk_err(OP, "vkQueueSubmit", r));
                }
                Ok(fence)
            }
        })();
        match result {
            Ok(fence) => {
                self.in_flight.push(Batch { fence, cb, _keep: keep });
                crate::lock(&STATS).2 += 1;
                self.reclaim(false)
            }
            Err(e) => {
                unsafe { d.free_command_buffers(self.pool, &[cb]) };
                Err(e)
            }
        }
    }

    /// Frees finished batches; with `wait`, waits for all of them first.
    fn reclaim(&mut self, wait: bool) -> Result<()> {
        let d = &self.ctx.device;
        let mut err = None;
        let mut i = 0;
        while i < self.in_flight.len() {
            let f = self.in_flight[i].fence;
            // SAFETY: a live fence of this device.
            let done = if wait {
                // A lost device or a hung queue ends in an error, not a hang: 60 s at most.
                match unsafe { d.wait_for_fences(&[f], true, 60_000_000_000) } {
                    Ok(()) => true,
                    Err(r) => {
                        err = Some(vk_err(OP, "waiting for the GPU", r));
                        true
                    }
                }
            } else {
                unsafe { d.get_fence_status(f) }.unwrap_or(false)
            };
            if done {
                let b = self.in_flight.swap_remove(i);
                unsafe {
                    d.destroy_fence(b.fence, None);
                    d.free_command_buffers(self.pool, &[b.cb]);
                }
            } else {
                i += 1;
            }
        }
        err.map_or(Ok(()), Err)
    }

    /// Submits what is open and waits for everything.
    pub fn finish(&mut self) -> Result<()> {
        self.submit()?;
        self.reclaim(true)
    }
}
