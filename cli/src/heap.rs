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

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks smaller than this come from mimalloc. The decode step's node blocks (ops, nodes,
/// shapes, strides, input and output lists) are all below it; its vectors of a few KiB come
/// from the core's buffer cache.
const SMALL: usize = 1024;

/// mimalloc below [`SMALL`] bytes, [`System`] from there on. A block is freed by the
/// allocator that its layout's size picks, the same one that allocated it.
pub struct SplitHeap;

fn small(size: usize) -> bool {
    size < SMALL
}

// SAFETY: each block is allocated and freed (and resized in place) by one allocator, chosen
// from its size, which the caller passes unchanged to `dealloc`/`realloc` (GlobalAlloc's
// contract); a resize that crosses the threshold moves the block between them by copying.
unsafe impl GlobalAlloc for SplitHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if small(layout.size()) {
            mimalloc::MiMalloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if small(layout.size()) {
            mimalloc::MiMalloc.alloc_zeroed(layout)
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if small(layout.size()) {
            mimalloc::MiMalloc.dealloc(ptr, layout)
        } else {
            System.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (small(layout.size()), small(new_size)) {
            (true, true) => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
            (false, false) => System.realloc(ptr, layout, new_size),
            _ => {
                // SAFETY: `new_size` with the old alignment is a valid layout (GlobalAlloc's
                // contract for `realloc`).
                let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
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
            let sizes = [24usize, SMALL - 1, SMALL, 3 * SMALL + 5, 100, 70_000, SMALL - 1, 8];
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
                let z = SplitHeap.alloc_zeroed(Layout::from_size_align(SMALL + 17, align).unwrap());
                assert!((0..SMALL + 17).all(|i| *z.add(i) == 0));
                SplitHeap.dealloc(z, Layout::from_size_align(SMALL + 17, align).unwrap());
            }
        }
    }
}
