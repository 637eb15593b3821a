//! Dispatches held back one step so that the next op can absorb them: a decode step records,
//! per layer, a residual add followed by the rms_norm of its sum (twice), the ropes of the
//! queries and of the keys back to back, and the two KV-cache writes back to back. Each such
//! dispatch is kept as a [`Deferred`] in the recorder instead of being recorded; the next op
//! either takes it and records one dispatch doing both (the norm reads the add's inputs, adds
//! and writes the sum too; two ropes or two window copies run as one grid), or anything else
//! the recorder does first records it unchanged ([`crate::queue::Recorder::flush`]: every
//! recording, submission and host wait flushes it, so nobody sees its output unwritten).
//! A fused dispatch computes exactly what the two plain ones compute, element for element.
//! A decode step of the default model: 426 dispatches → 306. Later: a SwiGLU program and a
//! one-row rms_norm are held back for the GEMV after them, which computes its x from them
//! ([`take_fused_x`], [`take_norm_x`]): 249 → 189.

use crate::kernels::{dispatch, grid, Bound, FX_MAX_K, GROUP, MAX_BINDINGS};
use crate::memory::VkMemory;
use crate::pipelines::{Shader, PUSH_BYTES};
use crate::queue::Recorder;
use mlx_arm_core::Result;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// `off` records every dispatch as it comes (comparisons, tests); anything else (default) holds
/// them back to fuse.
pub const FUSE_ENV: &str = "MLX_ARM_VULKAN_FUSE";

/// 0: not yet read from the environment, 1: on, 2: off.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether dispatches are held back to fuse ([`FUSE_ENV`], [`set_fusion`]).
pub fn fusion_enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var(FUSE_ENV).map_or(true, |v| v != "off");
            STATE.store(if on { 1 } else { 2 }, Ordering::Relaxed);
            on
        }
        s => s == 1,
    }
}

/// Turns the fusion of held-back dispatches on or off for the ops recorded from now on (the
/// results are the same either way; tests compare them).
pub fn set_fusion(on: bool) {
    STATE.store(if on { 1 } else { 2 }, Ordering::Relaxed);
}

/// What a held-back dispatch is, for the op that may absorb it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    /// A dense `a + b` of `n` elements (binary.comp): bindings a, b, out.
    Add { n: usize },
    /// One rope (rope.comp with `rows2` = 0).
    Rope,
    /// decode_heads' rope of queries and keys (rope.comp, both jobs), whose values are
    /// `v_rows` rows of the rope's dim in its first binding from element `v_off`: a KV-cache
    /// write of those keys and values may join it (rope_kv.comp).
    Heads { v_off: usize, v_rows: usize },
    /// A FusedOp program (fused.comp: bindings a0..a3, out; words n, n_in, n_steps, single,
    /// off[4], step[12]): a one-row GGUF GEMV of its output may compute it instead
    /// (ggml_mv_sub_fx.comp, programs of the SwiGLU's shape).
    Fused,
    /// An rms_norm of one row (norm.comp/norm_sg.comp: bindings x, w, b, y, out, sum; words
    /// rows, dim, off_x, off_w, w_step, eps, layer, off_b, b_step, add, off_y), after a residual
    /// add or not: a one-row GGUF GEMV of its output may compute it instead
    /// (ggml_mv_sub_nx.comp).
    Norm,
    /// A strided copy of an input into a window of an output (unary.comp's copy), with its
    /// job words for copy2.comp.
    Window { job: [u32; JOB_WORDS] },
}

/// copy2.comp's words for one job: n, ndim, input offset, output offset, then shape, input
/// strides and output strides over `WINDOW_AXES` axes.
pub(crate) const JOB_WORDS: usize = 4 + 3 * WINDOW_AXES;
/// The axes copy2.comp takes per job (two jobs fill the 128 bytes of push constants).
pub(crate) const WINDOW_AXES: usize = 4;

const PUSH_WORDS: usize = PUSH_BYTES as usize / 4;

