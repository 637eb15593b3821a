//! The `std` thread pool behind [`parallel_for`](super::parallel_for): worker threads are
//! created once and woken per call, because decode issues thousands of small kernels a second
//! and spawning threads per call (what scoped threads do) costs more than many of them.
//!
//! One call at a time owns the pool ("job"): the caller publishes the job, takes chunks
//! itself, and waits for the chunks the workers took. Chunks are claimed dynamically from one
//! atomic word, so a worker that the OS deschedules (the machine is shared) delays the call by
//! at most one chunk. The fixed cost of a call is what bounds a decode step at many threads
//! (a few hundred calls of a few µs of work each), so a call touches shared cache lines as
//! little as it can: each participating thread has its own share of the chunks behind a claim
//! word on a cache line of its own ([`SLOTS`]), takes them with an uncontended `fetch_add`,
//! then steals from the others' words; each thread reports its finished chunks with one
//! `fetch_add` when it runs out of them, and nothing is cloned per chunk. Measured with
//! `core/examples/bench_pool` (docs/BENCHMARKS.md, "Thread pool: the fixed cost of a call"). A call
//! involves no more threads than it has chunks, and splits uneven chunk counts so that the busiest
//! thread has as little as it can (`balanced_per`). Idle workers spin 300 µs, then yield up to 3 ms, then sleep on a
//! condition variable: a decode step dispatches a few hundred kernels with serial work in
//! between, and a worker that fell asleep in such a gap costs a futex wake-up (tens of
//! microseconds on many cores) on the next GEMV, which is itself only a few microseconds of
//! work per thread. Measured: docs/BENCHMARKS.md, "Decode threading".
//!
//! Rules that keep it from deadlocking: a `parallel_for` from inside a task (a worker, or the
//! caller while it runs a chunk) runs serially on that thread; a second caller that finds the
//! pool busy runs its whole range itself instead of waiting. A task that panics is caught, the
//! other chunks still run, and the panic is re-raised on the caller once the job is finished,
//! so the pool is never left half-way through a job.

extern crate std;

use core::ops::Range;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::any::Any;
use std::boxed::Box;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, OnceLock};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// Most threads the pool will use (caller included).
pub const MAX_THREADS: usize = 256;
/// Chunks per thread: more than one so a descheduled thread holds back little work.
const CHUNKS_PER_THREAD: usize = 4;
/// How long an idle worker spins, then yields, before it sleeps (long enough to stay awake
/// through the serial gaps of a decode step; see the module note).
const SPIN: Duration = Duration::from_micros(300);
const YIELD: Duration = Duration::from_micros(3000);

std::thread_local! {
    /// Set while this thread runs a pool task (always on workers): nested calls run serially.
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
}

/// 0 = default ([`default_threads`]).
static REQUESTED: AtomicUsize = AtomicUsize::new(0);

fn default_threads() -> usize {
    static D: OnceLock<usize> = OnceLock::new();
    *D.get_or_init(|| {
        std::env::var("MLX_ARM_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(super::available_cores)
            .min(MAX_THREADS)
    })
}

/// Threads a call uses (the caller included).
pub fn num_threads() -> usize {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => default_threads(),
        n => n,
    }
}

/// Sets the threads a call uses (the caller included) from the next call on; 0 restores the
/// default (`MLX_ARM_NUM_THREADS`, else the available cores). Capped at [`MAX_THREADS`].
pub fn set_num_threads(n: usize) {
    REQUESTED.store(n.min(MAX_THREADS), Ordering::Relaxed);
}

/// One `parallel_for` call, on its caller's stack. Workers reach it only through a chunk they
/// claimed, and the caller does not return before every claimed chunk is counted in `done`.
struct Job<'a> {
    body: &'a (dyn Fn(Range<usize>) + Sync),
    n: usize,
    per: usize,
    chunks: usize,
    /// On a line of its own: each thread's count would otherwise evict the fields above from
    /// the caches of the threads still running chunks.
    done: Padded<AtomicUsize>,
    panic: spin::Mutex<Option<Box<dyn Any + Send>>>,
}

/// A value alone on its cache line(s) (128 bytes: adjacent-line prefetchers pair 64-byte lines).
#[repr(align(128))]
struct Padded<T>(T);

