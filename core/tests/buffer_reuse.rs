//! The buffer cache's reuse rule: a request takes the smallest cached block that fits, up to
//! four times its size (an exact size first), and the block goes back to the cache whole.
//! One test function: the cache and the memory counters are process-wide.

use mlx_arm_core::buffer::{self, Buffer};

#[test]
fn a_request_takes_the_smallest_cached_block_within_four_times_its_size() {
    buffer::clear_cache();
    let (big, mid) = (64 * 1024, 40 * 1024);
    let (pb, pm) = {
        let b = Buffer::new(big, "test").unwrap();
        let m = Buffer::new(mid, "test").unwrap();
        (b.as_ptr() as usize, m.as_ptr() as usize)
    };
    assert_eq!(buffer::cache_memory(), big + mid);
    // 20 KiB: both fit within 4x; the smaller (40 KiB) is taken, its length the request's.
    let s = Buffer::new(20 * 1024, "test").unwrap();
    assert_eq!((s.as_ptr() as usize, s.len()), (pm, 20 * 1024));
    assert!(s.bytes().iter().all(|&v| v == 0), "a reused block is zeroed for Buffer::new");
    assert_eq!(buffer::cache_memory(), big);
    // 15 KiB: the 64 KiB block is more than 4x it, so a fresh block.
    let t = Buffer::new(15 * 1024, "test").unwrap();
    assert_ne!(t.as_ptr() as usize, pb);
    assert_eq!(buffer::cache_memory(), big);
    // 64 KiB exactly: the big block.
    let u = Buffer::new(big, "test").unwrap();
    assert_eq!(u.as_ptr() as usize, pb);
    assert_eq!(buffer::cache_memory(), 0);
    // Dropped, the 40 KiB block goes back whole (and is found again for 40 KiB).
    drop(s);
    assert_eq!(buffer::cache_memory(), mid);
    let again = Buffer::new(mid, "test").unwrap();
    assert_eq!(again.as_ptr() as usize, pm);
    drop((t, u, again));
    buffer::clear_cache();
    assert_eq!(buffer::cache_memory(), 0);
}
