//! Refcounted memory: [`Buffer`]s come from a pluggable [`Allocator`] (64-byte aligned host memory
//! by default) or wrap external bytes (a memory-mapped file, a firmware flash region) without a copy.
//! Active/peak statistics and a memory limit that turns into an error, never an abort.

use crate::error::{Error, Result};
use alloc::boxed::Box;
use alloc::sync::Arc;
use core::alloc::Layout;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Alignment of every host allocation: a cache line, and enough for any SIMD load.
pub const ALIGN: usize = 64;

/// Where host memory comes from. Firmware, RTOSes and shared CPU/GPU allocators implement this.
pub trait Allocator: Send + Sync {
    /// Returns `size` bytes aligned to `align`, or `None` when it cannot.
    fn alloc(&self, size: usize, align: usize) -> Option<NonNull<u8>>;
    /// Returns memory obtained from [`Allocator::alloc`] with the same size and alignment.
    ///
    /// # Safety
    /// `ptr` must come from `alloc(size, align)` on this allocator and not be freed twice.
    unsafe fn free(&self, ptr: NonNull<u8>, size: usize, align: usize);
}

/// The global Rust allocator (`alloc::alloc`), which returns null rather than aborting.
pub struct HostAllocator;

impl Allocator for HostAllocator {
    fn alloc(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        let layout = Layout::from_size_align(size.max(1), align).ok()?;
        // SAFETY: the layout has non-zero size.
        NonNull::new(unsafe { alloc::alloc::alloc(layout) })
    }
    unsafe fn free(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        if let Ok(layout) = Layout::from_size_align(size.max(1), align) {
            alloc::alloc::dealloc(ptr.as_ptr(), layout);
        }
    }
}

static HOST: HostAllocator = HostAllocator;
static ALLOCATOR: spin::RwLock<Option<&'static dyn Allocator>> = spin::RwLock::new(None);
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static CACHE_LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static CACHE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Freed blocks kept for reuse, so a loop that allocates the same sizes every step stops
/// paying the allocator and page faults (MLX's buffer cache). Small blocks are not cached:
/// the system allocator serves them well.
struct Cached {
    ptr: NonNull<u8>,
    len: usize,
    allocator: &'static dyn Allocator,
}
// SAFETY: cached blocks are owned by the cache alone.
unsafe impl Send for Cached {}

static CACHE: spin::Mutex<alloc::vec::Vec<Cached>> = spin::Mutex::new(alloc::vec::Vec::new());
/// Blocks below this size bypass the cache.
const CACHE_MIN: usize = 1 << 14;
/// Entries kept at most (the cache is searched linearly).
const CACHE_ENTRIES: usize = 64;

/// Bytes held in the cache.
pub fn cache_memory() -> usize {
    CACHE_BYTES.load(Ordering::Relaxed)
}

/// Sets the cache limit in bytes and returns the previous one (0 disables caching).
pub fn set_cache_limit(limit: usize) -> usize {
    let old = CACHE_LIMIT.swap(limit, Ordering::Relaxed);
    trim_cache(limit);
    old
}

/// Returns every cached block to its allocator.
pub fn clear_cache() {
    trim_cache(0);
}

fn trim_cache(limit: usize) {
    let mut cache = CACHE.lock();
    while CACHE_BYTES.load(Ordering::Relaxed) > limit {
        let Some(c) = cache.pop() else { break };
        CACHE_BYTES.fetch_sub(c.len, Ordering::Relaxed);
        // SAFETY: the block came from this allocator with this size and ALIGN.
        unsafe { c.allocator.free(c.ptr, c.len, ALIGN) };
    }
}

fn take_cached(len: usize, a: &'static dyn Allocator) -> Option<NonNull<u8>> {
    if len < CACHE_MIN {
        return None;
    }
    let mut cache = CACHE.lock();
    let i = cache.iter().position(|c| c.len == len && core::ptr::addr_eq(c.allocator, a))?;
    let c = cache.swap_remove(i);
    CACHE_BYTES.fetch_sub(len, Ordering::Relaxed);
    Some(c.ptr)
}

/// Keeps a freed block for reuse if the cache has room; otherwise hands it back.
fn give_back(ptr: NonNull<u8>, len: usize, allocator: &'static dyn Allocator) -> Option<(NonNull<u8>, usize)> {
    if len < CACHE_MIN || CACHE_BYTES.load(Ordering::Relaxed).saturating_add(len) > CACHE_LIMIT.load(Ordering::Relaxed) {
        return Some((ptr, len));
    }
    let mut cache = CACHE.lock();
    if cache.len() >= CACHE_ENTRIES {
        return Some((ptr, len));
    }
    cache.push(Cached { ptr, len, allocator });
    CACHE_BYTES.fetch_add(len, Ordering::Relaxed);
    None
}

/// Installs the allocator used for every later buffer (buffers already made keep theirs).
pub fn set_allocator(a: &'static dyn Allocator) {
    *ALLOCATOR.write() = Some(a);
}

