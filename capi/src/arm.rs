//! `mlx_arm_` extensions beyond mlx-c: platform info, allocator and parallel-for hooks for
#![allow(non_camel_case_types)]
//! firmware/RTOS hosts, and memory statistics in one call.

use crate::arg;
use crate::error::status;
use crate::handle;
use crate::string::cstring;
use crate::types::mlx_string;
use core::ffi::{c_int, c_void};
use core::ops::Range;
use core::ptr::NonNull;
use mlx_arm_core::buffer::{self, Allocator};
use mlx_arm_core::Error;
use crate::prelude::*;
use crate::sync::RwLock;

/// `mlx_arm_platform_info`: `key=value` lines (arch, os, cores, backends, features).
///
/// # Safety
/// `res` points to a valid handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_platform_info(res: *mut mlx_string) -> c_int {
    status("mlx_arm_platform_info", || {
        let cores = crate::host::cpu_cores();
        let backends = mlx_arm_core::backend::names().join(",");
        let text = format!(
            "version={}\nabi={}\narch={}\nos={}\npointer_width={}\ncpu_cores={}\nbackends=cpu{}{}\n",
            env!("CARGO_PKG_VERSION"),
            crate::version::ABI_VERSION,
            crate::host::arch(),
            crate::host::os(),
            usize::BITS,
            cores,
            if backends.is_empty() { "" } else { "," },
            backends,
        );
        handle::assign(res, cstring(&text))
    })
}

/// Memory figures of `mlx_arm_get_memory_stats`.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct mlx_arm_memory_stats {
    /// Bytes held by live buffers.
    pub active: usize,
    /// Highest `active` since start or the last reset.
    pub peak: usize,
    /// The limit beyond which allocations fail (SIZE_MAX when unlimited).
    pub limit: usize,
}

/// `mlx_arm_get_memory_stats`.
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_get_memory_stats(res: *mut mlx_arm_memory_stats) -> c_int {
    status("mlx_arm_get_memory_stats", || {
        let s = mlx_arm_memory_stats { active: buffer::active_memory(), peak: buffer::peak_memory(), limit: buffer::memory_limit() };
        arg::out(res, s, "res")
    })
}

/// `void* alloc(size_t size, size_t align, void* user)`: NULL when it cannot.
pub type mlx_arm_alloc_fn = Option<unsafe extern "C" fn(size: usize, align: usize, user: *mut c_void) -> *mut c_void>;
/// `void free(void* ptr, size_t size, size_t align, void* user)`.
pub type mlx_arm_free_fn = Option<unsafe extern "C" fn(ptr: *mut c_void, size: usize, align: usize, user: *mut c_void)>;

struct CAllocator {
    alloc: unsafe extern "C" fn(usize, usize, *mut c_void) -> *mut c_void,
    free: unsafe extern "C" fn(*mut c_void, usize, usize, *mut c_void),
    user: *mut c_void,
}

// SAFETY: the host promises its allocator may be called from any thread.
unsafe impl Send for CAllocator {}
unsafe impl Sync for CAllocator {}

impl Allocator for CAllocator {
    fn alloc(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        // SAFETY: the host's function, installed through mlx_arm_set_allocator.
        NonNull::new(unsafe { (self.alloc)(size, align, self.user) } as *mut u8)
    }
    unsafe fn free(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        (self.free)(ptr.as_ptr() as *mut c_void, size, align, self.user)
    }
}

static HOST: buffer::HostAllocator = buffer::HostAllocator;

/// `mlx_arm_set_allocator`: every later buffer comes from `alloc` and returns to `free`
/// (buffers made before keep their allocator). Both NULL restores the default. Meant to be
/// called once at start-up; each call keeps a few bytes of bookkeeping for the process's life.
///
/// # Safety
/// The functions must be thread-safe and valid for the rest of the process.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_set_allocator(alloc: mlx_arm_alloc_fn, free: mlx_arm_free_fn, user: *mut c_void) -> c_int {
    status("mlx_arm_set_allocator", || {
        match (alloc, free) {
            (None, None) => buffer::set_allocator(&HOST),
            (Some(alloc), Some(free)) => buffer::set_allocator(Box::leak(Box::new(CAllocator { alloc, free, user }))),
            _ => return Err(Error::invalid("mlx_arm_set_allocator", "alloc and free must both be set or both be NULL")),
        }
        Ok(())
    })
}

/// The task a parallel-for hook runs: `task(begin, end, task_ctx)` over a sub-range.
pub type mlx_arm_parallel_task = unsafe extern "C" fn(begin: usize, end: usize, task_ctx: *mut c_void);
/// `void hook(size_t n, size_t grain, task, void* task_ctx, void* user)`: must call `task` on
/// ranges that cover `0..n` exactly once (from any threads) and return when all are done.
pub type mlx_arm_parallel_for_fn =
    Option<unsafe extern "C" fn(n: usize, grain: usize, task: mlx_arm_parallel_task, task_ctx: *mut c_void, user: *mut c_void)>;

#[derive(Clone, Copy)]
struct Hook {
    f: unsafe extern "C" fn(usize, usize, mlx_arm_parallel_task, *mut c_void, *mut c_void),
    user: *mut c_void,
}
// SAFETY: the host promises the hook and its data may be used from any thread.
unsafe impl Send for Hook {}
unsafe impl Sync for Hook {}

static HOOK: RwLock<Option<Hook>> = RwLock::new(None);

struct Task<'a> {
    n: usize,
    body: &'a (dyn Fn(Range<usize>) + Sync),
}

unsafe extern "C" fn run_task(begin: usize, end: usize, ctx: *mut c_void) {
    // SAFETY: ctx is the Task passed to the hook below, alive until the hook returns.
    let task = &*(ctx as *const Task);
    // A bad range from the host is ignored rather than indexing out of bounds.
    if begin <= end && end <= task.n {
        (task.body)(begin..end);
    }
}

fn bridge(n: usize, grain: usize, body: &(dyn Fn(Range<usize>) + Sync)) {
    let hook = *HOOK.read();
    match hook {
        Some(h) => {
            let task = Task { n, body };
            // SAFETY: the host's hook; task outlives the call.
            unsafe { (h.f)(n, grain, run_task, &task as *const Task as *mut c_void, h.user) }
        }
        None => body(0..n),
    }
}

/// `mlx_arm_set_parallel_for`: kernels split work through `hook` (NULL restores the built-in
/// thread pool).
///
/// # Safety
/// `hook` must honour the contract of `mlx_arm_parallel_for_fn`.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_set_parallel_for(hook: mlx_arm_parallel_for_fn, user: *mut c_void) -> c_int {
    status("mlx_arm_set_parallel_for", || {
        let h = hook.map(|f| Hook { f, user });
        *HOOK.write() = h;
        mlx_arm_core::parallel::set_parallel_for(if h.is_some() { Some(bridge) } else { None });
        Ok(())
    })
}
