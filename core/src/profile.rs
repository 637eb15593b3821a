//! Time spent per primitive while profiling is on (`std` only): a debugging aid that says
//! which kernels a workload's time goes to (`lm/examples/decode_profile --ops` prints it).
//! Off, it costs one relaxed atomic load per evaluated op.

extern crate std;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
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
