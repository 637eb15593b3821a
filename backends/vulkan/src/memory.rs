//! Buffers in device memory (sub-allocated by gpu-allocator) and their bridge to core's
//! [`DeviceMemory`]: shared (host-visible) memory is read by the CPU in place once the queue
//! is done with it; device-local memory is copied through a staging buffer.

use crate::context::{vk_err, Context};
use crate::queue;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use mlx_arm_core::buffer::DeviceMemory;
use mlx_arm_core::{Device, Error, Result};
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// One `VkBuffer` with its memory. Released when the last holder (a core buffer, a command
/// batch that uses it) lets go, so memory in use by queued work is never released early.
pub(crate) struct VkMemory {
    ctx: &'static Context,
    pub buffer: vk::Buffer,
    pub size: usize,
    location: MemoryLocation,
    allocation: Mutex<Option<Allocation>>,
    mapped: Option<NonNull<u8>>,
    /// The number of the command batch that last wrote it (0: none; see `queue`), so a read
    /// waits for that batch alone, not for work recorded after it.
    pub last_write: AtomicU64,
}

/// Released buffers kept for reuse by size and location: a model step allocates the same
/// sizes every time (~600 outputs a decode step of the default model, all alive until the
/// step's batches complete), and creating a buffer (plus, past the allocator's block, device
/// memory) costs far more than a kernel on a large GPU. Bounded by `POOL_BYTES` and
/// `POOL_ENTRIES`; looked up by size.
struct Pooled {
    buffer: vk::Buffer,
    location: MemoryLocation,
    allocation: Allocation,
}
// SAFETY: plain handles and an allocation record, owned by the pool alone.
unsafe impl Send for Pooled {}

#[derive(Default)]
struct Pool {
    by_size: HashMap<usize, Vec<Pooled>>,
    bytes: usize,
    entries: usize,
}

impl Pool {
    /// Takes buffers of other sizes out until one of `size` bytes fits (a full pool must not
    /// turn away the sizes a model step keeps asking for because sizes seen once — a prompt's
    /// length, say — fill it). Returns them for the caller to destroy.
    fn make_room(&mut self, size: usize) -> Vec<Pooled> {
        let mut out = Vec::new();
        while self.entries >= POOL_ENTRIES || self.bytes + size > POOL_BYTES {
            let Some(&victim) = self.by_size.keys().find(|&&k| k != size) else { break };
            let bucket = self.by_size.remove(&victim).unwrap_or_default();
            self.entries -= bucket.len();
            self.bytes -= victim * bucket.len();
            out.extend(bucket);
        }
        out
    }
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);
const POOL_BYTES: usize = 1 << 30;
const POOL_ENTRIES: usize = 4096;

// SAFETY: the mapping is plain memory; access discipline comes from core's buffer rules and
// the queue's fences.
unsafe impl Send for VkMemory {}
unsafe impl Sync for VkMemory {}

impl VkMemory {
    /// `size` bytes (at least 4: Vulkan has no empty buffers) in `location`.
    pub fn new(ctx: &'static Context, size: usize, location: MemoryLocation, op: &'static str) -> Result<Arc<VkMemory>> {
        {
            let mut guard = crate::lock(&POOL);
            let pool = guard.get_or_insert_with(Pool::default);
            let same = pool.by_size.get_mut(&size);
            if let Some(p) = same.and_then(|v| v.iter().position(|p| p.location == location).map(|i| v.swap_remove(i))) {
                pool.bytes -= size;
                pool.entries -= 1;
                let mapped = p.allocation.mapped_ptr().map(|q| q.cast::<u8>()).filter(|_| location != MemoryLocation::GpuOnly);
                let (buffer, allocation) = (p.buffer, Mutex::new(Some(p.allocation)));
                return Ok(Arc::new(VkMemory { ctx, buffer, size, location, allocation, mapped, last_write: AtomicU64::new(0) }));
            }
        }
        let bytes = size.max(4) as u64;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let bci = vk::BufferCreateInfo::default().size(bytes).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        let d = &ctx.device;
        // SAFETY: valid create info on a live device.
        let buffer = unsafe { d.create_buffer(&bci, None) }.map_err(|r| vk_err(op, "vkCreateBuffer", r))?;
        let requirements = unsafe { d.get_buffer_memory_requirements(buffer) };
        let desc = AllocationCreateDesc {
            name: "mlx-arm",
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        };
        let mut alloc = crate::lock(&ctx.allocator).allocate(&desc);
        if matches!(alloc, Err(gpu_allocator::AllocationError::OutOfMemory)) {
            // Under pressure, give pooled buffers back and try once more.
            drain_pool(ctx);
            alloc = crate::lock(&ctx.allocator).allocate(&desc);
        }
        let alloc = match alloc {
            Ok(a) => a,
            Err(e) => {
                unsafe { d.destroy_buffer(buffer, None) };
                return Err(match e {
                    gpu_allocator::AllocationError::OutOfMemory => Error::out_of_memory(op, size),
                    e => Error::runtime(op, format!("Vulkan allocation of {size} bytes failed: {e}.")),
                });
            }
        };
        // SAFETY: the allocation satisfies the buffer's requirements.
        if let Err(r) = unsafe { d.bind_buffer_memory(buffer, alloc.memory(), alloc.offset()) } {
            unsafe { d.destroy_buffer(buffer, None) };
            let _ = crate::lock(&ctx.allocator).free(alloc);
            return Err(vk_err(op, "vkBindBufferMemory", r));
        }
        // Device-only memory is never read in place, even where the driver maps it anyway
        // (lavapipe maps everything): the staged path is then the one a discrete GPU takes.
        let mapped = alloc.mapped_ptr().map(|p| p.cast::<u8>()).filter(|_| location != MemoryLocation::GpuOnly);
        Ok(Arc::new(VkMemory { ctx, buffer, size, location, allocation: Mutex::new(Some(alloc)), mapped, last_write: AtomicU64::new(0) }))
    }

