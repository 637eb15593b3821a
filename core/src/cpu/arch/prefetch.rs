//! Software prefetch: asking for bytes a kernel will read soon, so that streaming weights no
//! cache holds does not wait on memory. The hardware prefetchers stop at every 4 KiB page;
//! a decode step streams ~100 MB of weights once per token.

/// How far ahead of the register tile being computed the quantized matmul kernels prefetch
/// weight rows. Issued a tile at a time, not in bursts (a burst of prefetches fills the line
/// fill buffers and the rest are dropped): the default model's 1-thread decode on the dev VM
/// went from 65 to 105 tok/s (docs/BENCHMARKS.md, "Decode: weight prefetch, huge pages, in-place
/// attention").
const PREFETCH_BYTES: usize = 4096;

/// How far ahead of a register tile of `tile` weight bytes its prefetches go: whole tiles, at
/// least [`PREFETCH_BYTES`] (the same weight bytes of the tile that many tiles on).
#[inline]
pub(crate) fn tile_distance(tile: usize) -> usize {
    tile * (PREFETCH_BYTES / tile.max(1)).max(1)
}

/// For a kernel walking the rows of `w` (`wrb` bytes each) in tiles of `tile_rows`, now at
/// row `row`: prefetches the tile [`tile_distance`] ahead (nothing past the end), all of it at
/// once. The GEMV tiles of the x86-64 kernels spread theirs over their loops instead
/// ([`lines_ahead`]).
#[inline]
pub(crate) fn prefetch_rows_ahead(w: &[u8], wrb: usize, row: usize, tile_rows: usize) {
    let tile = tile_rows * wrb;
    if tile == 0 {
        return;
    }
    let start = row * wrb + tile_distance(tile);
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

/// Prefetches the `n` cache lines from `p + ahead` on, for a kernel reading the bytes at `p`
/// now: a GEMV tile calls this for each block (or group of blocks) of each weight row it
/// reads, `ahead` = [`tile_distance`] of its tile, so the next tile's lines are asked for a
/// few at a time, between the loads and multiplies, instead of in one burst per tile (144–210
/// lines per 4-row K-quant tile at k = 4096). On the device machine's Xeon, where these GEMVs
/// read from L3, Q4_K/Q6_K 4096×4096 at 2 threads ran 1.3–2.0× as fast spread (AVX2 and
/// AVX-512 VNNI), the AVX2 Q8_0 lm_head 1.2–2.0× (docs/BENCHMARKS.md, "gq26").
///
/// The addresses may lie past the end of the weights (the last tiles): a prefetch is only a
/// hint, never faults, and the pointer is never dereferenced.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn lines_ahead(p: *const u8, ahead: usize, n: usize) {
    let p = p.wrapping_add(ahead);
    for k in 0..n {
        line(p.wrapping_add(64 * k));
    }
}

/// Prefetches the cache line holding `p` (any address: see [`lines_ahead`]).
#[inline(always)]
fn line(p: *const u8) {
    // SAFETY: a prefetch is only a hint and cannot fault, whatever the address; nothing is
    // read or written.
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
