//! Each claimed op: checks that the GPU kernel covers the case (layout, rank, dtype), binds
//! inputs (uploading host buffers once), allocates the output in device memory and records the
//! dispatch. `Ok(None)` means "not covered": the caller runs the CPU kernel instead.

use crate::defer;
use crate::memory::{self, Handle, VkMemory};
use crate::pipelines::{Shader, PUSH_BYTES};
use crate::queue::Recorder;
use crate::subgroup::{self, GemvLayout};
use ash::vk;
use gpu_allocator::MemoryLocation;
use mlx_arm_core::array::Data;
use mlx_arm_core::buffer::{self, Buffer, Direction};
use mlx_arm_core::ops::binary::BinaryOp;
use mlx_arm_core::ops::reduce::ReduceKind;
use mlx_arm_core::ops::unary::UnaryOp;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{DType, Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

/// Axes a strided kernel takes at most (after merging contiguous axes).
const MAXD: usize = 6;
pub(crate) const GROUP: u32 = 256;

/// Shader code of each unary op (unary.comp's switch). Code 0 is the identity (a copy).
pub(crate) fn unary_code(op: UnaryOp) -> Option<u32> {
    Some(match op {
        UnaryOp::Abs => 1,
        UnaryOp::Negative => 2,
        UnaryOp::Sign => 3,
        UnaryOp::Square => 4,
        UnaryOp::Sqrt => 5,
        UnaryOp::Rsqrt => 6,
        UnaryOp::Reciprocal => 7,
        UnaryOp::Exp => 8,
        UnaryOp::Log => 9,
        UnaryOp::Sin => 10,
        UnaryOp::Cos => 11,
        UnaryOp::Tanh => 12,
        UnaryOp::Sigmoid => 13,
        UnaryOp::Floor => 14,
        UnaryOp::Ceil => 15,
        _ => return None,
    })
}

/// Shader code of each binary op (binary.comp's switch).
pub(crate) fn binary_code(op: BinaryOp) -> Option<u32> {
    Some(match op {
        BinaryOp::Add => 0,
        BinaryOp::Subtract => 1,
        BinaryOp::Multiply => 2,
        BinaryOp::Divide => 3,
        BinaryOp::Maximum => 4,
        BinaryOp::Minimum => 5,
        _ => return None,
    })
}

/// Shader code of each reduction (reduce.comp).
pub(crate) fn reduce_code(kind: ReduceKind) -> Option<u32> {
    Some(match kind {
        ReduceKind::Sum => 0,
        ReduceKind::Max => 1,
        ReduceKind::Min => 2,
        ReduceKind::Prod => 3,
        _ => return None,
    })
}

/// float16 (true) or float32 (false) kernels; other dtypes have none.
pub(crate) fn variant(dt: DType) -> Option<bool> {
    match dt {
        DType::Float32 => Some(false),
        DType::Float16 => Some(true),
        _ => None,
    }
}

pub(crate) fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i] as isize;
    }
    s
}

/// Strides of a view of `in_shape` broadcast (numpy rules, right-aligned) to `out_shape`.
pub(crate) fn broadcast_strides(in_shape: &[usize], strides: &[isize], out_shape: &[usize]) -> Vec<isize> {
    let lead = out_shape.len() - in_shape.len();
    (0..out_shape.len())
        .map(|i| if i < lead || in_shape[i - lead] == 1 { 0 } else { strides[i - lead] })
        .collect()
}

/// A view's axes after [`collapse`]: at most MAXD, with the strides of up to two operands, in
/// fixed arrays (no heap allocation: this runs once or twice per dispatch).
struct Collapsed {
    len: usize,
    shape: [usize; MAXD],
    strides: [[isize; MAXD]; 2],
}

impl Collapsed {
    fn shape(&self) -> &[usize] {
        &self.shape[..self.len]
    }
    fn strides(&self, k: usize) -> &[isize] {
        &self.strides[k][..self.len]
    }
}

/// Drops size-1 axes and merges neighbours that are contiguous in every operand (at most two),
/// so most views fit in MAXD axes. `None`: more than MAXD axes remain (or more than two
/// operands), which the kernels do not take.
fn collapse(shape: &[usize], operands: &[&[isize]]) -> Option<Collapsed> {
    if operands.len() > 2 {
        return None;
    }
    let mut c = Collapsed { len: 0, shape: [0; MAXD], strides: [[0; MAXD]; 2] };
    for i in 0..shape.len() {
        if shape[i] == 1 {
            continue;
        }
        if c.len > 0 {
            let end = c.len - 1;
            let merge = operands.iter().enumerate().all(|(k, s)| c.strides[k][end] == s[i] * shape[i] as isize);
            if merge {
                c.shape[end] *= shape[i];
                for (k, s) in operands.iter().enumerate() {
                    c.strides[k][end] = s[i];
                }
                continue;
            }
        }
        if c.len == MAXD {
            return None;
        }
        c.shape[c.len] = shape[i];
        for (k, s) in operands.iter().enumerate() {
            c.strides[k][c.len] = s[i];
        }
        c.len += 1;
    }
    Some(c)
}

/// An input as the shader sees it: a buffer and the element offset of the view's first element.
pub(crate) struct Bound {
    pub mem: Arc<VkMemory>,
    pub off: usize,
}

/// Binds `d` (a view of `shape` with `itemsize`-byte elements): our own memory as is; a host
/// buffer is uploaded (counted) and, when the view covers most of it, kept as its device mirror
/// so the next use needs no copy.
pub(crate) fn bind(rec: &mut Recorder, d: &Data, shape: &[usize], itemsize: usize) -> Result<Bound> {
    let aligned = d.offset % itemsize == 0;
    if let Some(mem) = memory::of_buffer(&d.buf) {
        if aligned {
            return Ok(Bound { mem, off: d.offset / itemsize });
        }
        if d.buf.device_memory().is_some() {
            // Views of one dtype always sit at whole elements; anything else is a bug upstream.
            return Err(Error::runtime("vulkan", "A view of GPU memory does not start at a whole element."));
        }
    } else if d.buf.device_memory().is_some() {
        return Err(Error::runtime("vulkan", "An input lives on another backend's device."));
    }
    // The bytes the view spans (strides are never negative).
    let n: usize = shape.iter().product();
    let span_elems = if n == 0 { 0 } else { 1 + shape.iter().zip(&d.strides).map(|(&s, &st)| (s - 1) as isize * st).sum::<isize>() as usize };
    let span = span_elems * itemsize;
    let whole = aligned && d.buf.len() <= 2 * span.max(1);
    if whole {
        let mem = upload(rec, d.buf.bytes())?;
        d.buf.set_device_mirror(Arc::new(Handle(mem.clone())));
        return Ok(Bound { mem, off: d.offset / itemsize });
    }
    let src = &d.buf.bytes()[d.offset..d.offset + span];
    // A tensor inside a mapped file (read-only, shared by every tensor of a model): its copy
    // is kept per view, so each weight is uploaded once, not at every use.
    if d.buf.is_external() {
        let key = (Arc::as_ptr(&d.buf) as usize, d.offset, span);
        if let Some(mem) = view_mirror(key, &d.buf) {
            return Ok(Bound { mem, off: 0 });
        }
        let mem = upload(rec, src)?;
        let mut guard = crate::lock(&VIEW_MIRRORS);
        let all = guard.get_or_insert_with(HashMap::new);
        // Copies of released files go when a new copy is made (rare: once per weight), not on
        // every lookup (~200 per decode step).
        all.retain(|_, v| v.buf.strong_count() > 0);
        all.insert(key, ViewMirror { buf: Arc::downgrade(&d.buf), mem: mem.clone() });
        return Ok(Bound { mem, off: 0 });
    }
    Ok(Bound { mem: upload(rec, src)?, off: 0 })
}

/// A device copy of one view of an external buffer.
struct ViewMirror {
    buf: std::sync::Weak<Buffer>,
    mem: Arc<VkMemory>,
}

/// Device copies of views of external buffers by (buffer address, byte offset, byte span).
static VIEW_MIRRORS: std::sync::Mutex<Option<HashMap<(usize, usize, usize), ViewMirror>>> = std::sync::Mutex::new(None);

/// The kept copy of view `key` of `buf`, if any. A copy whose buffer was released (its
/// address may since have been reused by another buffer) does not match.
fn view_mirror(key: (usize, usize, usize), buf: &Arc<Buffer>) -> Option<Arc<VkMemory>> {
    let all = crate::lock(&VIEW_MIRRORS);
    let v = all.as_ref()?.get(&key)?;
    v.buf.upgrade().is_some_and(|b| Arc::ptr_eq(&b, buf)).then(|| v.mem.clone())
}

