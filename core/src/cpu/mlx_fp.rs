//! MLX fp-mode `quantized_matmul` (`mxfp4`, `mxfp8`, `nvfp4`) at SIMD speed: `x (m×k) @ Ŵᵀ`
//! (`transpose`, W stored `(n, k)`) or `x @ Ŵ` (W stored `(k, n)`), `Ŵ = value(code)·scale`
//! per group (E8M0 scales per 32 for mx, E4M3 per 16 for nvfp4).
//!
//! - **Few rows** (`m ≤ GEMV_MAX_M`, decode): `x @ Ŵᵀ` reads each packed weight row once
//!   against up to four activation rows with the ISA's fused dot (`arch::mlx_fp`), threads
//!   splitting the weight rows; `x @ Ŵ` decodes row segments and runs the affine path's
//!   group-scaled axpy (`arch::affine`), tasks split into (stored-row slice × column tile) as
//!   in `cpu::affine`.
//! - **Many rows** (prefill): panels of weight rows are dequantized to f32 once and handed to
//!   the f32 GEMM of the same level (`cpu::gemm`), threads splitting (panel × row block) tasks.
//!
//! The 256 possible scale codes are decoded once per call to a table, exactly as the
//! reference `quant::mlx::qmm` decodes them (`fp_scale`), times the format's raw factor
//! (`arch::mlx_fp`). Numerics: everything accumulates in f32, like the reference; the element
//! values and scales are the reference's exactly, only the summation order differs (SIMD
//! lanes, per-group sums). Tests hold both paths to `|ours − ref| ≤ (k + 2·gs)·2⁻²⁴·Σ|x·ŵ|`
//! plus one rounding of the output dtype (`tests/mlx_fp_qmm.rs`).

use alloc::vec;

use crate::cpu::arch::affine::kernels as affine_kernels;
use crate::cpu::arch::mlx_fp::{kernels, permute_e2m1, FpFormat, FpKernels, FusedE2m1, MAX_ROWS};
use crate::cpu::elementwise::OutPtr;
use crate::cpu::qmm_panels::{gemm_n, gemm_t, packed_bytes, with_f32_io, PanelSource, GEMV_GRAIN_BYTES, K_SLICE, OP, TILE_COLS};
use crate::cpu::isa::Isa;
use crate::error::{Error, Result};
use crate::parallel::parallel_for;
use crate::quant::mlx::qmm::{check_dims, fp_scale};
use crate::quant::mlx::{try_zeroed, QFloat, QScales, QuantParams};

pub use super::qmm_panels::GEMV_MAX_M;

/// `out = x @ Ŵᵀ` (`transpose`) or `x @ Ŵ` for fp-mode `w` (`uint8` scale codes `scales`)
/// with the kernels of `level`, threaded over the pool. Shapes as [`crate::quant::mlx::qmm`]
/// with all `m` rows; an error for a level this CPU does not run or an affine `p`.
#[allow(clippy::too_many_arguments)]
pub fn qmm_fp_at<T: QFloat + Sync>(
    level: Isa,
    x: &[T],
    m: usize,
    k: usize,
    w: &[u32],
    scales: &[u8],
    n: usize,
    p: &QuantParams,
    transpose: bool,
    out: &mut [T],
) -> Result<()> {
    let sc = QScales::Fp(scales);
    check_dims(x.len(), m, k, w.len(), sc, n, p, transpose, out.len(), &(0..m))?;
    if !level.is_available() {
        return Err(Error::invalid(OP, "This CPU does not run the requested ISA level."));
    }
    let fmt = match p.bits {
        4 => FpFormat::E2M1,
        8 => FpFormat::E4M3,
        _ => return Err(Error::invalid(OP, "Expected 4- or 8-bit fp quantization parameters.")),
    };
    let reference = |out: &mut [T]| crate::quant::mlx::qmm(x, m, k, w, sc, n, p, transpose, out, 0..m);
    let Some(wb) = packed_bytes(w, m, k, n, out, reference)? else {
        return Ok(());
    };
    let lut: [f32; 256] = core::array::from_fn(|c| fp_scale::<T>(p.mode, c as u8) * fmt.raw_factor());
    let q = Quant { w: wb, scales, lut, fmt, gs: p.group_size, kern: kernels(level) };
    with_f32_io(x, out, |xf, o| match (transpose, m <= GEMV_MAX_M) {
        (true, true) => gemv_t(&q, xf, m, k, n, o),
        (false, true) => gemv_n(level, &q, xf, m, k, n, o),
        (true, false) => {
            gemm_t(level, &q, xf, m, k, n, o);
            Ok(())
        }
        (false, false) => {
            gemm_n(level, &q, xf, m, k, n, o);
            Ok(())
        }
    })
}

