//! CPU kernels of the fast family: one pass per row instead of the fallback's chain of graph
//! nodes. Each reproduces its fallback's arithmetic — f32 compute, rounding to the output
//! dtype exactly where the fallback's intermediate arrays are stored in it — so fused and
//! composed results agree to a few f32 ulps (summation order only).

use super::elementwise::OutPtr;
use super::math::{Float, Real};
use super::rope_table;
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::{finfo, DType};
use crate::error::{Error, Result};
use crate::ops::fast::FastOp;
use crate::parallel::parallel_for;
use alloc::borrow::Cow;
use alloc::vec::Vec;

mod lm;

/// Evaluates a fast primitive.
pub fn eval(op: &FastOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    // The language models' fused ops (several outputs each).
    match op {
        FastOp::AddRmsNorm { eps } => return lm::add_rms_norm(inputs, eps.get() as f32, outputs),
        FastOp::DecodeHeads { head_dim, dims, traditional, base, scale } => {
            return lm::decode_heads(&inputs, *head_dim, *dims, *traditional, base.get() as f32, scale.get() as f32, outputs)
        }
        FastOp::KvWrite { at } => return lm::kv_write(inputs, *at, outputs),
        FastOp::MetalKernel(_) => return Err(crate::ops::fast::custom_kernel::eval_refused()),
        _ => {}
    }
    let (shape, dtype) = super::out0(outputs, name)?.clone();
    // Every kernel below writes each output element (a reused block needs no zeroing: that
    // serial pass cost as much as the kernel of a large softmax or norm).
    let out = Data::alloc_for_overwrite(&shape, dtype, name)?;
    macro_rules! float {
        ($T:ident => $e:expr) => {
            crate::dispatch_float!(dtype, $T => $e, else Err(Error::unsupported(name, alloc::format!("{name} does not support {dtype}."))))
        };
    }
    match op {
        FastOp::RmsNorm { eps } => float!(T => rms_norm::<T>(&inputs, eps.get() as f32, &shape, &out))?,
        FastOp::LayerNorm { eps } => float!(T => layer_norm::<T>(&inputs, eps.get() as f32, &shape, &out))?,
        FastOp::Rope { dims, traditional, base, scale } => {
            float!(T => rope::<T>(&inputs, *dims, *traditional, base.get() as f32, scale.get() as f32, &shape, &out))?
        }
        FastOp::Softmax if dtype == DType::Float32 => softmax_f32(&inputs, &shape, &out)?,
        FastOp::Softmax => return Err(Error::unsupported(name, alloc::format!("the fused softmax takes float32, not {dtype}."))),
        FastOp::Sdpa { scale, causal } if dtype == DType::Float32 => sdpa_f32(&inputs, scale.get() as f32, *causal, &shape, &out)?,
        FastOp::Sdpa { scale, causal } => float!(T => sdpa::<T>(&inputs, scale.get() as f32, *causal, &shape, &out))?,
        FastOp::AddRmsNorm { .. } | FastOp::DecodeHeads { .. } | FastOp::KvWrite { .. } | FastOp::MetalKernel(_) => {
            return Err(Error::runtime(name, "handled above"))
        }
    }
    Ok(alloc::vec![out])
}

/// Softmax of the row `y` in place without SIMD: the max (a NaN wins, so a NaN anywhere makes
/// the row NaN, as the SIMD kernels do), `e^(y − max)` summed in order, times 1/Σ.
fn softmax_in_place_portable(y: &mut [f32]) {
    let mx = y.iter().copied().fold(f32::NEG_INFINITY, |a, b| if b > a || b.is_nan() { b } else { a });
    let mut total = 0f32;
    for v in y.iter_mut() {
        *v = Float::exp(*v - mx);
        total += *v;
    }
    let inv = 1.0 / total;
    y.iter_mut().for_each(|e| *e *= inv);
}

