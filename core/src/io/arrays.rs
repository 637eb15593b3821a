//! Array-level loading and saving over the byte-slice parsers — `mx.load` / `mx.save*`.
//!
//! Every loader works on one [`Buffer`] holding the whole file: a memory mapping (with `std`,
//! see [`super::mmap`]), a `&'static [u8]` flash region, or any other [`ExternalBytes`].
//! Arrays are **views into that buffer** (no copy, nothing read until touched) and keep it
//! alive through their `Arc`, so the file stays mapped exactly as long as an array uses it.
//!
//! A view is impossible, and the bytes are copied into a fresh allocation, when:
//! - the data start is not a multiple of the element size (MLX's own safetensors writer and
//!   `np.savez` members do not align data),
//! - the data are big-endian (`.npy` with `>` descr) or deflated (`np.savez_compressed`),
//! - the dtype is `bool` (a view could expose bytes other than 0/1; they are normalized),
//! - a GGUF tensor is converted as MLX does (Q4_0/Q4_1/Q8_0 → affine, other quants → f16).
//!
//! Those bytes are counted per load ([`Loaded::copied_bytes`]) and globally
//! ([`copied_bytes`]), so a caller can check that a model loaded zero-copy.
//!
//! Keys, dtypes, shapes and element bytes equal real MLX 0.32.4's `mx.load` (checked by
//! `core/tests/io_arrays.rs`); arrays come back in file order (MLX returns a hash map).

use alloc::borrow::ToOwned;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;
use core::sync::atomic::{AtomicUsize, Ordering};

use half::f16;

use super::gguf::{self, Value};
use super::{npy, npz, safetensors, TensorType};
use crate::array::{Array, Data};
use crate::buffer::{Buffer, ExternalBytes};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::quant::ggml::dequantize_row;
use crate::quant::GgmlType;
use crate::shape::row_major_strides;

static COPIED: AtomicUsize = AtomicUsize::new(0);

/// Bytes of array data that loads (since start or [`reset_copied_bytes`]) could not view in
/// place and copied or converted instead (see the module documentation for when).
pub fn copied_bytes() -> usize {
    COPIED.load(Ordering::Relaxed)
}

/// Resets [`copied_bytes`] to zero.
pub fn reset_copied_bytes() {
    COPIED.store(0, Ordering::Relaxed);
}

/// File-level metadata returned with the arrays.
#[derive(Clone, Debug, PartialEq)]
pub enum Metadata {
    /// `.npy` / `.npz` carry none.
    None,
    /// safetensors `__metadata__` (string → string), in header order.
    Strings(Vec<(String, String)>),
    /// GGUF key/value pairs, in file order, with their GGUF types.
    Gguf(Vec<(String, Value)>),
}

/// What a load returns: named arrays in file order plus the file's metadata.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Name → array, in file order. A `.npy` file gives one entry named `""`.
    pub arrays: Vec<(String, Array)>,
    /// The file's metadata.
    pub metadata: Metadata,
    /// Bytes of this load's arrays that were copied or converted rather than viewed.
    pub copied_bytes: usize,
}

impl Loaded {
    /// The array named `name`.
    pub fn get(&self, name: &str) -> Option<&Array> {
        self.arrays.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }
    /// Number of arrays.
    pub fn len(&self) -> usize {
        self.arrays.len()
    }
    /// No arrays?
    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
    }
    /// The names in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.arrays.iter().map(|(n, _)| n.as_str())
    }
}

/// Places tensors of one file buffer: views where possible, counted copies otherwise.
struct Placer {
    buf: Arc<Buffer>,
    copied: usize,
}

fn col_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut s = Vec::with_capacity(shape.len());
    let mut acc = 1isize;
    for &d in shape {
        s.push(acc);
        acc = acc.saturating_mul(d as isize);
    }
    s
}

fn strides_for(shape: &[usize], fortran: bool) -> Vec<isize> {
    if fortran { col_major_strides(shape) } else { row_major_strides(shape) }
}

impl Placer {
    fn new(buf: Arc<Buffer>) -> Placer {
        Placer { buf, copied: 0 }
    }

