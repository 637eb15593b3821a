//! GPU time per kernel, measured with timestamps when `MLX_ARM_VULKAN_PROFILE=1` (off by
//! default: a timestamp after every dispatch costs a little GPU time). Each command buffer
//! starts with a timestamp and every dispatch (or copy) is followed by one, so the ticks
//! between a dispatch's stamp and the one before it are that dispatch's time on the queue,
//! barrier and launch included. Their sum is the time the GPU was busy; the rest of a step's
//! wall time it sat idle (waiting for the host to record and submit). Totals are kept per
//! kernel name until the process ends ([`kernel_times`]).

use crate::context::{vk_err, Context};
use ash::vk;
use mlx_arm_core::Result;
use std::sync::Mutex;

/// Set to `1` to measure GPU time per kernel.
pub const PROFILE_ENV: &str = "MLX_ARM_VULKAN_PROFILE";

/// Timestamps held between two host waits; dispatches past it go unmeasured (counted).
const CAPACITY: u32 = 16384;

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
}

impl Profiler {
    /// A profiler when [`PROFILE_ENV`] asks for one and the queue writes timestamps.
    pub fn new(ctx: &Context) -> Result<Option<Profiler>> {
        let (Some(tick_ns), true) = (ctx.timestamp_ns, std::env::var(PROFILE_ENV).is_ok_and(|v| v == "1")) else { return Ok(None) };
        let ci = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(CAPACITY);
        // SAFETY: valid create info; the pool lives for the process.
        let pool = unsafe { ctx.device.create_query_pool(&ci, None) }.map_err(|r| vk_err("vulkan", "vkCreateQueryPool", r))?;
        Ok(Some(Profiler { pool, tick_ns, labels: Vec::new(), stale: true }))
    }

    /// Writes a timestamp into `cb` after everything recorded before it, labelled `label`
    /// (`None` at a command buffer's start).
    pub fn stamp(&mut self, d: &ash::Device, cb: vk::CommandBuffer, label: Option<&'static str>) {
        if self.labels.len() >= CAPACITY as usize {
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