impl<T> core::ops::Deref for Padded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The words every call publishes to the workers, together on one line so that the caller's
/// stores to it follow each other while it owns the line (the workers spin reading it).
struct Published {
    /// `epoch << 32`: which job is current; workers wait for it to change.
    state: AtomicU64,
    job: AtomicPtr<Job<'static>>,
    /// Workers with an index below this take part in the current job; with the caller they
    /// are its `helpers + 1` participants, each owning [`SLOTS`]`[participant]`.
    helpers: AtomicUsize,
}

/// The owning caller when it sleeps waiting for its chunks (after [`SPIN`]), so that the
/// thread finishing the last one can wake it. Static, not in the job: the job may be gone the
/// moment its last chunk is counted.
struct Owner {
    thread: spin::Mutex<Option<Thread>>,
    parked: AtomicBool,
}

/// Where idle workers sleep (after [`YIELD`]).
struct Sleep {
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

/// The pool's shared state, grouped by who writes it so that no group's writes evict another's
/// readers: the caller writes `published` per call, workers write `owner`'s flag read only at
/// the end of a job, `sleep` changes only when a worker falls asleep.
struct Shared {
    published: Padded<Published>,
    sleep: Padded<Sleep>,
    /// Held by the caller that owns the pool.
    busy: Padded<AtomicBool>,
    owner: Padded<Owner>,
    /// Workers spawned so far: read per call without the lock, raised under `spawn_lock`.
    spawned: Padded<AtomicUsize>,
    spawn_lock: Mutex<()>,
}

static SHARED: Shared = Shared {
    published: Padded(Published {
        state: AtomicU64::new(0),
        job: AtomicPtr::new(core::ptr::null_mut()),
        helpers: AtomicUsize::new(0),
    }),
    sleep: Padded(Sleep { sleepers: AtomicUsize::new(0), lock: Mutex::new(()), wake: Condvar::new() }),
    busy: Padded(AtomicBool::new(false)),
    owner: Padded(Owner { thread: spin::Mutex::new(None), parked: AtomicBool::new(false) }),
    spawned: Padded(AtomicUsize::new(0)),
    spawn_lock: Mutex::new(()),
};

/// A participant's claim word, alone on its cache line(s) so that taking one's own chunks
/// does not contend: `epoch << 32 | end << 16 | next`, the chunks `next..end` of the job of
/// `epoch` not claimed yet. One word, so a claim's result says by itself whether it owns a
/// chunk (`next < end`) and of which job, whatever happened to the job since.
#[repr(align(128))]
struct Slot(AtomicU64);

static SLOTS: [Slot; MAX_THREADS] = [const { Slot(AtomicU64::new(0)) }; MAX_THREADS];

#[inline]
fn pack(epoch: u32, end: usize, next: usize) -> u64 {
    ((epoch as u64) << 32) | ((end as u64 & 0xFFFF) << 16) | (next as u64 & 0xFFFF)
}

#[inline]
fn unpack(s: u64) -> (u32, usize, usize) {
    ((s >> 32) as u32, ((s >> 16) & 0xFFFF) as usize, (s & 0xFFFF) as usize)
}

/// Runs `body` over `0..n` in chunks of at least `grain`, on the pool.
pub fn run(n: usize, grain: usize, body: &(dyn Fn(Range<usize>) + Sync)) {
    if IN_TASK.with(|t| t.get()) {
        return body(0..n);
    }
    let threads = num_threads();
    let chunks = n.div_ceil(grain.max(1)).min(threads * CHUNKS_PER_THREAD);
    if threads <= 1 || chunks <= 1 {
        return inline(n, body);
    }
    let sh = &SHARED;
    if sh
        .busy
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        // Another thread's call owns the pool: doing our share alone beats queueing behind it.
        return inline(n, body);
    }
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            SHARED.busy.store(false, Ordering::Release);
        }
    }
    let _release = Release;
    let per = balanced_per(n, chunks, threads);
    let chunks = n.div_ceil(per);
    // A call of fewer chunks than threads involves only as many threads as it has chunks:
    // the others stay idle instead of waking to scan empty claim words (a decode step's
    // 576-row GEMVs and 9-head attention have 9–12 chunks; at 16 threads, every extra
    // participant costs the call a few cache misses and nothing else).
    let helpers = ensure_workers((threads - 1).min(chunks - 1));
    if helpers == 0 {
        return inline(n, body);
    }
    let started = crate::profile::enabled().then(Instant::now);
    let job = Job {
        body,
        n,
        per,
        chunks,
        done: Padded(AtomicUsize::new(0)),
        panic: spin::Mutex::new(None),
    };
    let publ = &sh.published;
    let (old_epoch, _, _) = unpack(publ.state.load(Ordering::Relaxed));
    let epoch = old_epoch.wrapping_add(1);
    publ.helpers.store(helpers, Ordering::Relaxed);
    // The pointer is only dereferenced by a claimer whose claim of this epoch succeeded, and
    // we wait below until every claimed chunk is done, so it never outlives `job`. It is
    // stored before the slots are (Release), so a claim that reads a slot sees it.
    publ.job.store(&job as *const Job<'_> as *mut Job<'static>, Ordering::Relaxed);
    let parts = helpers + 1;
    for (p, slot) in SLOTS[..parts].iter().enumerate() {
        slot.0.store(pack(epoch, (p + 1) * chunks / parts, p * chunks / parts), Ordering::Release);
    }
    // SeqCst pairs with the sleepers' SeqCst increment-then-check (no lost wake-up).
    publ.state.store(pack(epoch, 0, 0), Ordering::SeqCst);
    if sh.sleep.sleepers.load(Ordering::SeqCst) > 0 {
        let _g = sh.sleep.lock.lock().unwrap_or_else(|e| e.into_inner());
        sh.sleep.wake.notify_all();
    }
    take_chunks(sh, 0, parts);
    let start = Instant::now();
    while job.done.load(Ordering::Acquire) < chunks {
        if start.elapsed() < SPIN {
            core::hint::spin_loop();
        } else {
            // The thread counting the last chunk unparks us: it reads `parked` after its
            // count (both SeqCst), so either it sees the flag or we see the count before
            // sleeping. The timeout is a safety net.
            *sh.owner.thread.lock() = Some(thread::current());
            sh.owner.parked.store(true, Ordering::SeqCst);
            if job.done.load(Ordering::SeqCst) < chunks {
                thread::park_timeout(Duration::from_millis(1));
            }
            sh.owner.parked.store(false, Ordering::Relaxed);
        }
    }
    if let Some(t0) = started {
        let nanos = |t: Instant| t.elapsed().as_nanos() as u64;
        crate::profile::record_pool_call(chunks, nanos(t0), nanos(start));
    }
    let payload = job.panic.lock().take();
    if let Some(p) = payload {
        drop(_release);
        resume_unwind(p);
    }
}