fn allocator() -> &'static dyn Allocator {
    ALLOCATOR.read().unwrap_or(&HOST)
}

/// Bytes currently held by live buffers made by the allocator.
pub fn active_memory() -> usize {
    ACTIVE.load(Ordering::Relaxed)
}
/// Highest [`active_memory`] since start or the last [`reset_peak_memory`].
pub fn peak_memory() -> usize {
    PEAK.load(Ordering::Relaxed)
}
/// Resets the peak to 0, as MLX does: the next allocation sets it to the active figure then.
pub fn reset_peak_memory() {
    PEAK.store(0, Ordering::Relaxed);
}
/// Sets the memory limit in bytes and returns the previous one; allocations beyond it fail.
pub fn set_memory_limit(limit: usize) -> usize {
    LIMIT.swap(limit, Ordering::Relaxed)
}
/// The current memory limit.
pub fn memory_limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// Bytes owned by something outside the allocator (a mapping, a static region), kept alive
/// as long as any buffer views them.
pub trait ExternalBytes: Send + Sync {
    /// The bytes.
    fn bytes(&self) -> &[u8];
}

impl ExternalBytes for &'static [u8] {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl ExternalBytes for alloc::vec::Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

enum Backing {
    Owned { allocator: &'static dyn Allocator, align: usize },
    /// Held only to keep the external owner (mapping, static region) alive.
    External(#[allow(dead_code)] Box<dyn ExternalBytes>),
}

/// A block of element memory. Shared through `Arc<Buffer>` by every view of it.
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    backing: Backing,
}

// SAFETY: a Buffer owns its memory (or keeps its external owner alive); access discipline
// (readers share, a writer holds the only reference) is enforced by the array layer.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Allocates `len` zeroed bytes, respecting the memory limit.
    pub fn new(len: usize, op: &'static str) -> Result<Arc<Buffer>> {
        Self::allocate(len, op, true)
    }

    /// Allocates `len` bytes that may hold stale (but initialized) data from a reused block:
    /// for kernels that overwrite every byte before anyone reads the buffer.
    pub fn new_for_overwrite(len: usize, op: &'static str) -> Result<Arc<Buffer>> {
        Self::allocate(len, op, false)
    }

    fn allocate(len: usize, op: &'static str, zero: bool) -> Result<Arc<Buffer>> {
        let active = ACTIVE.fetch_add(len, Ordering::Relaxed).saturating_add(len);
        if active > memory_limit() || len > isize::MAX as usize {
            ACTIVE.fetch_sub(len, Ordering::Relaxed);
            return Err(Error::out_of_memory(op, len));
        }
        let a = allocator();
        let ptr = match take_cached(len, a) {
            Some(p) => {
                if zero {
                    // SAFETY: the cached block is valid for len bytes and ours alone.
                    unsafe { core::ptr::write_bytes(p.as_ptr(), 0, len) };
                }
                p
            }
            None => {
                let fresh = a.alloc(len, ALIGN).or_else(|| {
                    // Under pressure, give cached memory back and try once more.
                    clear_cache();
                    a.alloc(len, ALIGN)
                });
                let Some(p) = fresh else {
                    ACTIVE.fetch_sub(len, Ordering::Relaxed);
                    return Err(Error::out_of_memory(op, len));
                };
                // Zero even for overwrite: a fresh block may hold another object's freed bytes,
                // and bool buffers must never see values other than 0 and 1.
                // SAFETY: p is valid for len bytes.
                unsafe { core::ptr::write_bytes(p.as_ptr(), 0, len) };
                p
            }
        };
        PEAK.fetch_max(active, Ordering::Relaxed);
        Ok(Arc::new(Buffer { ptr, len, backing: Backing::Owned { allocator: a, align: ALIGN } }))
    }

    /// Wraps external bytes without copying.
    pub fn external(bytes: Box<dyn ExternalBytes>) -> Arc<Buffer> {
        let s = bytes.bytes();
        let (ptr, len) = (NonNull::from(s).cast::<u8>(), s.len());
        Arc::new(Buffer { ptr, len, backing: Backing::External(bytes) })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True for a zero-length buffer.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Start of the memory.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }
    /// Start of the memory, for writing. Callers must hold the only reference, or write
    /// disjoint ranges (see the array layer).
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    /// Whether the bytes live outside the allocator (mapped or static).
    pub fn is_external(&self) -> bool {
        matches!(self.backing, Backing::External(_))
    }
    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the buffer's lifetime.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Backing::Owned { allocator, align } = self.backing {
            ACTIVE.fetch_sub(self.len, Ordering::Relaxed);
            if let Some((ptr, len)) = give_back(self.ptr, self.len, allocator) {
                // SAFETY: allocated by this allocator with this size and alignment.
                unsafe { allocator.free(ptr, len, align) };
            }
        }
    }
}
