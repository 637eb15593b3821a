//! The counter-based generator under every MLX sampler: `key`, the threefry2x32 block
//! function (20 rounds, as in JAX and Random123) and MLX's `RandomBits` word layout.
//!
//! A key is two `u32` words. `bits` hashes the counters `(j, j + h + odd)` and spreads the two
//! outputs over the first and second half of the output, the JAX `threefry_random_bits` layout;
//! MLX's CPU backend (`RandomBits::eval_cpu`) writes exactly that, little endian, and truncates
//! the final word when the byte count is not a multiple of four.

use alloc::vec::Vec;

use crate::error::{Error, Result};

/// A PRNG key: MLX's `uint32[2]` key array.
pub type Key = [u32; 2];

/// `mx.random.key(seed)`: the high and low 32 bits of the seed.
pub fn key(seed: u64) -> Key {
    [(seed >> 32) as u32, seed as u32]
}

/// The threefry2x32 block function with 20 rounds (five groups of four), counter `ctr`.
pub fn threefry2x32(key: Key, ctr: [u32; 2]) -> [u32; 2] {
    const ROT: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
    let ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD1_1BDA];
    let mut x0 = ctr[0].wrapping_add(ks[0]);
    let mut x1 = ctr[1].wrapping_add(ks[1]);
    for i in 0..5usize {
        for &r in &ROT[i % 2] {
            x0 = x0.wrapping_add(x1);
            x1 = x1.rotate_left(r);
            x1 ^= x0;
        }
        x0 = x0.wrapping_add(ks[(i + 1) % 3]);
        x1 = x1.wrapping_add(ks[(i + 2) % 3]).wrapping_add(i as u32 + 1);
    }
    [x0, x1]
}

/// Allocates an empty vector with room for `n` elements, or an out-of-memory error.
pub(crate) fn try_vec<T>(op: &'static str, n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory(op, n.saturating_mul(core::mem::size_of::<T>())))?;
    Ok(v)
}

/// `n_words` 32-bit words of `bits(shape, width=4, key)` for one key, in MLX's layout.
///
/// Errors when the word count does not fit the 32-bit counters or cannot be allocated.
pub fn bits_words(key: Key, n_words: usize) -> Result<Vec<u32>> {
    if n_words > u32::MAX as usize {
        return Err(Error::invalid("bits", "too many random words for 32-bit counters"));
    }
    let mut out = try_vec::<u32>("bits", n_words)?;
    out.resize(n_words, 0);
    let half = n_words / 2;
    let odd = n_words % 2;
    // Bounded above: n_words <= u32::MAX, so j + half + odd < 2^32.
    for j in 0..half {
        let [a, b] = threefry2x32(key, [j as u32, (j + half + odd) as u32]);
        out[j] = a;
        out[j + half + odd] = b;
    }
    if odd == 1 {
        out[half] = threefry2x32(key, [half as u32, 0])[0];
    }
    Ok(out)
}

/// The first `n_bytes` bytes of the word stream (little endian): what `bits` returns viewed as
/// bytes, for any width (`n_bytes = elements * width`).
pub fn bits_bytes(key: Key, n_bytes: usize) -> Result<Vec<u8>> {
    let words = bits_words(key, n_bytes.div_ceil(4))?;
    let mut out = try_vec::<u8>("bits", n_bytes)?;
    for w in &words {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.truncate(n_bytes);
    Ok(out)
}

/// `bits(shape, width, key)` as `u32` element values: `n` elements of `width` bytes (1, 2 or 4),
/// each zero-extended. MLX returns uint8 / uint16 / uint32 arrays for the three widths.
pub fn bits(key: Key, n: usize, width: usize) -> Result<Vec<u32>> {
    if !matches!(width, 1 | 2 | 4) {
        return Err(Error::invalid("bits", alloc::format!("Bit width must be in {{1, 2, 4}} but got {width}.")));
    }
    if width == 4 {
        return bits_words(key, n);
    }
    let n_bytes = n
        .checked_mul(width)
        .ok_or_else(|| Error::invalid("bits", "element count overflows"))?;
    let bytes = bits_bytes(key, n_bytes)?;
    let mut out = try_vec::<u32>("bits", n)?;
    if width == 1 {
        out.extend(bytes.iter().map(|&b| u32::from(b)));
    } else {
        out.extend(bytes.chunks_exact(2).map(|c| u32::from(u16::from_le_bytes([c[0], c[1]]))));
    }
    Ok(out)
}

/// `mx.random.split(key, num)`: `bits(shape=(num, 2))` read as `num` keys.
pub fn split(key: Key, num: usize) -> Result<Vec<Key>> {
    let n_words = num
        .checked_mul(2)
        .ok_or_else(|| Error::invalid("split", "key count overflows"))?;
    let w = bits_words(key, n_words)?;
    Ok(w.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
}

/// The two-way `split(key)`: `(first, second)`. The global key sequence keeps the first and
/// samples with the second.
pub fn split2(key: Key) -> [Key; 2] {
    let [a, b] = threefry2x32(key, [0, 2]);
    let [c, d] = threefry2x32(key, [1, 3]);
    [[a, c], [b, d]]
}