/// The quantized weight of one product, its scale table and the kernels to read it with.
struct Quant<'a> {
    w: &'a [u8],
    scales: &'a [u8],
    /// Decoded scale × raw factor, by scale code.
    lut: [f32; 256],
    fmt: FpFormat,
    gs: usize,
    kern: &'static FpKernels,
}

impl Quant<'_> {
    /// Bytes of `len` elements (a multiple of 16).
    fn bytes(&self, len: usize) -> usize {
        len * self.fmt.bits() / 8
    }
}

impl PanelSource for Quant<'_> {
    fn group_size(&self) -> usize {
        self.gs
    }
    /// Raw values of elements `c0..c0 + dst.len()` of stored row `row` (rows of `len`).
    fn decode(&self, row: usize, len: usize, c0: usize, dst: &mut [f32]) {
        let start = self.bytes(row * len + c0);
        (self.kern.decode)(self.fmt, &self.w[start..start + self.bytes(dst.len())], dst);
    }
    /// `dst = raw·scale` per group (groups `g0..` of the stored scales) of the raw values `v`.
    fn expand(&self, v: &[f32], g0: usize, dst: &mut [f32]) {
        let gs = self.gs;
        for ((vg, dg), &c) in v.chunks_exact(gs).zip(dst.chunks_exact_mut(gs)).zip(&self.scales[g0..]) {
            let s = self.lut[c as usize];
            for (d, &r) in dg.iter_mut().zip(vg) {
                *d = r * s;
            }
        }
    }
}

/// Decode path of `x @ Ŵᵀ`: weight rows split over threads, each read once by the fused dot
/// for up to `MAX_ROWS` activation rows at a time. Where the ISA has a [`FusedE2m1`], E2M1
/// rows run it over their whole spans (activations permuted once per call) and the plain dot
/// over the rest (fewer than 16 groups), the two sums added.
fn gemv_t(q: &Quant<'_>, xf: &[f32], m: usize, k: usize, n: usize, o: OutPtr<f32>) -> Result<()> {
    let (gpr, rb) = (k / q.gs, q.bytes(k));
    let fused = q.kern.fused_e2m1.filter(|_| q.fmt == FpFormat::E2M1 && matches!(q.gs, 16 | 32));
    // Codes of each row the fused dot takes; a span is a whole number of the kernel's blocks.
    let kf = fused.map_or(0, |f| {
        let span = FusedE2m1::span(q.gs);
        debug_assert!(span.is_multiple_of(8 * f.lanes));
        k / span * span
    });
    let mut xp = try_zeroed(OP, m * kf, 0f32)?;
    if let Some(f) = fused.filter(|_| kf > 0) {
        for (x, d) in xf.chunks_exact(k).zip(xp.chunks_exact_mut(kf)) {
            permute_e2m1(&x[..kf], f.lanes, d);
        }
    }
    let (gf, bf) = (kf / q.gs, q.bytes(kf));
    let grain = (GEMV_GRAIN_BYTES / rb.max(1)).max(1);
    parallel_for(n, grain, &|rows| {
        // Moves the whole OutPtr (Sync) into the closure, not just its raw-pointer field.
        #[allow(clippy::redundant_locals)]
        let o = o;
        for j in rows {
            let (wr, sr) = (&q.w[j * rb..(j + 1) * rb], &q.scales[j * gpr..(j + 1) * gpr]);
            for r0 in (0..m).step_by(MAX_ROWS) {
                let rows = MAX_ROWS.min(m - r0);
                let mut res = [0f32; MAX_ROWS];
                if let Some(f) = fused.filter(|_| kf > 0) {
                    let mut xs: [&[f32]; MAX_ROWS] = [&[]; MAX_ROWS];
                    for (r, x) in xs.iter_mut().enumerate().take(rows) {
                        *x = &xp[(r0 + r) * kf..(r0 + r + 1) * kf];
                    }
                    (f.dot)(&wr[..bf], q.gs, &sr[..gf], &q.lut, &xs[..rows], &mut res[..rows]);
                }
                if kf < k {
                    let mut xs: [&[f32]; MAX_ROWS] = [&[]; MAX_ROWS];
                    for (r, x) in xs.iter_mut().enumerate().take(rows) {
                        *x = &xf[(r0 + r) * k + kf..(r0 + r + 1) * k];
                    }
                    let mut rest = [0f32; MAX_ROWS];
                    (q.kern.dot)(q.fmt, &wr[bf..], q.gs, &sr[gf..], &q.lut, &xs[..rows], &mut rest[..rows]);
                    for (v, t) in res.iter_mut().zip(rest) {
                        *v += t;
                    }
                }
                for (r, &v) in res.iter().enumerate().take(rows) {
                    // SAFETY: (r0 + r, j) is inside the m×n output; only this task writes column j.
                    unsafe { *o.0.add((r0 + r) * n + j) = v };
                }
            }
        }
    });
    Ok(())
}