/// Copies host bytes into fresh device memory (a counted transfer).
fn upload(rec: &mut Recorder, src: &[u8]) -> Result<Arc<VkMemory>> {
    let ctx = rec.ctx();
    buffer::record_transfer(Direction::HostToDevice, src.len());
    // Whole words: shaders read byte arrays (GGUF blocks) as 32-bit words.
    let size = src.len().next_multiple_of(4);
    if ctx.info.shared_memory {
        let mem = VkMemory::new(ctx, size, MemoryLocation::CpuToGpu, "upload")?;
        if let Some(p) = mem.mapped() {
            // SAFETY: fresh mapping of at least src.len() bytes, not yet used by the GPU.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p.as_ptr(), src.len()) };
            return Ok(mem);
        }
    }
    let staging = VkMemory::new(ctx, size, MemoryLocation::CpuToGpu, "upload")?;
    let p = staging.mapped().ok_or_else(|| Error::runtime("upload", "Vulkan staging memory is not host-visible."))?;
    // SAFETY: fresh mapping of at least src.len() bytes.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p.as_ptr(), src.len()) };
    let mem = VkMemory::new(ctx, size, MemoryLocation::GpuOnly, "upload")?;
    rec.copy(&staging, &mem, src.len())?;
    Ok(mem)
}

/// A fresh dense output of `shape`, pending on the queue.
pub(crate) fn output(rec: &Recorder, shape: &[usize], itemsize: usize, op: &'static str) -> Result<(Arc<VkMemory>, Data)> {
    let t = std::time::Instant::now();
    let ctx = rec.ctx();
    let n = shape.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).and_then(|n| n.checked_mul(itemsize));
    let bytes = n.ok_or_else(|| Error::out_of_memory(op, usize::MAX))?;
    let loc = if ctx.info.shared_memory { MemoryLocation::CpuToGpu } else { MemoryLocation::GpuOnly };
    let mem = VkMemory::new(ctx, bytes, loc, op)?;
    let buf = Buffer::from_device(Box::new(Handle(mem.clone())), bytes, true, op)?;
    crate::queue::count_alloc(t);
    Ok((mem, Data { buf, offset: 0, strides: row_major(shape) }))
}

/// Most storage buffers a shader binds (sdpa.comp).
pub(crate) const MAX_BINDINGS: usize = 8;

/// Records one dispatch of `shader`: `bufs[..reads]` are read, the rest written. No heap
/// allocation: descriptors and push constants are built in fixed arrays (a decode step records
/// ~600 dispatches, so the per-dispatch host cost is the step's cost).
pub(crate) fn dispatch(rec: &mut Recorder, shader: Shader, f16: bool, bufs: &[&Arc<VkMemory>], reads: usize, push: &[u32], groups: [u32; 3]) -> Result<()> {
    if bufs.len() > MAX_BINDINGS || push.len() * 4 > PUSH_BYTES as usize {
        return Err(Error::runtime("vulkan", "A dispatch binds more buffers or push constants than the backend supports."));
    }
    let t = std::time::Instant::now();
    let ctx = rec.ctx();
    let p = rec.pipeline(shader, f16)?;
    let cb = rec.access(&bufs[..reads], &bufs[reads..])?;
    let mut infos = [[vk::DescriptorBufferInfo::default()]; MAX_BINDINGS];
    for (info, m) in infos.iter_mut().zip(bufs) {
        info[0] = vk::DescriptorBufferInfo::default().buffer(m.buffer).offset(0).range(vk::WHOLE_SIZE);
    }
    let mut writes = [vk::WriteDescriptorSet::default(); MAX_BINDINGS];
    for (i, (w, info)) in writes.iter_mut().zip(&infos).take(bufs.len()).enumerate() {
        *w = vk::WriteDescriptorSet::default().dst_binding(i as u32).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(info);
    }
    // Only the words the shader declares (each kernel's push list is its shader's block).
    let mut bytes = [0u8; PUSH_BYTES as usize];
    for (chunk, w) in bytes.chunks_exact_mut(4).zip(push) {
        chunk.copy_from_slice(&w.to_ne_bytes());
    }
    let d = &ctx.device;
    let t0 = std::time::Instant::now();
    rec.bind_pipeline(cb, p.pipeline);
    // SAFETY: recording into the open command buffer with objects that outlive the batch.
    unsafe { ctx.push.cmd_push_descriptor_set(cb, vk::PipelineBindPoint::COMPUTE, p.layout, 0, &writes[..bufs.len()]) };
    let t1 = std::time::Instant::now();
    if !push.is_empty() {
        // SAFETY: as above; the layout declares PUSH_BYTES of push constants.
        unsafe { d.cmd_push_constants(cb, p.layout, vk::ShaderStageFlags::COMPUTE, 0, &bytes[..push.len() * 4]) };
    }
    let t2 = std::time::Instant::now();
    // SAFETY: as above.
    unsafe { d.cmd_dispatch(cb, groups[0], groups[1], groups[2]) };
    let t3 = std::time::Instant::now();
    crate::queue::count_calls([t0, t1, t2, t3]);
    crate::queue::count_command(t);
    rec.recorded(shader.label())
}

/// A 2-D grid of `groups` workgroups (x is limited to 65535).
pub(crate) fn grid(groups: usize) -> Result<[u32; 3]> {
    let x = groups.clamp(1, 65535);
    let y = groups.div_ceil(x);
    if y > 65535 {
        return Err(Error::invalid("vulkan", "Array too large for one GPU dispatch."));
    }
    Ok([x as u32, y as u32, 1])
}

/// Push-constant words starting with `head`, with room for the most a shader takes: one
/// allocation per dispatch, not one per appended group.
fn words(head: &[u32]) -> Vec<u32> {
    let mut v = Vec::with_capacity(PUSH_BYTES as usize / 4);
    v.extend_from_slice(head);
    v
}

/// Appends `v` padded with `fill` to `n` words.
fn pad(out: &mut Vec<u32>, v: &[usize], n: usize, fill: u32) {
    out.extend(v.iter().map(|&x| x as u32));
    out.extend(std::iter::repeat_n(fill, n.saturating_sub(v.len())));
}

/// Appends the strides `v` (as two's-complement words) padded with zeros to `n` words.
fn pad_i(out: &mut Vec<u32>, v: &[isize], n: usize) {
    out.extend(v.iter().map(|&x| x as i32 as u32));
    out.extend(std::iter::repeat_n(0, n.saturating_sub(v.len())));
}

pub(crate) fn fits_u32(n: usize) -> bool {
    n < (1usize << 31)
}

/// `out = f(x)` for unary code `code` (0: copy), dense output of `shape`.
pub(crate) fn unary(rec: &mut Recorder, code: u32, x: &Data, shape: &[usize], dt: DType) -> Result<Option<Data>> {
    if variant(dt).is_none() || !unary_fits(x, shape, &row_major(shape), dt) {
        return Ok(None);
    }
    let (om, out) = output(rec, shape, dt.size(), "unary")?;
    unary_into(rec, code, x, shape, dt, (&om, 0, &row_major(shape)))?;
    Ok(Some(out))
}

/// Whether unary.comp covers `x` (a view of `shape`) written through output strides `ost`.
pub(crate) fn unary_fits(x: &Data, shape: &[usize], ost: &[isize], dt: DType) -> bool {
    collapse(shape, &[&x.strides, ost]).is_some() && fits_u32(x.buf.len() / dt.size() + 1)
}

/// Records `f(x)` written into `out` = (memory, element offset, strides over `shape`); the
/// caller checked [`unary_fits`] and that the window lies inside the memory.
pub(crate) fn unary_into(rec: &mut Recorder, code: u32, x: &Data, shape: &[usize], dt: DType, out: (&Arc<VkMemory>, usize, &[isize])) -> Result<()> {
    unary_into_as(rec, code, x, shape, dt, out, false)
}

