//! GGML/GGUF block quantization formats as pure functions on byte slices, bit-exact with
//! ggml's reference C (`ggml-quants.c`, `ggml-cpu/quants.c`).
//!
//! Each family lives in its own file and declares its blocks once (`#[repr(C)]`, sizes
//! checked at compile time against [`GgmlType`]):
//! [`legacy`] (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1), [`k_quants`] (Q2_K…Q6_K, Q8_K),
//! [`ternary`] (TQ1_0, TQ2_0), [`iq4`] (IQ4_NL, IQ4_XS), [`mxfp4`] and [`plain`] (F32, F16, BF16).
//!
//! This module is the byte-level dispatch the array layer and GGUF loader call:
//! [`quantize_row`] / [`dequantize_row`] convert whole blocks, [`vec_dot`] multiplies a weight
//! row with an activation row already in the weight's [`vec_dot_type`] (ggml's pairing, e.g.
//! Q4_0·Q8_0, Q4_K·Q8_K), and [`qmatmul_rows`] computes `x @ Wᵀ` straight from the quantized
//! weights — each activation row is quantized once, the weight matrix is never expanded —
//! over a range of weight rows so callers can split the work across threads.
//!
//! Inputs are plain byte slices of any alignment; lengths are checked (with overflow
//! checks) and wrong ones are errors. A block's contents are never trusted: NaN/Inf scales
//! give NaN/Inf results, as in ggml, never UB or a panic. See `docs/QUANT.md`.

pub mod block;
pub mod iq4;
pub mod k_quants;
pub mod legacy;
pub mod mxfp4;
pub mod plain;
pub mod ternary;
pub(crate) mod util;

use alloc::vec::Vec;
use core::ops::Range;

pub use block::Block;

use crate::cpu::isa::Isa;
use crate::error::{Error, Result};
use crate::quant::GgmlType;

/// Quantizes a whole number of blocks.
type QuantizeFn = fn(&[f32], &mut [u8]);
/// Dequantizes a whole number of blocks.
type DequantizeFn = fn(&[u8], &mut [f32]);
/// Dot product of a weight row and an activation row (whole blocks, same element count).
type DotFn = fn(&[u8], &[u8]) -> f32;

/// What this module implements for one type (ggml's `type_traits` + `type_traits_cpu` row).
struct Kernels {
    quantize: Option<QuantizeFn>,
    dequantize: Option<DequantizeFn>,
    /// Activation type and dot kernel, for types usable as matmul weights.
    dot: Option<(GgmlType, DotFn)>,
    /// A register-tiled GEMM over many rows, bit-identical to `dot` on each pair (SIMD levels
    /// of some types only; elsewhere the matmul calls `dot` per pair).
    gemm: Option<crate::cpu::arch::QuantGemmFn>,
    /// The matmul over prepared activation rows (decode GEMV and prefill GEMM; x86-64 AVX2 and
    /// AVX-512 VNNI, aarch64 NEON and dotprod),
    /// equal to `dot` within its bound but not bit for bit (another float summation order;
    /// some types only). Taken over `gemm` where present.
    gemv: Option<crate::cpu::arch::QuantGemv>,
}

fn kernels(ty: GgmlType) -> Kernels {
    kernels_at(ty, crate::cpu::isa::isa())
}

/// The kernels of `ty` at instruction-set level `level`: the portable ones, with the dot
/// product and quantizer replaced by `cpu::arch`'s SIMD versions where that level has them
/// (they are only handed out when this CPU can run them).
fn kernels_at(ty: GgmlType, level: Isa) -> Kernels {
    let mut k = portable_kernels(ty);
    if let Some((bt, _)) = k.dot {
        if let Some(f) = crate::cpu::arch::quant_dot(ty, level) {
            k.dot = Some((bt, f));
            k.gemm = crate::cpu::arch::quant_gemm(ty, level);
        }
        // Some types (Q5_K, Q3_K, Q2_K) have a kernel over prepared activations but no SIMD
        // dot: single dot products stay portable, matmuls take the prepared kernel.
        k.gemv = crate::cpu::arch::quant_gemv(ty, level);
    }
    if k.quantize.is_some() {
        if let Some(f) = crate::cpu::arch::quant_quantize(ty, level) {
            k.quantize = Some(f);
        }
    }
    k
}

