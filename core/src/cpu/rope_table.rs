//! The cos/sin table of `fast.rope`, kept for the last arguments it was built for.
//!
//! A decode step applies RoPE twice per layer (queries and keys) at one position with one set
//! of frequencies, so every call of a step needs the same table; building it costs a pair of
//! `libm` sin/cos per frequency (and an `exp` each when the frequencies come from `base`),
//! which is most of a small call. The last table is shared (an `Arc`) while its key matches.

use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::dtype::DType;

/// What a table depends on: the element type it is rounded to, the frequencies (from `base`
/// or an explicit `freqs` array, as f32 bits), the position scale, and the positions.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub dtype: DType,
    pub freqs: Freqs,
    pub scale_bits: u32,
    pub offsets: Vec<i32>,
    pub t_len: usize,
}

#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Freqs {
    /// `half` frequencies `base^(-j/half)`.
    Base { base_bits: u32, half: usize },
    /// The divisors given (f32 bits).
    Given(Vec<u32>),
}

/// Tables above this many values (cos and sin each count; long prefills) are not kept.
const KEEP_MAX: usize = 1 << 16;

static LAST: spin::Mutex<Option<(Key, Arc<Vec<f32>>)>> = spin::Mutex::new(None);

/// The table for `key`: the kept one when it matches, else `build()` (kept if small).
pub(crate) fn get(key: Key, build: impl FnOnce() -> Vec<f32>) -> Arc<Vec<f32>> {
    if let Some((k, t)) = LAST.lock().as_ref() {
        if *k == key {
            return t.clone();
        }
    }
    let table = Arc::new(build());
    if table.len() <= KEEP_MAX {
        *LAST.lock() = Some((key, table.clone()));
    }
    table
}
