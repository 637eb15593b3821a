//! Command recording and submission. Dispatches are recorded into one open command buffer;
//! nothing waits until the host needs a result (a host read of a GPU buffer, `synchronize`).
//! A read waits for the batch that last wrote the buffer (batches are numbered; each buffer
//! keeps the number of its last writer), not for work recorded after it: a decode step's token
//! is read while the next step, already submitted, runs.
//! The open batch is submitted then, or earlier when it is full: the first batch after a wait
//! holds `FIRST_BATCH` dispatches (so the GPU starts while the host records the rest of the
//! graph), each next one twice the last, up to `MLX_ARM_VULKAN_BATCH` (default 32: a
//! submission costs the host ~4 µs on an H200 with reused fences and command buffers, while
//! the GPU sits idle until work is submitted, so small batches keep it fed and leave little
//! for the final wait). A decode step of the default model (306 dispatches) is thus 10
//! submissions and one wait. A barrier is recorded only where a
//! dispatch reads or overwrites a buffer written (or, for writes, read) since the last barrier;
//! that record spans submissions until the host waits (a barrier in a later command buffer
//! orders it after everything submitted earlier on the queue), so work in one batch that
//! depends on the previous batch is ordered too. Fences and command buffers of finished
//! batches are reused. Each submitted batch keeps the memory it uses alive until its fence
//! signals.
//!
//! Core's `Backend::eval` carries no stream, so every GPU stream shares this one recorder on
//! the one compute queue (in order, which is what MLX promises within a stream).

use crate::context::{vk_err, Context};
use crate::memory::VkMemory;
use crate::pipelines::{Pipeline, Shader};
use crate::defer::Deferred;
use crate::profile::Profiler;
use ash::vk;
use gpu_allocator::MemoryLocation;
use mlx_arm_core::{Error, Result};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

const OP: &str = "vulkan";

struct Batch {
    /// Batches are numbered from 1 in submission order (a memory's `last_write`).
    seq: u64,
    fence: vk::Fence,
    cb: vk::CommandBuffer,
    _keep: Vec<Arc<VkMemory>>,
    /// Its start/end timestamp pair (`MLX_ARM_VULKAN_PROFILE=batch`).
    stamp: Option<u32>,
}

pub(crate) struct Recorder {
    ctx: &'static Context,
    pool: vk::CommandPool,
    open: Option<vk::CommandBuffer>,
    count: usize,
    /// Buffers written and read since the last barrier (few: a decode step records a barrier
    /// every ~1.4 dispatches, so a linear scan beats hashing).
    written: Vec<vk::Buffer>,
    read: Vec<vk::Buffer>,
    keep: Vec<Arc<VkMemory>>,
    in_flight: Vec<Batch>,
    /// Fences and command buffers of finished batches, for the next ones.
    free_fences: Vec<vk::Fence>,
    free_cbs: Vec<vk::CommandBuffer>,
    /// Dispatches the open batch may hold before it is submitted (grows after each submission).
    limit: usize,
    /// The most a batch holds (`MLX_ARM_VULKAN_BATCH`).
    cap: usize,
    /// How long a wait for one batch may take before it fails (`MLX_ARM_VULKAN_TIMEOUT`, in
    /// seconds; default 600).
    timeout_ns: u64,
    /// GPU timestamps per dispatch (`MLX_ARM_VULKAN_PROFILE=1`), or `None`.
    profiler: Option<Profiler>,
    /// The number the open batch gets when it is submitted.
    next_seq: u64,
    /// The pipeline last bound in the open command buffer (null: none): consecutive dispatches
    /// of one pipeline (a layer's GEMVs, say) bind it once.
    bound: vk::Pipeline,
    /// Pipelines this recorder has used, by (shader, f16): found under the recorder's lock
    /// without taking the global cache's mutex on every dispatch.
    pipelines: Vec<((Shader, bool), &'static Pipeline)>,
    /// A dispatch held back for the next op to absorb (`crate::defer`); recorded before
    /// anything else is recorded, submitted or waited for.
    pending: Option<Deferred>,
    /// The open command buffer's timestamp pair (`MLX_ARM_VULKAN_PROFILE=batch`).
    open_stamp: Option<u32>,
}

/// Dispatches in the first batch after a wait.
const FIRST_BATCH: usize = 64;
/// The largest batch by default (measured on an H200, tg64 of the default model: cap 32 →
/// 231–256 tok/s, 64 → 201, 128 → 220, 256 → 214, 1024 → 206–224; docs/BENCHMARKS.md).
const DEFAULT_CAP: usize = 32;

// SAFETY: Vulkan handles are plain values; the recorder is used under its mutex only.
unsafe impl Send for Recorder {}

static RECORDER: OnceLock<Mutex<Recorder>> = OnceLock::new();

/// Work recorded and submitted since start (for tests and benchmarks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Dispatches and copies recorded.
    pub dispatches: usize,
    /// Pipeline barriers recorded between them (real hazards only).
    pub barriers: usize,
    /// Command buffers submitted.
    pub submits: usize,
    /// Times the host waited for the queue (a result was read, or `synchronize`).
    pub waits: usize,
    /// Nanoseconds the host spent blocked in those waits.
    pub wait_ns: u64,
    /// Nanoseconds the host spent in the backend's `eval` for ops it ran: checking the case,
    /// binding inputs, taking output buffers and recording (submissions included).
    pub record_ns: u64,
    /// Nanoseconds of that spent submitting batches (ending the command buffer and
    /// `vkQueueSubmit`). The rest of a step's host time is building and walking the graph.
    pub submit_ns: u64,
    /// Nanoseconds of the recording time spent taking output buffers (device memory from the
    /// pool or the allocator, and core's buffer around it).
    pub alloc_ns: u64,
    /// Nanoseconds of it spent in the Vulkan calls of dispatches (pipeline, barrier checks,
    /// descriptors, push constants, the dispatch itself).
    pub command_ns: u64,
    /// Nanoseconds of it spent freeing finished batches after submissions (their buffers go
    /// back to the pool).
    pub reclaim_ns: u64,
    /// Of `command_ns`, the driver's calls one by one: `vkCmdPipelineBarrier` (hazard barriers),
    /// `vkCmdPushDescriptorSetKHR` (with `vkCmdBindPipeline` where the pipeline changes),
    /// `vkCmdPushConstants` and `vkCmdDispatch`: which of them to cut next.
    pub barrier_ns: u64,
    pub descriptor_ns: u64,
    pub push_constant_ns: u64,
    pub cmd_dispatch_ns: u64,
}

