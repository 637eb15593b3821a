//! CPU kernels of the quantized family: thin array wrappers over the slice kernels of
//! [`crate::quant::mlx`] and [`crate::quant::ggml`]. Products run in parallel over ranges of
//! weight rows (`x @ Wᵀ`) or of activation rows (`x @ W`) through [`parallel_for`]; batched
//! operands are addressed through their strides, so a broadcast weight is never copied.

use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::cpu::elementwise::OutPtr;
use crate::cpu::{input, out0};
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::ops::quantized::QuantizedOp;
use crate::parallel::parallel_for;
use crate::quant::ggml;
use crate::quant::mlx::{self as qm, QFloat, QScales, QuantMode, QuantParams};
use crate::quant::GgmlType;
use alloc::borrow::Cow;
use alloc::vec;
use alloc::vec::Vec;

/// Per-task work of `ggml_matmul` in multiply-adds (its SIMD dot products run ~10x faster than
/// scalar kernels, whose break-even was 2^16).
const GGML_GRAIN_MACS: usize = 1 << 18;
/// Decode GEMV (m = 1) work per task, in weight bytes: a GEMV streams its weights once and is
/// bound by memory bandwidth per core, so it pays to share out across threads as soon as a
/// task's slice of weights (16 KiB: a few microseconds) outweighs claiming it. Sized in bytes
/// rather than multiply-adds because that is what the kernel is limited by.
const GEMV_GRAIN_BYTES: usize = 16 << 10;
/// Weight rows per GEMV task are rounded up to a multiple of this (16 f32 outputs: one cache
/// line), so a task writes whole lines of the output and at most the lines at its ends are
/// shared with a neighbour (each written once, at the end of its row's dot product).
const GEMV_ROW_ALIGN: usize = 16;

/// Weight rows per `parallel_for` task of `ggml_matmul` with `m` activation rows of `k`.
fn ggml_rows_per_task(ty: GgmlType, m: usize, k: usize) -> usize {
    if m == 1 {
        let row = ty.row_bytes(k).unwrap_or(k).max(1);
        return (GEMV_GRAIN_BYTES / row).max(1).next_multiple_of(GEMV_ROW_ALIGN);
    }
    // At least GGML_GRAIN_MACS multiply-adds per task, so waking the pool (microseconds)
    // stays small beside the SIMD work it shares out; and at least 16 weight rows, so the
    // tiled kernel reuses each activation tile across many weight rows instead of streaming
    // all activations per row.
    (GGML_GRAIN_MACS / (m * k).max(1)).max(16)
}

/// Runs `body` with `T` bound to the kernel float type of `dtype`.
macro_rules! float3 {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {{
        match $dtype {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float16 => {
                type $T = half::f16;
                $body
            }
            DType::Bfloat16 => {
                type $T = half::bf16;
                $body
            }
            other => Err(Error::runtime($op, alloc::format!("Type {other} is not supported."))),
        }
    }};
}

