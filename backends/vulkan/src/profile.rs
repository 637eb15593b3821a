//! GPU time per kernel, measured with timestamps when `MLX_ARM_VULKAN_PROFILE=1` (off by
//! default: a timestamp after every dispatch costs a little GPU time). Each command buffer
//! starts with a timestamp and every dispatch (or copy) is followed by one, so the ticks
//! between a dispatch's stamp and the one before it are that dispatch's time on the queue,
//! barrier and launch included. Their sum is the time the GPU was busy; the rest of a step's
//! wall time it sat idle (waiting for the host to record and submit). Totals are kept per
//! kernel name until the process ends ([`kernel_times`]).
//! `MLX_ARM_VULKAN_PROFILE=batch` stamps only each command buffer's start and end (two
//! timestamps a batch, no per-dispatch cost and no forced wait), read when the batch's fence
//! signals: the GPU's busy time and its idle gaps between consecutive batches
//! ([`batch_times`]), so a step's GPU time can be set against its host time undisturbed.

use crate::context::{vk_err, Context};
use ash::vk;
use mlx_arm_core::Result;
use std::sync::Mutex;

/// Set to `1` to measure GPU time per kernel.
pub const PROFILE_ENV: &str = "MLX_ARM_VULKAN_PROFILE";

/// Timestamps held between two host waits; dispatches past it go unmeasured (counted).
/// In batch mode, a ring of start/end pairs (far more than the batches ever in flight).
const CAPACITY: u32 = 16384;

/// What the GPU did per batch since start ([`PROFILE_ENV`] = `batch`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchTimes {
    /// Batches measured.
    pub batches: u64,
    /// Sum of each batch's end − start (the GPU busy with our work), nanoseconds.
    pub busy_ns: f64,
    /// Sum of the gaps between a batch's end and the next batch's start (the GPU idle,
    /// waiting for the host to submit), nanoseconds.
    pub idle_ns: f64,
    /// Gaps counted in `idle_ns`.
    pub gaps: u64,
}

struct BatchState {
    t: BatchTimes,
    /// (seq, end tick) of the last batch read.
    last: Option<(u64, u64)>,
}

static BATCHES: Mutex<BatchState> = Mutex::new(BatchState { t: BatchTimes { batches: 0, busy_ns: 0.0, idle_ns: 0.0, gaps: 0 }, last: None });

/// Batch start/end times since start (zero unless `MLX_ARM_VULKAN_PROFILE=batch`).
pub fn batch_times() -> BatchTimes {
    crate::lock(&BATCHES).t
}

/// What one kernel name cost on the GPU since start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTime {
    /// The kernel (shader family, or `copy`).
    pub name: &'static str,
    /// Dispatches measured.
    pub count: u64,
    /// Their GPU time, nanoseconds.
    pub gpu_ns: f64,
}

static TOTALS: Mutex<Vec<KernelTime>> = Mutex::new(Vec::new());

/// Totals per kernel since start, most expensive first (empty unless profiling is on).
pub fn kernel_times() -> Vec<KernelTime> {
    let mut v = crate::lock(&TOTALS).clone();
    v.sort_by(|a, b| b.gpu_ns.total_cmp(&a.gpu_ns));
    v
}

/// The query pool of one recorder and the labels of the timestamps written since the last wait.
pub(crate) struct Profiler {
    pool: vk::QueryPool,
    tick_ns: f64,
    /// Label of each timestamp written (`None`: a command buffer's start).
    labels: Vec<Option<&'static str>>,
    /// Whether the pool must be reset before the next timestamp.
    stale: bool,
    /// Batch mode: stamps only a command buffer's start and end.
    batch: bool,
    /// Batch mode: the next start/end pair of the ring.
    next_pair: u32,
}

impl Profiler {
    /// A profiler when [`PROFILE_ENV`] asks for one and the queue writes timestamps.
    pub fn new(ctx: &Context) -> Result<Option<Profiler>> {
        let mode = std::env::var(PROFILE_ENV).unwrap_or_default();
        let (Some(tick_ns), true) = (ctx.timestamp_ns, mode == "1" || mode == "batch") else { return Ok(None) };
        let ci = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(CAPACITY);
        // SAFETY: valid create info; the pool lives for the process.
        let pool = unsafe { ctx.device.create_query_pool(&ci, None) }.map_err(|r| vk_err("vulkan", "vkCreateQueryPool", r))?;
        Ok(Some(Profiler { pool, tick_ns, labels: Vec::new(), stale: true, batch: mode == "batch", next_pair: 0 }))
    }