/// A dispatch not yet recorded: everything `kernels::dispatch` needs, held by value.
pub(crate) struct Deferred {
    pub kind: Kind,
    shader: Shader,
    f16: bool,
    /// Bindings (unused slots repeat the first).
    bufs: [Arc<VkMemory>; MAX_BINDINGS],
    nbufs: usize,
    reads: usize,
    push: [u32; PUSH_WORDS],
    npush: usize,
    groups: [u32; 3],
}

impl Deferred {
    /// `bufs[..reads]` are read, the rest written (as `kernels::dispatch`); `bufs` is not empty.
    pub fn new(kind: Kind, shader: Shader, f16: bool, bufs: &[&Arc<VkMemory>], reads: usize, push: &[u32], groups: [u32; 3]) -> Deferred {
        let mut p = [0u32; PUSH_WORDS];
        let npush = push.len().min(PUSH_WORDS);
        p[..npush].copy_from_slice(&push[..npush]);
        let nbufs = bufs.len().min(MAX_BINDINGS);
        Deferred {
            kind,
            shader,
            f16,
            bufs: std::array::from_fn(|i| bufs[i.min(nbufs - 1)].clone()),
            nbufs,
            reads,
            push: p,
            npush,
            groups,
        }
    }

    fn mem(&self, i: usize) -> &Arc<VkMemory> {
        &self.bufs[i]
    }

    /// Whether this dispatch writes `m`.
    fn writes(&self, m: &Arc<VkMemory>) -> bool {
        self.bufs[self.reads..self.nbufs].iter().any(|w| Arc::ptr_eq(w, m))
    }

    /// Whether this dispatch reads `m`.
    fn reads(&self, m: &Arc<VkMemory>) -> bool {
        self.bufs[..self.reads].iter().any(|r| Arc::ptr_eq(r, m))
    }
}

/// Records `d` as the plain dispatch it stands for.
pub(crate) fn record(rec: &mut Recorder, d: Deferred) -> Result<()> {
    let refs: [&Arc<VkMemory>; MAX_BINDINGS] = std::array::from_fn(|i| &d.bufs[i]);
    dispatch(rec, d.shader, d.f16, &refs[..d.nbufs], d.reads, &d.push[..d.npush], d.groups)
}

/// The held-back add whose output is `x` (`n` elements from element 0 of `mem`), taken out of
/// the recorder: its inputs (a, b), bound, and its output memory. `None`: no such add (it
/// stays held back).
pub(crate) fn take_add(rec: &mut Recorder, mem: &Arc<VkMemory>, n: usize, f16: bool) -> Option<(Bound, Bound, Arc<VkMemory>)> {
    let p = rec.pending()?;
    let ok = p.kind == (Kind::Add { n }) && p.f16 == f16 && Arc::ptr_eq(p.mem(2), mem);
    if !ok {
        return None;
    }
    let p = rec.take_pending()?;
    let a = Bound { mem: p.mem(0).clone(), off: p.push[2] as usize };
    let b = Bound { mem: p.mem(1).clone(), off: p.push[3] as usize };
    Some((a, b, p.mem(2).clone()))
}