    /// An array over `range` of the buffer, viewed when aligned and not bool, else copied.
    /// `fortran` marks column-major element order (the shape stays logical).
    fn place(&mut self, op: &'static str, range: Range<usize>, shape: &[usize], dtype: DType, fortran: bool) -> Result<Array> {
        let n = super::checked_numel(op, shape)?;
        let want = n.checked_mul(dtype.size());
        if want != Some(range.len()) || range.end > self.buf.len() || range.start > range.end {
            return Err(Error::format(op, alloc::format!("data range {range:?} does not hold shape {shape:?} of {dtype}")));
        }
        let addr = (self.buf.as_ptr() as usize).wrapping_add(range.start);
        if dtype != DType::Bool && addr % dtype.size() == 0 {
            let data = Data { buf: self.buf.clone(), offset: range.start, strides: strides_for(shape, fortran) };
            return Ok(Array::from_data(shape.to_vec(), dtype, data));
        }
        let buf = self.buf.clone();
        self.owned(op, &buf.bytes()[range], shape, dtype, fortran)
    }

    /// A fresh array holding a copy of `bytes` (counted).
    fn owned(&mut self, op: &'static str, bytes: &[u8], shape: &[usize], dtype: DType, fortran: bool) -> Result<Array> {
        let mut d = Data::alloc_for_overwrite(shape, dtype, op)?;
        if d.buf.len() != bytes.len() {
            return Err(Error::format(op, alloc::format!("{} bytes do not hold shape {shape:?} of {dtype}", bytes.len())));
        }
        // SAFETY: fresh buffer of exactly bytes.len() bytes, held only here.
        let dst = unsafe { d.slice_mut::<u8>(bytes.len()) };
        dst.copy_from_slice(bytes);
        if dtype == DType::Bool {
            dst.iter_mut().for_each(|b| *b = (*b != 0) as u8);
        }
        d.strides = strides_for(shape, fortran);
        self.count(bytes.len());
        Ok(Array::from_data(shape.to_vec(), dtype, d))
    }

    fn count(&mut self, n: usize) {
        self.copied = self.copied.saturating_add(n);
        COPIED.fetch_add(n, Ordering::Relaxed);
    }
}

// ---- loaders over a buffer -------------------------------------------------------------

/// Loads a `.npy` held in `buf` (MLX: `mx.load("x.npy")`). Fortran-order data become a
/// column-strided view (MLX returns a transposed view too).
///
/// As in MLX, which reads the data lazily, a file whose header is sound but whose data is
/// cut short loads: evaluating the array fails with a runtime error naming the defect.
pub fn load_npy_buffer(buf: Arc<Buffer>) -> Result<Loaded> {
    npy_from(buf, None, false)
}

/// [`load_npy_buffer`], naming `source` (the file) in the deferred error. With `read`, the
/// data are copied into allocator memory when evaluated instead of viewed (see `files::load`).
fn npy_from(buf: Arc<Buffer>, source: Option<&str>, read: bool) -> Result<Loaded> {
    const OP: &str = "load";
    let h = npy::parse_layout(buf.bytes())?;
    if h.data.end > buf.len() {
        let mut msg = npy::missing_data(&h, buf.len()).msg;
        if let Some(f) = source {
            msg = alloc::format!("{msg} (file '{f}')");
        }
        let arr = Array::failed(h.shape, h.dtype, Error::runtime(OP, msg));
        return Ok(Loaded { arrays: alloc::vec![(String::new(), arr)], metadata: Metadata::None, copied_bytes: 0 });
    }
    let mut p = Placer::new(buf.clone());
    let arr = if h.big_endian {
        let swapped = npy::read(buf.bytes())?;
        p.owned(OP, &swapped.data, &h.shape, h.dtype, h.fortran_order)?
    } else if read {
        read_when_evaluated(p.place(OP, h.data.clone(), &h.shape, h.dtype, h.fortran_order)?, h.fortran_order)?
    } else {
        p.place(OP, h.data.clone(), &h.shape, h.dtype, h.fortran_order)?
    };
    Ok(Loaded { arrays: alloc::vec![(String::new(), arr)], metadata: Metadata::None, copied_bytes: p.copied })
}

/// `view` (of a mapping) copied into allocator memory when evaluated, as MLX reads `.npy`
/// data at evaluation: the copy counts in the memory figures and a following elementwise op
/// can donate it. Fortran order keeps its column strides (the copy is made of the transposed,
/// row-contiguous view and transposed back, as MLX returns a transposed view).
fn read_when_evaluated(view: Array, fortran: bool) -> Result<Array> {
    if !fortran {
        return crate::ops::contiguous(&view);
    }
    let dense = crate::ops::contiguous(&crate::ops::transpose(&view, None)?)?;
    crate::ops::transpose(&dense, None)
}