/// The counters, as atomics: bumped on every dispatch, so no lock.
struct Counters {
    dispatches: AtomicUsize,
    barriers: AtomicUsize,
    submits: AtomicUsize,
    waits: AtomicUsize,
    wait_ns: AtomicU64,
    record_ns: AtomicU64,
    submit_ns: AtomicU64,
    alloc_ns: AtomicU64,
    command_ns: AtomicU64,
    reclaim_ns: AtomicU64,
    barrier_ns: AtomicU64,
    descriptor_ns: AtomicU64,
    push_constant_ns: AtomicU64,
    cmd_dispatch_ns: AtomicU64,
}

static STATS: Counters = Counters {
    dispatches: AtomicUsize::new(0),
    barriers: AtomicUsize::new(0),
    submits: AtomicUsize::new(0),
    waits: AtomicUsize::new(0),
    wait_ns: AtomicU64::new(0),
    record_ns: AtomicU64::new(0),
    submit_ns: AtomicU64::new(0),
    alloc_ns: AtomicU64::new(0),
    command_ns: AtomicU64::new(0),
    reclaim_ns: AtomicU64::new(0),
    barrier_ns: AtomicU64::new(0),
    descriptor_ns: AtomicU64::new(0),
    push_constant_ns: AtomicU64::new(0),
    cmd_dispatch_ns: AtomicU64::new(0),
};

fn bump(c: &AtomicUsize) {
    c.fetch_add(1, Ordering::Relaxed);
}