/// Evaluates a quantized primitive.
pub fn eval(op: &QuantizedOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    match *op {
        QuantizedOp::Quantize { mode, group_size, bits } => {
            quantize(QuantParams { mode, group_size, bits }, &inputs, outputs)
        }
        QuantizedOp::Dequantize { mode, group_size, bits } => {
            dequantize(QuantParams { mode, group_size, bits }, &inputs, outputs).map(|d| vec![d])
        }
        QuantizedOp::QuantizedMatmul { mode, group_size, bits, transpose } => {
            let p = QuantParams { mode, group_size, bits };
            let o = out0(outputs, name)?;
            float3!(name, o.1, T => qmm_batched::<T>(&p, transpose, &inputs, o, false)).map(|d| vec![d])
        }
        QuantizedOp::GatherQmm { mode, group_size, bits, transpose } => {
            let p = QuantParams { mode, group_size, bits };
            let o = out0(outputs, name)?;
            float3!(name, o.1, T => qmm_batched::<T>(&p, transpose, &inputs, o, true)).map(|d| vec![d])
        }
        QuantizedOp::ToFp8 => {
            let x = input(&inputs, 0, name)?;
            let o = out0(outputs, name)?;
            float3!(name, x.dtype(), T => {
                let d = x.data()?;
                let src = d.read::<T>(x.shape())?;
                let out = Data::alloc_for_overwrite(&o.0, DType::Uint8, name)?;
                // SAFETY: fresh buffer of src.len() bytes.
                qm::to_fp8_slice::<T>(&src, unsafe { out.slice_mut::<u8>(src.len()) })?;
                Ok(vec![out])
            })
        }
        QuantizedOp::FromFp8 => {
            let x = input(&inputs, 0, name)?;
            let o = out0(outputs, name)?;
            let d = x.data()?;
            let src = d.read::<u8>(x.shape())?;
            float3!(name, o.1, T => {
                let out = Data::alloc_for_overwrite(&o.0, <T as QFloat>::DTYPE, name)?;
                // SAFETY: fresh buffer of src.len() elements of T.
                qm::from_fp8_slice::<T>(&src, unsafe { out.slice_mut::<T>(src.len()) })?;
                Ok(vec![out])
            })
        }
        QuantizedOp::GgmlMatmul { ty, k } => {
            let o = out0(outputs, name)?;
            float3!(name, o.1, T => ggml_matmuls::<T>(&[ty], k, &inputs, outputs))
        }
        QuantizedOp::GgmlMatmulMany { ref tys, k } => {
            let o = out0(outputs, name)?;
            float3!(name, o.1, T => ggml_matmuls::<T>(tys, k, &inputs, outputs))
        }
        QuantizedOp::GgmlDequantize { ty, k } => ggml_dequantize(ty, k, &inputs, outputs).map(|d| vec![d]),
        QuantizedOp::GgmlQuantize { ty } => ggml_quantize(ty, &inputs, outputs).map(|d| vec![d]),
    }
}

/// A fresh output holding `v`.
fn data_from<T: Element>(shape: &[usize], v: &[T], op: &'static str) -> Result<Data> {
    let out = Data::alloc_for_overwrite(shape, <T as Element>::DTYPE, op)?;
    if shape.iter().product::<usize>() != v.len() {
        return Err(Error::runtime(op, "Kernel output size mismatch."));
    }
    // SAFETY: fresh buffer of v.len() elements of T.
    unsafe { out.slice_mut::<T>(v.len()) }.copy_from_slice(v);
    Ok(out)
}

/// The single f32 value of a global-scale input.
fn scalar_f32(a: &Array) -> Result<f32> {
    let d = a.data()?;
    let v = d.read::<f32>(a.shape())?;
    v.first().copied().ok_or_else(|| Error::invalid("quantize", "Global scale must be a scalar."))
}

fn quantize(p: QuantParams, inputs: &[Array], outputs: &[OutMeta]) -> Result<Vec<Data>> {
    const OP: &str = "quantize";
    let w = input(inputs, 0, OP)?;
    let gs = match inputs.get(1) {
        Some(g) => Some(scalar_f32(g)?),
        None => None,
    };
    let k = w.shape().last().copied().unwrap_or(0);
    let meta = |i: usize| outputs.get(i).ok_or_else(|| Error::runtime(OP, "Missing output."));
    float3!(OP, w.dtype(), T => {
        let d = w.data()?;
        let src = d.read::<T>(w.shape())?;
        if p.mode == QuantMode::Affine {
            let (wq, s, b) = qm::affine_quantize::<T>(&src, k, &p)?;
            Ok(vec![
                data_from(&meta(0)?.0, &wq, OP)?,
                data_from(&meta(1)?.0, &s, OP)?,
                data_from(&meta(2)?.0, &b, OP)?,
            ])
        } else {
            let (wq, s) = qm::fp_quantize::<T>(&src, k, &p, gs)?;
            Ok(vec![data_from(&meta(0)?.0, &wq, OP)?, data_from(&meta(1)?.0, &s, OP)?])
        }
    })
}

