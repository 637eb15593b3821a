//! Kernels that do in one dispatch what a decode step otherwise spends several on: a fused
//! elementwise program (core's `FusedOp`: the SwiGLU `g·sigmoid(g)·u` of every layer, three
//! dispatches unfused), and several GGUF projections of one activation row (a layer's Q/K/V,
//! its gate/up) as one GEMV over their weights laid end to end in one buffer (made once per
//! set of weights and kept while they live). Results equal the unfused kernels' bit for bit.

use crate::defer;
use crate::kernels::{self, bind, fits_u32, grid, output, variant, Bound};
use crate::memory::VkMemory;
use crate::queue::Recorder;
use ash::vk;
use gpu_allocator::MemoryLocation;
use mlx_arm_core::array::Data;
use mlx_arm_core::ops::fused::FusedOp;
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{DType, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// fused.comp's limits: inputs bound, and steps in its push constants.
const MAX_INPUTS: usize = 4;
const MAX_STEPS: usize = 12;

/// fused.comp's word for one step (op code, binary flag, argument registers), or `None` when
/// the shader has no code for the step's primitive.
fn step_word(prim: &Primitive, args: &[usize]) -> Option<u32> {
    let reg = |i: usize| args.get(i).copied().filter(|&r| r < 256).map(|r| r as u32);
    match prim {
        Primitive::Unary(op) if args.len() == 1 => Some(kernels::unary_code(*op)? | reg(0)? << 16),
        Primitive::Binary(op) if args.len() == 2 => Some(kernels::binary_code(*op)? | 1 << 8 | reg(0)? << 16 | reg(1)? << 24),
        _ => None,
    }
}

/// Whether fused.comp runs `op` on inputs of `dt` (a float type the device has): unary and
/// binary steps with shader codes, all in `dt`, within the shader's limits.
pub(crate) fn fused_covered(op: &FusedOp, dt: DType) -> bool {
    (1..=MAX_INPUTS).contains(&op.n_inputs)
        && (1..=MAX_STEPS).contains(&op.steps.len())
        && op.validate().is_ok()
        && op.steps.iter().all(|s| s.dtype == dt && step_word(&s.prim, &s.args).is_some())
}

/// `op` over `inputs` (each dense in `shape`, the output's, or a single element) in one
/// dispatch; `None` for other layouts (the CPU runs it).
pub(crate) fn fused(rec: &mut Recorder, op: &FusedOp, inputs: &[(&Data, &[usize])], shape: &[usize], dt: DType) -> Result<Option<Data>> {
    let Some(f16) = variant(dt) else { return Ok(None) };
    let n: usize = shape.iter().product();
    let single = |s: &[usize]| s.iter().product::<usize>() == 1;
    let fits = inputs.iter().all(|(d, s)| (single(s) || (*s == shape && d.is_row_contiguous(s))) && fits_u32(d.buf.len() / dt.size() + 1));
    if !fused_covered(op, dt) || inputs.len() != op.n_inputs || !fits || !fits_u32(n) {
        return Ok(None);
    }
    let bound: Vec<Bound> = inputs.iter().map(|(d, s)| bind(rec, d, s, dt.size())).collect::<Result<_>>()?;
    let (om, out) = output(rec, shape, dt.size(), "fused")?;
    if n == 0 {
        return Ok(Some(out));
    }
    let mut push = [0u32; defer::FUSED_WORDS];
    push[..3].copy_from_slice(&[n as u32, inputs.len() as u32, op.steps.len() as u32]);
    for (k, ((_, s), b)) in inputs.iter().zip(&bound).enumerate() {
        push[3] |= u32::from(single(s)) << k;
        push[4 + k] = b.off as u32;
    }
    for (w, s) in push[4 + MAX_INPUTS..].iter_mut().zip(&op.steps) {
        // Checked by `fused_covered`.
        *w = step_word(&s.prim, &s.args).unwrap_or(0);
    }
    // Unused input bindings repeat the first input (never read).
    let a = |k: usize| &bound[k.min(bound.len() - 1)].mem;
    // Held back: the down projection's GEMV may compute it (defer::take_fused_x).
    defer::fused(rec, f16, [a(0), a(1), a(2), a(3), &om], &push, grid(n.div_ceil(kernels::GROUP as usize))?)?;
    Ok(Some(out))
}

/// `x @ Wᵢᵀ` for each GGUF weight `ws[i]` (uint8 `[nᵢ, row_bytes]`, types `tys`), `x` `[..., k]`.
/// One row of `x` with weights of one type: one GEMV over the weights joined end to end, the
/// results views of its output. Otherwise (a prompt's rows, mixed types) one kernel each.
/// `None` when a weight is not covered (the CPU runs them all).
pub(crate) fn ggml_matmul_many(
    rec: &mut Recorder,
    x: (&Data, &[usize]),
    ws: &[(&Data, &[usize])],
    tys: &[GgmlType],
    k: usize,
    dt: DType,
) -> Result<Option<Vec<Data>>> {
    let m: usize = x.1[..x.1.len().saturating_sub(1)].iter().product();
    let joinable = m == 1
        && ws.len() >= 2
        && ws.len() == tys.len()
        && tys.windows(2).all(|p| p[0] == p[1])
        && ws.iter().all(|w| kernels::ggml_weight_ok(w, tys[0], k));
    if !joinable {
        let mut outs = Vec::with_capacity(ws.len());
        for (w, &ty) in ws.iter().zip(tys) {
            match kernels::ggml_matmul(rec, x, *w, ty, k, dt)? {
                Some(d) => outs.push(d),
                None => return Ok(None),
            }
        }
        return Ok(Some(outs));
    }
    let row_bytes = ws[0].1[1];
    let ns: Vec<usize> = ws.iter().map(|w| w.1[0]).collect();
    let total: usize = ns.iter().sum();
    let bound: Vec<Bound> = ws.iter().map(|(d, s)| bind(rec, d, s, 1)).collect::<Result<_>>()?;
    let joined = Bound { mem: joined_weight(rec, &bound, &ns, row_bytes)?, off: 0 };
    let Some(out) = kernels::ggml_gemv(rec, x, &joined, total, tys[0], k, dt)? else { return Ok(None) };
    // Each result is the output's columns of its weight (x has one row, so they are dense).
    let mut first = 0;
    let outs = ns
        .iter()
        .map(|&n| {
            let mut shape = x.1.to_vec();
            if let Some(last) = shape.last_mut() {
                *last = n;
            }
            let d = Data { buf: out.buf.clone(), offset: first * dt.size(), strides: kernels::row_major(&shape) };
            first += n;
            d
        })
        .collect();
    Ok(Some(outs))
}

/// A joined copy of weights, kept while every source lives.
struct Joined {
    sources: Vec<Weak<VkMemory>>,
    mem: Arc<VkMemory>,
}

/// Joined copies by their sources' (buffer, byte offset) in order.
static JOINED: Mutex<Option<HashMap<Vec<(vk::Buffer, usize)>, Joined>>> = Mutex::new(None);

/// The weights `bound` (`ns[i]` rows of `row_bytes` each) end to end in one buffer: the
/// kept copy, or a new one recorded now (once per set of weights).
fn joined_weight(rec: &mut Recorder, bound: &[Bound], ns: &[usize], row_bytes: usize) -> Result<Arc<VkMemory>> {
    let key: Vec<(vk::Buffer, usize)> = bound.iter().map(|b| (b.mem.buffer, b.off)).collect();
    let alive = |j: &Joined| j.sources.iter().zip(bound).all(|(w, b)| w.upgrade().is_some_and(|m| Arc::ptr_eq(&m, &b.mem)));
    {
        let guard = crate::lock(&JOINED);
        if let Some(j) = guard.as_ref().and_then(|all| all.get(&key)).filter(|j| alive(j)) {
            return Ok(j.mem.clone());
        }
    }
    let ctx = rec.ctx();
    let bytes: usize = ns.iter().sum::<usize>() * row_bytes;
    let loc = if ctx.info.shared_memory { MemoryLocation::CpuToGpu } else { MemoryLocation::GpuOnly };
    // Whole words: the shader reads the blocks as 32-bit words.
    let mem = VkMemory::new(ctx, bytes.next_multiple_of(4), loc, "ggml_matmul_many")?;
    let mut at = 0;
    for (b, &n) in bound.iter().zip(ns) {
        let len = n * row_bytes;
        rec.copy_regions(&b.mem, &mem, &[vk::BufferCopy { src_offset: b.off as u64, dst_offset: at as u64, size: len as u64 }])?;
        at += len;
    }
    let mut guard = crate::lock(&JOINED);
    let all = guard.get_or_insert_with(HashMap::new);
    // Copies of released weights go when a new copy is made (once per set of weights).
    all.retain(|_, j| j.sources.iter().all(|w| w.strong_count() > 0));
    all.insert(key, Joined { sources: bound.iter().map(|b| Arc::downgrade(&b.mem)).collect(), mem: mem.clone() });
    Ok(mem)
}
