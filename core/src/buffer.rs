//! Refcounted memory: [`Buffer`]s come from a pluggable [`Allocator`] (64-byte aligned host memory
//! by default) or wrap external bytes (a memory-mapped file, a firmware flash region) without a copy.
//! Active/peak statistics and a memory limit that turns into an error, never an abort.
//!
//! A backend may also own a buffer's storage ([`DeviceMemory`], see docs/GPU.md): then the host
//! bytes are either the backend's mapping (unified memory) or a mirror filled on demand by
//! [`Buffer::ensure_host`], and every real copy between host and device is counted
//! ([`transfer_stats`]).

use crate::device::Device;
use crate::error::{Error, Result};
use alloc::boxed::Box;
use alloc::sync::Arc;
use core::alloc::Layout;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Alignment of every host allocation: a cache line, and enough for any SIMD load.
pub const ALIGN: usize = 64;

/// Alignment of [`Buffer::new_pages`]' blocks: a page, so that an allocator can tell them
/// apart and give each a mapping of its own.
pub const PAGE_ALIGN: usize = 4096;

/// Where host memory comes from. Firmware, RTOSes and shared CPU/GPU allocators implement this.
pub trait Allocator: Send + Sync {
    /// Returns `size` bytes aligned to `align`, or `None` when it cannot.
    fn alloc(&self, size: usize, align: usize) -> Option<NonNull<u8>>;
    /// Returns memory obtained from [`Allocator::alloc`] with the same size and alignment.
    ///
    /// # Safety
    /// `ptr` must come from `alloc(size, align)` on this allocator and not be freed twice.
    unsafe fn free(&self, ptr: NonNull<u8>, size: usize, align: usize);
    /// [`Allocator::alloc`] of zeroed bytes. An allocator that gets zeroed memory without
    /// writing it (fresh pages of a mapping) overrides this, so that the pages of a large
    /// buffer stay unbacked until written: a KV cache's buffer then costs memory only for the
    /// positions written so far.
    fn alloc_zeroed(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        let p = self.alloc(size, align)?;
        // SAFETY: `alloc` returned `size` writable bytes.
        unsafe { core::ptr::write_bytes(p.as_ptr(), 0, size) };
        Some(p)
    }
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
    fn alloc_zeroed(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        let layout = Layout::from_size_align(size.max(1), align).ok()?;
        // SAFETY: the layout has non-zero size.
        NonNull::new(unsafe { alloc::alloc::alloc_zeroed(layout) })
    }
}

static HOST: HostAllocator = HostAllocator;

/// Counts `len` more bytes as active; an out-of-memory error (and nothing counted) past the
/// memory limit. Returns the new active total (for the peak).
fn reserve(len: usize, op: &'static str) -> Result<usize> {
    let active = ACTIVE.fetch_add(len, Ordering::Relaxed).saturating_add(len);
    if active > memory_limit() || len > isize::MAX as usize {
        ACTIVE.fetch_sub(len, Ordering::Relaxed);
        return Err(Error::out_of_memory(op, len));
    }
    Ok(active)
}

/// `len` fresh zeroed bytes from `a`; under pressure the buffer cache's memory is given back
/// and the allocation tried once more.
fn fresh_zeroed(a: &'static dyn Allocator, len: usize, align: usize) -> Option<NonNull<u8>> {
    a.alloc_zeroed(len, align).or_else(|| {
        clear_cache();
        a.alloc_zeroed(len, align)
    })
}
static ALLOCATOR: spin::RwLock<Option<&'static dyn Allocator>> = spin::RwLock::new(None);
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static CACHE_LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static CACHE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Freed blocks kept for reuse, so a loop that allocates the same sizes every step stops
/// paying the allocator and page faults (MLX's buffer cache). Only tiny blocks bypass it: a
/// decode step's vectors (a few KiB each, hundreds per step) cost more through the system
/// allocator's aligned path than through the cache. A request may take a block up to
/// [`REUSE_SLACK`] times its size: with exact sizes only, a prefill's cache held one block per
/// tensor of each size ever live together (3.3 MiB for the default model's 128-token prompt
/// against 2.1 MiB live at once; 2.7 MiB this way; docs/BENCHMARKS.md, "rss27").
struct Cached {
    ptr: NonNull<u8>,
    len: usize,
    allocator: &'static dyn Allocator,
}
// SAFETY: cached blocks are owned by the cache alone.
unsafe impl Send for Cached {}