/// [`unary_into`]; with `window` (a copy into a window of a donated buffer: a KV-cache write)
/// it may be held back and paired with the next such copy (`crate::defer::window`).
fn unary_into_as(rec: &mut Recorder, code: u32, x: &Data, shape: &[usize], dt: DType, out: (&Arc<VkMemory>, usize, &[isize]), window: bool) -> Result<()> {
    let f16 = variant(dt) == Some(true);
    let n: usize = shape.iter().product();
    let c = collapse(shape, &[&x.strides, out.2]).ok_or_else(|| Error::runtime("vulkan", "A unary view has more axes than the kernel takes."))?;
    let a = bind(rec, x, shape, dt.size())?;
    if n == 0 {
        return Ok(());
    }
    let mut push = words(&[n as u32, c.len as u32, a.off as u32, code]);
    pad(&mut push, c.shape(), MAXD, 1);
    pad_i(&mut push, c.strides(0), MAXD);
    push.push(out.1 as u32);
    pad_i(&mut push, c.strides(1), MAXD);
    let groups = grid(n.div_ceil(GROUP as usize))?;
    if !window || code != 0 {
        return dispatch(rec, Shader::Unary, f16, &[&a.mem, out.0], 1, &push, groups);
    }
    // copy2.comp's job: the same view in at most WINDOW_AXES axes.
    let job = (c.len <= defer::WINDOW_AXES).then(|| {
        let mut j = [0u32; defer::JOB_WORDS];
        j[..4].copy_from_slice(&[n as u32, c.len as u32, a.off as u32, out.1 as u32]);
        for d in 0..defer::WINDOW_AXES {
            let inside = d < c.len;
            j[4 + d] = if inside { c.shape[d] as u32 } else { 1 };
            j[4 + defer::WINDOW_AXES + d] = if inside { c.strides[0][d] as i32 as u32 } else { 0 };
            j[4 + 2 * defer::WINDOW_AXES + d] = if inside { c.strides[1][d] as i32 as u32 } else { 0 };
        }
        j
    });
    defer::window(rec, f16, &a.mem, out.0, &push, groups, job)
}

/// `slice_update`: a copy of `src` (`shape`) with the window starting at `start` (steps
/// `step`, positive) replaced by `upd` (the window's shape, any view). Two dispatches: the
/// copy, then the window written in place. ([`slice_update_into`] writes the window alone into
/// a donated `src`: what a KV cache's write does each decode step.)
pub(crate) fn slice_update(rec: &mut Recorder, src: (&Data, &[usize]), upd: (&Data, &[usize]), start: &[isize], step: &[isize], dt: DType) -> Result<Option<Data>> {
    let shape = src.1;
    if !slice_update_fits(shape, upd, start, step, dt) || !unary_fits(src.0, shape, &row_major(shape), dt) {
        return Ok(None);
    }
    let (om, out) = output(rec, shape, dt.size(), "slice_update")?;
    unary_into(rec, 0, src.0, shape, dt, (&om, 0, &row_major(shape)))?;
    write_window(rec, &om, shape, upd, start, step, dt)?;
    Ok(Some(out))
}

/// Whether the GPU writes `upd` into the window `start`/`step` of a dense array of `shape`.
pub(crate) fn slice_update_fits(shape: &[usize], upd: (&Data, &[usize]), start: &[isize], step: &[isize], dt: DType) -> bool {
    let wshape = upd.1;
    let nd = shape.len();
    if variant(dt).is_none() || start.len() != nd || step.len() != nd || wshape.len() != nd {
        return false;
    }
    if start.iter().any(|&s| s < 0) || step.iter().any(|&s| s <= 0) {
        return false;
    }
    // The window must lie inside the output (the op's constructor guarantees it; checked
    // again because the shader writes without bounds checks).
    let inside = (0..nd).all(|d| wshape[d] == 0 || (start[d] as usize) + (wshape[d] - 1) * (step[d] as usize) < shape[d]);
    let wst: Vec<isize> = row_major(shape).iter().zip(step).map(|(&s, &k)| s * k).collect();
    let n: usize = shape.iter().product();
    inside && fits_u32(n + 1) && unary_fits(upd.0, wshape, &wst, dt)
}

/// Writes `upd` into the window `start`/`step` of `dst`, a dense array of `shape` in `mem`
/// (donated to this op, so no copy of the rest is needed); the caller checked
/// [`slice_update_fits`]. Returns the output, `mem` under a fresh pending buffer.
pub(crate) fn slice_update_into(rec: &mut Recorder, mem: &Arc<VkMemory>, shape: &[usize], upd: (&Data, &[usize]), start: &[isize], step: &[isize], dt: DType) -> Result<Data> {
    write_window(rec, mem, shape, upd, start, step, dt)?;
    dense_over(mem, shape, dt)
}

/// The dense array of `shape` that `mem` holds from its start (a buffer written in place), under
/// a fresh pending buffer.
pub(crate) fn dense_over(mem: &Arc<VkMemory>, shape: &[usize], dt: DType) -> Result<Data> {
    let bytes = shape.iter().product::<usize>() * dt.size();
    let buf = Buffer::from_device(Box::new(Handle(mem.clone())), bytes, true, "slice_update")?;
    Ok(Data { buf, offset: 0, strides: row_major(shape) })
}

/// One dispatch: `upd` copied into its window of the dense array of `shape` in `mem`.
fn write_window(rec: &mut Recorder, mem: &Arc<VkMemory>, shape: &[usize], upd: (&Data, &[usize]), start: &[isize], step: &[isize], dt: DType) -> Result<()> {
    let dense = row_major(shape);
    let wst: Vec<isize> = dense.iter().zip(step).map(|(&s, &k)| s * k).collect();
    let off: isize = start.iter().zip(&dense).map(|(&a, &s)| a * s).sum();
    unary_into_as(rec, 0, upd.0, upd.1, dt, (mem, off as usize, &wst), true)
}

/// `out = f(a, b)` with numpy broadcasting to `shape`.
pub(crate) fn binary(rec: &mut Recorder, code: u32, a: (&Data, &[usize]), b: (&Data, &[usize]), shape: &[usize], dt: DType) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let n: usize = shape.iter().product();
    let sa = broadcast_strides(a.1, &a.0.strides, shape);
    let sb = broadcast_strides(b.1, &b.0.strides, shape);
    let big = a.0.buf.len().max(b.0.buf.len()) / dt.size() + 1;
    let Some(c) = collapse(shape, &[&sa, &sb]).filter(|_| fits_u32(big)) else {
        return Ok(None);
    };
    let ba = bind(rec, a.0, a.1, dt.size())?;
    let bb = bind(rec, b.0, b.1, dt.size())?;
    let (om, out) = output(rec, shape, dt.size(), "binary")?;
    if n == 0 {
        return Ok(Some(out));
    }
    let mut push = words(&[n as u32, c.len as u32, ba.off as u32, bb.off as u32, code]);
    pad(&mut push, c.shape(), MAXD, 1);
    pad_i(&mut push, c.strides(0), MAXD);
    pad_i(&mut push, c.strides(1), MAXD);
    dispatch(rec, Shader::Binary, f16, &[&ba.mem, &bb.mem, &om], 2, &push, grid(n.div_ceil(GROUP as usize))?)?;
    Ok(Some(out))
}

/// Reduction of one `axis` of `x` (shape `shape`); the output keeps the axis as size 1.
pub(crate) fn reduce(rec: &mut Recorder, code: u32, x: &Data, shape: &[usize], axis: usize, dt: DType) -> Result<Option<Data>> {
    along_axis(rec, (Shader::Reduce, code, dt.size(), "reduce"), x, shape, axis, dt)
}

/// argmax (`max`) or argmin of `x` over `axis`: uint32 indices, the axis kept as 1 (the op's
/// shape before its reshape). A greedy decode step reads back only this index.
pub(crate) fn arg_reduce(rec: &mut Recorder, max: bool, x: &Data, shape: &[usize], axis: usize, dt: DType) -> Result<Option<Data>> {
    // An empty axis has no index to give: the CPU kernel's case.
    if shape[axis] == 0 {
        return Ok(None);
    }
    let kernel = (Shader::ArgReduce, u32::from(!max), 4, if max { "argmax" } else { "argmin" });
    let rows = shape.iter().product::<usize>() / shape[axis];
    let chunks = shape[axis].div_ceil(ARG_CHUNK);
    if shape[axis] < ARG_SPLIT_LEN || rows == 0 || rows > ARG_SPLIT_MAX_ROWS {
        return along_axis(rec, kernel, x, shape, axis, dt);
    }
    // Few long rows (the logits of greedy decoding): one workgroup per row would leave the
    // GPU idle (47 µs for 49152 logits on an H200), so a workgroup per chunk of a row, then
    // one per row picks among the chunks' winners.
    let Some((layout, a, om, out)) = axis_setup(rec, kernel, x, shape, axis, dt)? else { return Ok(None) };
    let ctx = rec.ctx();
    let loc = if ctx.info.shared_memory { MemoryLocation::CpuToGpu } else { MemoryLocation::GpuOnly };
    // Pairs of (value bits, index) per (row, chunk).
    let part = VkMemory::new(ctx, rows * chunks * 8, loc, kernel.3)?;
    let f16 = variant(dt) == Some(true);
    let mut push = layout;
    push.extend([0, ARG_CHUNK as u32, chunks as u32]);
    dispatch(rec, Shader::ArgReduceSplit, f16, &[&a.mem, &part, &om], 1, &push, grid(rows * chunks)?)?;
    let stage = push.len() - 3;
    push[stage] = 1;
    dispatch(rec, Shader::ArgReduceSplit, f16, &[&a.mem, &part, &om], 2, &push, grid(rows)?)?;
    Ok(Some(out))
}