/// Loads an `.npz` held in `buf` (MLX: `mx.load("x.npz")`): keys are member names without
/// `.npy`. Stored members are viewed when aligned; deflated ones are inflated (counted).
/// The total uncompressed size is capped by the memory limit.
pub fn load_npz_buffer(buf: Arc<Buffer>) -> Result<Loaded> {
    const OP: &str = "load_npz";
    let members = npz::read(buf.bytes(), crate::buffer::memory_limit())?;
    let mut p = Placer::new(buf.clone());
    let mut arrays = Vec::with_capacity(members.len());
    for m in &members {
        let h = &m.header;
        let arr = match &m.source {
            Some(r) => p.place(OP, r.clone(), &h.shape, h.dtype, h.fortran_order)?,
            None => p.owned(OP, &m.data, &h.shape, h.dtype, h.fortran_order)?,
        };
        arrays.push((m.name.clone(), arr));
    }
    Ok(Loaded { arrays, metadata: Metadata::None, copied_bytes: p.copied })
}

/// Loads a safetensors file held in `buf` (MLX: `mx.load("x.safetensors", return_metadata=True)`).
pub fn load_safetensors_buffer(buf: Arc<Buffer>) -> Result<Loaded> {
    const OP: &str = "load_safetensors";
    let st = safetensors::parse(buf.bytes())?;
    let mut p = Placer::new(buf);
    let mut arrays = Vec::with_capacity(st.tensors.len());
    for t in st.tensors {
        let TensorType::Plain(dt) = t.ty else {
            return Err(Error::format(OP, alloc::format!("tensor '{}' is not a plain dtype", t.name)));
        };
        let arr = p.place(OP, t.data.clone(), &t.shape, dt, false)?;
        arrays.push((t.name, arr));
    }
    Ok(Loaded { arrays, metadata: Metadata::Strings(st.metadata), copied_bytes: p.copied })
}

/// How MLX's GGUF loader treats a tensor type.
enum GgufPlan {
    /// Viewed as this dtype (F32, F16, I8, I16, I32).
    View(DType),
    /// Converted to MLX affine group-32 (`.weight` uint32, `.scales`/`.biases` float16).
    Affine,
    /// Dequantized to float16 (the types MLX's gguflib dequantizes: BF16, Q2_K, Q4_K, Q6_K).
    ToF16,
}

fn gguf_plan(ty: GgmlType, name: &str) -> Result<GgufPlan> {
    use GgmlType as G;
    Ok(match ty {
        G::F32 => GgufPlan::View(DType::Float32),
        G::F16 => GgufPlan::View(DType::Float16),
        G::I8 => GgufPlan::View(DType::Int8),
        G::I16 => GgufPlan::View(DType::Int16),
        G::I32 => GgufPlan::View(DType::Int32),
        G::Q4_0 | G::Q4_1 | G::Q8_0 => GgufPlan::Affine,
        G::BF16 | G::Q2_K | G::Q4_K | G::Q6_K => GgufPlan::ToF16,
        other => {
            return Err(Error::unsupported(
                "load_gguf",
                alloc::format!(
                    "gguf_tensor_to_f16 failed: tensor '{name}' has type {}, which MLX's loader does not convert (load_gguf_native keeps it as blocks)",
                    other.name()
                ),
            ))
        }
    })
}

/// MLX's `<prefix>` for a quantized tensor: the name minus its last 7 bytes (the length of
/// `.weight`, whatever they are), or the whole name when shorter.
fn affine_prefix(name: &str) -> Result<&str> {
    let cut = if name.len() >= 7 { name.len() - 7 } else { name.len() };
    name.get(..cut).ok_or_else(|| {
        Error::unsupported("load_gguf", alloc::format!("tensor name '{name}' cannot be cut before its last 7 bytes (not a character boundary)"))
    })
}

/// Repacks one 4-bit GGML block (16 quant bytes: weight j low nibble of byte j, weight
/// 16+j high nibble) into MLX's consecutive-nibble order (weight 2k low, 2k+1 high of byte k).
fn repack_q4(qs: &[u8], out: &mut [u8]) {
    for k in 0..8 {
        out[k] = (qs[2 * k] & 0x0F) | ((qs[2 * k + 1] & 0x0F) << 4);
        out[8 + k] = (qs[2 * k] >> 4) | (qs[2 * k + 1] & 0xF0);
    }
}