fn portable_kernels(ty: GgmlType) -> Kernels {
    use GgmlType as T;
    let k = |q: QuantizeFn, d: DequantizeFn, dot: Option<(GgmlType, DotFn)>| Kernels {
        quantize: Some(q),
        dequantize: Some(d),
        dot,
        gemm: None,
        gemv: None,
    };
    match ty {
        T::F32 => k(
            plain::quantize_f32,
            plain::dequantize_f32,
            Some((T::F32, plain::vec_dot_f32)),
        ),
        T::F16 => k(
            plain::quantize_f16,
            plain::dequantize_f16,
            Some((T::F16, plain::vec_dot_f16)),
        ),
        T::BF16 => k(
            plain::quantize_bf16,
            plain::dequantize_bf16,
            Some((T::BF16, plain::vec_dot_bf16)),
        ),
        T::Q4_0 => k(
            legacy::quantize_q4_0,
            legacy::dequantize_q4_0,
            Some((T::Q8_0, legacy::vec_dot_q4_0_q8_0)),
        ),
        T::Q4_1 => k(
            legacy::quantize_q4_1,
            legacy::dequantize_q4_1,
            Some((T::Q8_1, legacy::vec_dot_q4_1_q8_1)),
        ),
        T::Q5_0 => k(
            legacy::quantize_q5_0,
            legacy::dequantize_q5_0,
            Some((T::Q8_0, legacy::vec_dot_q5_0_q8_0)),
        ),
        T::Q5_1 => k(
            legacy::quantize_q5_1,
            legacy::dequantize_q5_1,
            Some((T::Q8_1, legacy::vec_dot_q5_1_q8_1)),
        ),
        T::Q8_0 => k(
            legacy::quantize_q8_0,
            legacy::dequantize_q8_0,
            Some((T::Q8_0, legacy::vec_dot_q8_0_q8_0)),
        ),
        T::Q8_1 => k(legacy::quantize_q8_1, legacy::dequantize_q8_1, None),
        T::Q2_K => k(
            k_quants::quantize_q2_k,
            k_quants::dequantize_q2_k,
            Some((T::Q8_K, k_quants::vec_dot_q2_k_q8_k)),
        ),
        T::Q3_K => k(
            k_quants::quantize_q3_k,
            k_quants::dequantize_q3_k,
            Some((T::Q8_K, k_quants::vec_dot_q3_k_q8_k)),
        ),
        T::Q4_K => k(
            k_quants::quantize_q4_k,
            k_quants::dequantize_q4_k,
            Some((T::Q8_K, k_quants::vec_dot_q4_k_q8_k)),
        ),
        T::Q5_K => k(
            k_quants::quantize_q5_k,
            k_quants::dequantize_q5_k,
            Some((T::Q8_K, k_quants::vec_dot_q5_k_q8_k)),
        ),
        T::Q6_K => k(
            k_quants::quantize_q6_k,
            k_quants::dequantize_q6_k,
            Some((T::Q8_K, k_quants::vec_dot_q6_k_q8_k)),
        ),
        T::Q8_K => k(k_quants::quantize_q8_k, k_quants::dequantize_q8_k, None),
        T::TQ1_0 => k(
            ternary::quantize_tq1_0,
            ternary::dequantize_tq1_0,
            Some((T::Q8_K, ternary::vec_dot_tq1_0_q8_k)),
        ),
        T::TQ2_0 => k(
            ternary::quantize_tq2_0,
            ternary::dequantize_tq2_0,
            Some((T::Q8_K, ternary::vec_dot_tq2_0_q8_k)),
        ),
        T::IQ4_NL => k(
            iq4::quantize_iq4_nl,
            iq4::dequantize_iq4_nl,
            Some((T::Q8_0, iq4::vec_dot_iq4_nl_q8_0)),
        ),
        T::IQ4_XS => k(
            iq4::quantize_iq4_xs,
            iq4::dequantize_iq4_xs,
            Some((T::Q8_K, iq4::vec_dot_iq4_xs_q8_k)),
        ),
        T::MXFP4 => k(
            mxfp4::quantize_mxfp4,
            mxfp4::dequantize_mxfp4,
            Some((T::Q8_0, mxfp4::vec_dot_mxfp4_q8_0)),
        ),
        _ => Kernels {
            quantize: None,
            dequantize: None,
            dot: None,
            gemm: None,
            gemv: None,
        },
    }
}