/// Axes at least this long are split over workgroups by `arg_reduce` (with few rows).
const ARG_SPLIT_LEN: usize = 4096;
/// Elements of an axis one workgroup of argreduce_split.comp's first stage takes (2 per
/// invocation: 96 workgroups for 49152 logits, about one per multiprocessor of an H100).
const ARG_CHUNK: usize = 512;
/// Rows up to which `arg_reduce` splits long axes: beyond, a workgroup per row fills the GPU.
const ARG_SPLIT_MAX_ROWS: usize = 64;

/// One workgroup per output element over `axis` of `x` with reduce.comp's push constants
/// (reduce.comp, argreduce.comp): `kernel` is (shader, op code, output item size, op name).
fn along_axis(rec: &mut Recorder, kernel: (Shader, u32, usize, &'static str), x: &Data, shape: &[usize], axis: usize, dt: DType) -> Result<Option<Data>> {
    let Some((push, a, om, out)) = axis_setup(rec, kernel, x, shape, axis, dt)? else { return Ok(None) };
    // Output elements (an empty axis still gives each its identity, reduce.comp's case).
    let n = push[0] as usize;
    if n == 0 {
        return Ok(Some(out));
    }
    let f16 = variant(dt) == Some(true);
    dispatch(rec, kernel.0, f16, &[&a.mem, &om], 1, &push, grid(n)?)?;
    Ok(Some(out))
}

/// What a reduction over `axis` needs before its dispatch: reduce.comp's push constants (rows,
/// axes, offset, op code, the axis's length and step, the other axes' shape and strides), the
/// bound input and the output (`kernel` as [`along_axis`]'s). `None`: not covered.
#[allow(clippy::type_complexity)]
fn axis_setup(rec: &mut Recorder, kernel: (Shader, u32, usize, &'static str), x: &Data, shape: &[usize], axis: usize, dt: DType) -> Result<Option<(Vec<u32>, Bound, Arc<VkMemory>, Data)>> {
    let (_, code, out_itemsize, op) = kernel;
    if variant(dt).is_none() {
        return Ok(None);
    }
    let mut kept = shape.to_vec();
    kept[axis] = 1;
    let n: usize = kept.iter().product();
    let Some(c) = collapse(&kept, &[&x.strides]).filter(|_| fits_u32(x.buf.len() / dt.size() + 1)) else {
        return Ok(None);
    };
    let a = bind(rec, x, shape, dt.size())?;
    let (om, out) = output(rec, &kept, out_itemsize, op)?;
    let mut push = words(&[n as u32, c.len as u32, a.off as u32, code, shape[axis] as u32, x.strides[axis] as i32 as u32]);
    pad(&mut push, c.shape(), MAXD, 1);
    pad_i(&mut push, c.strides(0), MAXD);
    Ok(Some((push, a, om, out)))
}

/// A dense (row-major) version of `x`: itself when it already is, else a GPU copy.
pub(crate) fn dense(rec: &mut Recorder, x: &Data, shape: &[usize], dt: DType) -> Result<Option<Data>> {
    if x.is_row_contiguous(shape) {
        return Ok(Some(x.clone()));
    }
    unary(rec, 0, x, shape, dt)
}

/// Step through a per-feature parameter of the last axis (`dim` long): its stride for a
/// vector, 0 for a scalar; `None` for any other shape.
pub(crate) fn feature_step(p: (&Data, &[usize]), dim: usize) -> Option<isize> {
    match p.1 {
        [] | [1] => Some(0),
        [m] if *m == dim => Some(p.0.strides[0]),
        _ => None,
    }
}

/// rms_norm (`bias` None) or layer_norm over the last axis of `x`; weight and bias are
/// vectors of the last axis or scalars.
pub(crate) fn norm(rec: &mut Recorder, x: (&Data, &[usize]), w: (&Data, &[usize]), bias: Option<(&Data, &[usize])>, eps: f32, dt: DType) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let shape = x.1;
    let dim = *shape.last().unwrap_or(&1);
    let n: usize = shape.iter().product();
    let Some(w_step) = feature_step(w, dim) else { return Ok(None) };
    let b_step = match bias {
        Some(b) => match feature_step(b, dim) {
            Some(s) => s,
            None => return Ok(None),
        },
        None => 0,
    };
    if !fits_u32(x.0.buf.len() / dt.size() + 1) || dim == 0 {
        return Ok(None);
    }
    let Some(xd) = dense(rec, x.0, shape, dt)? else { return Ok(None) };
    let bx = bind(rec, &xd, shape, dt.size())?;
    let bw = bind(rec, w.0, w.1, dt.size())?;
    let bb = match bias {
        Some(b) => bind(rec, b.0, b.1, dt.size())?,
        None => Bound { mem: bw.mem.clone(), off: bw.off },
    };
    let (om, out) = output(rec, shape, dt.size(), if bias.is_some() { "layer_norm" } else { "rms_norm" })?;
    if n == 0 {
        return Ok(Some(out));
    }
    let rows = n / dim;
    let push = [
        rows as u32,
        dim as u32,
        bx.off as u32,
        bw.off as u32,
        w_step as u32,
        eps.to_bits(),
        bias.is_some() as u32,
        bb.off as u32,
        b_step as u32,
        0,
        0,
    ];
    let sg = rec.ctx().info.subgroup.is_some();
    // No residual: y and the sum's output repeat x and the output (never touched).
    let bufs = [&bx.mem, &bw.mem, &bb.mem, &bx.mem, &om, &om];
    // One row of rms_norm may be held back for the GEMV after it (crate::defer::norm).
    defer::norm(rec, f16, bufs, &push, grid(rows)?, sg)?;
    Ok(Some(out))
}

/// rms_norm over the last axis of `x` when `x` is the output of the residual add the recorder
/// holds back (`crate::defer`): one dispatch reads the add's inputs, writes their sum (the
/// add's output) and the norm of it, as the two dispatches would. `None`: not that case
/// (nothing was recorded; the add stays held back).
pub(crate) fn norm_after_add(rec: &mut Recorder, x: (&Data, &[usize]), w: (&Data, &[usize]), eps: f32, dt: DType) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let shape = x.1;
    let dim = *shape.last().unwrap_or(&0);
    let n: usize = shape.iter().product();
    let Some(w_step) = feature_step(w, dim) else { return Ok(None) };
    let Some(xm) = memory::of_buffer(&x.0.buf) else { return Ok(None) };
    if dim == 0 || n == 0 || x.0.offset != 0 || !x.0.is_row_contiguous(shape) {
        return Ok(None);
    }
    // Taken before the weight is bound: an upload of it would flush the add.
    let Some((a, b, sum)) = defer::take_add(rec, &xm, n, f16) else { return Ok(None) };
    let bw = bind(rec, w.0, w.1, dt.size())?;
    let (om, out) = output(rec, shape, dt.size(), "rms_norm")?;
    let rows = n / dim;
    let push = [rows as u32, dim as u32, a.off as u32, bw.off as u32, w_step as u32, eps.to_bits(), 0, bw.off as u32, 0, 1, b.off as u32];
    let sg = rec.ctx().info.subgroup.is_some();
    defer::norm(rec, f16, [&a.mem, &bw.mem, &bw.mem, &b.mem, &om, &sum], &push, grid(rows)?, sg)?;
    Ok(Some(out))
}

/// `a + b` of two dense arrays of the output's `shape`, held back (`crate::defer`) so that an
/// rms_norm of the sum can take it; `None`: another layout (the plain kernel runs it).
pub(crate) fn add_deferred(rec: &mut Recorder, a: (&Data, &[usize]), b: (&Data, &[usize]), shape: &[usize], dt: DType) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let n: usize = shape.iter().product();
    let dense = |d: &(&Data, &[usize])| d.1 == shape && d.0.is_row_contiguous(shape) && fits_u32(d.0.buf.len() / dt.size() + 1);
    if n == 0 || !fits_u32(n) || !dense(&a) || !dense(&b) {
        return Ok(None);
    }
    let ba = bind(rec, a.0, a.1, dt.size())?;
    let bb = bind(rec, b.0, b.1, dt.size())?;
    let (om, out) = output(rec, shape, dt.size(), "binary")?;
    // binary.comp's words for a dense add: one merged axis of n elements, strides 1.
    let mut push = words(&[n as u32, 1, ba.off as u32, bb.off as u32, 0]);
    pad(&mut push, &[n], MAXD, 1);
    pad_i(&mut push, &[1], MAXD);
    pad_i(&mut push, &[1], MAXD);
    let groups = grid(n.div_ceil(GROUP as usize))?;
    rec.defer(defer::Deferred::new(defer::Kind::Add { n }, Shader::Binary, f16, &[&ba.mem, &bb.mem, &om], 2, &push, groups))?;
    Ok(Some(out))
}