/// `mx.softmax` over the last axis of float32 rows, one pass per row (rows in parallel).
fn softmax_f32(inputs: &[Array], shape: &[usize], out: &Data) -> Result<()> {
    const OP: &str = "softmax";
    let d = shape.last().copied().unwrap_or(1);
    let x = super::input(inputs, 0, OP)?;
    let xd = x.data()?;
    let xv = xd.read::<f32>(shape)?;
    let level = super::isa::isa();
    rows(&xv, d, out, |_, xr, o| {
        if !super::vecmath::softmax_row(level, xr, o) {
            o.copy_from_slice(xr);
            softmax_in_place_portable(o);
        }
    });
    Ok(())
}

/// A storage element seen as f32, and the rounding that storing an intermediate array of
/// this dtype applies (identity for f32). f64 inputs compute in f32 here, as the norms'
/// fallbacks do; attention in f64 is thus less precise than its f64 fallback.
trait Store: Real {
    fn f(self) -> f32;
    fn from_f(v: f32) -> Self;
    fn round(v: f32) -> f32;
}
impl<T: Real> Store for T {
    #[inline(always)]
    fn f(self) -> f32 {
        self.to_value().as_f64() as f32
    }
    #[inline(always)]
    fn from_f(v: f32) -> Self {
        T::from_value(crate::Value::F(v as f64))
    }
    #[inline(always)]
    fn round(v: f32) -> f32 {
        T::from_value(crate::Value::F(v as f64)).to_value().as_f64() as f32
    }
}

/// Rows of the last axis, each handed to `f(row_in, row_out)`, in parallel.
fn rows<T: Store>(x: &[T], d: usize, out: &Data, f: impl Fn(usize, &[T], &mut [T]) + Sync) {
    let n = x.len();
    if d == 0 || n == 0 {
        return;
    }
    let p = OutPtr(out.buf.as_mut_ptr() as *mut T);
    let grain = (super::elementwise::GRAIN / d).max(1);
    parallel_for(n / d, grain, &|r| {
        let p = &p;
        for i in r {
            // SAFETY: row i of the fresh output buffer, written by this chunk only.
            let rg = i * d..(i + 1) * d;
            let o = unsafe { p.chunk(&rg) };
            f(i, &x[i * d..(i + 1) * d], o);
        }
    });
}

/// `s` as f32 slices when `T` is f32 (the `vecmath` kernels take f32).
fn as_f32<T: Store>(s: &[T]) -> Option<&[f32]> {
    // SAFETY: the float32 dtype is stored as f32 only, so T is f32 here.
    (T::DTYPE == DType::Float32).then(|| unsafe { core::slice::from_raw_parts(s.as_ptr() as *const f32, s.len()) })
}

/// [`as_f32`] for an output row.
fn as_f32_mut<T: Store>(s: &mut [T]) -> Option<&mut [f32]> {
    // SAFETY: as `as_f32`.
    (T::DTYPE == DType::Float32).then(|| unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut f32, s.len()) })
}

/// A norm's per-feature vector of `d` values as f32 (a 0-d one — no weight given — holds one
/// element, repeated, never read as `d`). Borrowed when it is f32 already: a model's norm
/// weights, read on every call, cost no conversion.
fn per_feature<T: Store>(data: &Data, ndim: usize, d: usize) -> Result<Cow<'_, [f32]>> {
    if ndim == 0 {
        return Ok(Cow::Owned(alloc::vec![data.read::<T>(&[])?[0].f(); d]));
    }
    let v = data.read::<T>(&[d])?;
    if let Cow::Borrowed(s) = v {
        if let Some(f) = as_f32(s) {
            return Ok(Cow::Borrowed(f));
        }
    }
    Ok(Cow::Owned(v.iter().map(|x| x.f()).collect()))
}