fn dequantize(p: QuantParams, inputs: &[Array], outputs: &[OutMeta]) -> Result<Data> {
    const OP: &str = "dequantize";
    let o = out0(outputs, OP)?;
    let w = input(inputs, 0, OP)?;
    let scales = input(inputs, 1, OP)?;
    let k = o.0.last().copied().unwrap_or(0);
    let n: usize = o.0.iter().product();
    let wd = w.data()?;
    let wq = wd.read::<u32>(w.shape())?;
    let sd = scales.data()?;
    if p.mode == QuantMode::Affine {
        let biases = input(inputs, 2, OP)?;
        let bd = biases.data()?;
        float3!(OP, o.1, T => {
            let s = sd.read::<T>(scales.shape())?;
            let b = bd.read::<T>(biases.shape())?;
            let out = Data::alloc_for_overwrite(&o.0, <T as QFloat>::DTYPE, OP)?;
            // SAFETY: fresh buffer of n elements of T.
            qm::affine_dequantize::<T, T>(&wq, &s, &b, k, &p, unsafe { out.slice_mut::<T>(n) })?;
            Ok(out)
        })
    } else {
        let gs = match inputs.get(2) {
            Some(g) => Some(scalar_f32(g)?),
            None => None,
        };
        let s = sd.read::<u8>(scales.shape())?;
        float3!(OP, o.1, T => {
            let out = Data::alloc_for_overwrite(&o.0, <T as QFloat>::DTYPE, OP)?;
            // SAFETY: fresh buffer of n elements of T.
            qm::fp_dequantize::<T>(&wq, &s, k, &p, gs, unsafe { out.slice_mut::<T>(n) })?;
            Ok(out)
        })
    }
}

/// The matrices of a `(..., R, C)` array addressed through its batch strides: a borrowed
/// view of the buffer when the last two axes are dense (broadcast batches are not copied),
/// else a row-major copy.
struct Mats<'a, T: Clone> {
    data: Cow<'a, [T]>,
    batch_shape: Vec<usize>,
    batch_strides: Vec<isize>,
    mat_len: usize,
}

impl<'a, T: Element> Mats<'a, T> {
    /// Views `d` (of `shape`, at least 1-D; a 1-D array is one row).
    fn new(d: &'a Data, shape: &[usize]) -> Result<Self> {
        let nd = shape.len();
        let (r, c) = match nd {
            0 => (1, 1),
            1 => (1, shape[0]),
            _ => (shape[nd - 2], shape[nd - 1]),
        };
        let nb = nd.saturating_sub(2);
        let batch_shape = shape[..nb].to_vec();
        let mat_len = r * c;
        if let Some(v) = Self::borrow(d, shape, r, c) {
            return Ok(Mats { data: Cow::Borrowed(v), batch_strides: d.strides[..nb].to_vec(), batch_shape, mat_len });
        }
        let owned = d.read::<T>(shape)?.into_owned();
        let mut strides = vec![0isize; nb];
        let mut acc = mat_len as isize;
        for i in (0..nb).rev() {
            strides[i] = acc;
            acc *= batch_shape[i] as isize;
        }
        Ok(Mats { data: Cow::Owned(owned), batch_shape, batch_strides: strides, mat_len })
    }