/// Parameters of [`rope`] besides its arrays.
pub(crate) struct RopeParams {
    pub dims: usize,
    pub traditional: bool,
    pub base: f32,
    pub scale: f32,
}

/// One rope.comp job, bound and with its output made: push words (no second job), the
/// bindings x, offsets, freqs, x again, out, out again, invocations per row, and the output.
pub(crate) struct RopeJob {
    pub push: [u32; 19],
    pub bufs: [Arc<VkMemory>; 6],
    pub per_row: usize,
    pub out: Data,
}

/// `mx.fast.rope` of `x` (`[B, ..., T, D]`) with int32 `offset` (a scalar or one per batch
/// item) and optional float32 `freqs` (`dims / 2`).
pub(crate) fn rope(
    rec: &mut Recorder,
    x: (&Data, &[usize]),
    offset: (&Data, &[usize]),
    freqs: Option<(&Data, &[usize])>,
    rp: &RopeParams,
    dt: DType,
) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let Some(job) = rope_job(rec, x, offset, freqs, rp, dt)? else { return Ok(None) };
    if job.push[0] > 0 {
        let b = &job.bufs;
        defer::rope(rec, f16, [&b[0], &b[1], &b[2], &b[3], &b[4], &b[5]], &job.push, job.per_row)?;
    }
    Ok(Some(job.out))
}

/// [`rope`]'s job, not recorded (`push[0]`, its rows, is 0 for an empty `x`); `None` where
/// rope.comp does not take these arrays.
pub(crate) fn rope_job(
    rec: &mut Recorder,
    x: (&Data, &[usize]),
    offset: (&Data, &[usize]),
    freqs: Option<(&Data, &[usize])>,
    rp: &RopeParams,
    dt: DType,
) -> Result<Option<RopeJob>> {
    let shape = x.1;
    let nd = shape.len();
    if variant(dt).is_none() || nd < 3 || rp.dims == 0 || rp.dims % 2 != 0 || rp.dims > shape[nd - 1] {
        return Ok(None);
    }
    let (dim, t_len) = (shape[nd - 1], shape[nd - 2]);
    let n: usize = shape.iter().product();
    let per_batch: usize = shape[1..nd - 1].iter().product();
    let o_step = match offset.1 {
        [] | [1] => 0,
        [b] if *b == shape[0] => offset.0.strides[0],
        _ => return Ok(None),
    };
    let half = rp.dims / 2;
    let f_step = match freqs {
        Some((f, [h])) if *h == half => f.strides[0],
        Some(_) => return Ok(None),
        None => 0,
    };
    if !fits_u32(x.0.buf.len() / dt.size() + 1) || !fits_u32(n) {
        return Ok(None);
    }
    let Some(xd) = dense(rec, x.0, shape, dt)? else { return Ok(None) };
    let bx = bind(rec, &xd, shape, dt.size())?;
    // A scalar offset on the host (every decode step's position) goes as a push constant: no
    // upload, which on a discrete GPU is two buffers and a copy command per rope.
    let host_offset = match (o_step, offset.0.buf.is_host()) {
        (0, true) => offset.0.read::<i32>(offset.1)?.first().copied(),
        _ => None,
    };
    // Unused bindings take x's buffer.
    let bo = match host_offset {
        Some(_) => Bound { mem: bx.mem.clone(), off: 0 },
        None => bind(rec, offset.0, offset.1, 4)?,
    };
    let bf = match freqs {
        Some(f) => bind(rec, f.0, f.1, 4)?,
        None => Bound { mem: bx.mem.clone(), off: 0 },
    };
    let (om, out) = output(rec, shape, dt.size(), "rope")?;
    // dim ≥ dims > 0 (checked above).
    let rows = n / dim;
    let per_row = half + (dim - rp.dims);
    let coef = rp.base.ln() / half as f32;
    let push: [u32; 19] = [
        rows as u32,
        dim as u32,
        rp.dims as u32,
        t_len as u32,
        per_batch.max(1) as u32,
        bx.off as u32,
        rp.traditional as u32,
        bo.off as u32,
        o_step as u32,
        bf.off as u32,
        f_step as u32,
        freqs.is_some() as u32,
        coef.to_bits(),
        rp.scale.to_bits(),
        host_offset.is_some() as u32,
        host_offset.unwrap_or(0) as u32,
        // No second input (the recorder may pair this rope with the next: crate::defer).
        0,
        1,
        0,
    ];
    let bufs = [bx.mem.clone(), bo.mem, bf.mem, bx.mem, om.clone(), om];
    Ok(Some(RopeJob { push, bufs, per_row, out }))
}

/// Keys one workgroup of the split attention kernel (sdpa_split.comp) takes.
const SDPA_SPLIT_KEYS: usize = 256;
/// Query rows up to which attention over more than `SDPA_SPLIT_KEYS` keys is split over the
/// keys: beyond, one workgroup per row already fills the GPU.
const SDPA_SPLIT_MAX_ROWS: usize = 1024;
/// Longest head dimension the attention kernel keeps in shared memory.
const SDPA_MAX_DK: usize = 256;
/// Score-scratch floats one attention dispatch uses at most (16 MiB); longer work is split
/// into dispatches over row ranges that reuse the scratch.
const SDPA_SCRATCH: usize = 1 << 22;

/// Bytes of attention scratch for `floats`, rounded up to a power of two: the key count grows
/// by one every decode step, and the buffer pool reuses only exact sizes.
fn scratch_bytes(floats: usize) -> usize {
    (floats * 4).next_power_of_two()
}

/// A view usable by a kernel reading whole contiguous last-axis rows: itself when its last
/// axis is contiguous, else a dense GPU copy.
fn rows_contiguous(rec: &mut Recorder, x: &Data, shape: &[usize], dt: DType) -> Result<Option<Data>> {
    match (shape.last(), x.strides.last()) {
        (Some(&n), Some(&s)) if s == 1 || n <= 1 => Ok(Some(x.clone())),
        _ => dense(rec, x, shape, dt),
    }
}

