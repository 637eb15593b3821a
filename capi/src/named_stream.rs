//! The stream named by the C call in progress, per thread: ops record on it (see
//! `mlx_arm_core::device::set_named_stream_source`), so a front end can later ask which streams
//! an evaluation would run on (`mlx_arm_pending_streams`) and refuse another thread's streams
//! as MLX does. [`crate::arg::stream`] sets it; [`crate::error::guard`] puts back, when the call
//! returns, what was named before it (nothing, unless the call is nested in another through a
//! callback), so a call that names no stream never inherits one.

use core::cell::Cell;
use core::sync::atomic::{AtomicBool, Ordering};
use mlx_arm_core::Stream;

thread_local! {
    static NAMED: Cell<Option<Stream>> = const { Cell::new(None) };
}

static INSTALLED: AtomicBool = AtomicBool::new(false);

pub(crate) fn current() -> Option<Stream> {
    NAMED.with(|n| n.get())
}

/// Names `s` for the rest of the current call.
pub(crate) fn set(s: Stream) {
    // (a plain load first: the swap, a locked instruction, is only needed once)
    if !INSTALLED.load(Ordering::Relaxed) && !INSTALLED.swap(true, Ordering::Relaxed) {
        mlx_arm_core::device::set_named_stream_source(current);
    }
    NAMED.with(|n| n.set(Some(s)));
}

/// Puts back the naming saved (by [`current`]) when the call began.
pub(crate) fn restore(saved: Option<Stream>) {
    NAMED.with(|n| n.set(saved));
}