    /// Whether only batches are stamped (reads need not wait for the whole queue).
    pub fn batch_mode(&self) -> bool {
        self.batch
    }

    /// Batch mode: stamps the start of command buffer `cb` (just begun) and returns the slot
    /// of its pair, for [`Profiler::batch_end`] and [`Profiler::batch_done`].
    pub fn batch_start(&mut self, d: &ash::Device, cb: vk::CommandBuffer) -> u32 {
        let slot = (self.next_pair % (CAPACITY / 2)) * 2;
        self.next_pair = self.next_pair.wrapping_add(1);
        // SAFETY: recording into an open command buffer; the pair's earlier use has been read
        // (its batch completed long ago: the ring is far longer than the batches in flight).
        unsafe {
            d.cmd_reset_query_pool(cb, self.pool, slot, 2);
            // BOTTOM_OF_PIPE: written once all earlier work on the queue is done, so a batch
            // queued behind another starts where that one ends.
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, slot);
        }
        slot
    }

    /// Batch mode: stamps the end of `cb` (about to be ended).
    pub fn batch_end(&mut self, d: &ash::Device, cb: vk::CommandBuffer, slot: u32) {
        // SAFETY: recording into the open command buffer whose start stamp took `slot`.
        unsafe { d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, slot + 1) };
    }

    /// Batch mode: adds batch `seq`'s pair at `slot` (its fence has signalled) to the totals.
    pub fn batch_done(&mut self, d: &ash::Device, seq: u64, slot: u32) {
        let mut ticks = [0u64; 2];
        // SAFETY: both queries were written by a batch that has completed.
        if unsafe { d.get_query_pool_results(self.pool, slot, &mut ticks, vk::QueryResultFlags::TYPE_64) }.is_err() {
            return;
        }
        let mut b = crate::lock(&BATCHES);
        b.t.batches += 1;
        b.t.busy_ns += ticks[1].saturating_sub(ticks[0]) as f64 * self.tick_ns;
        if let Some((last_seq, last_end)) = b.last {
            if last_seq + 1 == seq {
                b.t.idle_ns += ticks[0].saturating_sub(last_end) as f64 * self.tick_ns;
                b.t.gaps += 1;
            }
        }
        b.last = Some((seq, ticks[1]));
    }

    /// Writes a timestamp into `cb` after everything recorded before it, labelled `label`
    /// (`None` at a command buffer's start).
    pub fn stamp(&mut self, d: &ash::Device, cb: vk::CommandBuffer, label: Option<&'static str>) {
        if self.batch || self.labels.len() >= CAPACITY as usize {
            return;
        }
        // SAFETY: recording into an open command buffer; indices stay below CAPACITY and the
        // range is reset (in this or an earlier buffer of the same submission order) first.
        unsafe {
            if self.stale {
                d.cmd_reset_query_pool(cb, self.pool, 0, CAPACITY);
                self.stale = false;
            }
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, self.labels.len() as u32);
        }
        self.labels.push(label);
    }

    /// Adds the timestamps of work that has completed (the host waited for the queue) to the
    /// totals and starts over.
    pub fn collect(&mut self, d: &ash::Device) {
        let n = self.labels.len();
        if n == 0 {
            return;
        }
        let mut ticks = vec![0u64; n];
        // SAFETY: every query in 0..n was written by work that has completed.
        let ok = unsafe { d.get_query_pool_results(self.pool, 0, &mut ticks, vk::QueryResultFlags::TYPE_64) }.is_ok();
        if ok {
            let mut totals = crate::lock(&TOTALS);
            for i in 1..n {
                let Some(name) = self.labels[i] else { continue };
                let ns = ticks[i].saturating_sub(ticks[i - 1]) as f64 * self.tick_ns;
                match totals.iter_mut().find(|t| t.name == name) {
                    Some(t) => {
                        t.count += 1;
                        t.gpu_ns += ns;
                    }
                    None => totals.push(KernelTime { name, count: 1, gpu_ns: ns }),
                }
            }
        }
        self.labels.clear();
        self.stale = true;
    }
}