/// `softmax(scale · q kᵀ + mask) v`: q `[B, Hq, L, D]`, k `[B, Hkv, S, D]`, v `[B, Hkv, S, Dv]`,
/// `Hq` a multiple of `Hkv`; causal, or an additive `mask` (any view of `[B, Hq, L, S]`, as
/// the op broadcasts it), or neither. Strided views (a KV cache sliced to its filled length,
/// heads transposed from `[B, L, H, D]`) are read in place.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sdpa(
    rec: &mut Recorder,
    q: (&Data, &[usize]),
    k: (&Data, &[usize]),
    v: (&Data, &[usize]),
    mask: Option<(&Data, &[usize])>,
    scale: f32,
    causal: bool,
    dt: DType,
) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let (sq, sk, sv) = (q.1, k.1, v.1);
    if sq.len() != 4 || sk.len() != 4 || sv.len() != 4 {
        return Ok(None);
    }
    let (b, hq, l, dk) = (sq[0], sq[1], sq[2], sq[3]);
    let (hkv, s, dv) = (sk[1], sk[2], sv[3]);
    if hkv == 0 || hq % hkv != 0 || sk[0] != b || sv[0] != b || sv[1] != hkv || sv[2] != s || sk[3] != dk {
        return Ok(None);
    }
    if let Some((m, ms)) = mask {
        if ms != [b, hq, l, s] || m.strides.len() != 4 {
            return Ok(None);
        }
    }
    let big = [Some(q.0), Some(k.0), Some(v.0), mask.map(|m| m.0)].iter().flatten().map(|d| d.buf.len()).max().unwrap_or(0) / dt.size() + 1;
    // s == 0: an empty softmax (NaN rows on the CPU) is the CPU kernel's business.
    if dk > SDPA_MAX_DK || s == 0 || s > SDPA_SCRATCH || !fits_u32(big) || !fits_u32(b * hq * l * dv.max(1)) {
        return Ok(None);
    }
    let (Some(qd), Some(kd), Some(vd)) = (rows_contiguous(rec, q.0, sq, dt)?, rows_contiguous(rec, k.0, sk, dt)?, rows_contiguous(rec, v.0, sv, dt)?) else {
        return Ok(None);
    };
    let bq = bind(rec, &qd, sq, dt.size())?;
    let bk = bind(rec, &kd, sk, dt.size())?;
    let bv = bind(rec, &vd, sv, dt.size())?;
    let bm = match mask {
        Some(m) => Some(bind(rec, m.0, m.1, dt.size())?),
        None => None,
    };
    let out_shape = [b, hq, l, dv];
    let (om, out) = output(rec, &out_shape, dt.size(), "scaled_dot_product_attention")?;
    let rows = b * hq * l;
    if rows == 0 || dv == 0 {
        return Ok(Some(out));
    }
    let st = |d: &Data| [d.strides[0] as i32 as u32, d.strides[1] as i32 as u32, d.strides[2] as i32 as u32];
    // Without a mask, q's buffer stands in for the unused binding.
    let (mask_mem, mask_push) = match (&bm, mask) {
        (Some(bm), Some((m, _))) => (&bm.mem, [1, bm.off as u32, m.strides[0] as i32 as u32, m.strides[1] as i32 as u32, m.strides[2] as i32 as u32, m.strides[3] as i32 as u32]),
        _ => (&bq.mem, [0; 6]),
    };
    let lowest = if f16 { -65504.0f32 } else { f32::MIN };
    // The push constants both shaders share, for rows from `base` on.
    let common = |base: usize| {
        let mut push = words(&[rows as u32, base as u32, hq as u32, l as u32, s as u32, dk as u32, dv as u32, (hq / hkv) as u32, scale.to_bits(), causal as u32, lowest.to_bits()]);
        for (bd, d) in [(&bq, &qd), (&bk, &kd), (&bv, &vd)] {
            push.push(bd.off as u32);
            push.extend(st(d));
        }
        push.extend(mask_push);
        push
    };
    let ctx = rec.ctx();
    let loc = if ctx.info.shared_memory { MemoryLocation::CpuToGpu } else { MemoryLocation::GpuOnly };
    let splits = s.div_ceil(SDPA_SPLIT_KEYS);
    if splits >= 2 && rows <= SDPA_SPLIT_MAX_ROWS {
        // Few rows, many keys: a workgroup per (row, chunk of keys), then one per row combines.
        let slot = splits * (dv + 2);
        let chunk = (SDPA_SCRATCH / slot).clamp(1, rows);
        let scratch = VkMemory::new(ctx, scratch_bytes(chunk * slot), loc, "scaled_dot_product_attention")?;
        let bufs = [&bq.mem, &bk.mem, &bv.mem, mask_mem, &scratch, &om];
        for base in (0..rows).step_by(chunk) {
            let n = chunk.min(rows - base);
            for (phase, groups) in [(0u32, n * splits), (1, n)] {
                let mut push = common(base);
                push.extend([splits as u32, phase]);
                dispatch(rec, Shader::SdpaSplit, f16, &bufs, 4, &push, grid(groups)?)?;
            }
        }
        return Ok(Some(out));
    }
    let chunk = (SDPA_SCRATCH / s).min(rows);
    let scratch = VkMemory::new(ctx, scratch_bytes(chunk * s), loc, "scaled_dot_product_attention")?;
    let bufs = [&bq.mem, &bk.mem, &bv.mem, mask_mem, &scratch, &om];
    for base in (0..rows).step_by(chunk) {
        let groups = grid(chunk.min(rows - base))?;
        dispatch(rec, Shader::Sdpa, f16, &bufs, 4, &common(base), groups)?;
    }
    Ok(Some(out))
}

/// Outputs one quantized-matmul workgroup computes (qmm.comp: 4 × 64 invocations).
const QMM_COLS: usize = 4;

/// `x @ dequantize(w)ᵀ` for affine-quantized `w` (`[n, k·bits/32]` uint32) with `scales` and
/// `biases` (`[n, k / group_size]`), `x` `[..., k]`. Covers bits that divide 32 (1, 2, 4, 8)
/// and a 2-D weight; other cases run on the CPU.
#[allow(clippy::too_many_arguments)]
pub(crate) fn quantized_matmul(
    rec: &mut Recorder,
    x: (&Data, &[usize]),
    w: (&Data, &[usize]),
    scales: (&Data, &[usize]),
    biases: (&Data, &[usize]),
    group_size: usize,
    bits: u32,
    dt: DType,
) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let (sx, sw) = (x.1, w.1);
    let (Some(&k), [n, wpr]) = (sx.last(), sw) else { return Ok(None) };
    let (n, wpr) = (*n, *wpr);
    if bits == 0 || 32 % bits != 0 || group_size == 0 || k % group_size != 0 || (group_size * bits as usize) % 32 != 0 {
        return Ok(None);
    }
    let gpr = k / group_size;
    if wpr * 32 != k * bits as usize || scales.1 != [n, gpr] || biases.1 != [n, gpr] || !w.0.is_row_contiguous(sw) {
        return Ok(None);
    }
    let m: usize = sx[..sx.len() - 1].iter().product();
    let n_blocks = n.div_ceil(QMM_COLS);
    let big = [x.0.buf.len() / dt.size(), w.0.buf.len() / 4, scales.0.buf.len() / dt.size(), biases.0.buf.len() / dt.size()];
    if k == 0 || !big.iter().all(|&b| fits_u32(b + 1)) || !fits_u32(m * n) || !fits_u32(m * n_blocks) {
        return Ok(None);
    }
    let (Some(xd), Some(sd), Some(bd)) = (dense(rec, x.0, sx, dt)?, dense(rec, scales.0, scales.1, dt)?, dense(rec, biases.0, biases.1, dt)?) else {
        return Ok(None);
    };
    let bx = bind(rec, &xd, sx, dt.size())?;
    let bw = bind(rec, w.0, sw, 4)?;
    let bs = bind(rec, &sd, scales.1, dt.size())?;
    let bb = bind(rec, &bd, biases.1, dt.size())?;
    let mut out_shape = sx.to_vec();
    if let Some(last) = out_shape.last_mut() {
        *last = n;
    }
    let (om, out) = output(rec, &out_shape, dt.size(), "quantized_matmul")?;
    if m * n == 0 {
        return Ok(Some(out));
    }
    let push = [
        m as u32,
        n as u32,
        k as u32,
        bits,
        group_size as u32,
        wpr as u32,
        gpr as u32,
        n_blocks as u32,
        bx.off as u32,
        bw.off as u32,
        bs.off as u32,
        bb.off as u32,
    ];
    dispatch(rec, Shader::Qmm, f16, &[&bx.mem, &bw.mem, &bs.mem, &bb.mem, &om], 4, &push, grid(m * n_blocks)?)?;
    Ok(Some(out))
}

