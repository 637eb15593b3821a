//! Time spent per primitive while profiling is on (`std` only): a debugging aid that says
//! which kernels a workload's time goes to (`lm/examples/decode_profile --ops` prints it).
//! Off, it costs one relaxed atomic load per evaluated op (and per thread-pool call: [`take_pool`]).

extern crate std;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

static ENABLED: AtomicBool = AtomicBool::new(false);
static TABLE: Mutex<Vec<OpTime>> = Mutex::new(Vec::new());

/// What one primitive cost since profiling was switched on or last taken.
#[derive(Clone, Debug, PartialEq)]
pub struct OpTime {
    /// The primitive's name.
    pub name: &'static str,
    /// How many ops of it ran.
    pub calls: u64,
    /// Their wall time together, in nanoseconds.
    pub nanos: u64,
}

/// Switches per-primitive timing on or off.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// The times gathered so far, most expensive first, and clears them.
pub fn take() -> Vec<OpTime> {
    let mut table = core::mem::take(&mut *TABLE.lock().unwrap_or_else(|e| e.into_inner()));
    table.sort_by(|a, b| b.nanos.cmp(&a.nanos));
    table
}

/// The start of an op's timing, when profiling is on.
pub(crate) fn start() -> Option<Instant> {
    ENABLED.load(Ordering::Relaxed).then(Instant::now)
}

/// Adds an op's time since `start` to its primitive's row.
pub(crate) fn record(name: &'static str, start: Option<Instant>) {
    let Some(t0) = start else { return };
    let nanos = t0.elapsed().as_nanos() as u64;
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    match table.iter_mut().find(|row| row.name == name) {
        Some(row) => {
            row.calls += 1;
            row.nanos += nanos;
        }
        None => table.push(OpTime { name, calls: 1, nanos }),
    }
}

/// What the thread pool (`parallel::pool`) did while profiling was on: the threaded calls, the
/// chunks they were split into, their wall time (publishing, the caller's own chunks and the
/// join), and how long the caller waited for the workers' chunks after finishing its own —
/// the fixed cost and imbalance of a call, which bound a decode step at many threads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolTime {
    /// `parallel_for` calls that were handed to the workers.
    pub calls: u64,
    /// Their chunks together.
    pub chunks: u64,
    /// Their wall time together, in nanoseconds (caller's view, publish to return).
    pub nanos: u64,
    /// Of that, the caller's wait for other threads' chunks once it had none left.
    pub wait_nanos: u64,
    /// Calls the pool ran on the caller alone (one chunk, one thread, or the pool busy).
    pub inline_calls: u64,
}

static POOL: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

/// Whether profiling is on (the pool asks before reading the clock).
#[inline]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Adds one threaded pool call.
pub(crate) fn record_pool_call(chunks: usize, nanos: u64, wait_nanos: u64) {
    POOL[0].fetch_add(1, Ordering::Relaxed);
    POOL[1].fetch_add(chunks as u64, Ordering::Relaxed);
    POOL[2].fetch_add(nanos, Ordering::Relaxed);
    POOL[3].fetch_add(wait_nanos, Ordering::Relaxed);
}

/// Adds one pool call that ran on the caller alone.
pub(crate) fn record_inline_call() {
    POOL[4].fetch_add(1, Ordering::Relaxed);
}

/// The pool's figures gathered so far, and clears them.
pub fn take_pool() -> PoolTime {
    let [calls, chunks, nanos, wait_nanos, inline_calls] = POOL.each_ref().map(|a| a.swap(0, Ordering::Relaxed));
    PoolTime { calls, chunks, nanos, wait_nanos, inline_calls }
}