/// Whether [`quantize_row`] and [`dequantize_row`] implement `ty` (IQ* other than IQ4_NL and
/// IQ4_XS, NVFP4, Q1_0, Q2_0 and
/// the integer/f64 types are not implemented).
pub fn is_supported(ty: GgmlType) -> bool {
    kernels(ty).quantize.is_some()
}

/// The activation type ggml pairs with weight type `ty` in dot products and matmuls
/// (ggml's `vec_dot_type`), or `None` where there is no weight kernel (Q8_1 and Q8_K are
/// activation-only; unimplemented types).
pub fn vec_dot_type(ty: GgmlType) -> Option<GgmlType> {
    kernels(ty).dot.map(|(t, _)| t)
}

/// Bytes of `n` elements of `ty`, or an error naming `op` when `n` is not a whole number of
/// blocks or the size overflows.
pub fn row_bytes(op: &'static str, ty: GgmlType, n: usize) -> Result<usize> {
    if n % ty.block_len() != 0 {
        return Err(Error::invalid(
            op,
            alloc::format!(
                "{} elements is not a multiple of the {} block length {}.",
                n,
                ty.name(),
                ty.block_len()
            ),
        ));
    }
    ty.row_bytes(n).ok_or_else(|| {
        Error::invalid(
            op,
            alloc::format!("{} bytes of {n} elements overflow.", ty.name()),
        )
    })
}

fn unsupported(op: &'static str, ty: GgmlType) -> Error {
    Error::unsupported(
        op,
        alloc::format!("GGML type {} is not implemented.", ty.name()),
    )
}

fn expect_len(op: &'static str, what: &str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            alloc::format!("{what} has {got} entries, expected {want}."),
        ))
    }
}

