//! Parallelism without threads in `core`: kernels split work into ranges and hand them to a
//! registered `parallel_for`. The default runs ranges one after another; the `std` feature
//! installs a persistent thread pool ([`pool`]); firmware or an RTOS can register its own.

use core::ops::Range;

#[cfg(feature = "std")]
pub mod pool;

/// Runs `body` over `0..n`, possibly in parallel chunks; must return once all chunks are done.
pub type ParallelFor = fn(n: usize, grain: usize, body: &(dyn Fn(Range<usize>) + Sync));

static HOOK: spin::RwLock<Option<ParallelFor>> = spin::RwLock::new(None);

/// Installs the hook used by every kernel.
pub fn set_parallel_for(f: Option<ParallelFor>) {
    *HOOK.write() = f;
}

/// Splits `0..n` into ranges of at least `grain` items and runs `body` on each.
pub fn parallel_for(n: usize, grain: usize, body: &(dyn Fn(Range<usize>) + Sync)) {
    if n == 0 {
        return;
    }
    let hook = *HOOK.read();
    match hook {
        Some(f) if n > grain => f(n, grain.max(1), body),
        #[cfg(feature = "std")]
        None if n > grain => pool::run(n, grain.max(1), body),
        _ => body(0..n),
    }
}

/// Threads the built-in pool uses (the calling thread included): `MLX_ARM_NUM_THREADS` if
/// set, else the available cores, else what [`set_num_threads`] chose. 1 without `std`.
pub fn num_threads() -> usize {
    #[cfg(feature = "std")]
    {
        pool::num_threads()
    }
    #[cfg(not(feature = "std"))]
    {
        1
    }
}

/// The cores this process may run on (`std`: the OS's available parallelism); 1 without `std`.
pub fn available_cores() -> usize {
    #[cfg(feature = "std")]
    {
        extern crate std;
        std::thread::available_parallelism().map_or(1, |c| c.get())
    }
    #[cfg(not(feature = "std"))]
    {
        1
    }
}

/// Sets how many threads (the caller included) the built-in pool uses from the next call on;
/// 0 restores the default. Without `std` there is no pool and this does nothing.
pub fn set_num_threads(n: usize) {
    #[cfg(feature = "std")]
    pool::set_num_threads(n);
    #[cfg(not(feature = "std"))]
    let _ = n;
}