static CACHE: spin::Mutex<alloc::vec::Vec<Cached>> = spin::Mutex::new(alloc::vec::Vec::new());
/// Blocks below this size bypass the cache.
const CACHE_MIN: usize = 512;
/// Entries kept at most (searched linearly, most recently freed first).
const CACHE_ENTRIES: usize = 256;
/// A request may take a cached block up to this many times its size (the smallest that fits).
const REUSE_SLACK: usize = 4;

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

fn take_cached(len: usize, a: &'static dyn Allocator) -> Option<(NonNull<u8>, usize)> {
    if len < CACHE_MIN {
        return None;
    }
    let mut cache = CACHE.lock();
    // The smallest block that fits, up to REUSE_SLACK times the request (an exact size at
    // once; of equal sizes the most recently freed).
    let most = len.saturating_mul(REUSE_SLACK);
    let mut best: Option<(usize, usize)> = None;
    for (i, c) in cache.iter().enumerate().rev() {
        if c.len >= len && c.len <= most && core::ptr::addr_eq(c.allocator, a) && best.is_none_or(|(_, l)| c.len < l) {
            best = Some((i, c.len));
            if c.len == len {
                break;
            }
        }
    }
    let c = cache.swap_remove(best?.0);
    CACHE_BYTES.fetch_sub(c.len, Ordering::Relaxed);
    Some((c.ptr, c.len))
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

/// Memory a backend owns for a buffer: device-local, or shared with the host.
pub trait DeviceMemory: Send + Sync {
    /// The device the memory belongs to.
    fn device(&self) -> Device;
    /// The host address of the bytes when the CPU can read and write them in place
    /// (host-visible, coherent memory); `None` when they must be copied.
    fn host_ptr(&self) -> Option<NonNull<u8>>;
    /// Finishes the device's pending writes to this memory and, when `mirror` is given (the
    /// memory is not mapped), copies the bytes into it.
    fn sync_to_host(&self, mirror: Option<&mut [u8]>) -> Result<()>;
    /// Lets a backend recognise its own memory.
    fn as_any(&self) -> &dyn core::any::Any;
}

/// Which way a transfer went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Host memory copied to a device.
    HostToDevice,
    /// Device memory copied to the host.
    DeviceToHost,
}

/// Counts of real copies between host and devices (in-place reads of shared memory are free
/// and not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Copies host → device.
    pub host_to_device: usize,
    /// Bytes host → device.
    pub host_to_device_bytes: usize,
    /// Copies device → host.
    pub device_to_host: usize,
    /// Bytes device → host.
    pub device_to_host_bytes: usize,
}

static H2D: AtomicUsize = AtomicUsize::new(0);
static H2D_BYTES: AtomicUsize = AtomicUsize::new(0);
static D2H: AtomicUsize = AtomicUsize::new(0);
static D2H_BYTES: AtomicUsize = AtomicUsize::new(0);
static DEVICE_ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Records one copy of `bytes` (backends call this for every upload or download they make).
pub fn record_transfer(direction: Direction, bytes: usize) {
    let (n, b) = match direction {
        Direction::HostToDevice => (&H2D, &H2D_BYTES),
        Direction::DeviceToHost => (&D2H, &D2H_BYTES),
    };
    n.fetch_add(1, Ordering::Relaxed);
    b.fetch_add(bytes, Ordering::Relaxed);
}

/// Transfers since start or the last [`reset_transfer_stats`].
pub fn transfer_stats() -> TransferStats {
    TransferStats {
        host_to_device: H2D.load(Ordering::Relaxed),
        host_to_device_bytes: H2D_BYTES.load(Ordering::Relaxed),
        device_to_host: D2H.load(Ordering::Relaxed),
        device_to_host_bytes: D2H_BYTES.load(Ordering::Relaxed),
    }
}

/// Zeroes the transfer counters.
pub fn reset_transfer_stats() {
    for c in [&H2D, &H2D_BYTES, &D2H, &D2H_BYTES] {
        c.store(0, Ordering::Relaxed);
    }
}

/// Bytes held by live buffers whose storage a backend owns.
pub fn device_active_memory() -> usize {
    DEVICE_ACTIVE.load(Ordering::Relaxed)
}