fn rms_norm<T: Store>(inputs: &[Array], eps: f32, shape: &[usize], out: &Data) -> Result<()> {
    const OP: &str = "rms_norm";
    let d = shape.last().copied().unwrap_or(1);
    let x = super::input(inputs, 0, OP)?;
    let w = super::input(inputs, 1, OP)?;
    let xd = x.data()?;
    let xv = xd.read::<T>(shape)?;
    let wd = w.data()?;
    let wv = per_feature::<T>(&wd, w.ndim(), d)?;
    // Rounded exactly as MLX's definition `x * rsqrt(mean(square(x)) + eps)` computed by our
    // own ops (MLX's CPU runs that composite): `mx.sum`'s order, times the f32 of 1/d.
    let inv_d = (1.0 / d as f64) as f32;
    let level = super::isa::isa();
    rows(&xv, d, out, |_, xr, o| rms_row(level, xr, &wv, eps, inv_d, o));
    Ok(())
}

/// One row of [`rms_norm`]: `o = xr / sqrt(Σ xr² · inv_d + eps) · w`.
fn rms_row<T: Store>(level: super::isa::Isa, xr: &[T], w: &[f32], eps: f32, inv_d: f32, o: &mut [T]) {
    if let (Some(xf), Some(of)) = (as_f32(xr), as_f32_mut(o)) {
        if super::vecmath::rms_norm_row(level, xf, w, eps, inv_d, of) {
            return;
        }
    }
    let ss = super::reduce::lanes_sum_map(xr, 0.0f32, |v| v.f() * v.f());
    let inv = 1.0 / (ss * inv_d + eps).sqrt();
    for ((y, &v), &g) in o.iter_mut().zip(xr).zip(w.iter()) {
        *y = T::from_f(T::round(v.f() * inv) * g);
    }
}