fn f16_bits(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

/// `f16(k · d)` as MLX computes the affine bias (`-8·d` for Q4_0, `-128·d` for Q8_0): the
/// product is exact in f32, then rounded to nearest-even f16.
fn scaled_bias(d_bits: u16, k: f32) -> u16 {
    to_f16_bits(k * f16::from_bits(d_bits).to_f32())
}

/// f32 → f16 bits, round to nearest even; NaN becomes the canonical quiet NaN with the sign
/// kept (as gguflib's `to_half` and MLX's conversion do).
fn to_f16_bits(x: f32) -> u16 {
    if x.is_nan() {
        return ((x.to_bits() >> 16) as u16 & 0x8000) | 0x7E00;
    }
    f16::from_f32(x).to_bits()
}

/// Converts Q4_0/Q4_1/Q8_0 blocks into MLX affine group-32 `(weight bytes, scale bits, bias bits)`.
fn affine_convert(ty: GgmlType, blocks: &[u8], w: &mut [u8], s: &mut [u16], b: &mut [u16]) {
    let bb = ty.block_bytes();
    let wb = if ty == GgmlType::Q8_0 { 32 } else { 16 };
    for (i, blk) in blocks.chunks_exact(bb).enumerate() {
        let out = &mut w[i * wb..(i + 1) * wb];
        let d = f16_bits(blk);
        match ty {
            GgmlType::Q4_0 => {
                s[i] = d;
                b[i] = scaled_bias(d, -8.0);
                repack_q4(&blk[2..18], out);
            }
            GgmlType::Q4_1 => {
                s[i] = d;
                b[i] = f16_bits(&blk[2..4]);
                repack_q4(&blk[4..20], out);
            }
            _ => {
                s[i] = d;
                b[i] = scaled_bias(d, -128.0);
                for (o, &q) in out.iter_mut().zip(&blk[2..34]) {
                    *o = q ^ 0x80;
                }
            }
        }
    }
}

fn fresh(op: &'static str, shape: &[usize], dtype: DType) -> Result<Data> {
    Data::alloc_for_overwrite(shape, dtype, op)
}

/// Loads a GGUF file held in `buf` exactly as MLX's `mx.load("x.gguf", return_metadata=True)`:
/// F32/F16/I8/I16/I32 tensors are viewed; Q4_0/Q4_1/Q8_0 become `<name>` (uint32, packed
/// 4/8-bit), `<prefix>.scales` and `<prefix>.biases` (float16) with `<prefix>` the name minus
/// its last 7 bytes; BF16/Q2_K/Q4_K/Q6_K are dequantized to float16; other types are refused
/// (MLX fails on them too, or silently drops them and every later tensor — see docs/FILES.md).
pub fn load_gguf_buffer(buf: Arc<Buffer>) -> Result<Loaded> {
    const OP: &str = "load_gguf";
    let g = gguf::parse(buf.bytes())?;
    let mut p = Placer::new(buf.clone());
    let mut arrays: Vec<(String, Array)> = Vec::with_capacity(g.tensors.len());
    let mut names: BTreeSet<String> = BTreeSet::new();
    let dup = |name: &str| {
        Error::runtime(OP, alloc::format!("Duplicate parameter name '{name}' this can happen when loading quantized tensors."))
    };
    for t in &g.tensors {
        let TensorType::Ggml(ty) = t.ty else {
            return Err(Error::format(OP, alloc::format!("tensor '{}' is not a GGML type", t.name)));
        };
        match gguf_plan(ty, &t.name)? {
            GgufPlan::View(dt) => {
                if !names.insert(t.name.clone()) {
                    return Err(dup(&t.name));
                }
                let a = p.place(OP, t.data.clone(), &t.shape, dt, false)?;
                arrays.push((t.name.clone(), a));
            }
            GgufPlan::ToF16 => {
                if !names.insert(t.name.clone()) {
                    return Err(dup(&t.name));
                }
                let a = dequantize_f16(&mut p, OP, ty, &buf.bytes()[t.data.clone()], &t.shape)?;
                arrays.push((t.name.clone(), a));
            }
            GgufPlan::Affine => {
                let src = &buf.bytes()[t.data.clone()];
                let k = t.shape.last().copied().unwrap_or(1);
                let rows = t.shape.len().checked_sub(1).map_or(1, |l| t.shape[..l].iter().product());
                let per_u32 = if ty == GgmlType::Q8_0 { 4 } else { 8 };
                let mut wshape = t.shape.clone();
                let mut sshape = t.shape.clone();
                if let (Some(wl), Some(sl)) = (wshape.last_mut(), sshape.last_mut()) {
                    *wl = k / per_u32;
                    *sl = k / 32;
                }
                let nblocks = rows.checked_mul(k / 32).ok_or_else(|| Error::format(OP, "block count overflows"))?;
                let mut w = fresh(OP, &wshape, DType::Uint32)?;
                let s = fresh(OP, &sshape, DType::Float16)?;
                let b = fresh(OP, &sshape, DType::Float16)?;
                let wlen = w.buf.len();
                let wb = if ty == GgmlType::Q8_0 { 32 } else { 16 };
                if src.len() != nblocks * ty.block_bytes() || wlen != nblocks * wb {
                    return Err(Error::format(OP, alloc::format!("tensor '{}' data size does not match its shape", t.name)));
                }
                // Blocks are independent: convert ranges of them in parallel (MLX converts on
                // one thread). Each range writes disjoint parts of the three fresh buffers.
                let bb = ty.block_bytes();
                let (wp, sp, bp) = (w.buf.as_mut_ptr() as usize, s.buf.as_mut_ptr() as usize, b.buf.as_mut_ptr() as usize);
                crate::parallel::parallel_for(nblocks, 1 << 14, &|r: Range<usize>| {
                    // SAFETY: the buffers are fresh, held only by this function, sized for
                    // nblocks blocks (checked above), and ranges of blocks never overlap.
                    let (wr, sr, br) = unsafe {
                        (
                            core::slice::from_raw_parts_mut((wp as *mut u8).add(r.start * wb), r.len() * wb),
                            core::slice::from_raw_parts_mut((sp as *mut u16).add(r.start), r.len()),
                            core::slice::from_raw_parts_mut((bp as *mut u16).add(r.start), r.len()),
                        )
                    };
                    affine_convert(ty, &src[r.start * bb..r.end * bb], wr, sr, br);
                });
                w.strides = row_major_strides(&wshape);
                p.count(wlen + 4 * nblocks);
                let prefix = affine_prefix(&t.name)?;
                // MLX inserts the weight without a duplicate check (an existing key wins),
                // then requires the scales and biases keys to be new.
                if names.insert(t.name.clone()) {
                    arrays.push((t.name.clone(), Array::from_data(wshape, DType::Uint32, w)));
                }
                for (suffix, data) in [(".scales", s), (".biases", b)] {
                    let mut key = prefix.to_owned();
                    key.push_str(suffix);
                    if !names.insert(key.clone()) {
                        return Err(dup(&key));
                    }
                    arrays.push((key, Array::from_data(sshape.clone(), DType::Float16, data)));
                }
            }
        }
    }
    Ok(Loaded { arrays, metadata: Metadata::Gguf(g.metadata), copied_bytes: p.copied })
}

/// Dequantizes GGML blocks to a float16 array, one row at a time (bounded scratch).
fn dequantize_f16(p: &mut Placer, op: &'static str, ty: GgmlType, src: &[u8], shape: &[usize]) -> Result<Array> {
    let k = shape.last().copied().unwrap_or(1);
    let row_bytes = ty.row_bytes(k).ok_or_else(|| Error::format(op, "row size overflows"))?;
    let d = fresh(op, shape, DType::Float16)?;
    let n = d.buf.len() / 2;
    if n == 0 {
        // An empty tensor may still declare a huge innermost dimension (shape (0, 2^40) is
        // 0 bytes): nothing to convert, and no row scratch sized from that hostile count
        // (found by the `gguf` fuzz target). With n > 0 the scratch is at most the output.
        return Ok(Array::from_data(shape.to_vec(), DType::Float16, d));
    }
    // SAFETY: fresh buffer of n f16 elements, held only here.
    let dst = unsafe { d.slice_mut::<u16>(n) };
    let mut row = alloc::vec![0f32; k];
    if let Some(rows) = n.checked_div(k) {
        if rows.checked_mul(row_bytes) != Some(src.len()) {
            return Err(Error::format(op, "tensor data size does not match its shape"));
        }
        for (r, out) in src.chunks_exact(row_bytes.max(1)).zip(dst.chunks_exact_mut(k)) {
            dequantize_row(ty, r, &mut row)?;
            for (o, &x) in out.iter_mut().zip(&row) {
                *o = to_f16_bits(x);
            }
        }
    }
    p.count(n * 2);
    Ok(Array::from_data(shape.to_vec(), DType::Float16, d))
}

/// One GGUF tensor kept exactly as stored.
#[derive(Clone, Debug)]
pub struct NativeTensor {
    /// Name in the file.
    pub name: String,
    /// GGML type of the blocks.
    pub ty: GgmlType,
    /// Logical row-major shape (elements, not bytes).
    pub shape: Vec<usize>,
    /// The bytes as a uint8 array of shape `(rows, row_bytes)`: rows is the product of all
    /// but the last dimension, row_bytes the bytes of one row of `shape[-1]` elements.
    pub array: Array,
}

/// A GGUF file loaded without conversion.
#[derive(Clone, Debug)]
pub struct GgufNative {
    /// Tensors in file order.
    pub tensors: Vec<NativeTensor>,
    /// Metadata in file order.
    pub metadata: Vec<(String, Value)>,
    /// Bytes copied (0 unless the buffer itself was unusable for views; uint8 never is).
    pub copied_bytes: usize,
}

impl GgufNative {
    /// The tensor named `name`.
    pub fn get(&self, name: &str) -> Option<&NativeTensor> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

/// Loads every GGUF tensor as block-typed bytes viewed in place — for kernels that run on
/// GGML blocks directly (`quant::ggml::qmatmul_rows`), so a Q4_0 model stays 4.5 bits/weight.
pub fn load_gguf_native_buffer(buf: Arc<Buffer>) -> Result<GgufNative> {
    let g = gguf::parse(buf.bytes())?;
    native_tensors(g, buf, 0)
}

/// [`load_gguf_native_buffer`] with the file's header and tensor data held apart: the header
/// is parsed from `file` (the whole file's bytes, of which parsing reads only the header, e.g.
/// a lazy mapping), then `data(start)` gives the file's bytes from the data section's `start`
/// on, which the tensors view. Lets a loader keep only the tensor data resident (the header of
/// a 50k-token vocabulary is ~2 MB that the parsed metadata holds anyway).
pub fn load_gguf_native_parts(file: &[u8], data: &mut dyn FnMut(usize) -> Result<Arc<Buffer>>) -> Result<GgufNative> {
    let g = gguf::parse(file)?;
    let start = g.data_start;
    let buf = data(start)?;
    native_tensors(g, buf, start)
}

/// The tensors of `g` as views of `buf`, which holds the file's bytes from `shift` on.
fn native_tensors(g: gguf::Gguf, buf: Arc<Buffer>, shift: usize) -> Result<GgufNative> {
    const OP: &str = "load_gguf_native";
    let mut p = Placer::new(buf);
    let mut tensors = Vec::with_capacity(g.tensors.len());
    for t in g.tensors {
        let TensorType::Ggml(ty) = t.ty else {
            return Err(Error::format(OP, alloc::format!("tensor '{}' is not a GGML type", t.name)));
        };
        let k = t.shape.last().copied().unwrap_or(1);
        let row_bytes = ty.row_bytes(k).ok_or_else(|| Error::format(OP, "row size overflows"))?;
        let rows = t.data.len().checked_div(row_bytes).unwrap_or(0);
        let range = t.data.start.checked_sub(shift).zip(t.data.end.checked_sub(shift)).map(|(a, b)| a..b);
        let range = range.ok_or_else(|| Error::format(OP, alloc::format!("tensor '{}' starts before the data section", t.name)))?;
        let array = p.place(OP, range, &[rows, row_bytes], DType::Uint8, false)?;
        tensors.push(NativeTensor { name: t.name, ty, shape: t.shape, array });
    }
    Ok(GgufNative { tensors, metadata: g.metadata, copied_bytes: p.copied })
}

/// Loads a buffer in `format` (`"npy"`, `"npz"`, `"safetensors"`, `"gguf"`).
pub fn load_buffer(buf: Arc<Buffer>, format: &str) -> Result<Loaded> {
    match format {
        "safetensors" => load_safetensors_buffer(buf),
        "npz" => load_npz_buffer(buf),
        "npy" => load_npy_buffer(buf),
        "gguf" => load_gguf_buffer(buf),
        other => Err(Error::invalid("load", alloc::format!("Unknown file format {other}"))),
    }
}

// ---- byte-slice variants (no OS: flash regions, include_bytes!) ------------------------

fn static_buffer(bytes: &'static [u8]) -> Arc<Buffer> {
    Buffer::external(alloc::boxed::Box::new(bytes) as alloc::boxed::Box<dyn ExternalBytes>)
}

/// [`load_safetensors_buffer`] over a static region (e.g. flash), viewed in place.
pub fn load_safetensors_bytes(bytes: &'static [u8]) -> Result<Loaded> {
    load_safetensors_buffer(static_buffer(bytes))
}
/// [`load_gguf_buffer`] over a static region.
pub fn load_gguf_bytes(bytes: &'static [u8]) -> Result<Loaded> {
    load_gguf_buffer(static_buffer(bytes))
}
/// [`load_gguf_native_buffer`] over a static region.
pub fn load_gguf_native_bytes(bytes: &'static [u8]) -> Result<GgufNative> {
    load_gguf_native_buffer(static_buffer(bytes))
}
/// [`load_npy_buffer`] over a static region.
pub fn load_npy_bytes(bytes: &'static [u8]) -> Result<Loaded> {
    load_npy_buffer(static_buffer(bytes))
}
/// [`load_npz_buffer`] over a static region.
pub fn load_npz_bytes(bytes: &'static [u8]) -> Result<Loaded> {
    load_npz_buffer(static_buffer(bytes))
}
/// [`load_buffer`] over a static region.
pub fn load_bytes(bytes: &'static [u8], format: &str) -> Result<Loaded> {
    load_buffer(static_buffer(bytes), format)
}

// ---- serializers (to bytes) ------------------------------------------------------------

/// An array's row-major bytes: borrowed from its buffer when dense, copied otherwise.
struct HostBytes {
    data: Data,
    range: Option<Range<usize>>,
    owned: Vec<u8>,
}

impl HostBytes {
    fn of(a: &Array) -> Result<HostBytes> {
        let data = a.data()?;
        let nbytes = a.nbytes();
        if data.is_row_contiguous(a.shape()) && data.offset.checked_add(nbytes).is_some_and(|e| e <= data.buf.len()) {
            let r = data.offset..data.offset + nbytes;
            return Ok(HostBytes { data, range: Some(r), owned: Vec::new() });
        }
        let owned = a.to_bytes()?;
        Ok(HostBytes { data, range: None, owned })
    }
    fn bytes(&self) -> &[u8] {
        match &self.range {
            Some(r) => &self.data.buf.bytes()[r.clone()],
            None => &self.owned,
        }
    }
}

/// The `.npy` bytes of `a` (like `mx.save`; byte-identical to `np.save`).
pub fn npy_bytes(a: &Array) -> Result<Vec<u8>> {
    let hb = HostBytes::of(a)?;
    npy::write(a.dtype(), a.shape(), false, hb.bytes())
}

/// The `.npz` bytes of `arrays` (like `mx.savez`, or `mx.savez_compressed` when `compress`).
pub fn npz_bytes(arrays: &[(&str, &Array)], compress: bool) -> Result<Vec<u8>> {
    let hbs = arrays.iter().map(|(_, a)| HostBytes::of(a)).collect::<Result<Vec<_>>>()?;
    let ws: Vec<npz::WriteArray<'_>> = arrays
        .iter()
        .zip(&hbs)
        .map(|((n, a), h)| npz::WriteArray { name: n, dtype: a.dtype(), shape: a.shape(), data: h.bytes() })
        .collect();
    npz::write(&ws, compress)
}

/// The safetensors bytes of `arrays` with string `metadata` (like `mx.save_safetensors`).
/// float64 is refused as MLX refuses it.
pub fn safetensors_bytes(arrays: &[(&str, &Array)], metadata: &[(&str, &str)]) -> Result<Vec<u8>> {
    for (_, a) in arrays {
        if a.dtype() == DType::Float64 {
            return Err(Error::runtime("save_safetensors", "received invalid dtype."));
        }
    }
    let hbs = arrays.iter().map(|(_, a)| HostBytes::of(a)).collect::<Result<Vec<_>>>()?;
    let ws: Vec<safetensors::WriteTensor<'_>> = arrays
        .iter()
        .zip(&hbs)
        .map(|((n, a), h)| safetensors::WriteTensor { name: n, dtype: a.dtype(), shape: a.shape(), data: h.bytes() })
        .collect();
    safetensors::write(&ws, metadata)
}

/// The GGUF (v3) bytes of `arrays` with `metadata` (like `mx.save_gguf`): only float32,
/// float16, int8, int16 and int32 arrays, as MLX allows.
pub fn gguf_bytes(arrays: &[(&str, &Array)], metadata: &[(&str, Value)]) -> Result<Vec<u8>> {
    let mut types = Vec::with_capacity(arrays.len());
    for (_, a) in arrays {
        types.push(match a.dtype() {
            DType::Float32 => GgmlType::F32,
            DType::Float16 => GgmlType::F16,
            DType::Int8 => GgmlType::I8,
            DType::Int16 => GgmlType::I16,
            DType::Int32 => GgmlType::I32,
            other => return Err(Error::runtime("save_gguf", alloc::format!("dtype {other} is not supported"))),
        });
    }
    let hbs = arrays.iter().map(|(_, a)| HostBytes::of(a)).collect::<Result<Vec<_>>>()?;
    let ws: Vec<gguf::WriteTensor<'_>> = arrays
        .iter()
        .zip(&hbs)
        .zip(&types)
        .map(|(((n, a), h), &ty)| gguf::WriteTensor { name: n, ty, shape: a.shape(), data: h.bytes() })
        .collect();
    gguf::write(metadata, &ws)
}

// ---- files (std) -----------------------------------------------------------------------

#[cfg(feature = "std")]
mod files {
    extern crate std;
    use super::*;
    use std::path::{Path, PathBuf};

    fn format_of(path: &Path) -> Result<String> {
        let s = path.to_string_lossy();
        match s.rfind('.') {
            Some(i) => Ok(String::from(&s[i + 1..])),
            None => Err(Error::invalid("load", "Could not infer file format from extension")),
        }
    }

    /// Loads `path` (`mx.load`): the format comes from `format` or the text after the last
    /// `.` of the path. The file is memory-mapped; arrays of the multi-tensor formats
    /// (safetensors, GGUF, stored npz members) view the mapping.
    ///
    /// A `.npy` holds one array, usually an intermediate a script goes on to transform, so
    /// its data are read into allocator memory at evaluation as MLX reads them: the array counts in
    /// `get_active_memory`/`get_peak_memory` as in MLX and can be donated to the next
    /// elementwise op, which a view of a read-only mapping cannot.
    pub fn load(path: impl AsRef<Path>, format: Option<&str>) -> Result<Loaded> {
        let path = path.as_ref();
        let fmt = match format {
            Some(f) => String::from(f),
            None => format_of(path)?,
        };
        if !matches!(fmt.as_str(), "safetensors" | "npz" | "npy" | "gguf") {
            return Err(Error::invalid("load", alloc::format!("Unknown file format {fmt}")));
        }
        let op = match fmt.as_str() {
            "safetensors" => "load_safetensors",
            "gguf" => "load_gguf",
            _ => "load",
        };
        let buf = super::super::mmap::map_file(op, path)?;
        if fmt == "npy" {
            return super::npy_from(buf, Some(&path.display().to_string()), true);
        }
        load_buffer(buf, &fmt)
    }

    /// Loads a `.npy` file as one array (`mx.load("x.npy")`).
    pub fn load_npy(path: impl AsRef<Path>) -> Result<Array> {
        let mut l = load(path, Some("npy"))?;
        l.arrays.pop().map(|(_, a)| a).ok_or_else(|| Error::runtime("load", "no array"))
    }

    /// Loads a GGUF file with every tensor kept as GGML blocks (see [`load_gguf_native_buffer`]).
    pub fn load_gguf_native(path: impl AsRef<Path>) -> Result<GgufNative> {
        load_gguf_native_buffer(super::super::mmap::map_file("load_gguf", path.as_ref())?)
    }

    fn with_ext(path: &Path, ext: &str) -> PathBuf {
        let s = path.as_os_str().to_string_lossy();
        if s.ends_with(ext) {
            path.to_path_buf()
        } else {
            let mut p = path.as_os_str().to_owned();
            p.push(ext);
            PathBuf::from(p)
        }
    }

    fn write(op: &'static str, path: &Path, bytes: &[u8]) -> Result<()> {
        std::fs::write(path, bytes)
            .map_err(|e| Error::runtime(op, alloc::format!("Failed to open {}: {e}", path.display())))
    }

    /// `mx.save`: writes `a` as `.npy` (the suffix is appended when missing).
    pub fn save(path: impl AsRef<Path>, a: &Array) -> Result<()> {
        write("save", &with_ext(path.as_ref(), ".npy"), &npy_bytes(a)?)
    }
    /// `mx.savez`: stored `.npz` (suffix appended when missing).
    pub fn savez(path: impl AsRef<Path>, arrays: &[(&str, &Array)]) -> Result<()> {
        write("savez", &with_ext(path.as_ref(), ".npz"), &npz_bytes(arrays, false)?)
    }
    /// `mx.savez_compressed`: deflated `.npz` (suffix appended when missing).
    pub fn savez_compressed(path: impl AsRef<Path>, arrays: &[(&str, &Array)]) -> Result<()> {
        write("savez", &with_ext(path.as_ref(), ".npz"), &npz_bytes(arrays, true)?)
    }
    /// `mx.save_safetensors` (suffix appended when missing).
    pub fn save_safetensors(path: impl AsRef<Path>, arrays: &[(&str, &Array)], metadata: &[(&str, &str)]) -> Result<()> {
        write("save_safetensors", &with_ext(path.as_ref(), ".safetensors"), &safetensors_bytes(arrays, metadata)?)
    }
    /// `mx.save_gguf` (suffix appended when missing).
    pub fn save_gguf(path: impl AsRef<Path>, arrays: &[(&str, &Array)], metadata: &[(&str, Value)]) -> Result<()> {
        write("save_gguf", &with_ext(path.as_ref(), ".gguf"), &gguf_bytes(arrays, metadata)?)
    }
}

#[cfg(feature = "std")]
pub use files::{load, load_gguf_native, load_npy, save, save_gguf, save_safetensors, savez, savez_compressed};