fn add_ns(c: &AtomicU64, since: std::time::Instant) {
    c.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// Adds the time since `since` to the backend's recording time.
pub(crate) fn count_record(since: std::time::Instant) {
    add_ns(&STATS.record_ns, since);
}

/// Adds the time since `since` to the time spent taking output buffers.
pub(crate) fn count_alloc(since: std::time::Instant) {
    add_ns(&STATS.alloc_ns, since);
}

/// Adds the time since `since` to the time spent in dispatches' Vulkan calls.
pub(crate) fn count_command(since: std::time::Instant) {
    add_ns(&STATS.command_ns, since);
}

/// Adds the time between `stamps` (taken around a dispatch's descriptor push, push constants
/// and dispatch) to those calls' counters.
pub(crate) fn count_calls(stamps: [std::time::Instant; 4]) {
    let d = |a: usize| stamps[a + 1].duration_since(stamps[a]).as_nanos() as u64;
    STATS.descriptor_ns.fetch_add(d(0), Ordering::Relaxed);
    STATS.push_constant_ns.fetch_add(d(1), Ordering::Relaxed);
    STATS.cmd_dispatch_ns.fetch_add(d(2), Ordering::Relaxed);
}

/// The counters since start.
pub fn stats() -> QueueStats {
    let u = |c: &AtomicUsize| c.load(Ordering::Relaxed);
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    QueueStats {
        dispatches: u(&STATS.dispatches),
        barriers: u(&STATS.barriers),
        submits: u(&STATS.submits),
        waits: u(&STATS.waits),
        wait_ns: n(&STATS.wait_ns),
        record_ns: n(&STATS.record_ns),
        submit_ns: n(&STATS.submit_ns),
        alloc_ns: n(&STATS.alloc_ns),
        command_ns: n(&STATS.command_ns),
        reclaim_ns: n(&STATS.reclaim_ns),
        barrier_ns: n(&STATS.barrier_ns),
        descriptor_ns: n(&STATS.descriptor_ns),
        push_constant_ns: n(&STATS.push_constant_ns),
        cmd_dispatch_ns: n(&STATS.cmd_dispatch_ns),
    }
}

pub(crate) fn init(ctx: &'static Context) -> Result<()> {
    let pci = vk::CommandPoolCreateInfo::default()
        .queue_family_index(ctx.queue_family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid create info.
    let pool = unsafe { ctx.device.create_command_pool(&pci, None) }.map_err(|r| vk_err(OP, "vkCreateCommandPool", r))?;
    let timeout_s: u64 = std::env::var("MLX_ARM_VULKAN_TIMEOUT").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(600);
    let cap = std::env::var("MLX_ARM_VULKAN_BATCH").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(DEFAULT_CAP);
    let rec = Recorder {
        ctx,
        pool,
        open: None,
        count: 0,
        written: Vec::new(),
        read: Vec::new(),
        keep: Vec::new(),
        in_flight: Vec::new(),
        free_fences: Vec::new(),
        free_cbs: Vec::new(),
        limit: FIRST_BATCH.min(cap),
        cap,
        timeout_ns: timeout_s.saturating_mul(1_000_000_000),
        profiler: Profiler::new(ctx)?,
        next_seq: 1,
        bound: vk::Pipeline::null(),
        pipelines: Vec::new(),
        pending: None,
        open_stamp: None,
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

/// Waits until the work that writes `mem` has run (work recorded after it may still run).
pub(crate) fn wait_for(mem: &Arc<VkMemory>) -> Result<()> {
    recorder()?.wait_for(mem)
}

/// Copies device memory into `dst` through a host-visible staging buffer (or directly when
/// mapped), once the work that writes it has run: work recorded after it keeps running (a
/// decode step's token is read while the next step runs).
pub(crate) fn download(mem: &Arc<VkMemory>, dst: &mut [u8]) -> Result<()> {
    let mut rec = recorder()?;
    let n = dst.len().min(mem.size);
    if let Some(p) = mem.mapped() {
        rec.wait_for(mem)?;
        // SAFETY: the mapping holds mem.size bytes and the queue is idle.
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), dst.as_mut_ptr(), n) };
        return Ok(());
    }
    let staging = VkMemory::new(rec.ctx, n, MemoryLocation::GpuToCpu, "download")?;
    rec.copy(mem, &staging, n)?;
    rec.wait_for(&staging)?;
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
        let cb = match self.free_cbs.pop() {
            Some(cb) => cb,
            None => {
                let ai = vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1);
                // SAFETY: valid pool; the buffer returns to `free_cbs` when its batch completes.
                unsafe { d.allocate_command_buffers(&ai) }.map_err(|r| vk_err(OP, "vkAllocateCommandBuffers", r))?[0]
            }
        };
        // Beginning a finished (or fresh) buffer of a RESET_COMMAND_BUFFER pool resets it.
        let bi = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        unsafe { d.begin_command_buffer(cb, &bi) }.map_err(|r| vk_err(OP, "vkBeginCommandBuffer", r))?;
        if let Some(p) = &mut self.profiler {
            if p.batch_mode() {
                self.open_stamp = Some(p.batch_start(d, cb));
            } else {
                p.stamp(d, cb, None);
            }
        }
        self.open = Some(cb);
        self.bound = vk::Pipeline::null();
        Ok(cb)
    }

    /// The pipeline of `shader` for float16 (`f16`) or float32 elements.
    pub fn pipeline(&mut self, shader: Shader, f16: bool) -> Result<&'static Pipeline> {
        if let Some((_, p)) = self.pipelines.iter().find(|(k, _)| *k == (shader, f16)) {
            return Ok(p);
        }
        let p = crate::pipelines::get(self.ctx, shader, f16)?;
        self.pipelines.push(((shader, f16), p));
        Ok(p)
    }

    /// Holds `d` back (recording what was held back before).
    pub fn defer(&mut self, d: Deferred) -> Result<()> {
        self.flush()?;
        self.pending = Some(d);
        Ok(())
    }

    /// The dispatch held back, if any.
    pub fn pending(&self) -> Option<&Deferred> {
        self.pending.as_ref()
    }

    /// Takes the dispatch held back: the caller records what it stands for.
    pub fn take_pending(&mut self) -> Option<Deferred> {
        self.pending.take()
    }

    /// Records the dispatch held back, if any.
    pub fn flush(&mut self) -> Result<()> {
        match self.pending.take() {
            Some(d) => crate::defer::record(self, d),
            None => Ok(()),
        }
    }

    /// Binds `pipeline` in the open command buffer `cb` unless it is bound there already.
    pub fn bind_pipeline(&mut self, cb: vk::CommandBuffer, pipeline: vk::Pipeline) {
        if self.bound != pipeline {
            // SAFETY: recording into the open command buffer; pipelines live for the process.
            unsafe { self.ctx.device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline) };
            self.bound = pipeline;
        }
    }

    /// Opens (or continues) the batch for work that reads `reads` and writes `writes`,
    /// recording a barrier first if that work depends on earlier work in the batch.
    pub fn access(&mut self, reads: &[&Arc<VkMemory>], writes: &[&Arc<VkMemory>]) -> Result<vk::CommandBuffer> {
        // What was held back comes first (it may be what this work reads).
        self.flush()?;
        let cb = self.begin()?;
        let raw = reads.iter().any(|m| self.written.contains(&m.buffer));
        let war_waw = writes.iter().any(|m| self.written.contains(&m.buffer) || self.read.contains(&m.buffer));
        if raw || war_waw {
            let mb = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_READ)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE);
            let stages = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
            let t = std::time::Instant::now();
            // SAFETY: recording into the open command buffer.
            unsafe { self.ctx.device.cmd_pipeline_barrier(cb, stages, stages, vk::DependencyFlags::empty(), &[mb], &[], &[]) };
            add_ns(&STATS.barrier_ns, t);
            self.written.clear();
            self.read.clear();
            bump(&STATS.barriers);
        }
        for m in reads {
            if !self.read.contains(&m.buffer) {
                self.read.push(m.buffer);
            }
            self.keep.push((*m).clone());
        }
        for m in writes {
            m.last_write.store(self.next_seq, Ordering::Relaxed);
            if !self.written.contains(&m.buffer) {
                self.written.push(m.buffer);
            }
            self.keep.push((*m).clone());
        }
        Ok(cb)
    }

    /// Counts one recorded dispatch (or copy) of kernel `label` and submits the batch when it
    /// is full.
    pub fn recorded(&mut self, label: &'static str) -> Result<()> {
        if let (Some(p), Some(cb)) = (&mut self.profiler, self.open) {
            p.stamp(&self.ctx.device, cb, Some(label));
        }
        self.count += 1;
        bump(&STATS.dispatches);
        if self.count >= self.limit {
            self.submit()?;
            self.limit = (self.limit * 2).min(self.cap);
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
        self.recorded("copy")
    }

    /// Records copies of byte `regions` (source offset, destination offset, length) from
    /// `src` to `dst`, as one command.
    pub fn copy_regions(&mut self, src: &Arc<VkMemory>, dst: &Arc<VkMemory>, regions: &[vk::BufferCopy]) -> Result<()> {
        if regions.is_empty() {
            return Ok(());
        }
        let cb = self.access(&[src], &[dst])?;
        // SAFETY: the caller checked every region against both buffers' sizes.
        unsafe { self.ctx.device.cmd_copy_buffer(cb, src.buffer, dst.buffer, regions) };
        self.recorded("copy")
    }

    /// Submits the open batch without waiting.
    pub fn submit(&mut self) -> Result<()> {
        self.flush()?;
        let Some(cb) = self.open.take() else { return Ok(()) };
        let t = std::time::Instant::now();
        let d = &self.ctx.device;
        // Make every write visible to the host once the fence signals.
        let mb = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        let keep = std::mem::take(&mut self.keep);
        let stamp = self.open_stamp.take();
        if let (Some(p), Some(slot)) = (&mut self.profiler, stamp) {
            p.batch_end(d, cb, slot);
        }
        self.count = 0;
        let reuse = self.free_fences.pop();
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
                let fence = match reuse {
                    Some(f) => f,
                    None => d.create_fence(&vk::FenceCreateInfo::default(), None).map_err(|r| vk_err(OP, "vkCreateFence", r))?,
                };
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
        add_ns(&STATS.submit_ns, t);
        match result {
            Ok(fence) => {
                self.in_flight.push(Batch { seq: self.next_seq, fence, cb, _keep: keep, stamp });
                self.next_seq += 1;
                bump(&STATS.submits);
                let t = std::time::Instant::now();
                let r = self.reclaim(0);
                add_ns(&STATS.reclaim_ns, t);
                r
            }
            Err(e) => {
                // Nothing recorded in it was submitted: no later barrier must wait for it.
                self.written.clear();
                self.read.clear();
                unsafe { d.free_command_buffers(self.pool, &[cb]) };
                Err(e)
            }
        }
    }

    /// Frees finished batches, waiting first for those numbered up to `upto` (0: none).
    fn reclaim(&mut self, upto: u64) -> Result<()> {
        let d = &self.ctx.device;
        let mut err = None;
        let mut i = 0;
        while i < self.in_flight.len() {
            let f = self.in_flight[i].fence;
            // SAFETY: a live fence of this device.
            let done = if self.in_flight[i].seq <= upto {
                // A lost device ends the wait at once (VK_ERROR_DEVICE_LOST); a hung queue after
                // `self.timeout_ns` (a batch holds up to `cap` dispatches, which a CPU driver
                // such as lavapipe can take tens of seconds to run).
                match unsafe { d.wait_for_fences(&[f], true, self.timeout_ns) } {
                    Ok(()) => true,
                    Err(vk::Result::TIMEOUT) => {
                        let secs = self.timeout_ns / 1_000_000_000;
                        let msg = format!("The GPU did not finish its work within {secs} s (MLX_ARM_VULKAN_TIMEOUT): the device hangs.");
                        // The batch may still run: keep it (and the memory it uses).
                        err = Some(Error::runtime(OP, msg));
                        break;
                    }
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
                if let (Some(p), Some(slot)) = (&mut self.profiler, b.stamp) {
                    p.batch_done(d, b.seq, slot);
                }
                // SAFETY: the batch is done with both; a fence goes back unsignalled.
                match unsafe { d.reset_fences(&[b.fence]) } {
                    Ok(()) => self.free_fences.push(b.fence),
                    Err(_) => unsafe { d.destroy_fence(b.fence, None) },
                }
                self.free_cbs.push(b.cb);
            } else {
                i += 1;
            }
        }
        err.map_or(Ok(()), Err)
    }

    /// Submits what is open and waits for everything.
    pub fn finish(&mut self) -> Result<()> {
        self.wait_until(u64::MAX)
    }

    /// Waits until the batch that last wrote `mem` has run, submitting the open batch first
    /// when it is that one. Later batches keep running.
    /// (While profiling, everything is waited for: timestamps are read once the queue is idle.)
    pub fn wait_for(&mut self, mem: &VkMemory) -> Result<()> {
        // A held-back dispatch may write `mem` (its number is set when it is recorded).
        self.flush()?;
        match mem.last_write.load(Ordering::Relaxed) {
            0 => Ok(()),
            _ if self.profiler.as_ref().is_some_and(|p| !p.batch_mode()) => self.finish(),
            seq => self.wait_until(seq),
        }
    }

    /// Submits what is open (so the GPU has it while the host waits) and waits for the
    /// batches numbered up to `upto`.
    fn wait_until(&mut self, upto: u64) -> Result<()> {
        self.submit()?;
        self.limit = FIRST_BATCH.min(self.cap);
        // Pipelines built for the work just submitted go to disk while the GPU runs it (a
        // flag test when none were built).
        self.ctx.pipeline_cache.save(&self.ctx.device);
        if !self.in_flight.iter().any(|b| b.seq <= upto) {
            return Ok(());
        }
        let t = std::time::Instant::now();
        let done = self.reclaim(upto);
        if self.in_flight.is_empty() {
            // Everything recorded has run: no hazard is left to order.
            self.written.clear();
            self.read.clear();
            if let Some(p) = &mut self.profiler {
                p.collect(&self.ctx.device);
            }
        }
        bump(&STATS.waits);
        add_ns(&STATS.wait_ns, t);
        done
    }
}