/// `a @ b`, `[..., M, K] × [..., K, N]` over equal batch axes. Float16 products whose layout
/// the cooperative-matrix shader takes run on tensor cores where the device has them
/// ([`coopmat_layout`]); everything else runs the portable tiled shader.
pub(crate) fn matmul(rec: &mut Recorder, a: (&Data, &[usize]), b: (&Data, &[usize]), dt: DType) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let (sa, sb) = (a.1, b.1);
    let nd = sa.len();
    if nd < 2 || sb.len() != nd || sa[..nd - 2] != sb[..nd - 2] || sa[nd - 1] != sb[nd - 2] {
        return Ok(None);
    }
    let (m, k, n) = (sa[nd - 2], sa[nd - 1], sb[nd - 1]);
    let batch: usize = sa[..nd - 2].iter().product();
    // The batch axes, merged where both operands allow, must fit two (b0, b1).
    let Some(bc) = collapse(&sa[..nd - 2], &[&a.0.strides[..nd - 2], &b.0.strides[..nd - 2]]).filter(|c| c.len <= 2) else {
        return Ok(None);
    };
    let (bsh, bst) = (bc.shape(), [bc.strides(0), bc.strides(1)]);
    // (outer, inner) batch strides of operand k; the inner axis has nb1 entries.
    let strides = |k: usize| match bsh.len() {
        2 => (bst[k][0], bst[k][1]),
        1 => (0, bst[k][0]),
        _ => (0, 0),
    };
    let nb1 = bsh.last().copied().unwrap_or(1);
    let ((a_bs0, a_bs1), (b_bs0, b_bs1)) = (strides(0), strides(1));
    let big = a.0.buf.len().max(b.0.buf.len()) / dt.size() + 1;
    // k == 0 gives zeros: the CPU kernel's job (a fresh output is not cleared).
    if k == 0 || batch > 65535 || !fits_u32(big) || !fits_u32(batch * m * n) || n.div_ceil(64) > 65535 || m.div_ceil(64) > 65535 {
        return Ok(None);
    }
    let mut out_shape = sa[..nd - 1].to_vec();
    out_shape.push(n);
    let ba = bind(rec, a.0, sa, dt.size())?;
    let bb = bind(rec, b.0, sb, dt.size())?;
    let (om, out) = output(rec, &out_shape, dt.size(), "matmul")?;
    if batch * m * n == 0 {
        return Ok(Some(out));
    }
    let (ast, bst) = (&a.0.strides, &b.0.strides);
    let (mut a_rc, mut b_rc) = ((ast[nd - 2], ast[nd - 1]), (bst[nd - 2], bst[nd - 1]));
    let mut shader = Shader::Matmul;
    let mut tile = (64, 64);
    if let Some(shape) = rec.ctx().info.coopmat.filter(|_| f16 && m >= COOP_MIN && n >= COOP_MIN) {
        let whole = [ba.off, bb.off].iter().all(|&o| o % 8 == 0) && [a_bs0, a_bs1, b_bs0, b_bs1].iter().all(|&s| s % 8 == 0);
        if let (true, Some(la), Some(lb)) = (whole, coopmat_layout(m, k, a_rc), coopmat_layout(k, n, b_rc)) {
            let [fm, fn_, fk] = shape;
            let spec = [fm, fn_, fk, (la.1 == 1) as u32, (lb.1 == 1) as u32];
            (a_rc, b_rc, shader, tile) = (la, lb, Shader::MatmulCoop(spec), (COOP_TILE_M, COOP_TILE_N));
        }
    }
    let push = [
        m as u32,
        n as u32,
        k as u32,
        ba.off as u32,
        bb.off as u32,
        a_rc.0 as i32 as u32,
        a_rc.1 as i32 as u32,
        b_rc.0 as i32 as u32,
        b_rc.1 as i32 as u32,
        nb1.max(1) as u32,
        a_bs0 as i32 as u32,
        a_bs1 as i32 as u32,
        b_bs0 as i32 as u32,
        b_bs1 as i32 as u32,
    ];
    let groups = [n.div_ceil(tile.1) as u32, m.div_ceil(tile.0) as u32, batch as u32];
    dispatch(rec, shader, f16, &[&ba.mem, &bb.mem, &om], 2, &push, groups)?;
    if shader != Shader::Matmul {
        COOP_DISPATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(Some(out))
}

/// Output rows and columns one cooperative-matrix workgroup computes (matmul_coopmat.comp's
/// TILE_M, TILE_N).
const COOP_TILE_M: usize = 128;
const COOP_TILE_N: usize = 128;
/// Below this many output rows or columns a 128 × 128 tile computes mostly padding (a GEMV, say):
/// the portable shader's 64 × 64 tiles spread such products over more workgroups.
const COOP_MIN: usize = 16;

static COOP_DISPATCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Matmuls run on the cooperative-matrix shader since start (tests and benchmarks tell the paths
/// apart with it).
pub fn coopmat_dispatches() -> usize {
    COOP_DISPATCHES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The (row, column) strides a `rows × cols` operand is read with by matmul_coopmat.comp, or
/// `None` where it cannot be: the shader reads 16-byte chunks (8 halves) along the operand's
/// contiguous axis (column stride 1: row-major, else row stride 1: column-major; a pipeline
/// per layout), so that axis's length and the other stride must be multiples of 8. A size-1
/// axis's stride is irrelevant and given as 0.
fn coopmat_layout(rows: usize, cols: usize, (rs, cs): (isize, isize)) -> Option<(isize, isize)> {
    let rs = if rows == 1 { 0 } else { rs };
    let cs = if cols == 1 { 0 } else { cs };
    if cs == 1 && cols % 8 == 0 && rs % 8 == 0 {
        return Some((rs, 1));
    }
    if (rs == 1 || rows == 1) && rows % 8 == 0 && cs % 8 == 0 && cs != 1 {
        return Some((1, cs));
    }
    None
}

/// Rows of x per workgroup of ggml_mm.comp (ggml_mv.comp takes one).
const GGML_TILE_ROWS: usize = 8;

/// Outputs (invocations) per workgroup of ggml_mv_cpu.comp.
const GGML_MV_CPU_GROUP: usize = 64;

/// GGUF block types ggml_matmul.comp dequantizes (it switches on the GGUF type number).
pub(crate) fn ggml_covered(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q8_0 | GgmlType::Q4_K | GgmlType::Q6_K)
}

/// Whether `w` (uint8 `[n, row_bytes]`) holds rows of `k` weights as GGUF blocks of type `ty`
/// that the matmul shaders read: a covered type, dense, starting on an even byte (the shader
/// reads the block scales as 16-bit words).
pub(crate) fn ggml_weight_ok(w: &(&Data, &[usize]), ty: GgmlType, k: usize) -> bool {
    let [_, row_bytes] = *w.1 else { return false };
    ggml_covered(ty) && k > 0 && ty.row_bytes(k) == Some(row_bytes) && w.0.is_row_contiguous(w.1) && w.0.offset % 2 == 0
}

/// `x @ Wᵀ` for `W` (`N × k`) held as GGUF blocks of type `ty` in a uint8 `[n, row_bytes]`
/// array, `x` `[..., k]`. Other block types and strided weights run on the CPU.
pub(crate) fn ggml_matmul(rec: &mut Recorder, x: (&Data, &[usize]), w: (&Data, &[usize]), ty: GgmlType, k: usize, dt: DType) -> Result<Option<Data>> {
    if !ggml_weight_ok(&w, ty, k) || !fits_u32(w.1[0] * w.1[1] + 4) {
        return Ok(None);
    }
    let bw = bind(rec, w.0, w.1, 1)?;
    ggml_gemv(rec, x, &bw, w.1[0], ty, k, dt)
}

/// `x @ Wᵀ` for the `n` rows of GGUF blocks (type `ty`, `k` weights a row) that `w` holds from
/// its byte offset on (checked by [`ggml_weight_ok`]): the GEMV of one row of `x`, the tiled
/// kernel for several.
pub(crate) fn ggml_gemv(rec: &mut Recorder, x: (&Data, &[usize]), w: &Bound, n: usize, ty: GgmlType, k: usize, dt: DType) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let sx = x.1;
    let (Some(&xk), Some(row_bytes)) = (sx.last(), ty.row_bytes(k)) else { return Ok(None) };
    if xk != k {
        return Ok(None);
    }
    let m: usize = sx[..sx.len() - 1].iter().product();
    let lanes = rec.ctx().ggml_lanes as usize;
    // Several rows share each dequantized block in the tiled kernel; CPU drivers (lavapipe)
    // spill its per-row registers and run per-row GEMVs faster unless rows are many.
    let tiled = m >= if rec.ctx().info.kind == "cpu" { 64 } else { 4 };
    // Subgroup sums where an output's invocations are whole subgroups.
    let sg = rec.ctx().info.subgroup.is_some_and(|s| lanes % s as usize == 0);
    let (shader, tile, n_cols) = if tiled {
        (Shader::GgmlMm(ty.id(), sg), GGML_TILE_ROWS, n.div_ceil(256 / lanes))
    } else if rec.ctx().ggml_mv == GemvLayout::Row {
        (Shader::GgmlMvCpu(ty.id()), 1, n.div_ceil(GGML_MV_CPU_GROUP))
    } else if rec.ctx().ggml_mv == GemvLayout::Subgroup && m == 1 {
        // ggml_mv_sub.comp (one row of x): 4 subgroups' worth of outputs a workgroup.
        let outs = rec.ctx().ggml_outs.unwrap_or_else(|| subgroup::outs_auto(n));
        (Shader::GgmlMvSub(ty.id(), outs), 1, n.div_ceil(4 * outs as usize))
    } else {
        (Shader::GgmlMv(ty.id(), sg), 1, n.div_ceil(256 / lanes))
    };
    let groups = m.div_ceil(tile) * n_cols;
    // The weight's own bytes, not its buffer's: a tensor of a mapped file larger than 4 GiB
    // is bound (uploaded) alone, at offset 0.
    if !fits_u32(x.0.buf.len() / dt.size() + 1) || !fits_u32(w.off + n * row_bytes + 4) || !fits_u32(m * n) || !fits_u32(groups) {
        return Ok(None);
    }
    let Some(xd) = dense(rec, x.0, sx, dt)? else { return Ok(None) };
    let bx = bind(rec, &xd, sx, dt.size())?;
    let mut out_shape = sx.to_vec();
    if let Some(last) = out_shape.last_mut() {
        *last = n;
    }
    let (om, out) = output(rec, &out_shape, dt.size(), "ggml_matmul")?;
    if m * n == 0 {
        return Ok(Some(out));
    }
    let push = [m as u32, n as u32, k as u32, row_bytes as u32, n_cols as u32, bx.off as u32, w.off as u32];
    // x made by a held-back FusedOp program (a layer's SwiGLU): computed here instead.
    // (x lives in the workgroup's shared memory there: rows up to FX_MAX_K.)
    if let (Shader::GgmlMvSub(t, outs), true) = (shader, k <= FX_MAX_K) {
        if let Some(fx) = defer::take_fused_x(rec, &bx.mem, bx.off, k, f16) {
            let mut all = [0u32; 12];
            all[..7].copy_from_slice(&push);
            all[7..].copy_from_slice(&fx.words);
            let b = [&fx.inputs[0], &fx.inputs[1], &w.mem, &om, &fx.out];
            dispatch(rec, Shader::GgmlMvSubFx(t, outs), f16, &b, 3, &all, grid(groups)?)?;
            return Ok(Some(out));
        }
    }
    // x made by a held-back one-row rms_norm (after a residual add or not): computed here.
    // Not for the widest GEMVs (the logits): every workgroup recomputes the norm, which there
    // costs more than the dispatch it saves.
    if let (Shader::GgmlMvSub(t, outs), true) = (shader, k <= FX_MAX_K && groups <= NX_MAX_GROUPS) {
        if let Some(nx) = defer::take_norm_x(rec, &bx.mem, bx.off, k, f16) {
            let mut all = [0u32; 13];
            all[..7].copy_from_slice(&push);
            all[7..].copy_from_slice(&nx.words);
            let b = [&nx.inputs[0], &nx.inputs[1], &nx.inputs[2], &w.mem, &om, &nx.outs[0], &nx.outs[1]];
            dispatch(rec, Shader::GgmlMvSubNx(t, outs), f16, &b, 4, &all, grid(groups)?)?;
            return Ok(Some(out));
        }
    }
    dispatch(rec, shader, f16, &[&bx.mem, &w.mem, &om], 2, &push, grid(groups)?)?;
    Ok(Some(out))
}

