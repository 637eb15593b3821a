//! The language models' fused decode-step primitives (core's `fast::lm`): `add_rms_norm` (the
//! residual add and the next RMSNorm, two outputs) and `decode_heads` (queries, keys and values
//! as heads, queries and keys rotated). Each is one dispatch of a shader the unfused ops already
//! use: norm.comp in its residual mode (reads both summands, writes the sum and its norm) and
//! rope.comp with two jobs (the queries' and the keys'); the values' heads are a view. So they
//! compute exactly what the GPU computes for the unfused ops (which `crate::defer` folds into
//! the same two dispatches), with one graph node and one backend call where those take two
//! and five. `kv_write` (a layer's keys and values written into its two KV-cache buffers, and
//! the filled rows of each as views) writes each buffer in place where the op holds it alone
//! (the cache hands its buffers over every step), as `slice_update` does: one copy2.comp
//! dispatch for both windows (the two window copies pair up in `crate::defer`), one node
//! where the unfused ops take four; right after `decode_heads` (a decode step) the rope is held
//! back and the two window writes join it in one rope_kv.comp dispatch (`defer::rope_kv`). Layouts these do not take return `None` (the CPU kernels
//! run them).

use crate::defer;
use crate::kernels::{self, bind, feature_step, fits_u32, grid, output, row_major, variant, RopeParams};
use crate::memory::{self, VkMemory};
use crate::queue::{self, Recorder};
use mlx_arm_core::array::Data;
use mlx_arm_core::backend::OutMeta;
use mlx_arm_core::{Array, DType, Error, Result};
use std::sync::Arc;

/// `[x + r, rms_norm(x + r, w, eps)]` over the last axis, `x` and `r` dense of one shape, `w`
/// a vector of the last axis (or a scalar).
pub(crate) fn add_rms_norm(rec: &mut Recorder, x: (&Data, &[usize]), r: (&Data, &[usize]), w: (&Data, &[usize]), eps: f32, dt: DType) -> Result<Option<[Data; 2]>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let shape = x.1;
    let dim = *shape.last().unwrap_or(&0);
    let n: usize = shape.iter().product();
    let Some(w_step) = feature_step(w, dim) else { return Ok(None) };
    let dense = |d: &(&Data, &[usize])| d.1 == shape && d.0.is_row_contiguous(shape) && fits_u32(d.0.buf.len() / dt.size() + 1);
    if dim == 0 || !fits_u32(n) || !dense(&x) || !dense(&r) {
        return Ok(None);
    }
    let (a, b) = (bind(rec, x.0, x.1, dt.size())?, bind(rec, r.0, r.1, dt.size())?);
    let bw = bind(rec, w.0, w.1, dt.size())?;
    let (sm, sum) = output(rec, shape, dt.size(), "add_rms_norm")?;
    let (om, normed) = output(rec, shape, dt.size(), "add_rms_norm")?;
    if n > 0 {
        let rows = n / dim;
        // norm.comp's words with the residual flag (word 9) and the second summand's offset.
        let push = [rows as u32, dim as u32, a.off as u32, bw.off as u32, w_step as u32, eps.to_bits(), 0, bw.off as u32, 0, 1, b.off as u32];
        let sg = rec.ctx().info.subgroup.is_some();
        // One row (a decode step's) is held back for the GEMV after it (crate::defer::norm).
        crate::defer::norm(rec, f16, [&a.mem, &bw.mem, &bw.mem, &b.mem, &om, &sm], &push, grid(rows)?, sg)?;
    }
    Ok(Some([sum, normed]))
}