fn layer_norm<T: Store>(inputs: &[Array], eps: f32, shape: &[usize], out: &Data) -> Result<()> {
    const OP: &str = "layer_norm";
    let d = shape.last().copied().unwrap_or(1);
    let x = super::input(inputs, 0, OP)?;
    let (w, b) = (super::input(inputs, 1, OP)?, super::input(inputs, 2, OP)?);
    let (wd, bd) = (w.data()?, b.data()?);
    let wv = per_feature::<T>(&wd, w.ndim(), d)?;
    let bv = per_feature::<T>(&bd, b.ndim(), d)?;
    let xd = x.data()?;
    let xv = xd.read::<T>(shape)?;
    // As MLX's definition over our ops: `mean` and `var` (mean of squared deviations), each
    // `mx.sum`'s order times the f32 of 1/d.
    let inv_d = (1.0 / d as f64) as f32;
    let level = super::isa::isa();
    rows(&xv, d, out, |_, xr, o| {
        if let (Some(xf), Some(of)) = (as_f32(xr), as_f32_mut(o)) {
            if super::vecmath::layer_norm_row(level, xf, &wv, &bv, eps, inv_d, of) {
                return;
            }
        }
        let mu = super::reduce::lanes_sum_map(xr, 0.0f32, |v| v.f()) * inv_d;
        let var = super::reduce::lanes_sum_map(xr, 0.0f32, |v| (v.f() - mu) * (v.f() - mu)) * inv_d;
        let inv = 1.0 / (var + eps).sqrt();
        for (((y, &v), &g), &b) in o.iter_mut().zip(xr).zip(wv.iter()).zip(bv.iter()) {
            *y = T::from_f(T::round(T::round((v.f() - mu) * inv) * g) + b);
        }
    });
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn rope<T: Store>(inputs: &[Array], dims: usize, traditional: bool, base: f32, scale: f32, shape: &[usize], out: &Data) -> Result<()> {
    const OP: &str = "rope";
    let nd = shape.len();
    if nd < 3 {
        return Err(Error::runtime(OP, "rope needs at least 3 dimensions."));
    }
    let x = super::input(inputs, 0, OP)?;
    let off = super::input(inputs, 1, OP)?;
    let offsets: Vec<i32> = off.data()?.read::<i32>(off.shape())?.into_owned();
    let d = shape[nd - 1];
    let t_len = shape[nd - 2];
    let per_batch: usize = shape[1..nd - 1].iter().product();
    let half = dims / 2;
    let given: Option<Vec<f32>> = match inputs.get(2) {
        Some(f) => Some(f.data()?.read::<f32>(&[half])?.into_owned()),
        None => None,
    };
    // One offset per batch entry, or one for all.
    let per_entry = offsets.len() > 1;
    if per_entry && offsets.len() < shape[0] {
        return Err(Error::invalid(OP, "offset must have one entry per batch element."));
    }
    let n_ofs = if per_entry { shape[0] } else { 1 };
    let positions: Vec<i32> = if per_entry { offsets[..n_ofs].to_vec() } else { alloc::vec![offsets.first().copied().unwrap_or(0)] };
    let key = rope_table::Key {
        dtype: T::DTYPE,
        freqs: match &given {
            Some(g) => rope_table::Freqs::Given(g.iter().map(|v| v.to_bits()).collect()),
            None => rope_table::Freqs::Base { base_bits: base.to_bits(), half },
        },
        scale_bits: scale.to_bits(),
        offsets: positions.clone(),
        t_len,
    };
    // cos θ and sin θ (rounded as the rotation uses them) for each (offset, position, j): every
    // head at a position shares them, so the trigonometry runs once per position, not per row.
    // Per position the `half` cosines, then the `half` sines (the SIMD rotation loads each).
    let table = rope_table::get(key, || {
        let inv_freq: Vec<f32> = match &given {
            Some(g) => g.iter().map(|&v| 1.0 / v).collect(),
            // The `libm` crate, not `Float` (glibc with `std`): the table feeds every attention
            // layer of a language model, and glibc's expf/cosf/sinf round some of these values an
            // ulp away from libm's, so the hosted and bare-metal builds would part (quantized
            // activations then grow that into different tokens; examples/firmware-aarch64-lm).
            None => {
                let c = libm::logf(base) / half as f32;
                (0..half).map(|j| libm::expf(-(j as f32) * c)).collect()
            }
        };
        let mut table = Vec::with_capacity(n_ofs * t_len * 2 * half);
        for &ofs in &positions {
            for t in 0..t_len {
                let pos = (t as f32 + ofs as f32) * scale;
                table.extend(inv_freq.iter().map(|&f| T::round(libm::cosf(pos * f))));
                table.extend(inv_freq.iter().map(|&f| T::round(libm::sinf(pos * f))));
            }
        }
        table
    });
    let xd = x.data()?;
    let xv = xd.read::<T>(shape)?;
    let level = super::isa::isa();
    rows(&xv, d, out, |i, xr, o| {
        let e = if per_entry { i / per_batch.max(1) } else { 0 };
        let t = i % t_len;
        let (cos, sin) = table[(e * t_len + t) * 2 * half..][..2 * half].split_at(half);
        o[dims..].copy_from_slice(&xr[dims..]);
        if !traditional {
            if let (Some(xf), Some(of)) = (as_f32(&xr[..2 * half]), as_f32_mut(&mut o[..2 * half])) {
                let (x1, x2) = xf.split_at(half);
                let (y1, y2) = of.split_at_mut(half);
                if super::vecmath::rotate(level, x1, x2, cos, sin, y1, y2) {
                    return;
                }
            }
        }
        for (j, (&c, &s)) in cos.iter().zip(sin).enumerate() {
            let (i1, i2) = if traditional { (2 * j, 2 * j + 1) } else { (j, j + half) };
            let (x1, x2) = (xr[i1].f(), xr[i2].f());
            o[i1] = T::from_f(T::round(x1 * c) - T::round(x2 * s));
            o[i2] = T::from_f(T::round(x1 * s) + T::round(x2 * c));
        }
    });
    Ok(())
}

/// Attention in float16 / bfloat16 (and float64), rounded as MLX's composite computes it: each
/// score and each probability rounded to the dtype, sums in f32. K and V (a KV-cache window
/// read in place) are widened to f32 in parallel, then scores and output are the same SIMD
/// GEMVs as [`sdpa_f32`] (so, up to summation order, the arithmetic of a scalar loop over the
/// dtype's values).
fn sdpa<T: Store>(inputs: &[Array], scale: f32, causal: bool, shape: &[usize], out: &Data) -> Result<()> {
    const OP: &str = "scaled_dot_product_attention";
    let (q, k, v) = (super::input(inputs, 0, OP)?, super::input(inputs, 1, OP)?, super::input(inputs, 2, OP)?);
    let (b, hq, l, dv) = (shape[0], shape[1], shape[2], shape[3]);
    let (hkv, s, dk) = (k.shape()[1], k.shape()[2], k.shape()[3]);
    if hkv == 0 || hq % hkv != 0 || v.shape()[2] != s || q.shape()[3] != dk || v.shape()[3] != dv {
        return Err(Error::runtime(OP, "Attention inputs have inconsistent shapes."));
    }
    if k.shape()[0] != b || v.shape()[..2] != k.shape()[..2] {
        return Err(Error::runtime(OP, "Attention inputs have inconsistent shapes."));
    }
    let reps = hq / hkv;
    let qv: Vec<f32> = q.data()?.read::<T>(q.shape())?.iter().map(|x| x.f()).collect();
    let (kd, vd) = (k.data()?, v.data()?);
    let (kh, vh) = (HeadBlocks::<T>::new(&kd, k.shape())?, HeadBlocks::<T>::new(&vd, v.shape())?);
    let mshape = [b, hq, l, s];
    // The mask as an additive f32 term, or a keep flag (bool masks).
    enum Mask {
        None,
        Keep(Vec<bool>),
        Add(Vec<f32>),
    }
    let mask = match inputs.get(3) {
        None => Mask::None,
        Some(m) if m.dtype() == DType::Bool => Mask::Keep(m.data()?.read::<bool>(&mshape)?.into_owned()),
        Some(m) => Mask::Add(m.data()?.read::<T>(&mshape)?.iter().map(|x| x.f()).collect()),
    };
    let lowest = finfo(T::DTYPE)?.min as f32;
    let sc = T::round(scale);
    let causal_off = s as isize - l as isize;
    let n_rows = b * hq * l;
    if qv.len() < n_rows * dk {
        return Err(Error::runtime(OP, "Attention inputs have inconsistent shapes."));
    }
    if n_rows == 0 || dv == 0 {
        return Ok(());
    }
    // K and V widened to f32 once (each key row by one task), shared by the query heads of
    // a group: widening per query head would repeat it for every grouped head.
    let kv_rows = b * hkv * s;
    // Scratch from the buffer cache (a decode loop reuses the same blocks, unzeroed); every
    // element is written below before it is read.
    let kbuf = crate::buffer::Buffer::new_for_overwrite(kv_rows * dk * 4, OP)?;
    let vbuf = crate::buffer::Buffer::new_for_overwrite(kv_rows * dv * 4, OP)?;
    let (kp, vp) = (OutPtr(kbuf.as_mut_ptr() as *mut f32), OutPtr(vbuf.as_mut_ptr() as *mut f32));
    parallel_for(kv_rows, (super::elementwise::GRAIN / (dk + dv).max(1)).max(1), &|r| {
        let (kp, vp) = (&kp, &vp);
        // Key rows r, a run per head (rows of one head are consecutive in both layouts).
        let mut idx = r.start;
        while idx < r.end {
            let (head, j) = (idx / s, idx % s);
            let rows = (s - j).min(r.end - idx);
            let (bi, kvh) = (head / hkv, head % hkv);
            let (krange, vrange) = (idx * dk..(idx + rows) * dk, idx * dv..(idx + rows) * dv);
            // SAFETY: key rows idx..idx+rows of the scratch buffers, written by this task only.
            let (kr, vr) = unsafe { (kp.chunk(&krange), vp.chunk(&vrange)) };
            super::cast::widen_into(&kh.head(bi, kvh)[j * dk..(j + rows) * dk], kr);
            super::cast::widen_into(&vh.head(bi, kvh)[j * dv..(j + rows) * dv], vr);
            idx += rows;
        }
    });
    // SAFETY: both buffers hold kv_rows rows of f32 (allocated above, 64-byte aligned), all
    // written by the loop above, and nothing else refers to them.
    let (kf, vf) = unsafe {
        (
            core::slice::from_raw_parts(kbuf.as_ptr() as *const f32, kv_rows * dk),
            core::slice::from_raw_parts(vbuf.as_ptr() as *const f32, kv_rows * dv),
        )
    };
    let p = OutPtr(out.buf.as_mut_ptr() as *mut T);
    let grain = (ATTENTION_GRAIN_MACS / (s * (dk + dv)).max(1)).max(1);
    parallel_for(n_rows, grain, &|r| {
        let p = &p;
        let mut scores = alloc::vec![0f32; s];
        let mut qs = alloc::vec![0f32; dk];
        let mut acc = alloc::vec![0f32; dv];
        for row in r {
            let (bh, i) = (row / l, row % l);
            let (bi, h) = (bh / hq, bh % hq);
            let head = bi * hkv + h / reps;
            let (kh, vh) = (&kf[head * s * dk..(head + 1) * s * dk], &vf[head * s * dv..(head + 1) * s * dv]);
            for (d, &x) in qs.iter_mut().zip(&qv[row * dk..(row + 1) * dk]) {
                *d = T::round(sc * x);
            }
            super::gemm::dot_rows(kh, dk, &qs, &mut scores);
            for (j, sj) in scores.iter_mut().enumerate() {
                let mut x = T::round(*sj);
                let m_idx = row * s + j;
                match &mask {
                    Mask::None => {}
                    Mask::Keep(keep) => {
                        if !keep[m_idx] {
                            x = lowest;
                        }
                    }
                    Mask::Add(add) => x = T::round(x + add[m_idx]),
                }
                if causal && (i as isize + causal_off) < j as isize {
                    x = lowest;
                }
                *sj = x;
            }
            let mx = scores.iter().copied().fold(f32::NEG_INFINITY, |a, b| if b > a || b.is_nan() { b } else { a });
            let mut total = 0f32;
            for sj in scores.iter_mut() {
                *sj = Float::exp(*sj - mx);
                total += *sj;
            }
            scores.iter_mut().for_each(|e| *e = T::round(*e / total));
            acc.iter_mut().for_each(|a| *a = 0.0);
            super::gemm::axpy_rows(vh, dv, &scores, &mut acc);
            // SAFETY: row `row` of the fresh output, written by this chunk only.
            let rg = row * dv..(row + 1) * dv;
            let o = unsafe { p.chunk(&rg) };
            for (y, &a) in o.iter_mut().zip(&acc) {
                *y = T::from_f(a);
            }
        }
    });
    Ok(())
}


/// float32 attention without copies of K and V (contiguous inputs are read in place): per
/// query row, the scores are GEMVs over K's rows (`gemm::dot_rows`) and the output GEMVs over
/// V's rows (`gemm::axpy_rows`), both on the SIMD kernels of the active level. Rows (batch ×
/// head × query) are split across threads; the rows of a task that share a K/V head
/// (grouped-query heads, several query positions) go through K and V together, a block of
/// [`KV_BLOCK_BYTES`] at a time, so the block is read from memory once and from cache for the
/// other rows — a decode step of a model with 4 query heads per K/V head streams K and V once
/// instead of 4 times. Same arithmetic as [`sdpa`] (f32 rounding is the identity) up to
/// summation order; the blocks start at multiples of 4 keys, so each row's sums run in the
/// same order as one pass over all keys.
const KV_BLOCK_BYTES: usize = 64 << 10;
/// Most rows that go through a K/V block together (their scores are kept for the whole row).
const MAX_RUN: usize = 8;

/// Multiply-adds per attention task. A query row is s·(dk + dv) multiply-adds plus a softmax
/// over s: at decode sizes (a few heads, tens to thousands of keys) each is a microsecond or
/// more, so rows are shared out down to one per task once a task holds ~8k multiply-adds —
/// the elementwise grain left most threads idle while one ran several heads.
const ATTENTION_GRAIN_MACS: usize = 1 << 13;

fn sdpa_f32(inputs: &[Array], scale: f32, causal: bool, shape: &[usize], out: &Data) -> Result<()> {
    const OP: &str = "scaled_dot_product_attention";
    let (q, k, v) = (super::input(inputs, 0, OP)?, super::input(inputs, 1, OP)?, super::input(inputs, 2, OP)?);
    let (b, hq, l, dv) = (shape[0], shape[1], shape[2], shape[3]);
    let (hkv, s, dk) = (k.shape()[1], k.shape()[2], k.shape()[3]);
    if hkv == 0 || hq % hkv != 0 || v.shape()[2] != s || q.shape()[3] != dk || v.shape()[3] != dv {
        return Err(Error::runtime(OP, "Attention inputs have inconsistent shapes."));
    }
    let reps = hq / hkv;
    let (qd, kd, vd) = (q.data()?, k.data()?, v.data()?);
    let qv = qd.read::<f32>(q.shape())?;
    let (kh, vh) = (HeadBlocks::<f32>::new(&kd, k.shape())?, HeadBlocks::<f32>::new(&vd, v.shape())?);
    if qv.len() < b * hq * l * dk || k.shape()[0] != b || v.shape()[..2] != k.shape()[..2] {
        return Err(Error::runtime(OP, "Attention inputs have inconsistent shapes."));
    }
    let mshape = [b, hq, l, s];
    enum Mask<'a> {
        None,
        Keep(alloc::borrow::Cow<'a, [bool]>),
        Add(alloc::borrow::Cow<'a, [f32]>),
    }
    let md = inputs.get(3).map(|m| m.data()).transpose()?;
    let mask = match (inputs.get(3), &md) {
        (Some(m), Some(d)) if m.dtype() == DType::Bool => Mask::Keep(d.read::<bool>(&mshape)?),
        (Some(_), Some(d)) => Mask::Add(d.read::<f32>(&mshape)?),
        _ => Mask::None,
    };
    let lowest = f32::MIN;
    let level = super::isa::isa();
    let causal_off = s as isize - l as isize;
    let n_rows = b * hq * l;
    if n_rows == 0 || dv == 0 {
        return Ok(());
    }
    let p = OutPtr(out.buf.as_mut_ptr() as *mut f32);
    // Rows sharing a K/V head lie next to each other (`reps · l` of them); a task takes whole
    // runs of them where that still leaves every thread work.
    let run = (reps * l).clamp(1, MAX_RUN);
    let grain = (ATTENTION_GRAIN_MACS / (s * (dk + dv)).max(1)).max(1);
    let grain = if n_rows / run >= crate::parallel::num_threads() { grain.next_multiple_of(run) } else { grain };
    // Keys per block: a multiple of 4 (the GEMV kernels' row unroll), at least 4.
    let block = ((KV_BLOCK_BYTES / (4 * dk.max(dv).max(1))) & !3).max(4);
    parallel_for(n_rows, grain, &|r| {
        let p = &p;
        let mut scores = alloc::vec![0f32; run.min(r.len()) * s];
        let mut qs = alloc::vec![0f32; run.min(r.len()) * dk];
        let mut start = r.start;
        while start < r.end {
            // The run: rows from `start` on with the same batch and K/V head.
            let kv_of = |row: usize| (row / (l * hq), (row / l) % hq / reps);
            let (bi, kvh) = kv_of(start);
            let mut end = start + 1;
            while end < r.end && end - start < run && kv_of(end) == (bi, kvh) {
                end += 1;
            }
            let rows = end - start;
            let (kb, vb) = (kh.head(bi, kvh), vh.head(bi, kvh));
            for (qr, row) in qs.chunks_exact_mut(dk.max(1)).zip(start..end) {
                for (d, &x) in qr.iter_mut().zip(&qv[row * dk..(row + 1) * dk]) {
                    *d = scale * x;
                }
            }
            for j0 in (0..s).step_by(block) {
                let j1 = (j0 + block).min(s);
                for (t, sc) in scores.chunks_exact_mut(s).take(rows).enumerate() {
                    super::gemm::dot_rows(&kb[j0 * dk..], dk, &qs[t * dk..(t + 1) * dk], &mut sc[j0..j1]);
                }
            }
            for (sc, row) in scores.chunks_exact_mut(s).zip(start..end) {
                let i = row % l;
                for (j, x) in sc.iter_mut().enumerate() {
                    let m_idx = row * s + j;
                    match &mask {
                        Mask::None => {}
                        Mask::Keep(keep) => {
                            if !keep[m_idx] {
                                *x = lowest;
                            }
                        }
                        Mask::Add(add) => *x += add[m_idx],
                    }
                    if causal && (i as isize + causal_off) < j as isize {
                        *x = lowest;
                    }
                }
                if !super::vecmath::softmax_in_place(level, sc) {
                    softmax_in_place_portable(sc);
                }
                // SAFETY: row `row` of the fresh output, written by this chunk only.
                let rg = row * dv..(row + 1) * dv;
                let o = unsafe { p.chunk(&rg) };
                o.iter_mut().for_each(|y| *y = 0.0);
            }
            for j0 in (0..s).step_by(block) {
                let j1 = (j0 + block).min(s);
                for (sc, row) in scores.chunks_exact(s).zip(start..end) {
                    // SAFETY: as above; each row's output is taken once per block, in turn.
                    let rg = row * dv..(row + 1) * dv;
                    let o = unsafe { p.chunk(&rg) };
                    super::gemm::axpy_rows(&vb[j0 * dv..], dv, &sc[j0..j1], o);
                }
            }
            start = end;
        }
    });
    Ok(())
}

/// Keys or values `(batch, heads, rows, width)` as one dense `rows × width` block per
/// (batch, head), read in place when every head's block is dense — a KV-cache window is: its
/// heads lie a whole cache capacity apart but each head's rows follow each other — and copied
/// only otherwise (a transposed view). Decode reads the cache once per step instead of copying
/// it first.
struct HeadBlocks<'a, T: Clone + 'static> {
    elems: Cow<'a, [T]>,
    /// Element steps between batches and between heads.
    steps: [usize; 2],
    block: usize,
}

impl<'a, T: crate::Element> HeadBlocks<'a, T> {
    fn new(d: &'a Data, shape: &[usize]) -> Result<Self> {
        let [nb, nh, rows, width] = [shape[0], shape[1], shape[2], shape[3]];
        let block = rows * width;
        let dense_block = (width <= 1 || d.strides[3] == 1) && (rows <= 1 || d.strides[2] == width as isize);
        let base = d.buf.as_ptr() as usize + d.offset;
        if block > 0 && dense_block && base % core::mem::align_of::<T>() == 0 {
            let steps = [d.strides[0].max(0) as usize, d.strides[1].max(0) as usize];
            let last = (nb.max(1) - 1) * steps[0] + (nh.max(1) - 1) * steps[1] + block;
            if d.offset + last * core::mem::size_of::<T>() <= d.buf.len() {
                // SAFETY: `last` elements from the view's first lie inside the buffer (checked
                // just above), which lives as long as `d`; alignment checked.
                let elems = unsafe { core::slice::from_raw_parts(base as *const T, last) };
                return Ok(HeadBlocks { elems: Cow::Borrowed(elems), steps, block });
            }
        }
        let elems = d.read::<T>(shape)?;
        Ok(HeadBlocks { elems, steps: [nh * block, block], block })
    }

    fn head(&self, b: usize, h: usize) -> &[T] {
        &self.elems[b * self.steps[0] + h * self.steps[1]..][..self.block]
    }
}
