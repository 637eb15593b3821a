//! MLX's bit packing: each row is a little-endian, LSB-first bit stream of `bits`-wide codes,
//! stored as `uint32` words. Element `i` occupies stream bits `[i*bits, (i+1)*bits)`; for 3, 5
//! and 6 bits a code may straddle two words (8 codes per 3 or 5 bytes, 4 per 3 bytes).

/// Writes `code` (already `< 2^bits`) as element `i` of the stream `row`. The caller has
/// checked that `row` holds at least `(i+1)*bits` bits.
#[inline]
pub(crate) fn put(row: &mut [u32], i: usize, bits: u32, code: u32) {
    let pos = i * bits as usize;
    let (w, off) = (pos / 32, (pos % 32) as u32);
    if let Some(word) = row.get_mut(w) {
        *word |= code << off;
    }
    if off + bits > 32 {
        if let Some(word) = row.get_mut(w + 1) {
            *word |= code >> (32 - off);
        }
    }
}

/// Reads element `i` of the stream `row` (0 past its end).
#[inline]
pub(crate) fn get(row: &[u32], i: usize, bits: u32) -> u32 {
    let pos = i * bits as usize;
    let (w, off) = (pos / 32, (pos % 32) as u32);
    let lo = row.get(w).copied().unwrap_or(0) as u64;
    let hi = if off + bits > 32 { row.get(w + 1).copied().unwrap_or(0) as u64 } else { 0 };
    let both = lo | (hi << 32);
    ((both >> off) & ((1u64 << bits) - 1)) as u32
}

/// Decodes `out.len()` consecutive codes starting at element `start` of `row`.
#[inline]
pub(crate) fn get_run(row: &[u32], start: usize, bits: u32, out: &mut [u32]) {
    // Fast path for 1/2/4/8 bits from a word boundary (every group start: groups hold ≥ 32
    // codes): whole words, no straddling, no per-element 64-bit shifts.
    if 32 % bits == 0 && (start * bits as usize) % 32 == 0 {
        let per = (32 / bits) as usize;
        let mask = (1u32 << bits) - 1;
        let words = row.get(start * bits as usize / 32..).unwrap_or(&[]);
        let mut chunks = out.chunks_mut(per);
        // `words` first: when it runs out, zip stops before taking a chunk it would not fill.
        for (&word, chunk) in words.iter().zip(chunks.by_ref()) {
            for (j, o) in chunk.iter_mut().enumerate() {
                *o = (word >> (j as u32 * bits)) & mask;
            }
        }
        // Past the end of the row reads as 0, like `get`.
        chunks.for_each(|c| c.fill(0));
        return;
    }
    for (j, o) in out.iter_mut().enumerate() {
        *o = get(row, start + j, bits);
    }
}