    fn borrow(d: &'a Data, shape: &[usize], r: usize, c: usize) -> Option<&'a [T]> {
        let nd = shape.len();
        if shape.contains(&0) || nd < 2 || d.strides.len() != nd {
            return None;
        }
        let dense = (c <= 1 || d.strides[nd - 1] == 1) && (r <= 1 || d.strides[nd - 2] == c as isize);
        if !dense || d.strides.iter().any(|&s| s < 0) {
            return None;
        }
        let mut extent = r * c;
        for (&dim, &st) in shape[..nd - 2].iter().zip(&d.strides) {
            extent = extent.checked_add((dim - 1).checked_mul(st as usize)?)?;
        }
        let size = core::mem::size_of::<T>();
        let end = d.offset.checked_add(extent.checked_mul(size)?)?;
        if end > d.buf.len() {
            return None;
        }
        // SAFETY: offset lies in the buffer (checked above), so the pointer is valid.
        let base = unsafe { d.buf.as_ptr().add(d.offset) };
        if (base as usize) % core::mem::align_of::<T>() != 0 {
            return None;
        }
        // SAFETY: `extent` elements of T from `base` lie inside the buffer, which outlives 'a,
        // and nobody writes an input buffer while a kernel reads it.
        Some(unsafe { core::slice::from_raw_parts(base as *const T, extent) })
    }

    /// Number of matrices.
    fn count(&self) -> usize {
        self.batch_shape.iter().product()
    }

    /// Matrix number `i` (row-major over the batch shape), or an index error.
    fn mat(&self, i: usize, op: &'static str) -> Result<&[T]> {
        if i >= self.count() {
            return Err(Error::index(op, alloc::format!("Matrix index {i} is out of range for a batch of {}.", self.count())));
        }
        let mut rem = i;
        let mut off = 0usize;
        for (&dim, &st) in self.batch_shape.iter().zip(&self.batch_strides).rev() {
            off += (rem % dim) * st as usize;
            rem /= dim;
        }
        self.data.get(off..off + self.mat_len).ok_or_else(|| Error::runtime(op, "Matrix view out of bounds."))
    }
}

/// Records the first error raised inside a parallel region.
struct FirstError(spin::Mutex<Option<Error>>);

impl FirstError {
    fn new() -> Self {
        FirstError(spin::Mutex::new(None))
    }
    fn set(&self, r: Result<()>) {
        if let Err(e) = r {
            let mut g = self.0.lock();
            if g.is_none() {
                *g = Some(e);
            }
        }
    }
    fn into_result(self) -> Result<()> {
        match self.0.into_inner() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// `quantized_matmul` (`gather = false`) or `gather_qmm` over every output matrix.
fn qmm_batched<T: QFloat + Element + Sync>(
    p: &QuantParams,
    transpose: bool,
    inputs: &[Array],
    o: &OutMeta,
    gather: bool,
) -> Result<Data> {
    let op: &'static str = if gather { "gather_qmm" } else { "quantized_matmul" };
    let x = input(inputs, 0, op)?;
    let w = input(inputs, 1, op)?;
    let s = input(inputs, 2, op)?;
    let affine = p.mode == QuantMode::Affine;
    let (xd, wd, sd) = (x.data()?, w.data()?, s.data()?);
    let xm = Mats::<T>::new(&xd, x.shape())?;
    let wm = Mats::<u32>::new(&wd, w.shape())?;
    let k = x.shape().last().copied().unwrap_or(0);
    let m = if x.ndim() > 1 { x.shape()[x.ndim() - 2] } else { 1 };
    let n = o.0.last().copied().unwrap_or(0);
    let out_len: usize = o.0.iter().product();
    let out = Data::alloc_for_overwrite(&o.0, <T as QFloat>::DTYPE, op)?;
    // SAFETY: fresh buffer of out_len elements of T, written only through this slice.
    let out_s = unsafe { out.slice_mut::<T>(out_len) };
    let mn = m * n;
    if mn == 0 {
        return Ok(out);
    }
    let n_out = out_len / mn;
    // Scales / biases and the (x, w) matrix index of output matrix i.
    let bd;
    let (sm_f, sm_u, bm) = if affine {
        let b = input(inputs, 3, op)?;
        bd = b.data()?;
        (Some(Mats::<T>::new(&sd, s.shape())?), None, Some(Mats::<T>::new(&bd, b.shape())?))
    } else {
        (None, Some(Mats::<u8>::new(&sd, s.shape())?), None)
    };
    let idx = if gather {
        let nb = if affine { 4 } else { 3 };
        let l = input(inputs, nb, op)?;
        let r = input(inputs, nb + 1, op)?;
        let (ld, rd) = (l.data()?, r.data()?);
        let lv = ld.read::<u32>(l.shape())?.into_owned();
        let rv = rd.read::<u32>(r.shape())?.into_owned();
        Some((lv, rv))
    } else {
        None
    };
    let w_same_batch = wm.batch_shape.as_slice() == &o.0[..o.0.len().saturating_sub(2)] && o.0.len() >= 2;
    for (i, o_mat) in out_s.chunks_exact_mut(mn).enumerate().take(n_out) {
        let (xi, wi) = match &idx {
            Some((lv, rv)) => (
                *lv.get(i).ok_or_else(|| Error::runtime(op, "Index arrays are too short."))? as usize,
                *rv.get(i).ok_or_else(|| Error::runtime(op, "Index arrays are too short."))? as usize,
            ),
            None => (i, if w_same_batch { i } else { 0 }),
        };
        let xs = xm.mat(xi, op)?;
        let ws = wm.mat(wi, op)?;
        let sc = match (&sm_f, &sm_u, &bm) {
            (Some(sf), _, Some(b)) => QScales::Affine { scales: sf.mat(wi, op)?, biases: b.mat(wi, op)? },
            (_, Some(su), _) => QScales::Fp(su.mat(wi, op)?),
            _ => return Err(Error::runtime(op, "Missing scales.")),
        };
        qmm_one::<T>(xs, m, k, ws, sc, n, p, transpose, o_mat)?;
    }
    Ok(out)
}

/// One `(m × k) · W` product into `out` (`m × n`), threaded by the SIMD driver of the mode
/// (`cpu::affine`, `cpu::mlx_fp`) at the active ISA level.
#[allow(clippy::too_many_arguments)]
fn qmm_one<T: QFloat + Sync>(
    x: &[T],
    m: usize,
    k: usize,
    w: &[u32],
    sc: QScales<'_, T>,
    n: usize,
    p: &QuantParams,
    transpose: bool,
    out: &mut [T],
) -> Result<()> {
    let level = crate::cpu::isa::isa();
    match sc {
        QScales::Affine { scales, biases } => crate::cpu::affine::qmm_at(level, x, m, k, w, scales, biases, n, p, transpose, out),
        QScales::Fp(scales) => crate::cpu::mlx_fp::qmm_fp_at(level, x, m, k, w, scales, n, p, transpose, out),
    }
}

/// `ggml_matmul` of one `x` by the weights `inputs[1..]` (types `tys`), one output each:
/// activations quantized once per activation type, then one parallel pass over the weights'
/// rows end to end (a task may cover the end of one weight and the start of the next).
fn ggml_matmuls<T: QFloat + Element>(tys: &[GgmlType], k: usize, inputs: &[Array], outs: &[OutMeta]) -> Result<Vec<Data>> {
    const OP: &str = "ggml_matmul";
    if outs.len() != tys.len() || inputs.len() != tys.len() + 1 {
        return Err(Error::runtime(OP, "Weights, types and outputs do not match."));
    }
    let x = input(inputs, 0, OP)?;
    let xd = x.data()?;
    let xs = xd.read::<T>(x.shape())?;
    let m = xs.len().checked_div(k).unwrap_or(0);
    let out_lens: Vec<usize> = outs.iter().map(|o| o.0.iter().product()).collect();
    let datas = outs.iter().map(|o| Data::alloc_for_overwrite(&o.0, <T as QFloat>::DTYPE, OP)).collect::<Result<Vec<Data>>>()?;
    if m == 0 || k == 0 {
        for (d, &len) in datas.iter().zip(&out_lens) {
            // SAFETY: fresh buffer of len elements of T.
            unsafe { d.slice_mut::<T>(len) }.iter_mut().for_each(|v| *v = T::from_f32(0.0));
        }
        return Ok(datas);
    }
    let xf = qm::widen_f32(&xs);
    let mut acts: Vec<(GgmlType, ggml::QuantizedActivations)> = Vec::new();
    for &ty in tys {
        if !acts.iter().any(|(t, _)| *t == ty) {
            acts.push((ty, ggml::quantize_activations(ty, &xf, m, k)?));
        }
    }
    let wds = (1..inputs.len()).map(|i| input(inputs, i, OP)?.data()).collect::<Result<Vec<Data>>>()?;
    let wbs = wds.iter().zip(&inputs[1..]).map(|(d, w)| d.read::<u8>(w.shape())).collect::<Result<Vec<_>>>()?;
    // f32 results go straight into the outputs; other dtypes through f32 buffers.
    let mut tmps: Vec<Vec<f32>> = Vec::new();
    let mut ptrs: Vec<OutPtr<f32>> = Vec::with_capacity(tys.len());
    for (d, &len) in datas.iter().zip(&out_lens) {
        if <T as QFloat>::DTYPE == DType::Float32 {
            // SAFETY: fresh buffer of len f32 elements, written only through this pointer.
            ptrs.push(OutPtr(unsafe { d.slice_mut::<f32>(len) }.as_mut_ptr()));
        } else {
            tmps.push(qm::try_zeroed(OP, len, 0.0f32)?);
            ptrs.push(OutPtr(tmps.last_mut().map_or(core::ptr::null_mut(), |t| t.as_mut_ptr())));
        }
    }
    let act = |ty: GgmlType| acts.iter().find(|(t, _)| *t == ty).map(|(_, a)| a);
    // Float weights (F32 / F16 / BF16) go through the float GEMM, threaded on its own; the
    // others share one pass, each weight's rows placed end to end.
    let mut in_pass = alloc::vec![true; tys.len()];
    for (i, &ty) in tys.iter().enumerate() {
        if let Some(xq) = act(ty) {
            in_pass[i] = !float_weight_matmul(ty, &wbs[i], out_lens[i] / m, xq, m, k, ptrs[i]);
        }
    }
    let rows: Vec<usize> = out_lens.iter().zip(&in_pass).map(|(&len, &p)| if p { len / m } else { 0 }).collect();
    let starts: Vec<usize> = rows.iter().scan(0, |at, &n| Some(core::mem::replace(at, *at + n))).collect();
    let total: usize = rows.iter().sum();
    let grain = tys.iter().map(|&ty| ggml_rows_per_task(ty, m, k)).min().unwrap_or(1);
    let errs = FirstError::new();
    parallel_for(total, grain, &|r| {
        for (i, (&start, &n)) in starts.iter().zip(&rows).enumerate() {
            let (lo, hi) = (r.start.max(start), r.end.min(start + n));
            if lo < hi {
                if let Some(xq) = act(tys[i]) {
                    errs.set(ggml_rows_into(tys[i], &wbs[i], n, xq, m, ptrs[i], lo - start..hi - start));
                }
            }
        }
    });
    errs.into_result()?;
    if <T as QFloat>::DTYPE != DType::Float32 {
        for ((d, &len), tmp) in datas.iter().zip(&out_lens).zip(&tmps) {
            // SAFETY: fresh buffer of len elements of T.
            for (o, &v) in unsafe { d.slice_mut::<T>(len) }.iter_mut().zip(tmp.iter()) {
                *o = T::from_f32(v);
            }
        }
    }
    Ok(datas)
}

/// `x @ Wᵀ` for a weight of plain floats (GGUF F32 / F16 / BF16), `n` rows, through the float
/// GEMM (packing, register tiles, its own threads) into the `(m, n)` result at `out`; the
/// activations are the partner type's rows (`x` rounded to the weight's type, as ggml does),
/// products summed in f32. False for other types or buffers that do not fit (left to the
/// block-wise dot, which is exact but scalar: ~1 GFLOP/s).
fn float_weight_matmul(ty: GgmlType, w: &[u8], n: usize, xq: &ggml::QuantizedActivations, m: usize, k: usize, out: OutPtr<f32>) -> bool {
    use crate::cpu::gemm::{gemm, GemmIn, MatMut, MatRef};
    fn run<S: GemmIn<f32>>(w: &[u8], n: usize, x: &[u8], m: usize, k: usize, out: OutPtr<f32>) -> bool {
        let sz = core::mem::size_of::<S>();
        let fits = |b: &[u8], rows: usize| rows.checked_mul(k).and_then(|e| e.checked_mul(sz)).is_some_and(|need| b.len() >= need);
        let aligned = |b: &[u8]| (b.as_ptr() as usize) % core::mem::align_of::<S>() == 0;
        if !fits(w, n) || !fits(x, m) || !aligned(w) || !aligned(x) {
            return false;
        }
        // SAFETY: A = x as m × k rows, B = Wᵀ (element (p, j) = W[j][p]) as k × n, both inside
        // their buffers (checked above) and read-only; C = the fresh (m, n) f32 output.
        unsafe {
            let a = MatRef::new(x.as_ptr() as *const S, k as isize, 1);
            let b = MatRef::new(w.as_ptr() as *const S, 1, k as isize);
            gemm::<S, f32>(m, n, k, 1.0, a, b, 0.0, MatMut::new(out.0, n), true);
        }
        true
    }
    match (ty, xq.ty) {
        (GgmlType::F32, GgmlType::F32) => run::<f32>(w, n, &xq.data, m, k, out),
        (GgmlType::F16, GgmlType::F16) => run::<half::f16>(w, n, &xq.data, m, k, out),
        (GgmlType::BF16, GgmlType::BF16) => run::<half::bf16>(w, n, &xq.data, m, k, out),
        _ => false,
    }
}

/// Weight rows `r` of one `ggml_matmul` (`n` rows, `m` activation rows) into the `(m, n)`
/// f32 result at `out`.
fn ggml_rows_into(
    ty: GgmlType,
    wb: &[u8],
    n: usize,
    xq: &ggml::QuantizedActivations,
    m: usize,
    out: OutPtr<f32>,
    r: core::ops::Range<usize>,
) -> Result<()> {
    let width = r.end - r.start;
    if m == 1 {
        // SAFETY: the caller's tasks cover disjoint weight-row ranges; r ⊂ 0..n = 0..out.len().
        let o = unsafe { out.chunk(&r) };
        return ggml::qmatmul_rows_quantized(ty, wb, n, xq, o, r.clone());
    }
    let mut tile = vec![0f32; m * width];
    ggml::qmatmul_rows_quantized(ty, wb, n, xq, &mut tile, r.clone())?;
    for (i, row) in tile.chunks_exact(width.max(1)).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            // SAFETY: in bounds; only this task writes column r.start + j.
            unsafe { *out.0.add(i * n + r.start + j) = v };
        }
    }
    Ok(())
}

fn ggml_dequantize(ty: GgmlType, k: usize, inputs: &[Array], outputs: &[OutMeta]) -> Result<Data> {
    const OP: &str = "ggml_dequantize";
    let o = out0(outputs, OP)?;
    let w = input(inputs, 0, OP)?;
    let n = w.shape().first().copied().unwrap_or(0);
    let wd = w.data()?;
    let wb = wd.read::<u8>(w.shape())?;
    let out = Data::alloc_for_overwrite(&o.0, DType::Float32, OP)?;
    let len = n * k;
    // SAFETY: fresh buffer of n*k f32 elements.
    let dst = unsafe { out.slice_mut::<f32>(len) };
    if len > 0 {
        ggml::dequantize_row(ty, &wb, dst)?;
    }
    Ok(out)
}

fn ggml_quantize(ty: GgmlType, inputs: &[Array], outputs: &[OutMeta]) -> Result<Data> {
    const OP: &str = "ggml_quantize";
    let o = out0(outputs, OP)?;
    let w = input(inputs, 0, OP)?;
    let wd = w.data()?;
    let src = wd.read::<f32>(w.shape())?;
    let bytes: usize = o.0.iter().product();
    let out = Data::alloc_for_overwrite(&o.0, DType::Uint8, OP)?;
    // SAFETY: fresh buffer of `bytes` bytes.
    let dst = unsafe { out.slice_mut::<u8>(bytes) };
    if !src.is_empty() {
        ggml::quantize_row(ty, &src, dst)?;
    }
    Ok(out)
}
