//! MLX affine `quantized_matmul` at SIMD speed: `x (m×k) @ Ŵᵀ` (`transpose`, W stored `(n, k)`)
//! or `x @ Ŵ` (W stored `(k, n)`), with `Ŵ = scale·q + bias` per group of the packed codes.
//!
//! - **Few rows** (`m ≤ GEMV_MAX_M`, decode): each weight row (or row segment) is decoded once
//!   to f32 codes by the ISA's decoder, then `Σ_g s_g·(Σ x·q) + b_g·Σ_g x` — MLX's own
//!   rearrangement in its Metal `qmv` — for up to four activation rows per decoded row. Threads
//!   split the weight rows (`x @ Ŵᵀ`) or column tiles (`x @ Ŵ`). 2-, 3-, 4-, 5-, 6- and 8-bit
//!   `x @ Ŵᵀ` skip the decoded row: the ISA's fused kernel reads the packed words against
//!   activations permuted once per call (`arch::affine::Fused`).
//! - **Many rows** (prefill, training): tiles of weight rows are dequantized to an f32 panel
//!   and handed to the f32 GEMM (`cpu::gemm`) of the same level, so the product runs at f32
//!   GEMM speed; threads split (panel × row block) tasks.
//!
//! Numerics: everything accumulates in f32. The reference [`crate::quant::mlx::qmm`] forms
//! MLX's `Ŵ` rounded in the activation dtype and sums in MLX's order (bit-identical with MLX
//! for f32); here the sums run in SIMD order and the scale and bias are applied per group (or
//! by the panel's `s·q + b` without rounding to the activation dtype). Tests hold both paths to
//! `|ours − ref| ≤ (k + 2·gs)·u·Σ_i |x_i|·(|ŵ_i| + |b_g|)` (u = 2⁻²⁴) plus one rounding of the
//! output dtype; see `tests/affine_qmm.rs`.

use alloc::vec;
use alloc::vec::Vec;

use crate::cpu::arch::affine::{kernels, period_codes, period_scales_len, permute, permuted_len, AffineKernels, Fused, FusedWidth, MAX_ROWS};
use crate::cpu::elementwise::OutPtr;
use crate::cpu::qmm_panels::{gemm_n, gemm_t, packed_bytes, with_f32_io, PanelSource, GEMV_GRAIN_BYTES, K_SLICE, OP, TILE_COLS};
use crate::cpu::isa::Isa;
use crate::error::{Error, Result};
use crate::parallel::parallel_for;
use crate::quant::mlx::qmm::check_dims;
use crate::quant::mlx::{try_zeroed, QFloat, QScales, QuantMode, QuantParams};

pub use super::qmm_panels::GEMV_MAX_M;

/// `out = x @ Ŵᵀ` (`transpose`) or `x @ Ŵ` for affine-quantized `w` with the kernels of
/// `level` (an available level; tests run each), threaded over the pool. Shapes as
/// [`crate::quant::mlx::qmm`] with all `m` rows; the result is within the bound in the module
/// doc of that reference.
#[allow(clippy::too_many_arguments)]
pub fn qmm_at<T: QFloat + Sync>(
    level: Isa,
    x: &[T],
    m: usize,
    k: usize,
    w: &[u32],
    scales: &[T],
    biases: &[T],
    n: usize,
    p: &QuantParams,
    transpose: bool,
    out: &mut [T],
) -> Result<()> {
    let sc = QScales::Affine { scales, biases };
    check_dims(x.len(), m, k, w.len(), sc, n, p, transpose, out.len(), &(0..m))?;
    if p.mode != QuantMode::Affine {
        return Err(Error::invalid(OP, "Expected affine quantization parameters."));
    }
    let reference = |out: &mut [T]| crate::quant::mlx::qmm(x, m, k, w, sc, n, p, transpose, out, 0..m);
    let Some(wb) = packed_bytes(w, m, k, n, out, reference)? else {
        return Ok(());
    };
    let q = Quant { w: wb, scales, biases, bits: p.bits, gs: p.group_size, kern: kernels(level) };
    with_f32_io(x, out, |xf, o| match (transpose, m <= GEMV_MAX_M) {
        (true, true) => gemv_t(&q, xf, m, k, n, o),
        (false, true) => gemv_n(&q, xf, m, k, n, o),
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

/// The quantized weight of one product and the kernels to read it with.
struct Quant<'a, T> {
    w: &'a [u8],
    scales: &'a [T],
    biases: &'a [T],
    bits: u32,
    gs: usize,
    kern: &'static AffineKernels,
}

impl<T: QFloat> Quant<'_, T> {
    /// Bytes of `len` codes (a multiple of 8 codes).
    fn bytes(&self, len: usize) -> usize {
        len * self.bits as usize / 8
    }
}

impl<T: QFloat + Sync> PanelSource for Quant<'_, T> {
    fn group_size(&self) -> usize {
        self.gs
    }
    /// Decodes codes `c0..c0 + q.len()` of stored row `row` (rows of `len` codes) into `q`.
    fn decode(&self, row: usize, len: usize, c0: usize, q: &mut [f32]) {
        let start = self.bytes(row * len + c0);
        (self.kern.decode)(self.bits, &self.w[start..start + self.bytes(q.len())], q);
    }
    /// Writes `s·q + b` per group of `q` (groups `g0..` of the row's `scales`/`biases`) to `dst`.
    fn expand(&self, q: &[f32], g0: usize, dst: &mut [f32]) {
        let gs = self.gs;
        for ((qg, dg), g) in q.chunks_exact(gs).zip(dst.chunks_exact_mut(gs)).zip(g0..) {
            let (s, b) = (self.scales[g].to_f32(), self.biases[g].to_f32());
            for (d, &v) in dg.iter_mut().zip(qg) {
                *d = s * v + b;
            }
        }
    }
}

