//! Software prefetch: asking for bytes a kernel will read soon, so that streaming weights no
//! cache holds does not wait on memory. The hardware prefetchers stop at every 4 KiB page;
//! a decode step streams ~100 MB of weights once per token.

/// How far ahead of the register tile being computed the quantized matmul kernels prefetch
/// weight rows. Issued a tile at a time, not in bursts (a burst of prefetches fills the line
/// fill buffers and the rest are dropped): the default model's 1-thread decode on the dev VM
/// went from 65 to 105 tok/s (docs/BENCHMARKS.md, "Decode: weight prefetch, huge pages, in-place
/// attention").
const PREFETCH_BYTES: usize = 4096;

/// For a kernel walking the rows of `w` (`wrb` bytes each) in tiles of `tile_rows`, now at
/// row `row`: prefetches the tile about [`PREFETCH_BYTES`] ahead (nothing past the end).
#[inline]
pub(crate) fn prefetch_rows_ahead(w: &[u8], wrb: usize, row: usize, tile_rows: usize) {
    let tile = tile_rows * wrb;
    if tile == 0 {
        return;
    }
    let start = (row + tile_rows * (PREFETCH_BYTES / tile).max(1)) * wrb;
    if let Some(next) = w.get(start..(start + tile).min(w.len())) {
        prefetch(next);
    }
}

/// Asks for `bytes` to be brought into the caches. Only a hint: it never faults.
///
/// One prefetch per 64 bytes from the start, four per loop turn, and one for the last byte
/// (the line a misaligned end falls in). The loop over `chunks(64)` it replaces spent 7
/// instructions per line (length clamps, a conditional move); a GEMV over L2/L3-resident
/// weights issues one line per 64 weight bytes, so that loop cost about as much as the
/// prefetches saved there (docs/BENCHMARKS.md, "gv25").
#[inline]
pub(crate) fn prefetch(bytes: &[u8]) {
    let (p, n) = (bytes.as_ptr(), bytes.len());
    if n == 0 {
        return;
    }
    let mut off = 0;
    while off + 256 <= n {
        for k in 0..4 {
            line(p.wrapping_add(off + 64 * k));
        }
        off += 256;
    }
    while off < n {
        line(p.wrapping_add(off));
        off += 64;
    }
    line(p.wrapping_add(n - 1));
}

/// Prefetches the cache line holding `p` (an address inside a live slice).
#[inline(always)]
fn line(p: *const u8) {
    // SAFETY: a prefetch is only a hint and cannot fault; the callers pass addresses inside a
    // slice they hold.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    // SAFETY: as above (`prfm` never faults); no memory is written, no flags change.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}
