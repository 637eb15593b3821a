//! The key/value cache: per layer, one buffer for keys and one for values of shape
//! `(B, kv_heads, capacity, head_dim)`. New positions are written in place with
//! `slice_update` (the core donates the old buffer when the cache holds the only reference,
//! so a decode step copies nothing), and the buffer grows `step` positions at a time, so the
//! one copy that growing costs happens once per `step` tokens, not per token.

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
}

impl KvCache {
    /// An empty cache for `n_layers` layers growing `step` positions at a time.
    pub fn new(n_layers: usize, step: usize) -> KvCache {
        KvCache { layers: alloc::vec![LayerCache::default(); n_layers], offset: 0, step: step.max(1) }
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
        let keys = write(&mut l.keys, k, offset, step)?;
        let values = write(&mut l.values, v, offset, step)?;
        Ok((keys, values))
    }
}

/// Writes `x` into `slot` at `offset` along axis 2, growing it if needed; returns the filled part.
fn write(slot: &mut Option<Array>, x: &Array, offset: usize, step: usize) -> Result<Array> {
    if x.ndim() != 4 {
        return Err(Error::invalid("kv_cache", "keys and values must be (B, heads, T, head_dim)"));
    }
    let (b, h, t, d) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
    let end = offset + t;
    let fits = slot.as_ref().is_some_and(|a| {
        a.shape()[2] >= end && a.shape()[0] == b && a.shape()[1] == h && a.shape()[3] == d && a.dtype() == x.dtype()
    });
    if !fits {
        let capacity = end.div_ceil(step) * step;
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
    Ok(filled)
}