/// Per activation row, the sum of each group of `gs` elements (the bias term's factor).
fn group_sums(xf: &[f32], gs: usize) -> Vec<f32> {
    xf.chunks_exact(gs).map(|c| c.iter().sum()).collect()
}

/// `Σ_g b_g·xsum_g` over eight independent partial sums (one serial chain of K/gs dependent
/// adds per weight row costs as much as decoding the row).
fn bias_term<T: QFloat>(b: &[T], xsum: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (bc, xc) = (b.chunks_exact(8), xsum.chunks_exact(8));
    let tail: f32 = bc.remainder().iter().zip(xc.remainder()).map(|(b, x)| b.to_f32() * x).sum();
    for (bs, xs) in bc.zip(xc) {
        for ((l, b), x) in lanes.iter_mut().zip(bs).zip(xs) {
            *l += b.to_f32() * x;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// One way of forming the decode path's dot products of `x @ Ŵᵀ`: per weight row `j`,
/// `out[r] = Σ_g s_g·Σ_{i in g} x[r0 + r][i]·q_j[i]` (the bias term is added by [`gemv_t`]).
trait RowDots: Sync {
    /// Per-thread buffers.
    type Scratch;
    fn scratch(&self) -> Self::Scratch;
    /// Readies row `j` (once per row, before its `dots`).
    fn load(&self, sc: &mut Self::Scratch, j: usize);
    /// `out.len() ≤ MAX_ROWS` activation rows from `r0`.
    fn dots(&self, sc: &mut Self::Scratch, r0: usize, out: &mut [f32]);
}

/// Any width: the row decoded to f32 codes by the ISA's decoder, then `dot_groups`.
struct DecodedRows<'a, T> {
    q: &'a Quant<'a, T>,
    xf: &'a [f32],
    k: usize,
}

impl<T: QFloat + Sync> RowDots for DecodedRows<'_, T> {
    type Scratch = (Vec<f32>, Vec<f32>);
    fn scratch(&self) -> Self::Scratch {
        (vec![0f32; self.k], vec![0f32; self.k / self.q.gs])
    }
    fn load(&self, (codes, s): &mut Self::Scratch, j: usize) {
        self.q.decode(j, self.k, 0, codes);
        let gpr = s.len();
        for (d, v) in s.iter_mut().zip(&self.q.scales[j * gpr..(j + 1) * gpr]) {
            *d = v.to_f32();
        }
    }
    fn dots(&self, (codes, s): &mut Self::Scratch, r0: usize, out: &mut [f32]) {
        let k = self.k;
        let mut xs: [&[f32]; MAX_ROWS] = [&[]; MAX_ROWS];
        for (r, x) in xs.iter_mut().enumerate().take(out.len()) {
            *x = &self.xf[(r0 + r) * k..(r0 + r + 1) * k];
        }
        (self.q.kern.dot_groups)(codes, self.q.gs, s, &xs[..out.len()], out);
    }
}

/// A fused width: the ISA's [`Fused`] kernel on the packed row, the activations permuted once.
struct FusedRows<'a, T> {
    q: &'a Quant<'a, T>,
    f: &'a Fused,
    width: FusedWidth,
    /// Each activation row [`permute`]d, `kp` floats apart.
    xp: Vec<f32>,
    kp: usize,
    /// Periods per group (codes per period: [`period_codes`]).
    ppg: usize,
    k: usize,
}