/// Decode path of `x @ Ŵ` (W stored `(k, n)`, groups along n): (slice of `K_SLICE` stored rows
/// × tile of `TILE_COLS` columns) tasks, each walking its rows in order (long contiguous reads)
/// into its own partial sums, added in slice order afterwards (the result does not depend on
/// the number of threads).
fn gemv_n(level: Isa, q: &Quant<'_>, xf: &[f32], m: usize, k: usize, n: usize, o: OutPtr<f32>) -> Result<()> {
    let axpy = affine_kernels(level).axpy_groups;
    let gs = q.gs;
    let gpr = n / gs;
    let tg = (TILE_COLS / gs).max(1);
    let tiles = gpr.div_ceil(tg);
    let slices = k.div_ceil(K_SLICE);
    let part = m * n;
    let mut parts = try_zeroed(OP, slices * part, 0f32)?;
    let pp = OutPtr(parts.as_mut_ptr());
    parallel_for(slices * tiles, 1, &|tasks| {
        let mut vals = vec![0f32; tg * gs];
        let mut c = vec![0f32; tg];
        for t in tasks {
            let (sl, tile) = (t / tiles, t % tiles);
            let (g0, g1) = (tile * tg, ((tile + 1) * tg).min(gpr));
            let (ng, width, c0) = (g1 - g0, (g1 - g0) * gs, g0 * gs);
            // SAFETY: slice sl's region of parts; this task alone touches its columns c0..c0+width.
            let region = sl * part..(sl + 1) * part;
            let acc = unsafe { pp.chunk(&region) };
            for kk in sl * K_SLICE..((sl + 1) * K_SLICE).min(k) {
                q.decode(kk, n, c0, &mut vals[..width]);
                let sr = &q.scales[kk * gpr + g0..kk * gpr + g1];
                for r in 0..m {
                    let xv = xf[r * k + kk];
                    for (cg, &s) in c.iter_mut().zip(sr) {
                        *cg = xv * q.lut[s as usize];
                    }
                    axpy(&vals[..width], gs, &c[..ng], &mut acc[r * n + c0..r * n + c0 + width]);
                }
            }
        }
    });
    for i in 0..part {
        let v: f32 = parts.chunks_exact(part).map(|p| p[i]).sum();
        // SAFETY: i is inside the m×n output; the parallel region is over.
        unsafe { *o.0.add(i) = v };
    }
    Ok(())
}