/// rope.comp's push words that two ropes in one dispatch must share (all but rows, per_batch,
/// the input offset and the second job's words).
const ROPE_SHARED: [usize; 13] = [1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
/// rope.comp's words of the second job: rows2, per_batch2, off_x2.
const ROPE_SECOND: usize = 16;

/// A rope (bindings x, offsets, freqs, x again, out, out again; `push` with rows2 = 0) of
/// `rows` rows of `per_row` invocations: one dispatch with the held-back rope when that one
/// rotates with the same parameters and does not write this one's input; otherwise held back.
pub(crate) fn rope(rec: &mut Recorder, f16: bool, bufs: [&Arc<VkMemory>; 6], push: &[u32; 19], per_row: usize) -> Result<()> {
    let pairs = rec.pending().is_some_and(|p| {
        let same_offsets = p.push[14] != 0 || Arc::ptr_eq(p.mem(1), bufs[1]);
        let same_freqs = p.push[11] == 0 || Arc::ptr_eq(p.mem(2), bufs[2]);
        p.kind == Kind::Rope
            && p.f16 == f16
            && p.push[ROPE_SECOND] == 0
            && ROPE_SHARED.iter().all(|&i| p.push[i] == push[i])
            && same_offsets
            && same_freqs
            && !p.writes(bufs[0])
    });
    let rows = push[0] as usize;
    if !fusion_enabled() {
        return dispatch(rec, Shader::Rope, f16, &bufs, 4, push, grid((rows * per_row).div_ceil(GROUP as usize))?);
    }
    if pairs {
        if let Some(p) = rec.take_pending() {
            let mut words = [0u32; 19];
            words.copy_from_slice(&p.push[..19]);
            words[ROPE_SECOND..].copy_from_slice(&[push[0], push[4], push[5]]);
            let all = (p.push[0] as usize + rows) * per_row;
            let b = [p.mem(0), p.mem(1), p.mem(2), bufs[0], p.mem(4), bufs[4]];
            return dispatch(rec, Shader::Rope, f16, &b, 4, &words, grid(all.div_ceil(GROUP as usize))?);
        }
    }
    let groups = grid((rows * per_row).div_ceil(GROUP as usize))?;
    rec.defer(Deferred::new(Kind::Rope, Shader::Rope, f16, &bufs, 4, push, groups))
}

/// decode_heads' rope of queries and keys (bindings and words as [`rope`]'s, both jobs set),
/// with the values' heads `v_rows` rows from element `v_off` of `bufs[0]` (`None`: elsewhere):
/// held back where the values are there, so that the layer's KV-cache write can join it
/// ([`rope_kv`]); otherwise recorded.
pub(crate) fn heads(rec: &mut Recorder, f16: bool, bufs: [&Arc<VkMemory>; 6], push: &[u32; 19], invocations: usize, v: Option<(usize, usize)>) -> Result<()> {
    let groups = grid(invocations.div_ceil(GROUP as usize))?;
    match v.filter(|_| fusion_enabled()) {
        Some((v_off, v_rows)) => rec.defer(Deferred::new(Kind::Heads { v_off, v_rows }, Shader::Rope, f16, &bufs, 4, push, groups)),
        None => dispatch(rec, Shader::Rope, f16, &bufs, 4, push, groups),
    }
}

/// fused.comp's words: n, n_in, n_steps, single, off[4], step[12].
pub(crate) const FUSED_WORDS: usize = 20;

/// A FusedOp program's dispatch (fused.comp, `bufs` a0..a3 then the output): held back, so
/// that a one-row GGUF GEMV of its output can compute it ([`take_fused_x`]).
pub(crate) fn fused(rec: &mut Recorder, f16: bool, bufs: [&Arc<VkMemory>; 5], push: &[u32; FUSED_WORDS], groups: [u32; 3]) -> Result<()> {
    if !fusion_enabled() {
        return dispatch(rec, Shader::Fused, f16, &bufs, 4, push, groups);
    }
    rec.defer(Deferred::new(Kind::Fused, Shader::Fused, f16, &bufs, 4, push, groups))
}

/// The held-back FusedOp program whose output is `x` (from element 0 of `mem`, `n`
/// elements), taken out of the recorder when it has the SwiGLU's shape that
/// ggml_mv_sub_fx.comp computes (inputs g, u dense; r2 = f(g), r3 = h(g, r2), out = k(r3, u)).
/// `None`: no such program (it stays held back).
pub(crate) fn take_fused_x(rec: &mut Recorder, mem: &Arc<VkMemory>, off: usize, n: usize, f16: bool) -> Option<FusedX> {
    let p = rec.pending()?;
    let w = &p.push;
    // Step word: code (bits 0-7), binary (bit 8), first register (16-23), second (24-31).
    let shaped = w[1] == 2 && w[2] == 3 && w[3] == 0 && w[8] & 0xffff_ff00 == 0 && w[9] & 0xffff_ff00 == 0x0200_0100 && w[10] & 0xffff_ff00 == 0x0103_0100;
    if p.kind != Kind::Fused || !shaped || p.f16 != f16 || off != 0 || w[0] as usize != n || !Arc::ptr_eq(p.mem(4), mem) {
        return None;
    }
    let p = rec.take_pending()?;
    let words = [p.push[4], p.push[5], p.push[8] & 0xff, p.push[9] & 0xff, p.push[10] & 0xff];
    Some(FusedX { inputs: [p.mem(0).clone(), p.mem(1).clone()], out: p.mem(4).clone(), words })
}

/// A SwiGLU-shaped program taken by [`take_fused_x`].
pub(crate) struct FusedX {
    /// g and u.
    pub inputs: [Arc<VkMemory>; 2],
    /// The program's output, which the GEMV stores too.
    pub out: Arc<VkMemory>,
    /// ggml_mv_sub_fx.comp's words after the GEMV's: g's and u's offsets, the codes of f, h, k.
    pub words: [u32; 5],
}

/// An rms_norm dispatch of one row (norm_sg.comp; bindings and words as `kernels::norm`'s):
/// held back, so that a one-row GGUF GEMV of its output can compute it ([`take_norm_x`]),
/// where that GEMV can (`dim` within its shared memory, subgroup sums); otherwise recorded.
pub(crate) fn norm(rec: &mut Recorder, f16: bool, bufs: [&Arc<VkMemory>; 6], push: &[u32; 11], groups: [u32; 3], sg: bool) -> Result<()> {
    let (rows, dim, layer) = (push[0], push[1] as usize, push[6]);
    if fusion_enabled() && sg && rows == 1 && layer == 0 && dim <= FX_MAX_K {
        return rec.defer(Deferred::new(Kind::Norm, Shader::Norm(sg), f16, &bufs, 4, push, groups));
    }
    dispatch(rec, Shader::Norm(sg), f16, &bufs, 4, push, groups)
}

/// The held-back one-row rms_norm whose output is `x` (from element 0 of `mem`, `n`
/// elements), taken out of the recorder. `None`: no such norm (it stays held back).
pub(crate) fn take_norm_x(rec: &mut Recorder, mem: &Arc<VkMemory>, off: usize, n: usize, f16: bool) -> Option<NormX> {
    let p = rec.pending()?;
    if p.kind != Kind::Norm || p.f16 != f16 || off != 0 || p.push[0] != 1 || p.push[1] as usize != n || !Arc::ptr_eq(p.mem(4), mem) {
        return None;
    }
    let p = rec.take_pending()?;
    let w = &p.push;
    Some(NormX {
        inputs: [p.mem(0).clone(), p.mem(3).clone(), p.mem(1).clone()],
        outs: [p.mem(4).clone(), p.mem(5).clone()],
        words: [w[2], w[10], w[3], w[4], w[5], w[9]],
    })
}

/// A norm taken by [`take_norm_x`].
pub(crate) struct NormX {
    /// x, y (the residual; x again without an add) and the norm's weight.
    pub inputs: [Arc<VkMemory>; 3],
    /// The norm's output and the sum's (the norm's output again without an add), which the
    /// GEMV stores too.
    pub outs: [Arc<VkMemory>; 2],
    /// ggml_mv_sub_nx.comp's words after the GEMV's: x's and y's offsets, the weight's offset
    /// and step, eps (bits), add.
    pub words: [u32; 6],
}

/// One cache buffer's window for [`rope_kv`]: the memory (a dense buffer held by the op), the
/// window's first element and the elements between its rows.
pub(crate) struct CacheWindow<'a> {
    pub mem: &'a Arc<VkMemory>,
    pub first: usize,
    pub row: usize,
}