/// The longest x that ggml_mv_sub_fx.comp computes (its shared array, 16 KiB of float32: the
/// least shared memory Vulkan guarantees; ggml_mv_sub.glsl's FX_MAX_K).
pub(crate) const FX_MAX_K: usize = 4096;

/// The most workgroups a GEMV that computes its x from a held-back norm may have (each
/// recomputes the norm): a decode step's Q/K/V and gate/up GEMVs are far below, the logits'
/// GEMV (49152 rows, 4 outputs a subgroup: 3072 workgroups) above.
const NX_MAX_GROUPS: usize = 2048;

/// [`gather_rows`] with int32 or uint32 indices in device memory: gather.comp copies the rows
/// as words (rows and the table's start must be whole words; others run on the CPU).
fn gather_rows_on_device(rec: &mut Recorder, table: (&Data, &[usize]), ids: (&Data, &[usize], DType), sizes: &[usize], itemsize: usize) -> Result<Option<Data>> {
    let (t, shape) = table;
    let rows = shape[0];
    let row_bytes = sizes[1..].iter().product::<usize>() * itemsize;
    let n_ids: usize = ids.1.iter().product();
    let ids_ok = matches!(ids.2, DType::Int32 | DType::Uint32) && ids.0.is_row_contiguous(ids.1);
    let n = n_ids * (row_bytes / 4);
    if row_bytes % 4 != 0 || !ids_ok || rows == 0 || row_bytes == 0 || !fits_u32(rows) || !fits_u32(n) {
        return Ok(None);
    }
    let bt = bind(rec, t, shape, itemsize)?;
    // The table's first word (its memory is a whole number of words: uploads are rounded up
    // and a table of whole-word rows fills its output).
    let first = bt.off * itemsize;
    if first % 4 != 0 || !fits_u32(first / 4 + rows * (row_bytes / 4)) {
        return Ok(None);
    }
    let bi = bind(rec, ids.0, ids.1, 4)?;
    let mut out_shape = ids.1.to_vec();
    out_shape.extend_from_slice(sizes);
    let (om, out) = output(rec, &out_shape, itemsize, "gather")?;
    if n == 0 {
        return Ok(Some(out));
    }
    let push = [n as u32, (row_bytes / 4) as u32, rows as u32, (first / 4) as u32, bi.off as u32];
    dispatch(rec, Shader::Gather, false, &[&bt.mem, &bi.mem, &om], 2, &push, grid(n.div_ceil(GROUP as usize))?)?;
    Ok(Some(out))
}

/// `ggml_dequantize`: `w` (uint8 `[n, row_bytes]`, GGUF blocks of type `ty` for rows of `k`
/// weights) to float32 `[n, k]`, on the GPU for the types ggml_matmul covers.
pub(crate) fn ggml_dequantize(rec: &mut Recorder, w: (&Data, &[usize]), ty: GgmlType, k: usize) -> Result<Option<Data>> {
    let [n, row_bytes] = *w.1 else { return Ok(None) };
    // The shader reads words: the weight must start on an even byte (block scales are 16-bit)
    // and its buffer must end on a whole word.
    let words_ok = w.0.offset % 2 == 0 && w.0.buf.len() % 4 == 0;
    if !ggml_covered(ty) || k == 0 || k % 32 != 0 || ty.row_bytes(k) != Some(row_bytes) || !w.0.is_row_contiguous(w.1) || !words_ok {
        return Ok(None);
    }
    let chunks = n * (k / 32);
    if !fits_u32(n * row_bytes + 4) || !fits_u32(n * k) {
        return Ok(None);
    }
    let bw = bind(rec, w.0, w.1, 1)?;
    if !fits_u32(bw.off + n * row_bytes + 4) {
        return Ok(None);
    }
    let (om, out) = output(rec, &[n, k], 4, "ggml_dequantize")?;
    if chunks == 0 {
        return Ok(Some(out));
    }
    let push = [chunks as u32, k as u32, row_bytes as u32, bw.off as u32];
    dispatch(rec, Shader::GgmlDequant(ty.id()), false, &[&bw.mem, &om], 1, &push, grid(chunks.div_ceil(GROUP as usize))?)?;
    Ok(Some(out))
}

/// `gather` of whole rows along axis 0 (what `take(table, ids, axis=0)` records: the embedding
/// lookup), any dtype. Indices the host holds (a prompt's token ids): one copy command of a
/// region per index. Indices on the device (the token a decode step chose, read by the next
/// step before the host sees it): [`gather_rows_on_device`]. Other windows run on the CPU.
pub(crate) fn gather_rows(rec: &mut Recorder, table: (&Data, &[usize]), ids: &mlx_arm_core::Array, sizes: &[usize], itemsize: usize) -> Result<Option<Data>> {
    const OP: &str = "gather";
    let (t, shape) = table;
    let Some((&rows, row_shape)) = shape.split_first() else { return Ok(None) };
    if sizes.first() != Some(&1) || sizes[1..] != *row_shape || !t.is_row_contiguous(shape) {
        return Ok(None);
    }
    let ids_data = ids.data_on_device()?;
    if ids_data.buf.device_memory().is_some() {
        return gather_rows_on_device(rec, table, (&ids_data, ids.shape(), ids.dtype()), sizes, itemsize);
    }
    let wanted: Vec<i64> = match ids.dtype() {
        DType::Int32 => ids.to_vec::<i32>()?.into_iter().map(i64::from).collect(),
        DType::Uint32 => ids.to_vec::<u32>()?.into_iter().map(i64::from).collect(),
        DType::Int64 => ids.to_vec::<i64>()?,
        _ => return Ok(None),
    };
    let row_bytes = row_shape.iter().product::<usize>() * itemsize;
    let mut out_shape = ids.shape().to_vec();
    out_shape.extend_from_slice(sizes);
    let bt = bind(rec, t, shape, itemsize)?;
    let (om, out) = output(rec, &out_shape, itemsize, OP)?;
    let mut regions = Vec::with_capacity(wanted.len());
    for (k, &i) in wanted.iter().enumerate() {
        // Negative indices count from the end, as on the CPU.
        let r = if i < 0 { i + rows as i64 } else { i };
        if r < 0 || r >= rows as i64 {
            return Err(Error::index(OP, format!("index {i} is out of bounds for axis 0 with size {rows}")));
        }
        let src = bt.off * itemsize + r as usize * row_bytes;
        if src + row_bytes > bt.mem.size {
            return Err(Error::runtime(OP, "A gathered row lies outside its GPU buffer."));
        }
        regions.push(vk::BufferCopy { src_offset: src as u64, dst_offset: (k * row_bytes) as u64, size: row_bytes as u64 });
    }
    if row_bytes > 0 {
        rec.copy_regions(&bt.mem, &om, &regions)?;
    }
    Ok(Some(out))
}