/// `q`, `k`, `v` (`(B, 1, H·head_dim)` each) as heads `(B, H, 1, head_dim)`, `q` and `k`
/// rotated by rope.comp in one dispatch (int32 `offset`, optional float32 `freqs`).
pub(crate) fn decode_heads(
    rec: &mut Recorder,
    qkv: [(&Data, &[usize]); 3],
    offset: (&Data, &[usize]),
    freqs: Option<(&Data, &[usize])>,
    head_dim: usize,
    rp: &RopeParams,
    dt: DType,
) -> Result<Option<[Data; 3]>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let mut heads: [Vec<usize>; 3] = Default::default();
    for (h, (_, s)) in heads.iter_mut().zip(qkv) {
        let [b, 1, f] = *s else { return Ok(None) };
        if head_dim == 0 || f % head_dim != 0 {
            return Ok(None);
        }
        *h = vec![b, f / head_dim, 1, head_dim];
    }
    // The values' heads: a view of a dense input, else a dense copy viewed so.
    let v = match kernels::dense(rec, qkv[2].0, qkv[2].1, dt)? {
        Some(d) => Data { strides: row_major(&heads[2]), ..d },
        None => return Ok(None),
    };
    let mut jobs = Vec::with_capacity(2);
    for (x, h) in qkv[..2].iter().zip(&heads) {
        // A dense (B, 1, H·d) array is its (B, H, 1, d) heads in row-major order.
        let Some(xd) = kernels::dense(rec, x.0, x.1, dt)? else { return Ok(None) };
        let xd = Data { strides: row_major(h), ..xd };
        match kernels::rope_job(rec, (&xd, h), offset, freqs, rp, dt)? {
            Some(j) => jobs.push(j),
            None => return Ok(None),
        }
    }
    let (Some(kj), Some(qj)) = (jobs.pop(), jobs.pop()) else { return Ok(None) };
    // One dispatch: the keys are the queries' second job (every other word is shared: one
    // offset, one set of frequencies, rows of one length).
    let mut push = qj.push;
    push[16..].copy_from_slice(&[kj.push[0], kj.push[4], kj.push[5]]);
    let all = (qj.push[0] as usize + kj.push[0] as usize) * qj.per_row;
    if all > 0 {
        let b = [&qj.bufs[0], &qj.bufs[1], &qj.bufs[2], &kj.bufs[0], &qj.bufs[4], &kj.bufs[4]];
        // The values' rows where they share the queries' memory (one Q/K/V output): the
        // layer's KV-cache write may then join this dispatch (defer::rope_kv).
        let bv = bind(rec, &v, &heads[2], dt.size())?;
        let v_rows = heads[2][0] * heads[2][1];
        let joined = Arc::ptr_eq(&bv.mem, &qj.bufs[0]) && fits_u32(bv.off + v_rows * head_dim);
        defer::heads(rec, f16, b, &push, all, joined.then_some((bv.off, v_rows)))?;
    }
    Ok(Some([qj.out, kj.out, v]))
}