impl<'a, T: QFloat> FusedRows<'a, T> {
    fn new(q: &'a Quant<'a, T>, f: &'a Fused, width: FusedWidth, xf: &[f32], m: usize, k: usize) -> Result<Self> {
        let kp = permuted_len(k, q.bits, f.lanes);
        let mut xp = try_zeroed(OP, m * kp, 0f32)?;
        for (x, d) in xf.chunks_exact(k).zip(xp.chunks_exact_mut(kp)) {
            permute(x, q.bits, f.lanes, d);
        }
        Ok(FusedRows { q, f, width, xp, kp, ppg: q.gs / period_codes(q.bits), k })
    }
}

impl<T: QFloat + Sync> RowDots for FusedRows<'_, T> {
    /// The row's per-period scales (zero past the row) and its index.
    type Scratch = (Vec<f32>, usize);
    fn scratch(&self) -> Self::Scratch {
        (vec![0f32; period_scales_len(self.k, self.q.bits, self.f.lanes)], 0)
    }
    fn load(&self, (sw, row): &mut Self::Scratch, j: usize) {
        let gpr = self.k / self.q.gs;
        // Periods (16 or 32 codes, or one word) never straddle a group (32 codes or more).
        let sc = &self.q.scales[j * gpr..(j + 1) * gpr];
        match self.ppg {
            1 => fill_periods::<1, T>(sw, sc),
            2 => fill_periods::<2, T>(sw, sc),
            4 => fill_periods::<4, T>(sw, sc),
            8 => fill_periods::<8, T>(sw, sc),
            16 => fill_periods::<16, T>(sw, sc),
            32 => fill_periods::<32, T>(sw, sc),
            p => {
                for (d, v) in sw.chunks_exact_mut(p).zip(sc) {
                    d.fill(v.to_f32());
                }
            }
        }
        *row = j;
    }
    fn dots(&self, (sw, row): &mut Self::Scratch, r0: usize, out: &mut [f32]) {
        let mut xs: [&[f32]; MAX_ROWS] = [&[]; MAX_ROWS];
        for (r, x) in xs.iter_mut().enumerate().take(out.len()) {
            *x = &self.xp[(r0 + r) * self.kp..(r0 + r + 1) * self.kp];
        }
        let start = self.q.bytes(*row * self.k);
        (self.f.dot)(self.width, &self.q.w[start..start + self.q.bytes(self.k)], sw, &xs[..out.len()], out);
    }
}

/// Each group scale of `sc` written to its `P` periods of `sw`. `P` is a constant so each
/// group is one broadcast and whole-vector stores: with a run-time length this fill took about
/// as long as the fused dot of a 4-bit row (64 groups of 8 periods per 4096 codes).
#[inline]
fn fill_periods<const P: usize, T: QFloat>(sw: &mut [f32], sc: &[T]) {
    for (d, v) in sw.as_chunks_mut::<P>().0.iter_mut().zip(sc) {
        *d = [v.to_f32(); P];
    }
}

/// Decode path of `x @ Ŵᵀ`: the fused kernel for 2, 3, 4, 5, 6 and 8 bits where the ISA has
/// one, else each row decoded once.
fn gemv_t<T: QFloat + Sync>(q: &Quant<'_, T>, xf: &[f32], m: usize, k: usize, n: usize, o: OutPtr<f32>) -> Result<()> {
    match (q.kern.fused.as_ref(), FusedWidth::of(q.bits)) {
        (Some(f), Some(width)) => gemv_t_with(q, &FusedRows::new(q, f, width, xf, m, k)?, xf, m, k, n, o),
        _ => gemv_t_with(q, &DecodedRows { q, xf, k }, xf, m, k, n, o),
    }
    Ok(())
}