/// A KV-cache write of keys `k` (memory, first element, rows of `d`) and values `v` (the same)
/// into `kc` and `vc`: when the held-back dispatch is the [`heads`] rope that makes
/// these keys (its second output, from element 0) and whose values these are, one rope_kv.comp
/// dispatch does both and `true` comes back; otherwise nothing is recorded (`false`).
pub(crate) fn rope_kv(rec: &mut Recorder, f16: bool, d: usize, k: (&Arc<VkMemory>, usize, usize), v: (&Arc<VkMemory>, usize, usize), kc: CacheWindow, vc: CacheWindow) -> Result<bool> {
    let Some(p) = rec.pending() else { return Ok(false) };
    let Kind::Heads { v_off, v_rows } = p.kind else { return Ok(false) };
    let ok = p.f16 == f16
        && d == p.push[1] as usize
        && Arc::ptr_eq(p.mem(5), k.0)
        && k.1 == 0
        && k.2 == p.push[ROPE_SECOND] as usize
        && Arc::ptr_eq(p.mem(0), v.0)
        && (v.1, v.2) == (v_off, v_rows)
        && !Arc::ptr_eq(kc.mem, vc.mem)
        && [kc.mem, vc.mem].iter().all(|m| !p.reads(m) && !p.writes(m));
    if !ok {
        return Ok(false);
    }
    let Some(p) = rec.take_pending() else { return Ok(false) };
    let (rows, dim, dims, rows2) = (p.push[0] as usize, p.push[1] as usize, p.push[2] as usize, p.push[ROPE_SECOND] as usize);
    let per_row = dims / 2 + (dim - dims);
    let words: [u32; 25] = std::array::from_fn(|i| match i {
        0..=18 => p.push[i],
        19 => kc.first as u32,
        20 => kc.row as u32,
        21 => vc.first as u32,
        22 => vc.row as u32,
        23 => v_off as u32,
        _ => v_rows as u32,
    });
    let all = (rows + rows2) * per_row + v_rows * dim;
    let b = [p.mem(0), p.mem(1), p.mem(2), p.mem(3), p.mem(4), p.mem(5), kc.mem, vc.mem];
    dispatch(rec, Shader::RopeKv, f16, &b, 4, &words, grid(all.div_ceil(GROUP as usize))?)?;
    Ok(true)
}

