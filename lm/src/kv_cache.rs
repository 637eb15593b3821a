//! The key/value cache: per layer, one buffer for keys and one for values of shape
//! `(B, kv_heads, capacity, head_dim)`. New positions are written in place by one
//! `kv_write` node per layer for both buffers (`slice_update` and `slice` of each, fused; the
//! core writes into the old buffer when the op holds the only reference, so a decode step
//! copies nothing), and the buffer grows `step` positions at a time, so the
//! one copy that growing costs happens once per `step` tokens, not per token.
//!
//! A grown-out buffer is freed when the step that copied it has run; the core's buffer cache
//! would keep it for reuse, but no later request asks for that size again (each growth is
//! larger), so over a long generation the cache would hold every earlier capacity — as much
//! memory again as the cache itself. [`KvCache::release_outgrown`] hands them back.
//!
//! A sliding-window layer (Gemma 2/3's local layers) keeps only what its queries can still
//! see: when its buffer fills, the new buffer starts at the oldest position the next query
//! needs (`window − 1` back), so its memory stays near `window + step` positions however long
//! the context grows, and the keys stay in position order (attention needs no reordering).

use alloc::vec::Vec;

use mlx_arm_core::ops::fast::lm::kv_write;
use mlx_arm_core::{ops, Array, Error, Result};

/// Positions added to a layer's buffers each time they fill up (mlx-lm uses 256 too).
pub const DEFAULT_STEP: usize = 256;

#[derive(Clone, Debug, Default)]
struct LayerCache {
    keys: Option<Array>,
    values: Option<Array>,
    /// The position of the buffers' first row (above 0 once a sliding window dropped some).
    first: usize,
    /// Queries see only the last `window` positions (their own included).
    window: Option<usize>,
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

/// What [`KvCache::update`] returns for a layer: keys and values `(B, kv_heads, S, head_dim)`
/// of the positions `first..offset + T`.
pub struct LayerKv {
    /// The keys.
    pub keys: Array,
    /// The values.
    pub values: Array,
    /// The position of the first row (0 unless a sliding window dropped older ones).
    pub first: usize,
}

impl KvCache {
    /// An empty cache for `n_layers` full-attention layers growing `step` positions at a time.
    pub fn new(n_layers: usize, step: usize) -> KvCache {
        KvCache::with_windows(&alloc::vec![None; n_layers], step)
    }

    /// An empty cache with one layer per entry of `windows`: `Some(w)` for a sliding-window
    /// layer whose queries see the last `w` positions, `None` for a full-attention layer.
    pub fn with_windows(windows: &[Option<usize>], step: usize) -> KvCache {
        let layers = windows.iter().map(|&window| LayerCache { window, ..Default::default() }).collect();
        KvCache { layers, offset: 0, step: step.max(1), reserved: 0, growths: 0, released: 0 }
    }

    /// Positions already stored (the next token's position).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Forgets every position (a new conversation), keeping the buffers for reuse.
    pub fn reset(&mut self) {
        self.offset = 0;
        for l in &mut self.layers {
            l.first = 0;
        }
    }

    /// Drops the newest positions so that `len` remain (`len` ≤ offset).
    pub fn truncate(&mut self, len: usize) {
        self.offset = self.offset.min(len);
    }

    /// Bytes held by the buffers.
    pub fn nbytes(&self) -> usize {
        self.layers.iter().flat_map(|l| [&l.keys, &l.values]).flatten().map(|a| a.nbytes()).sum()
    }

