//! Memory statistics and limits (mlx-c `memory.h`), over core's buffer statistics and its
//! cache of freed blocks. There is no wired memory on these targets: that limit is ignored.

use crate::arg;
use crate::error::status;
use core::ffi::c_int;
use mlx_arm_core::buffer;

/// `mlx_clear_cache`: returns cached freed blocks to the allocator.
#[no_mangle]
pub extern "C" fn mlx_clear_cache() -> c_int {
    status("mlx_clear_cache", || {
        buffer::clear_cache();
        Ok(())
    })
}

/// `mlx_get_active_memory`: bytes held by live buffers.
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_get_active_memory(res: *mut usize) -> c_int {
    status("mlx_get_active_memory", || arg::out(res, buffer::active_memory(), "res"))
}

/// `mlx_get_cache_memory`: bytes of freed blocks kept for reuse.
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_get_cache_memory(res: *mut usize) -> c_int {
    status("mlx_get_cache_memory", || arg::out(res, buffer::cache_memory(), "res"))
}

/// `mlx_get_memory_limit`: allocations beyond it fail with an error.
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_get_memory_limit(res: *mut usize) -> c_int {
    status("mlx_get_memory_limit", || arg::out(res, buffer::memory_limit(), "res"))
}

/// `mlx_get_peak_memory`.
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_get_peak_memory(res: *mut usize) -> c_int {
    status("mlx_get_peak_memory", || arg::out(res, buffer::peak_memory(), "res"))
}

/// `mlx_reset_peak_memory`.
#[no_mangle]
pub extern "C" fn mlx_reset_peak_memory() -> c_int {
    buffer::reset_peak_memory();
    0
}

/// `mlx_set_cache_limit`: caps the cache (0 disables it); `*res` gets the previous limit.
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_set_cache_limit(res: *mut usize, limit: usize) -> c_int {
    status("mlx_set_cache_limit", || {
        if res.is_null() {
            return arg::out(res, 0, "res");
        }
        arg::out(res, buffer::set_cache_limit(limit), "res")
    })
}

/// `mlx_set_memory_limit`: sets the limit, `*res` gets the previous one.
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_set_memory_limit(res: *mut usize, limit: usize) -> c_int {
    status("mlx_set_memory_limit", || {
        if res.is_null() {
            return arg::out(res, 0, "res");
        }
        arg::out(res, buffer::set_memory_limit(limit), "res")
    })
}

/// `mlx_set_wired_limit`: accepted and ignored (no wired memory on these targets).
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_set_wired_limit(res: *mut usize, _limit: usize) -> c_int {
    status("mlx_set_wired_limit", || arg::out(res, 0, "res"))
}
