//! `Buffer::new_pages` (the KV cache's buffers): zeroed, page-aligned, asked of the allocator
//! through `alloc_zeroed` with `PAGE_ALIGN` and handed straight back to it with the same
//! alignment when dropped — never through the buffer cache, whose blocks are freed with `ALIGN`;
//! from an allocator that cannot align to a page, an ordinary zeroed buffer.
//! One test function: the allocator and the memory counters are process-wide.

use mlx_arm_core::buffer::{self, Allocator, Buffer, PAGE_ALIGN};
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Mutex;

/// The system allocator, recording every call as (what, size, align).
struct Recording(Mutex<Vec<(&'static str, usize, usize)>>);

impl Allocator for Recording {
    fn alloc(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        self.0.lock().unwrap().push(("alloc", size, align));
        NonNull::new(unsafe { std::alloc::alloc(Layout::from_size_align(size, align).ok()?) })
    }
    unsafe fn free(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        self.0.lock().unwrap().push(("free", size, align));
        std::alloc::dealloc(ptr.as_ptr(), Layout::from_size_align(size, align).unwrap());
    }
    fn alloc_zeroed(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        self.0.lock().unwrap().push(("alloc_zeroed", size, align));
        NonNull::new(unsafe { std::alloc::alloc_zeroed(Layout::from_size_align(size, align).ok()?) })
    }
}

static REC: Recording = Recording(Mutex::new(Vec::new()));

/// An allocator that cannot align beyond a cache line (as a host's may not).
struct LineOnly;

impl Allocator for LineOnly {
    fn alloc(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        if align > 64 {
            return None;
        }
        NonNull::new(unsafe { std::alloc::alloc(Layout::from_size_align(size, align).ok()?) })
    }
    unsafe fn free(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        std::alloc::dealloc(ptr.as_ptr(), Layout::from_size_align(size, align).unwrap());
    }
}

static LINE_ONLY: LineOnly = LineOnly;

#[test]
fn new_pages_are_zeroed_page_aligned_and_never_cached() {
    buffer::set_allocator(&REC);
    // Dirty a block of the same size through the ordinary path and leave it in the buffer
    // cache: new_pages must not hand it out (it would not be zeroed without writing).
    let len = 3 * 256 * 64 * 4;
    {
        let b = Buffer::new(len, "test").unwrap();
        unsafe { std::ptr::write_bytes(b.as_mut_ptr(), 0xAB, len) };
    }
    let cached = buffer::cache_memory();
    assert!(cached >= len, "the ordinary block went to the cache ({cached} bytes)");
    let active = buffer::active_memory();
    REC.0.lock().unwrap().clear();
    let p = Buffer::new_pages(len, "test").unwrap();
    assert_eq!(p.as_ptr() as usize % PAGE_ALIGN, 0);
    assert!(p.bytes().iter().all(|&b| b == 0), "new_pages must be zeroed");
    assert_eq!(buffer::active_memory(), active + len);
    assert_eq!(buffer::cache_memory(), cached, "the cached block stays cached");
    drop(p);
    assert_eq!(buffer::active_memory(), active);
    assert_eq!(buffer::cache_memory(), cached, "a page buffer never enters the cache");
    assert_eq!(*REC.0.lock().unwrap(), vec![("alloc_zeroed", len, PAGE_ALIGN), ("free", len, PAGE_ALIGN)]);
    buffer::clear_cache();

    // Without page alignment from the allocator: an ordinary zeroed buffer, not an error
    // (a dirty block of the size waits in the cache; it must come back cleared).
    buffer::set_allocator(&LINE_ONLY);
    {
        let b = Buffer::new(len, "test").unwrap();
        unsafe { std::ptr::write_bytes(b.as_mut_ptr(), 0xCD, len) };
    }
    let p = Buffer::new_pages(len, "test").unwrap();
    assert_eq!(p.len(), len);
    assert!(p.bytes().iter().all(|&b| b == 0), "the fallback must be zeroed too");
    drop(p);
    buffer::clear_cache();
}
