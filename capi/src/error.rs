//! Error reporting: every entry point runs inside [`guard`], which turns an `Err` or a panic
//! into a non-zero status plus one message to the installed handler.
//!
//! Deviation from mlx-c: the default handler prints `MLX error: <msg>` to **stderr** and
//! returns; it does not `exit(-1)`. Callers see the failure through the status code.

use crate::types::{mlx_dtor, mlx_error_handler_func};
use core::ffi::{c_char, c_void, CStr};
use mlx_arm_core::{Error, Result};
use std::cell::RefCell;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

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
}

fn lock() -> std::sync::MutexGuard<'static, HandlerState> {
    HANDLER.lock().unwrap_or_else(|p| p.into_inner())
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
        None => eprintln!("MLX error: {msg}"),
    }
    LAST_ERROR.with(|l| *l.borrow_mut() = c);
}

/// Reports a core error.
pub(crate) fn report_error(e: &Error) {
    report(&e.to_string());
}

/// Runs `f`; on `Err` or panic reports the message and returns `fallback`.
pub(crate) fn guard<T>(name: &'static str, fallback: T, f: impl FnOnce() -> Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
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
}