    /// The host address, when the memory is host-visible.
    pub fn mapped(&self) -> Option<NonNull<u8>> {
        self.mapped
    }
}

/// Destroys every pooled buffer and returns its memory.
fn drain_pool(ctx: &Context) {
    let drained = crate::lock(&POOL).take().unwrap_or_default();
    for p in drained.by_size.into_values().flatten() {
        // SAFETY: pooled buffers are unused.
        unsafe { ctx.device.destroy_buffer(p.buffer, None) };
        let _ = crate::lock(&ctx.allocator).free(p.allocation);
    }
}

impl Drop for VkMemory {
    fn drop(&mut self) {
        // No queued work uses the buffer any more (batches hold an Arc until done).
        let Some(allocation) = crate::lock(&self.allocation).take() else { return };
        let evicted = {
            let mut guard = crate::lock(&POOL);
            let pool = guard.get_or_insert_with(Pool::default);
            let evicted = if self.size <= POOL_BYTES { pool.make_room(self.size) } else { Vec::new() };
            if pool.bytes + self.size <= POOL_BYTES && pool.entries < POOL_ENTRIES {
                pool.bytes += self.size;
                pool.entries += 1;
                let p = Pooled { buffer: self.buffer, location: self.location, allocation };
                pool.by_size.entry(self.size).or_default().push(p);
                Ok(evicted)
            } else {
                Err((evicted, allocation))
            }
        };
        // Destroyed outside the pool's lock.
        let (evicted, mine) = match evicted {
            Ok(e) => (e, None),
            Err((e, a)) => (e, Some(a)),
        };
        for p in evicted {
            // SAFETY: pooled buffers are unused.
            unsafe { self.ctx.device.destroy_buffer(p.buffer, None) };
            let _ = crate::lock(&self.ctx.allocator).free(p.allocation);
        }
        if let Some(allocation) = mine {
            // SAFETY: the buffer is unused and not pooled.
            unsafe { self.ctx.device.destroy_buffer(self.buffer, None) };
            let _ = crate::lock(&self.ctx.allocator).free(allocation);
        }
    }
}

/// Core's handle on a [`VkMemory`].
pub(crate) struct Handle(pub Arc<VkMemory>);

impl DeviceMemory for Handle {
    fn device(&self) -> Device {
        Device::GPU
    }
    fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.0.mapped()
    }
    fn sync_to_host(&self, mirror: Option<&mut [u8]>) -> Result<()> {
        match mirror {
            None => queue::wait_for(&self.0),
            Some(dst) => queue::download(&self.0, dst),
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The Vulkan memory behind a core buffer, if it is ours.
pub(crate) fn of_buffer(buf: &mlx_arm_core::buffer::Buffer) -> Option<Arc<VkMemory>> {
    if let Some(m) = buf.device_memory() {
        return m.as_any().downcast_ref::<Handle>().map(|h| h.0.clone());
    }
    let mirror = buf.device_mirror()?;
    mirror.as_any().downcast_ref::<Handle>().map(|h| h.0.clone())
}