/// `kv_write` on `inputs` = key buffer, value buffer `(B, H, C, D)`, keys, values `(B, H, T, D)`
/// (core checked the shapes and that each pair shares a dtype): each buffer with rows
/// `at..at + T` written, then views of its rows `..at + T` over the same memory (the CPU
/// kernel's outputs). A buffer held by the op alone is written in place; another one is copied
/// first. `None` (inputs untouched): a layout the shaders do not take, for the CPU kernel.
pub(crate) fn kv_write(inputs: &mut Vec<Array>, at: usize, outputs: &[OutMeta]) -> Result<Option<Vec<Data>>> {
    const OP: &str = "kv_write";
    let ([kb, vb, k, v], 4) = (inputs.as_slice(), outputs.len()) else { return Ok(None) };
    let start = [0, 0, at as isize, 0];
    let step = [1isize; 4];
    let upd = [(k.data_on_device()?, k.shape().to_vec()), (v.data_on_device()?, v.shape().to_vec())];
    // Every check before the first donation: once a buffer is given up, the op must finish here.
    for ((buf, x), (u, us)) in [(kb, k), (vb, v)].into_iter().zip(&upd) {
        let (shape, dt) = (buf.shape(), buf.dtype());
        let src = buf.data_on_device()?;
        let ok = buf.ndim() == 4 && x.dtype() == dt && kernels::unary_fits(&src, shape, &row_major(shape), dt);
        if !ok || !kernels::slice_update_fits(shape, (u, us), &start, &step, dt) {
            return Ok(None);
        }
    }
    // The buffers' memory: donated where the op holds the buffer alone, else a dense copy
    // (recorded below, before the windows, so that the two window writes stay adjacent).
    enum Target {
        Mine(Arc<VkMemory>),
        Copy(Data),
    }
    let mut targets = Vec::with_capacity(2);
    for buf in inputs.drain(..2) {
        let (shape, dt) = (buf.shape().to_vec(), buf.dtype());
        let ours = buf.data_on_device()?.buf.device_memory().is_some_and(|m| m.as_any().is::<memory::Handle>());
        let donated = if ours { buf.donate_device(shape.iter().product::<usize>() * dt.size()) } else { Err(buf) };
        let t = match donated {
            Ok(d) => Target::Mine(memory::of_buffer(&d.buf).ok_or_else(|| Error::runtime("vulkan", "A donated GPU buffer lost its memory."))?),
            Err(buf) => Target::Copy(buf.data_on_device()?),
        };
        targets.push((t, shape, dt));
    }
    let mut rec = queue::recorder()?;
    let mut mems = Vec::with_capacity(2);
    for (t, shape, dt) in targets {
        let mem = match t {
            Target::Mine(mem) => mem,
            Target::Copy(src) => {
                let (om, _) = output(&rec, &shape, dt.size(), OP)?;
                kernels::unary_into(&mut rec, 0, &src, &shape, dt, (&om, 0, &row_major(&shape)))?;
                om
            }
        };
        mems.push((mem, shape, dt));
    }
    let mut outs = Vec::with_capacity(4);
    if rope_kv(&mut rec, &mems, &upd, at)? {
        for (mem, shape, dt) in &mems {
            outs.push(kernels::dense_over(mem, shape, *dt)?);
        }
    } else {
        for ((mem, shape, dt), (u, us)) in mems.iter().zip(&upd) {
            outs.push(kernels::slice_update_into(&mut rec, mem, shape, (u, us), &start, &step, *dt)?);
        }
    }
    // Rows `..at + T` of a dense buffer: its first element and strides.
    for i in 0..2 {
        outs.push(outs[i].clone());
    }
    Ok(Some(outs))
}

/// The window writes of [`kv_write`] joined to the held-back rope that made the keys
/// (`defer::rope_kv`), where a decode step's layout allows: one position (`T` = 1), keys and
/// values dense `(B, H, 1, D)` with the rope's `D`, caches dense `(B, H, C, D)`. `false`:
/// nothing recorded, the caller writes the windows itself.
fn rope_kv(rec: &mut Recorder, mems: &[(Arc<VkMemory>, Vec<usize>, DType)], upd: &[(Data, Vec<usize>); 2], at: usize) -> Result<bool> {
    let [(kc, ks, dt), (vc, vs, vdt)] = mems else { return Ok(false) };
    let Some(f16) = variant(*dt) else { return Ok(false) };
    let mut parts = Vec::with_capacity(2);
    for ((u, us), cs) in upd.iter().zip([ks, vs]) {
        let ([b, h, 1, d], [cb, ch, c, cd]) = (us.as_slice(), cs.as_slice()) else { return Ok(false) };
        if (b, h, d) != (cb, ch, cd) || !u.is_row_contiguous(us) || at >= *c {
            return Ok(false);
        }
        let bu = bind(rec, u, us, dt.size())?;
        parts.push((bu, b * h, at * d, c * d, *d));
    }
    let [(bk, k_rows, k_first, k_row, kd), (bv, v_rows, v_first, v_row, vd)] = parts.as_slice() else { return Ok(false) };
    if dt != vdt || kd != vd {
        return Ok(false);
    }
    let kw = defer::CacheWindow { mem: kc, first: *k_first, row: *k_row };
    let vw = defer::CacheWindow { mem: vc, first: *v_first, row: *v_row };
    defer::rope_kv(rec, f16, *kd, (&bk.mem, bk.off, *k_rows), (&bv.mem, bv.off, *v_rows), kw, vw)
}