/// Items per chunk for `n` items asked to be cut into `chunks` (each at least the caller's
/// grain) on `threads` threads. A call takes as long as its busiest thread, so when the chunks
/// do not share out evenly the count is lowered to a multiple of the threads (bigger chunks,
/// still at least the grain) if that gives the busiest thread less to do: a decode step's
/// 960-row QKV GEMV is 20 chunks of 48 rows, which at 16 threads left four threads two chunks
/// (96 rows) where 16 chunks of 60 rows give every thread one.
fn balanced_per(n: usize, chunks: usize, threads: usize) -> usize {
    let busiest = |per: usize| n.div_ceil(per).div_ceil(threads) * per;
    let per = n.div_ceil(chunks);
    let even = chunks - chunks % threads;
    if chunks <= threads || even == chunks {
        return per;
    }
    let per_even = n.div_ceil(even);
    if busiest(per_even) < busiest(per) { per_even } else { per }
}

/// A call the caller runs alone, counted when profiling.
fn inline(n: usize, body: &(dyn Fn(Range<usize>) + Sync)) {
    if crate::profile::enabled() {
        crate::profile::record_inline_call();
    }
    body(0..n)
}

/// Claims and runs chunks of the current job until none is left — first from participant
/// `me`'s own slot, then from the others' — then counts the ones it ran in the job's `done`
/// with one `fetch_add`.
fn take_chunks(sh: &Shared, me: usize, parts: usize) {
    let mut ran: Option<(&Job<'_>, u32, usize)> = None;
    for k in 0..parts {
        let slot = &SLOTS[(me + k) % parts].0;
        while let Some((e, i)) = claim(slot) {
            // SAFETY: we own chunk `i` of job `e`, whose pointer was stored before the slot
            // value we incremented; its caller waits until this chunk is counted.
            let job = unsafe { &*sh.published.job.load(Ordering::Acquire) };
            run_chunk(job, i);
            ran = match ran {
                // A job whose chunks we ran but did not count yet cannot end, so no newer
                // epoch can be current while `ran` holds one.
                Some((j, epoch, count)) if epoch == e => Some((j, epoch, count + 1)),
                Some((j, _, count)) => {
                    count_done(sh, j, count);
                    Some((job, e, 1))
                }
                None => Some((job, e, 1)),
            };
        }
    }
    if let Some((job, _, count)) = ran {
        count_done(sh, job, count);
    }
}

/// Takes the next chunk of `slot`: its job's epoch and index, or `None` when it has none left.
/// An increment that returns `next < end` owns that chunk; increments past the end are
/// harmless (at most one per thread and job, far below the 16-bit field's range), and the
/// next job's store resets the word.
#[inline]
fn claim(slot: &AtomicU64) -> Option<(u32, usize)> {
    // A load first, so that a thread arriving after the last claim leaves without writing.
    let (_, end, next) = unpack(slot.load(Ordering::Acquire));
    if next >= end {
        return None;
    }
    let (e, end, next) = unpack(slot.fetch_add(1, Ordering::AcqRel));
    (next < end).then_some((e, next))
}

/// Adds `count` finished chunks to `job`, waking its caller if they were the last and it
/// sleeps. Nothing of `job` is touched afterwards: once `done` reaches `chunks` it may be gone.
fn count_done(sh: &Shared, job: &Job<'_>, count: usize) {
    let chunks = job.chunks;
    if job.done.fetch_add(count, Ordering::SeqCst) + count == chunks && sh.owner.parked.load(Ordering::SeqCst) {
        if let Some(owner) = sh.owner.thread.lock().as_ref() {
            owner.unpark();
        }
    }
}

fn run_chunk(job: &Job<'_>, i: usize) {
    let start = i * job.per;
    let end = (start + job.per).min(job.n);
    let was = IN_TASK.with(|t| t.replace(true));
    let r = catch_unwind(AssertUnwindSafe(|| (job.body)(start..end)));
    IN_TASK.with(|t| t.set(was));
    if let Err(p) = r {
        let mut slot = job.panic.lock();
        if slot.is_none() {
            *slot = Some(p);
        }
    }
}

/// Spawns workers up to `want`; returns how many exist (fewer if the OS refuses threads).
fn ensure_workers(want: usize) -> usize {
    // Per call, once the workers exist: one load of a line nobody writes.
    let have = SHARED.spawned.load(Ordering::Acquire);
    if have >= want {
        return want;
    }
    let _g = SHARED.spawn_lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut spawned = SHARED.spawned.load(Ordering::Acquire);
    while spawned < want {
        let index = spawned;
        let ok = thread::Builder::new()
            .name(std::format!("mlx-arm-pool-{index}"))
            .spawn(move || worker(index))
            .is_ok();
        if !ok {
            break;
        }
        spawned += 1;
        SHARED.spawned.store(spawned, Ordering::Release);
    }
    spawned.min(want)
}

fn worker(index: usize) {
    IN_TASK.with(|t| t.set(true));
    let sh = &SHARED;
    let publ = &sh.published;
    let mut seen = unpack(publ.state.load(Ordering::Acquire)).0;
    loop {
        let idle = Instant::now();
        let helpers = loop {
            let e = unpack(publ.state.load(Ordering::Acquire)).0;
            if e != seen {
                seen = e;
                // Stored before the state this load saw; the caller is participant 0.
                let helpers = publ.helpers.load(Ordering::Relaxed);
                if index < helpers {
                    break helpers;
                }
            }
            let t = idle.elapsed();
            if t < SPIN {
                core::hint::spin_loop();
            } else if t < YIELD {
                thread::yield_now();
            } else {
                let mut g = sh.sleep.lock.lock().unwrap_or_else(|e| e.into_inner());
                sh.sleep.sleepers.fetch_add(1, Ordering::SeqCst);
                while unpack(publ.state.load(Ordering::SeqCst)).0 == seen {
                    g = sh.sleep.wake.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                sh.sleep.sleepers.fetch_sub(1, Ordering::SeqCst);
                drop(g);
                // Back to the top: the new epoch is picked up there.
            }
        };
        take_chunks(sh, index + 1, helpers + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::parallel_for;
    use std::vec::Vec;

    fn squares(n: usize, grain: usize) -> Vec<u64> {
        let out: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        parallel_for(n, grain, &|r| {
            for i in r {
                out[i].fetch_add((i as u64) * (i as u64), Ordering::Relaxed);
            }
        });
        out.into_iter().map(|a| a.into_inner()).collect()
    }

    #[test]
    fn results_equal_serial_and_each_index_runs_once() {
        let want: Vec<u64> = (0..10_007u64).map(|i| i * i).collect();
        for grain in [1, 3, 64, 5000, 20_000] {
            assert_eq!(squares(10_007, grain), want);
        }
    }

    #[test]
    fn many_tiny_calls() {
        for i in 0..20_000usize {
            let n = 2 + i % 7;
            let v = squares(n, 1);
            assert_eq!(v.len(), n);
            assert!(v.iter().enumerate().all(|(j, &x)| x == (j * j) as u64));
        }
    }

    #[test]
    fn oversubscribed_pool_counts_every_chunk() {
        // More threads than this machine has cores: workers get descheduled mid-claim, the
        // case where a lost or double-counted chunk would show.
        let before = REQUESTED.load(Ordering::Relaxed);
        set_num_threads(8);
        for i in 0..5_000usize {
            let n = 1 + i % 61;
            let v = squares(n, 1);
            assert!(v.iter().enumerate().all(|(j, &x)| x == (j * j) as u64), "n = {n}");
        }
        REQUESTED.store(before, Ordering::Relaxed);
    }

    #[test]
    fn a_caller_that_sleeps_waiting_is_woken() {
        // Chunks longer than the caller's spin: it parks, and the last chunk's thread wakes it.
        let before = REQUESTED.load(Ordering::Relaxed);
        set_num_threads(4);
        for _ in 0..20 {
            let total = AtomicU64::new(0);
            parallel_for(8, 1, &|r| {
                std::thread::sleep(Duration::from_micros(700));
                total.fetch_add(r.len() as u64, Ordering::Relaxed);
            });
            assert_eq!(total.load(Ordering::Relaxed), 8);
        }
        REQUESTED.store(before, Ordering::Relaxed);
    }

    #[test]
    fn nested_calls_run_and_finish() {
        let total = AtomicU64::new(0);
        parallel_for(64, 1, &|r| {
            for _ in r {
                parallel_for(100, 1, &|r2| {
                    total.fetch_add(r2.len() as u64, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 6400);
    }

    #[test]
    fn concurrent_callers() {
        std::thread::scope(|s| {
            for t in 0..4u64 {
                s.spawn(move || {
                    for _ in 0..500 {
                        let sum = AtomicU64::new(0);
                        parallel_for(1000, 10, &|r| {
                            sum.fetch_add(r.map(|i| i as u64 + t).sum::<u64>(), Ordering::Relaxed);
                        });
                        assert_eq!(sum.load(Ordering::Relaxed), 499_500 + 1000 * t);
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_task_is_reraised_and_the_pool_keeps_working() {
        for _ in 0..20 {
            let r = catch_unwind(|| {
                parallel_for(100, 1, &|r| {
                    if r.contains(&57) {
                        panic!("task failure (expected by the test)");
                    }
                });
            });
            assert!(r.is_err());
            assert_eq!(squares(1000, 1)[999], 999 * 999);
        }
    }

    #[test]
    fn uneven_chunks_are_rebalanced_only_when_the_busiest_thread_gains() {
        // 960 rows in 20 chunks of 48 at 16 threads: 16 chunks of 60 (busiest 60 rows, not 96).
        assert_eq!(balanced_per(960, 20, 16), 60);
        // 576 rows in 18 chunks of 32 at 16 threads: 16 of 36; at 8 threads: 16 of 36 (72, not 96).
        assert_eq!(balanced_per(576, 18, 16), 36);
        assert_eq!(balanced_per(576, 18, 8), 36);
        // Even already, or fewer chunks than threads: unchanged.
        assert_eq!(balanced_per(3072, 64, 16), 48);
        assert_eq!(balanced_per(576, 12, 16), 48);
        // 9 heads at 8 threads: 8 chunks would be 5 of 2 heads, no better than 9 of 1.
        assert_eq!(balanced_per(9, 9, 8), 1);
        // Chunks never shrink below what was asked for.
        for n in 1..300 {
            for chunks in 1..=n.min(64) {
                for threads in 1..=17 {
                    assert!(balanced_per(n, chunks, threads) >= n.div_ceil(chunks), "{n} {chunks} {threads}");
                }
            }
        }
    }

    #[test]
    fn thread_count_is_settable() {
        let before = REQUESTED.load(Ordering::Relaxed);
        assert!(num_threads() >= 1);
        // Forcing 3 threads on any machine must still give serial results.
        set_num_threads(3);
        assert_eq!(num_threads(), 3);
        assert_eq!(squares(999, 1)[998], 998 * 998);
        REQUESTED.store(before, Ordering::Relaxed);
    }
}
