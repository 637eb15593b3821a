//! The program's global allocator on Linux: blocks below 1 KiB from mimalloc, larger ones
//! from the system allocator (glibc).
//!
//! A decode step records ~570 graph nodes and frees them once they have run: ~13 small heap
//! blocks each (the op, its node, shape, strides and output lists), and with pipelined decode
//! the evaluating thread frees what the building thread allocated. glibc's per-thread cache
//! keeps only 7 blocks of a size, so most of those frees take its slower paths (and its arena
//! lock for another thread's blocks); mimalloc's per-thread free lists make them a few
//! instructions. On the 16-core device tg64 went +11–23 % at 8–16 threads with mimalloc
//! serving every block (docs/BENCHMARKS.md, "decode21").
//!
//! Larger blocks (the vectors and activations the core's buffer cache does not keep, the
//! tokenizer's tables, the logits) stay with glibc: served by mimalloc they raised the default
//! model's peak RSS by 3–5 MiB (its pages and arenas keep freed memory resident for reuse),
//! against issue 16's peak-RSS goal; split at 1 KiB the rise is ~1 MiB, at 64 KiB ~2 MiB.
//!
//! Page-aligned blocks of [`MAPPED`] bytes and more — the KV cache's buffers, which the core
//! asks for page-aligned (`Buffer::new_pages`) — are each their own anonymous mapping: a
//! zeroed one costs no memory until its pages are written, so a KV cache holds only the
//! positions written so far (glibc would clear it byte by byte, or hand back a reused block
//! already resident), and freeing one hands its pages back at once (issue 16). Other large
//! blocks (a prefill's activations, the logits) stay with glibc, which keeps their pages for
//! the next step: mapped too, every step's logits and every prefill's activations cost fresh
//! page faults and an unmap, which took up to a third off pp128 and a fifth off tg64 at 16
//! threads on the device (docs/BENCHMARKS.md, "dec25").

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks smaller than this come from mimalloc. The decode step's node blocks (ops, nodes,
/// shapes, strides, input and output lists) are all below it; its vectors of a few KiB come
/// from the core's buffer cache.
const SMALL: usize = 1024;

/// Page-aligned blocks of this many bytes and more are mapped by themselves (see the
/// module's text); below it a mapping's system calls would cost more than they save.
const MAPPED: usize = 64 * 1024;

/// The page size mappings are made of, and the alignment that asks for one
/// (`mlx_arm_core::buffer::PAGE_ALIGN`).
const PAGE: usize = 4096;

fn mapped(layout: Layout) -> bool {
    layout.size() >= MAPPED && layout.align() == PAGE
}

/// A fresh anonymous mapping of `size` bytes (zeroed by the OS, no page resident yet), or null.
fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping at an address the kernel picks touches no memory
    // of ours.
    let p = unsafe {
        libc::mmap(core::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
    };
    if p == libc::MAP_FAILED { core::ptr::null_mut() } else { p.cast() }
}

/// Unmaps a block that [`map`] made with this size.
unsafe fn unmap(ptr: *mut u8, size: usize) {
    libc::munmap(ptr.cast(), size);
}

/// mimalloc below [`SMALL`] bytes, [`System`] from there on. A block is freed by the
/// allocator that its layout's size picks, the same one that allocated it.
pub struct SplitHeap;

fn small(size: usize) -> bool {
    size < SMALL
}

// SAFETY: each block is allocated and freed (and resized in place) by one allocator — or is
// one mapping — chosen from its layout, which the caller passes unchanged to `dealloc`/
// `realloc` (GlobalAlloc's contract); a resize that changes the choice moves the block by
// copying. A mapping is page-aligned, so it meets any alignment `mapped` accepts.
unsafe impl GlobalAlloc for SplitHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            map(layout.size())
        } else if small(layout.size()) {
            mimalloc::MiMalloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            // A fresh mapping is zeroed: nothing is written, so no page becomes resident.
            map(layout.size())
        } else if small(layout.size()) {
            mimalloc::MiMalloc.alloc_zeroed(layout)
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(layout) {
            unmap(ptr, layout.size())
        } else if small(layout.size()) {
            mimalloc::MiMalloc.dealloc(ptr, layout)
        } else {
            System.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `new_size` with the old alignment is a valid layout (GlobalAlloc's contract).
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let same_place = !mapped(layout) && !mapped(new_layout) && small(layout.size()) == small(new_size);
        if same_place && small(new_size) {
            return mimalloc::MiMalloc.realloc(ptr, layout, new_size);
        }
        if same_place {
            return System.realloc(ptr, layout, new_size);
        }
        // Across allocators, or to or from a mapping of its own: move by copying.
        let new = self.alloc(new_layout);
        if !new.is_null() {
            core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block keeps its bytes when resized within one allocator and across the threshold
    /// both ways (moved between the allocators), at a large alignment too.
    #[test]
    fn realloc_keeps_contents_across_the_threshold() {
        for align in [1usize, 8, 64, 4096] {
            let sizes = [24usize, SMALL - 1, SMALL, 3 * SMALL + 5, 100, 70_000, MAPPED - 1, MAPPED, 3 * MAPPED + 7, MAPPED + 1, 5000, SMALL - 1, 8];
            let mut layout = Layout::from_size_align(sizes[0], align).unwrap();
            // SAFETY: a non-zero-sized layout; each block is used within its size, resized with
            // the layout it has and freed with its last layout.
            unsafe {
                let mut p = SplitHeap.alloc(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0);
                for i in 0..layout.size() {
                    *p.add(i) = (i % 251) as u8;
                }
                for &n in &sizes[1..] {
                    let kept = layout.size().min(n);
                    p = SplitHeap.realloc(p, layout, n);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "align {align}, size {n}");
                    for i in 0..kept {
                        assert_eq!(*p.add(i), (i % 251) as u8, "align {align}, {} -> {n} bytes, byte {i}", layout.size());
                    }
                    layout = Layout::from_size_align(n, align).unwrap();
                    for i in kept..n {
                        *p.add(i) = (i % 251) as u8;
                    }
                }
                SplitHeap.dealloc(p, layout);
                for n in [SMALL + 17, 2 * MAPPED + 3] {
                    let z = SplitHeap.alloc_zeroed(Layout::from_size_align(n, align).unwrap());
                    assert!(!z.is_null());
                    assert_eq!(z as usize % align, 0);
                    assert!((0..n).all(|i| *z.add(i) == 0), "{n} zeroed bytes");
                    SplitHeap.dealloc(z, Layout::from_size_align(n, align).unwrap());
                }
            }
        }
    }
}