enum Backing {
    /// `cap`: the block's size as allocated, at least the buffer's length (a cached block
    /// taken for a smaller request, see [`take_cached`]).
    Owned { allocator: &'static dyn Allocator, align: usize, cap: usize },
    /// Held only to keep the external owner (mapping, static region) alive.
    External(#[allow(dead_code)] Box<dyn ExternalBytes>),
    /// Owned by a backend; `mirror` is the host copy when the memory is not mapped.
    Device { mem: Box<dyn DeviceMemory>, mirror: Option<NonNull<u8>> },
}

/// A block of element memory. Shared through `Arc<Buffer>` by every view of it.
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    backing: Backing,
    /// False while a device buffer's host bytes are stale; always true for host buffers.
    host_current: AtomicBool,
    /// Serialises [`Buffer::ensure_host`] so one download fills the mirror.
    sync_lock: spin::Mutex<()>,
    /// A backend's copy of a host buffer's bytes (uploaded once, dropped on host writes).
    mirror: spin::Mutex<Option<Arc<dyn DeviceMemory>>>,
    /// Whether `mirror` may be set: lets host writes skip the lock.
    has_mirror: AtomicBool,
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

    /// `len` zeroed bytes, page-aligned ([`PAGE_ALIGN`]), always newly allocated and handed
    /// straight back to the allocator when dropped (never through the buffer cache, whose
    /// reuse would clear every byte): for a large buffer written a part at a time, a KV cache.
    /// Where the allocator maps such blocks by themselves (the `mlx-arm` CLI's does), only the
    /// pages written so far are resident.
    pub fn new_pages(len: usize, op: &'static str) -> Result<Arc<Buffer>> {
        let active = reserve(len, op)?;
        let a = allocator();
        let Some(p) = fresh_zeroed(a, len, PAGE_ALIGN) else {
            ACTIVE.fetch_sub(len, Ordering::Relaxed);
            // An allocator that cannot align to a page (a host's, through the C API, may not)
            // gets an ordinary zeroed buffer: the same contents, only resident in full.
            return Self::allocate(len, op, true);
        };
        PEAK.fetch_max(active, Ordering::Relaxed);
        Ok(Arc::new(Buffer::with_backing(p, len, Backing::Owned { allocator: a, align: PAGE_ALIGN, cap: len }, true)))
    }

    fn allocate(len: usize, op: &'static str, zero: bool) -> Result<Arc<Buffer>> {
        let active = reserve(len, op)?;
        let a = allocator();
        let (ptr, cap) = match take_cached(len, a) {
            Some((p, cap)) => {
                if zero {
                    // SAFETY: the cached block is valid for len bytes and ours alone.
                    unsafe { core::ptr::write_bytes(p.as_ptr(), 0, len) };
                }
                (p, cap)
            }
            None => {
                // Zeroed even for overwrite: a fresh block may hold another object's freed
                // bytes, and bool buffers must never see values other than 0 and 1. The
                // allocator zeroes without writing where it can (fresh mapped pages).
                let Some(p) = fresh_zeroed(a, len, ALIGN) else {
                    ACTIVE.fetch_sub(len, Ordering::Relaxed);
                    return Err(Error::out_of_memory(op, len));
                };
                (p, len)
            }
        };
        PEAK.fetch_max(active, Ordering::Relaxed);
        Ok(Arc::new(Buffer::with_backing(ptr, len, Backing::Owned { allocator: a, align: ALIGN, cap }, true)))
    }

    fn with_backing(ptr: NonNull<u8>, len: usize, backing: Backing, host_current: bool) -> Buffer {
        Buffer {
            ptr,
            len,
            backing,
            host_current: AtomicBool::new(host_current),
            sync_lock: spin::Mutex::new(()),
            mirror: spin::Mutex::new(None),
            has_mirror: AtomicBool::new(false),
        }
    }

    /// Wraps external bytes without copying.
    pub fn external(bytes: Box<dyn ExternalBytes>) -> Arc<Buffer> {
        let s = bytes.bytes();
        let (ptr, len) = (NonNull::from(s).cast::<u8>(), s.len());
        Arc::new(Buffer::with_backing(ptr, len, Backing::External(bytes), true))
    }

    /// A buffer of `len` bytes whose storage `mem` a backend owns. `pending`: the device still
    /// writes it, so the host bytes are stale until [`Buffer::ensure_host`]. Memory the CPU
    /// cannot map gets a host mirror from the host allocator (counted in [`active_memory`]).
    pub fn from_device(mem: Box<dyn DeviceMemory>, len: usize, pending: bool, op: &'static str) -> Result<Arc<Buffer>> {
        let (ptr, mirror) = match mem.host_ptr() {
            Some(p) => (p, None),
            None => {
                let active = ACTIVE.fetch_add(len, Ordering::Relaxed).saturating_add(len);
                let p = (active <= memory_limit()).then(|| HOST.alloc(len, ALIGN)).flatten();
                let Some(p) = p else {
                    ACTIVE.fetch_sub(len, Ordering::Relaxed);
                    return Err(Error::out_of_memory(op, len));
                };
                PEAK.fetch_max(active, Ordering::Relaxed);
                (p, Some(p))
            }
        };
        DEVICE_ACTIVE.fetch_add(len, Ordering::Relaxed);
        Ok(Arc::new(Buffer::with_backing(ptr, len, Backing::Device { mem, mirror }, !pending)))
    }

    /// The backend memory that owns this buffer, if a backend does.
    pub fn device_memory(&self) -> Option<&dyn DeviceMemory> {
        match &self.backing {
            Backing::Device { mem, .. } => Some(&**mem),
            _ => None,
        }
    }

    /// True when the bytes live in host memory (allocator-owned or external).
    pub fn is_host(&self) -> bool {
        !matches!(self.backing, Backing::Device { .. })
    }

    /// Makes the host bytes current: finishes the device's pending writes and copies into the
    /// host mirror when the memory is not mapped (a counted transfer). Free for host buffers.
    #[inline]
    pub fn ensure_host(&self) -> Result<()> {
        if self.host_current.load(Ordering::Acquire) {
            return Ok(());
        }
        self.sync_host_slow()
    }

    #[cold]
    fn sync_host_slow(&self) -> Result<()> {
        let _guard = self.sync_lock.lock();
        if self.host_current.load(Ordering::Acquire) {
            return Ok(());
        }
        if let Backing::Device { mem, mirror } = &self.backing {
            match mirror {
                Some(p) => {
                    // SAFETY: the mirror holds len bytes and only this (locked) sync writes it
                    // while the host copy is stale.
                    let dst = unsafe { core::slice::from_raw_parts_mut(p.as_ptr(), self.len) };
                    mem.sync_to_host(Some(dst))?;
                    record_transfer(Direction::DeviceToHost, self.len);
                }
                None => mem.sync_to_host(None)?,
            }
        }
        self.host_current.store(true, Ordering::Release);
        Ok(())
    }

    /// A backend's copy of this (host) buffer on its device, if one was kept.
    pub fn device_mirror(&self) -> Option<Arc<dyn DeviceMemory>> {
        if !self.has_mirror.load(Ordering::Acquire) {
            return None;
        }
        self.mirror.lock().clone()
    }

    /// Keeps `mem` as this buffer's device copy; host writes through [`Buffer::as_mut_ptr`]
    /// drop it again.
    pub fn set_device_mirror(&self, mem: Arc<dyn DeviceMemory>) {
        *self.mirror.lock() = Some(mem);
        self.has_mirror.store(true, Ordering::Release);
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
        if self.has_mirror.load(Ordering::Relaxed) {
            self.drop_mirror();
        }
        self.ptr.as_ptr()
    }

    #[cold]
    fn drop_mirror(&self) {
        *self.mirror.lock() = None;
        self.has_mirror.store(false, Ordering::Release);
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
        match &self.backing {
            Backing::Owned { allocator, align, cap } => {
                ACTIVE.fetch_sub(self.len, Ordering::Relaxed);
                // The cache keeps and frees blocks of ALIGN only ([`Buffer::new_pages`]' go back).
                let unkept = if *align == ALIGN { give_back(self.ptr, *cap, *allocator) } else { Some((self.ptr, *cap)) };
                if let Some((ptr, len)) = unkept {
                    // SAFETY: allocated by this allocator with this size and alignment.
                    unsafe { allocator.free(ptr, len, *align) };
                }
            }
            Backing::Device { mirror, .. } => {
                DEVICE_ACTIVE.fetch_sub(self.len, Ordering::Relaxed);
                if let Some(p) = mirror {
                    ACTIVE.fetch_sub(self.len, Ordering::Relaxed);
                    // SAFETY: the mirror came from HOST with this size and ALIGN.
                    unsafe { HOST.free(*p, self.len, ALIGN) };
                }
            }
            Backing::External(_) => {}
        }
    }
}
