//! Parallelism without threads in `core`: kernels split work into ranges and hand them to a
//! registered `parallel_for`. The default runs ranges one after another; the `std` feature
//! installs a thread-based one; firmware or an RTOS can register its own.

use core::ops::Range;

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
        None if n > grain => std_pool::run(n, grain.max(1), body),
        _ => body(0..n),
    }
}

#[cfg(feature = "std")]
mod std_pool {
    use core::ops::Range;
    extern crate std;

    /// Scoped threads, one chunk per available core.
    pub fn run(n: usize, grain: usize, body: &(dyn Fn(Range<usize>) + Sync)) {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let chunks = cores.min(n.div_ceil(grain)).max(1);
        if chunks == 1 {
            return body(0..n);
        }
        let per = n.div_ceil(chunks);
        std::thread::scope(|s| {
            for c in 1..chunks {
                let r = (c * per).min(n)..((c + 1) * per).min(n);
                if !r.is_empty() {
                    s.spawn(move || body(r));
                }
            }
            body(0..per.min(n));
        });
    }
}