/// Weight rows split over threads; per row, `dots` for up to `MAX_ROWS` activation rows at a
/// time plus the bias term `Σ_g b_g·Σ_g x`.
fn gemv_t_with<T: QFloat + Sync, D: RowDots>(q: &Quant<'_, T>, d: &D, xf: &[f32], m: usize, k: usize, n: usize, o: OutPtr<f32>) {
    let gpr = k / q.gs;
    let xsum = group_sums(xf, q.gs);
    let grain = (GEMV_GRAIN_BYTES / q.bytes(k).max(1)).max(1);
    parallel_for(n, grain, &|rows| {
        // Moves the whole OutPtr (Sync) into the closure, not just its raw-pointer field.
        #[allow(clippy::redundant_locals)]
        let o = o;
        let mut sc = d.scratch();
        for j in rows {
            d.load(&mut sc, j);
            let b = &q.biases[j * gpr..(j + 1) * gpr];
            for r0 in (0..m).step_by(MAX_ROWS) {
                let rows = MAX_ROWS.min(m - r0);
                let mut res = [0f32; MAX_ROWS];
                d.dots(&mut sc, r0, &mut res[..rows]);
                for (r, &v) in res.iter().enumerate().take(rows) {
                    let bias = bias_term(b, &xsum[(r0 + r) * gpr..(r0 + r + 1) * gpr]);
                    // SAFETY: (r0 + r, j) is inside the m×n output; only this task writes column j.
                    unsafe { *o.0.add((r0 + r) * n + j) = v + bias };
                }
            }
        }
    });
}

/// Decode path of `x @ Ŵ` (W stored `(k, n)`, groups along n): tasks are (slice of `K_SLICE`
/// stored rows × tile of `TILE_COLS` columns); each walks its rows in order, so a thread streams
/// long contiguous runs of the weight (a narrow column tile would read a few hundred bytes
/// per 4 KiB row: a new page each time, which the prefetchers do not follow). Each slice
/// writes its own partial sums, added in slice order afterwards, so the result does not
/// depend on the number of threads.
fn gemv_n<T: QFloat + Sync>(q: &Quant<'_, T>, xf: &[f32], m: usize, k: usize, n: usize, o: OutPtr<f32>) -> Result<()> {
    let gs = q.gs;
    let gpr = n / gs;
    let tg = (TILE_COLS / gs).max(1);
    let tiles = gpr.div_ceil(tg);
    let slices = k.div_ceil(K_SLICE);
    // Per slice: m×n partial products, then m×gpr partial bias terms.
    let part = m * n + m * gpr;
    let mut parts = try_zeroed(OP, slices * part, 0f32)?;
    let pp = OutPtr(parts.as_mut_ptr());
    parallel_for(slices * tiles, 1, &|tasks| {
        let mut codes = vec![0f32; tg * gs];
        let mut c = vec![0f32; tg];
        for t in tasks {
            let (sl, tile) = (t / tiles, t % tiles);
            let (g0, g1) = (tile * tg, ((tile + 1) * tg).min(gpr));
            let (ng, width, c0) = (g1 - g0, (g1 - g0) * gs, g0 * gs);
            // SAFETY: slice sl's region of parts; this task alone touches columns c0..c0+width
            // and groups g0..g1 of it.
            let region = sl * part..(sl + 1) * part;
            let mine = unsafe { pp.chunk(&region) };
            let (acc, bias) = mine.split_at_mut(m * n);
            for kk in sl * K_SLICE..((sl + 1) * K_SLICE).min(k) {
                q.decode(kk, n, c0, &mut codes[..width]);
                let (sr, br) = (&q.scales[kk * gpr + g0..kk * gpr + g1], &q.biases[kk * gpr + g0..kk * gpr + g1]);
                for r in 0..m {
                    let xv = xf[r * k + kk];
                    for (((cg, s), b), bs) in c.iter_mut().zip(sr).zip(br).zip(&mut bias[r * gpr + g0..r * gpr + g1]) {
                        *cg = xv * s.to_f32();
                        *bs += xv * b.to_f32();
                    }
                    (q.kern.axpy_groups)(&codes[..width], gs, &c[..ng], &mut acc[r * n + c0..r * n + c0 + width]);
                }
            }
        }
    });
    for r in 0..m {
        for i in 0..n {
            let mut v = 0f32;
            for p in parts.chunks_exact(part) {
                v += p[r * n + i] + p[m * n + r * gpr + i / gs];
            }
            // SAFETY: (r, i) is inside the m×n output; the parallel region is over.
            unsafe { *o.0.add(r * n + i) = v };
        }
    }
    Ok(())
}