/// Quantizes `src` (a whole number of blocks of `ty`) into `dst`, which must be exactly
/// `ty.row_bytes(src.len())` bytes. Uses ggml's reference algorithm, so the bytes equal
/// ggml's `quantize_row_*_ref` (and `ggml_quantize_chunk` without importance weights).
pub fn quantize_row(ty: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<()> {
    const OP: &str = "ggml_quantize";
    let f = kernels(ty).quantize.ok_or_else(|| unsupported(OP, ty))?;
    let bytes = row_bytes(OP, ty, src.len())?;
    expect_len(OP, "destination", dst.len(), bytes)?;
    f(src, dst);
    Ok(())
}

/// Dequantizes `src` (a whole number of blocks of `ty`) into `dst`, which must hold exactly
/// the number of elements those blocks encode.
pub fn dequantize_row(ty: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<()> {
    const OP: &str = "ggml_dequantize";
    let f = kernels(ty).dequantize.ok_or_else(|| unsupported(OP, ty))?;
    let bytes = row_bytes(OP, ty, dst.len())?;
    expect_len(OP, "source", src.len(), bytes)?;
    f(src, dst);
    Ok(())
}

/// The dot product of `n` elements: `a` is a row of weight type `ty`, `b` a row of
/// `vec_dot_type(ty)` (see [`quantize_row`]). Follows ggml's portable `vec_dot` kernels.
pub fn vec_dot(ty: GgmlType, a: &[u8], b: &[u8], n: usize) -> Result<f32> {
    const OP: &str = "ggml_vec_dot";
    let (bt, f) = kernels(ty).dot.ok_or_else(|| unsupported(OP, ty))?;
    expect_len(OP, "weight row", a.len(), row_bytes(OP, ty, n)?)?;
    expect_len(OP, "activation row", b.len(), row_bytes(OP, bt, n)?)?;
    Ok(f(a, b))
}

/// [`vec_dot`] with the kernel of instruction-set level `level` instead of the active one
/// (tests and benchmarks compare every level against [`Isa::Portable`] without touching the
/// global setting). An error if this machine cannot run `level`.
pub fn vec_dot_at(level: Isa, ty: GgmlType, a: &[u8], b: &[u8], n: usize) -> Result<f32> {
    const OP: &str = "ggml_vec_dot";
    if !level.is_available() {
        return Err(Error::invalid(OP, alloc::format!("This CPU cannot run {} kernels.", level.name())));
    }
    let (bt, f) = kernels_at(ty, level).dot.ok_or_else(|| unsupported(OP, ty))?;
    expect_len(OP, "weight row", a.len(), row_bytes(OP, ty, n)?)?;
    expect_len(OP, "activation row", b.len(), row_bytes(OP, bt, n)?)?;
    Ok(f(a, b))
}

/// [`quantize_row`] with the quantizer of level `level` (see [`vec_dot_at`]).
pub fn quantize_row_at(level: Isa, ty: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<()> {
    const OP: &str = "ggml_quantize";
    if !level.is_available() {
        return Err(Error::invalid(OP, alloc::format!("This CPU cannot run {} kernels.", level.name())));
    }
    let f = kernels_at(ty, level).quantize.ok_or_else(|| unsupported(OP, ty))?;
    let bytes = row_bytes(OP, ty, src.len())?;
    expect_len(OP, "destination", dst.len(), bytes)?;
    f(src, dst);
    Ok(())
}

/// Weight bytes per tile of [`qmatmul_rows_quantized`] (fits L2 beside an activation tile).
const W_TILE_BYTES: usize = 64 * 1024;

/// Activations `x` (`m` rows of `k` floats) quantized once to the partner type of weight
/// type `ty`, ready for [`qmatmul_rows_quantized`]; shared by every worker of one matmul.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantizedActivations {
    /// The activation type (`vec_dot_type` of the weights).
    pub ty: GgmlType,
    /// Rows.
    pub m: usize,
    /// Elements per row.
    pub k: usize,
    /// `m` rows of `ty.row_bytes(k)` bytes.
    pub data: Vec<u8>,
    /// At a level that has a kernel over prepared rows for the weights (`arch::quant_gemv`): every row
    /// in that kernel's order, prepared once for every thread of the matmul; else empty.
    gemv: GemvLayout,
}

/// [`QuantizedActivations::data`] rearranged for a GEMV kernel. It is derived from `data`, so
/// it takes no part in comparisons.
#[derive(Clone, Debug)]
struct GemvLayout(Vec<crate::cpu::arch::GemvActivations>);

impl PartialEq for GemvLayout {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for GemvLayout {}

/// Whether the matmul of `ty` at `level` returns, for every output, exactly the dot kernel's
/// value (`vec_dot_at`). False where a kernel over prepared activations runs (x86-64 AVX2 and
/// AVX-512 VNNI, aarch64 NEON and dotprod): it sums
/// the same exact block products in another float order (within the dot bound).
pub fn matmul_equals_dot(ty: GgmlType, level: Isa) -> bool {
    kernels_at(ty, level).gemv.is_none()
}

/// Quantizes `m` rows of `k` activations for weight type `ty` (each row once).
pub fn quantize_activations(
    ty: GgmlType,
    x: &[f32],
    m: usize,
    k: usize,
) -> Result<QuantizedActivations> {
    const OP: &str = "ggml_qmatmul";
    let (bt, _) = kernels(ty).dot.ok_or_else(|| unsupported(OP, ty))?;
    let quantize = kernels(bt).quantize.ok_or_else(|| unsupported(OP, bt))?;
    let elems = m
        .checked_mul(k)
        .ok_or_else(|| Error::invalid(OP, "m·k overflows."))?;
    expect_len(OP, "x", x.len(), elems)?;
    // The weight's block length decides validity (Q8_K activations need k % 256 too).
    row_bytes(OP, ty, k)?;
    let rb = row_bytes(OP, bt, k)?;
    let total = rb
        .checked_mul(m)
        .ok_or_else(|| Error::invalid(OP, "activation buffer size overflows."))?;
    let mut data = Vec::new();
    data.try_reserve_exact(total)
        .map_err(|_| Error::out_of_memory(OP, total))?;
    data.resize(total, 0);
    if k > 0 {
        for (xr, qr) in x.chunks_exact(k).zip(data.chunks_exact_mut(rb.max(1))) {
            quantize(xr, qr);
        }
    }
    let gemv = GemvLayout(match kernels(ty).gemv {
        Some(g) if k > 0 => data.chunks_exact(rb).map(|row| (g.prepare)(row)).collect(),
        _ => Vec::new(),
    });
    Ok(QuantizedActivations { ty: bt, m, k, data, gemv })
}

/// `out[i, j] = Σ_k x[i, k] · W[rows.start + j, k]` for the weight rows in `rows`, with `W`
/// given as `n_rows` quantized rows of `k` elements of type `ty` and `x` pre-quantized by
/// [`quantize_activations`]. `out` is the `m × rows.len()` tile, row-major (for `m = 1` it
/// is simply `full_out[rows]`, so disjoint ranges can run on different threads).
pub fn qmatmul_rows_quantized(
    ty: GgmlType,
    w: &[u8],
    n_rows: usize,
    xq: &QuantizedActivations,
    out: &mut [f32],
    rows: Range<usize>,
) -> Result<()> {
    const OP: &str = "ggml_qmatmul";
    let kern = kernels(ty);
    let (bt, dot) = kern.dot.ok_or_else(|| unsupported(OP, ty))?;
    if bt != xq.ty {
        return Err(Error::invalid(
            OP,
            alloc::format!(
                "activations are {}, {} weights need {}.",
                xq.ty.name(),
                ty.name(),
                bt.name()
            ),
        ));
    }
    let k = xq.k;
    let wrb = row_bytes(OP, ty, k)?;
    let xrb = row_bytes(OP, bt, k)?;
    let w_bytes = wrb
        .checked_mul(n_rows)
        .ok_or_else(|| Error::invalid(OP, "weight size overflows."))?;
    expect_len(OP, "weights", w.len(), w_bytes)?;
    let x_bytes = xrb
        .checked_mul(xq.m)
        .ok_or_else(|| Error::invalid(OP, "activation size overflows."))?;
    expect_len(OP, "quantized activations", xq.data.len(), x_bytes)?;
    if rows.start > rows.end || rows.end > n_rows {
        return Err(Error::index(
            OP,
            alloc::format!(
                "row range {}..{} is outside 0..{n_rows}.",
                rows.start,
                rows.end
            ),
        ));
    }
    let width = rows.end - rows.start;
    let out_len = width
        .checked_mul(xq.m)
        .ok_or_else(|| Error::invalid(OP, "output size overflows."))?;
    expect_len(OP, "output", out.len(), out_len)?;
    if k == 0 {
        out.iter_mut().for_each(|o| *o = 0.0);
        return Ok(());
    }
    let w_rows = w.get(rows.start * wrb..rows.end * wrb).unwrap_or(&[]);
    // Tiles of about 64 KiB of weight rows × 16 activation rows: the weight tile stays in L2
    // while every activation tile passes over it, and one activation tile (16 rows, ~70 KiB at
    // k = 4096) stays hot across the weight rows of the tile. For m = 1 this is the plain
    // row loop. Each output is still one dot product, so results do not depend on the tiling.
    const X_TILE: usize = 16;
    let w_tile = (W_TILE_BYTES / wrb).clamp(1, 256);
    let acts = &xq.gemv.0;
    if let Some((panel, min_rows)) = kern.gemv.and_then(|g| Some((g.panel?, g.panel_min_rows))) {
        if acts.len() == xq.m && xq.m >= min_rows {
            // Weight panels unpacked once for every activation row (arch/panel.rs): the weights
            // stream once, each panel's rows against all activations.
            panel(w_rows, width, acts, out, width);
            return Ok(());
        }
    }
    let gemm = match kern.gemv {
        Some(g) if acts.len() == xq.m => Tiled::Prepared(g.run),
        _ => match kern.gemm {
            Some(f) => Tiled::Blocks(f),
            None => Tiled::No,
        },
    };
    if !matches!(gemm, Tiled::No) {
        // Register-tiled blocks (each weight block unpacked once per few activation rows);
        // every output equals `dot` on its pair, so the result is the same as below.
        for (jb, wblk) in w_rows.chunks(w_tile * wrb).enumerate() {
            let nw = wblk.len() / wrb;
            for (ib, xblk) in xq.data.chunks(X_TILE * xrb).enumerate() {
                let nx = xblk.len() / xrb;
                let start = ib * X_TILE * width + jb * w_tile;
                let end = start + (nx - 1) * width + nw;
                if let Some(o) = out.get_mut(start..end) {
                    match gemm {
                        Tiled::Prepared(run) => run(wblk, nw, &acts[ib * X_TILE..][..nx], o, width),
                        Tiled::Blocks(f) => f(wblk, nw, xblk, nx, o, width),
                        Tiled::No => {}
                    }
                }
            }
        }
        return Ok(());
    }
    for (jb, wblk) in w_rows.chunks(w_tile * wrb).enumerate() {
        for (ib, xblk) in xq.data.chunks(X_TILE * xrb).enumerate() {
            for (jj, wr) in wblk.chunks_exact(wrb).enumerate() {
                let j = jb * w_tile + jj;
                for (ii, xr) in xblk.chunks_exact(xrb).enumerate() {
                    if let Some(o) = out.get_mut((ib * X_TILE + ii) * width + j) {
                        *o = dot(wr, xr);
                    }
                }
            }
        }
    }
    Ok(())
}

/// The register-tiled kernel a matmul takes, if any.
#[derive(Clone, Copy)]
enum Tiled {
    /// Over the activations prepared in [`QuantizedActivations`].
    Prepared(fn(&[u8], usize, &[crate::cpu::arch::GemvActivations], &mut [f32], usize)),
    /// Over the quantized activation blocks.
    Blocks(crate::cpu::arch::QuantGemmFn),
    No,
}

/// `x @ Wᵀ` for the weight rows in `rows`: `x` is `m × k` floats, `W` is `n_rows` quantized rows
/// of `k` elements of type `ty`, `out` is the `m × rows.len()` tile (see
/// [`qmatmul_rows_quantized`]). Each `x` row is quantized once to `vec_dot_type(ty)`, then
/// every output is one [`vec_dot`] — ggml's `mul_mat` on the CPU, without expanding `W`.
#[allow(clippy::too_many_arguments)]
pub fn qmatmul_rows(
    ty: GgmlType,
    w: &[u8],
    n_rows: usize,
    k: usize,
    x: &[f32],
    m: usize,
    out: &mut [f32],
    rows: Range<usize>,
) -> Result<()> {
    let xq = quantize_activations(ty, x, m, k)?;
    qmatmul_rows_quantized(ty, w, n_rows, &xq, out, rows)
}
