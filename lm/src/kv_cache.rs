//! The key/value cache: per layer, one buffer for keys and one for values of shape
//! `(B, kv_heads, capacity, head_dim)`. New positions are written in place with
//! `slice_update` (the core donates the old buffer when the cache holds the only reference,
//! so a decode step copies nothing), and the buffer grows `step` positions at a time, so the
//! one copy that growing costs happens once per `step` tokens, not per token.
//!
//! A grown-out buffer is freed when the step that copied it has run; the core's buffer cache
//! would keep it for reuse, but no later request asks for that size again (each growth is
//! larger), so over a long generation the cache would hold every earlier capacity — as much
//! memory again as the cache itself. [`KvCache::release_outgrown`] hands them back.

use alloc::vec::Vec;

use mlx_arm_core::{ops, Array, Error, Result};

/// Positions added to a layer's buffers each time they fill up (mlx-lm uses 256 too).
pub const DEFAULT_STEP: usize = 256;

#[derive(Clone, Debug, Default)]
struct LayerCache {
    keys: Option<Array>,
    values: Option<Array>,
}

/// Keys and values of every layer for the positions seen so far.
#[derive(Clone, Debug)]
pub struct KvCache {
    layers: Vec<LayerCache>,
    offset: usize,
    step: usize,
    /// Positions the next growth makes room for at least ([`KvCache::reserve`]).
    reserved: usize,
    /// Buffers replaced by larger ones so far, and how many of those were handed back.
    growths: u64,
    released: u64,
}

impl KvCache {
    /// An empty cache for `n_layers` layers growing `step` positions at a time.
    pub fn new(n_layers: usize, step: usize) -> KvCache {
        KvCache { layers: alloc::vec![LayerCache::default(); n_layers], offset: 0, step: step.max(1), reserved: 0, growths: 0, released: 0 }
    }

    /// Positions already stored (the next token's position).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Forgets every position (a new conversation), keeping the buffers for reuse.
    pub fn reset(&mut self) {
        self.offset = 0;
    }

    /// Drops the newest positions so that `len` remain (`len` ≤ offset).
    pub fn truncate(&mut self, len: usize) {
        self.offset = self.offset.min(len);
    }

    /// Bytes held by the buffers.
    pub fn nbytes(&self) -> usize {
        self.layers.iter().flat_map(|l| [&l.keys, &l.values]).flatten().map(|a| a.nbytes()).sum()
    }

    /// Makes the next growth of each layer's buffers room for `positions` at least (rounded up
    /// to the step), so that a generation whose length is known grows once instead of every
    /// `step` tokens: each growth copies the cache, and the outgrown buffers cost memory until
    /// the step has run. Buffers already that large are untouched.
    pub fn reserve(&mut self, positions: usize) {
        self.reserved = positions;
    }

    /// How many times a layer's buffer has been replaced by a larger one. A step built when
    /// this was `g` frees the replaced buffers when it runs; then pass `g` to
    /// [`KvCache::release_outgrown`].
    pub fn growths(&self) -> u64 {
        self.growths
    }

    /// Called once a step built when [`KvCache::growths`] was `built_at` has been evaluated:
    /// if that step grew the cache, the buffers it outgrew sit in the core's buffer cache, and
    /// are returned to the system (with the rest of that cache, as mlx-lm clears it every
    /// 256 tokens) so that peak memory stays the weights plus one cache.
    pub fn release_outgrown(&mut self, built_at: u64) {
        if built_at > self.released {
            mlx_arm_core::buffer::clear_cache();
            self.released = built_at;
        }
    }

    /// Marks `t` more positions as stored; called once per forward pass after every layer
    /// has written its keys and values at [`KvCache::offset`].
    pub fn advance(&mut self, t: usize) {
        self.offset += t;
    }

    /// Writes `k`, `v` (`(B, kv_heads, T, head_dim)`) of `layer` at the current offset and
    /// returns all keys and values so far, `(B, kv_heads, offset + T, head_dim)`.
    pub fn update(&mut self, layer: usize, k: &Array, v: &Array) -> Result<(Array, Array)> {
        let offset = self.offset;
        let step = self.step;
        let l = self
            .layers
            .get_mut(layer)
            .ok_or_else(|| Error::invalid("kv_cache", alloc::format!("layer {layer} is out of range")))?;
        let room = self.reserved;
        let (keys, grew_k) = write(&mut l.keys, k, offset, step, room)?;
        let (values, grew_v) = write(&mut l.values, v, offset, step, room)?;
        self.growths += u64::from(grew_k) + u64::from(grew_v);
        Ok((keys, values))
    }
}

/// Writes `x` into `slot` at `offset` along axis 2, growing it if needed; returns the filled
/// part and whether an existing buffer was replaced by a larger one. A new buffer has room for
/// `room` positions at least.
fn write(slot: &mut Option<Array>, x: &Array, offset: usize, step: usize, room: usize) -> Result<(Array, bool)> {
    if x.ndim() != 4 {
        return Err(Error::invalid("kv_cache", "keys and values must be (B, heads, T, head_dim)"));
    }
    let (b, h, t, d) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
    let end = offset + t;
    let fits = slot.as_ref().is_some_and(|a| {
        a.shape()[2] >= end && a.shape()[0] == b && a.shape()[1] == h && a.shape()[3] == d && a.dtype() == x.dtype()
    });
    let replaced = !fits && slot.is_some();
    if !fits {
        let capacity = end.max(room).div_ceil(step) * step;
        let fresh = ops::zeros(&[b, h, capacity, d], x.dtype())?;
        let grown = match slot.take() {
            // Keep the stored positions; everything past `offset` is about to be overwritten.
            Some(old) if offset > 0 && old.shape()[2] >= offset && old.dtype() == x.dtype() => {
                let kept = ops::slice(&old, &[0, 0, 0, 0], &[b as isize, h as isize, offset as isize, d as isize], &[1, 1, 1, 1])?;
                ops::slice_update(&fresh, &kept, &[0, 0, 0, 0], &[b as isize, h as isize, offset as isize, d as isize], &[1, 1, 1, 1])?
            }
            _ => fresh,
        };
        *slot = Some(grown);
    }
    let buf = slot.take().ok_or_else(|| Error::runtime("kv_cache", "cache buffer missing"))?;
    let dt = if x.dtype() == buf.dtype() { x.clone() } else { ops::astype(x, buf.dtype())? };
    let (b, h, d) = (b as isize, h as isize, d as isize);
    let updated = ops::slice_update(&buf, &dt, &[0, 0, offset as isize, 0], &[b, h, end as isize, d], &[1, 1, 1, 1])?;
    drop(buf);
    let filled = ops::slice(&updated, &[0, 0, 0, 0], &[b, h, end as isize, d], &[1, 1, 1, 1])?;
    *slot = Some(updated);
    Ok((filled, replaced))
}