    /// Makes the next growth of each layer's buffers room for `positions` (not rounded up to
    /// the step; a sliding-window layer at most its window and a step), so that a generation
    /// whose length is known grows once instead of every `step` tokens: each growth copies the
    /// cache, and the outgrown buffers cost memory until the step has run. Buffers already that
    /// large are untouched.
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
    /// returns the keys and values its queries may need: every position so far, or for a
    /// sliding-window layer at least the last `window − 1` before the new ones.
    pub fn update(&mut self, layer: usize, k: &Array, v: &Array) -> Result<LayerKv> {
        let (offset, step, reserved) = (self.offset, self.step, self.reserved);
        let l = self
            .layers
            .get_mut(layer)
            .ok_or_else(|| Error::invalid("kv_cache", alloc::format!("layer {layer} is out of range")))?;
        if k.ndim() != 4 || v.ndim() != 4 {
            return Err(Error::invalid("kv_cache", "keys and values must be (B, heads, T, head_dim)"));
        }
        if offset < l.first {
            return Err(Error::invalid(
                "kv_cache",
                alloc::format!("position {offset} was dropped by layer {layer}'s sliding window (it keeps {} on)", l.first),
            ));
        }
        let t = k.shape()[2];
        // Where a new buffer would start, and how many positions it needs room for.
        let first = match l.window {
            Some(w) => l.first.max((offset + 1).saturating_sub(w)),
            None => l.first,
        };
        // Room for what is needed now and for the reserved positions — for a sliding-window
        // layer no more than the window and a step (it moves on before it needs more).
        let wanted = reserved.saturating_sub(first);
        let wanted = l.window.map_or(wanted, |w| wanted.min(w + step));
        let capacity = (offset + t - first).div_ceil(step) * step;
        let plan = Plan { old_first: l.first, first, offset, end: offset + t, capacity: capacity.max(wanted) };
        // Both buffers move together (they hold the same rows), so one row offset serves both.
        let fits = fits(&l.keys, k, &plan) && fits(&l.values, v, &plan);
        let moved = !fits && (l.keys.is_some() || l.values.is_some());
        let (kbuf, vbuf) = (buffer(&mut l.keys, k, &plan, fits)?, buffer(&mut l.values, v, &plan, fits)?);
        if !fits {
            l.first = first;
        }
        let as_buf = |x: &Array, buf: &Array| if x.dtype() == buf.dtype() { Ok(x.clone()) } else { ops::astype(x, buf.dtype()) };
        let (kx, vx) = (as_buf(k, &kbuf)?, as_buf(v, &vbuf)?);
        // One node writes both (in place: the cache's handles are given up here, so the op
        // holds each buffer alone once the previous step has run).
        let [kb, vb, keys, values] = kv_write(&kbuf, &vbuf, &kx, &vx, offset - l.first)?;
        drop((kbuf, vbuf));
        (l.keys, l.values) = (Some(kb), Some(vb));
        self.growths += 2 * u64::from(moved);
        Ok(LayerKv { keys, values, first: l.first })
    }
}

/// Where one layer's buffers stand and where they go if they must be replaced.
struct Plan {
    /// Position of the current buffer's first row.
    old_first: usize,
    /// Position of a new buffer's first row, and its capacity.
    first: usize,
    capacity: usize,
    /// The positions being written.
    offset: usize,
    end: usize,
}

/// Whether `slot`'s buffer holds `x`'s heads and dtype and has room up to `plan.end`.
fn fits(slot: &Option<Array>, x: &Array, plan: &Plan) -> bool {
    let (b, h, d) = (x.shape()[0], x.shape()[1], x.shape()[3]);
    slot.as_ref().is_some_and(|a| {
        a.shape()[2] >= plan.end - plan.old_first
            && a.shape()[0] == b
            && a.shape()[1] == h
            && a.shape()[3] == d
            && a.dtype() == x.dtype()
    })
}

/// Takes `slot`'s buffer to write `x` into: the buffer itself where it `fits`, else a new one
/// of the plan's capacity from `plan.first` holding the stored positions from there.
fn buffer(slot: &mut Option<Array>, x: &Array, plan: &Plan, fits: bool) -> Result<Array> {
    if fits {
        return slot.take().ok_or_else(|| Error::runtime("kv_cache", "cache buffer missing"));
    }
    let (b, h, d) = (x.shape()[0], x.shape()[1], x.shape()[3]);
    let fresh = zeroed(&[b, h, plan.capacity, d], x.dtype())?;
    let kept_rows = plan.offset - plan.first;
    Ok(match slot.take() {
        // Keep the stored positions from `first`; everything past `offset` is about to be
        // overwritten.
        Some(old) if kept_rows > 0 && old.shape()[2] >= plan.offset - plan.old_first && old.dtype() == x.dtype() => {
            let from = (plan.first - plan.old_first) as isize;
            let kept = ops::slice(&old, &[0, 0, from, 0], &[b as isize, h as isize, from + kept_rows as isize, d as isize], &[1, 1, 1, 1])?;
            ops::slice_update(&fresh, &kept, &[0, 0, 0, 0], &[b as isize, h as isize, kept_rows as isize, d as isize], &[1, 1, 1, 1])?
        }
        _ => fresh,
    })
}

/// A zeroed buffer of `shape` for the cache to write into. On the CPU it is a fresh zeroed
/// block ([`Buffer::new_pages`]) never written as a whole: where the allocator maps such
/// blocks by themselves (the `mlx-arm` CLI's), the positions not written yet cost no memory,
/// so a cache reserved for a long reply holds only what it has stored (a lazy `zeros` is
/// copied into place, touching every page, and a block from the buffer cache is cleared).
/// Elsewhere it is `zeros`, made where the buffers live.
///
/// [`Buffer::new_pages`]: mlx_arm_core::buffer::Buffer::new_pages
fn zeroed(shape: &[usize], dtype: mlx_arm_core::DType) -> Result<Array> {
    if mlx_arm_core::device::default_device() != mlx_arm_core::Device::CPU {
        return ops::zeros(shape, dtype);
    }
    let bytes = shape
        .iter()
        .try_fold(dtype.size(), |n, &d| n.checked_mul(d))
        .ok_or_else(|| Error::invalid("kv_cache", "the cache's buffer size overflows"))?;
    Array::from_buffer(mlx_arm_core::buffer::Buffer::new_pages(bytes, "kv_cache")?, 0, shape, dtype)
}
