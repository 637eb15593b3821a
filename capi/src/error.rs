//! Error reporting: every entry point runs inside [`guard`], which turns an `Err` or a panic
//! into a non-zero status plus one message to the installed handler.
//!
//! Deviation from mlx-c: the default handler prints `MLX error: <msg>` to **stderr** and
//! returns; it does not `exit(-1)`. Callers see the failure through the status code.
//!
//! Without `std` (bare metal) there is no stderr and no unwinding: the default handler only
//! stores the message (`mlx_arm_last_error`), the "thread-local" last error is one global
//! value, and a panic goes to the firmware's panic hook instead of becoming a status.

use crate::types::{mlx_dtor, mlx_error_handler_func};
use core::ffi::{c_char, c_void, CStr};
use mlx_arm_core::{Error, ErrorKind, Result};
use crate::prelude::*;
use crate::sync::{Mutex, MutexGuard};
use core::cell::{Cell, RefCell};
#[cfg(feature = "std")]
use std::panic::{catch_unwind, AssertUnwindSafe};

struct HandlerState {
    handler: mlx_error_handler_func,
    data: *mut c_void,
    dtor: mlx_dtor,
}

// SAFETY: the data pointer is only handed back to the user's own callbacks.
unsafe impl Send for HandlerState {}

static HANDLER: Mutex<HandlerState> = Mutex::new(HandlerState { handler: None, data: core::ptr::null_mut(), dtor: None });

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// The kind code of `LAST_ERROR` (see [`mlx_arm_last_error_kind`]).
    static LAST_KIND: Cell<core::ffi::c_int> = const { Cell::new(0) };
}

/// Kind codes of `mlx_arm_last_error_kind` (`MLX_ARM_ERROR_*` in mlx_arm.h's error.h section).
fn kind_code(k: ErrorKind) -> core::ffi::c_int {
    match k {
        ErrorKind::InvalidArgument => 1,
        ErrorKind::Index => 2,
        ErrorKind::Type => 3,
        ErrorKind::Unsupported => 4,
        ErrorKind::OutOfMemory => 5,
        ErrorKind::Runtime => 6,
        ErrorKind::Format => 7,
        ErrorKind::Overflow => 9,
    }
}
/// Kind code of a message that did not come from a core error (a caller's or a panic).
const KIND_OTHER: core::ffi::c_int = 8;

fn lock() -> MutexGuard<'static, HandlerState> {
    HANDLER.lock()
}

/// `mlx_set_error_handler`: installs `handler` (NULL restores the default) with `data`; the
/// previous data's destructor runs now. Set it before other threads use the library.
///
/// # Safety
/// `handler` and `dtor` must be valid functions for as long as they are installed.
#[no_mangle]
pub unsafe extern "C" fn mlx_set_error_handler(handler: mlx_error_handler_func, data: *mut c_void, dtor: mlx_dtor) {
    let old = {
        let mut st = lock();
        core::mem::replace(&mut *st, HandlerState { handler, data, dtor })
    };
    if let Some(d) = old.dtor {
        d(old.data);
    }
}

/// Sends `msg` to the handler (or stderr) and remembers it as this thread's last error.
pub(crate) fn report(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    let (handler, data) = {
        let st = lock();
        (st.handler, st.data)
    };
    match handler {
        // SAFETY: the user installed this callback; the message lives across the call.
        Some(h) => unsafe { h(c.as_ptr(), data) },
        #[cfg(feature = "std")]
        None => std::eprintln!("MLX error: {msg}"),
        // Bare metal: no stderr; the message stays readable through mlx_arm_last_error.
        #[cfg(not(feature = "std"))]
        None => {}
    }
    LAST_ERROR.with(|l| *l.borrow_mut() = c);
    LAST_KIND.with(|k| k.set(KIND_OTHER));
}

/// Reports a core error.
pub(crate) fn report_error(e: &Error) {
    report(&e.to_string());
    LAST_KIND.with(|k| k.set(kind_code(e.kind)));
}

/// Runs `f`; on `Err` or panic reports the message and returns `fallback`.
#[cfg(feature = "std")]
pub(crate) fn guard<T>(name: &'static str, fallback: T, f: impl FnOnce() -> Result<T>) -> T {
    let saved = crate::named_stream::current();
    let result = catch_unwind(AssertUnwindSafe(f));
    crate::named_stream::restore(saved);
    match result {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            report_error(&e);
            fallback
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            report(&format!("[{name}] internal error: {what}"));
            fallback
        }
    }
}

/// Runs `f`; on `Err` reports the message and returns `fallback`. Without std a panic cannot
/// be caught: it reaches the firmware's panic hook (see `bare_metal`).
#[cfg(not(feature = "std"))]
pub(crate) fn guard<T>(_name: &'static str, fallback: T, f: impl FnOnce() -> Result<T>) -> T {
    let saved = crate::named_stream::current();
    let result = f();
    crate::named_stream::restore(saved);
    match result {
        Ok(v) => v,
        Err(e) => {
            report_error(&e);
            fallback
        }
    }
}

/// [`guard`] for the usual `int` status (0 success, 1 failure).
pub(crate) fn status(name: &'static str, f: impl FnOnce() -> Result<()>) -> core::ffi::c_int {
    guard(name, 1, || f().map(|()| 0))
}

/// `mlx_arm_raise_error`: reports a caller's message through the handler (what mlx-c's
/// `mlx_error(fmt, ...)` macro does; the header formats, then calls this).
///
/// # Safety
/// `msg` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_raise_error(msg: *const c_char) {
    if msg.is_null() {
        report("(null)");
    } else {
        report(&CStr::from_ptr(msg).to_string_lossy());
    }
}

/// `mlx_arm_last_error`: the last message reported on this thread ("" if none); valid until
/// the next error on this thread.
#[no_mangle]
pub extern "C" fn mlx_arm_last_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// `mlx_arm_clear_last_error`: forgets this thread's last message.
#[no_mangle]
pub extern "C" fn mlx_arm_clear_last_error() {
    LAST_ERROR.with(|l| *l.borrow_mut() = CString::default());
    LAST_KIND.with(|k| k.set(0));
}

/// `mlx_arm_last_error_kind`: the category of this thread's last error, so that bindings can
/// pick an exception type without parsing the message: 0 none, 1 invalid argument, 2 index,
/// 3 type, 4 unsupported, 5 out of memory, 6 runtime, 7 format, 8 other (a caller's message
/// or an internal error).
#[no_mangle]
pub extern "C" fn mlx_arm_last_error_kind() -> core::ffi::c_int {
    LAST_KIND.with(|k| k.get())
}