/// A window copy `input` → `out` given as unary.comp's plain dispatch (`push`, `groups`) and,
/// where it has at most `WINDOW_AXES` axes, as a copy2.comp `job`: one dispatch with the
/// held-back window copy when neither depends on the other; otherwise held back (or, without
/// a job, recorded at once).
pub(crate) fn window(rec: &mut Recorder, f16: bool, input: &Arc<VkMemory>, out: &Arc<VkMemory>, push: &[u32], groups: [u32; 3], job: Option<[u32; JOB_WORDS]>) -> Result<()> {
    let Some(job) = job.filter(|_| fusion_enabled()) else {
        return dispatch(rec, Shader::Unary, f16, &[input, out], 1, push, groups);
    };
    let first = rec.pending().and_then(|p| match p.kind {
        // Independent: this one neither reads nor writes what the first writes, nor writes
        // what it reads.
        Kind::Window { job: j } if p.f16 == f16 && !p.writes(input) && !p.writes(out) && !p.reads(out) => Some(j),
        _ => None,
    });
    if let Some(j) = first {
        if let Some(p) = rec.take_pending() {
            let mut words = [0u32; 2 * JOB_WORDS];
            words[..JOB_WORDS].copy_from_slice(&j);
            words[JOB_WORDS..].copy_from_slice(&job);
            let all = j[0] as usize + job[0] as usize;
            let b = [p.mem(0), input, p.mem(1), out];
            return dispatch(rec, Shader::Copy2, f16, &b, 2, &words, grid(all.div_ceil(GROUP as usize))?);
        }
    }
    rec.defer(Deferred::new(Kind::Window { job }, Shader::Unary, f16, &[input, out], 1, push, groups))
}
