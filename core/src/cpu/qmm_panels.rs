//! What MLX's two quantized-product drivers (`cpu::affine` for the affine mode, `cpu::mlx_fp`
//! for mxfp4/mxfp8/nvfp4) share: the f32 staging of activations and output, the tuning of
//! their decode tasks, and the prefill path — panels of weights dequantized to f32 once and
//! handed to the f32 GEMM of the same level, threads splitting (panel × row block) tasks.
//! Each driver says how its weights decode and expand ([`PanelSource`]).

use alloc::vec;
use alloc::vec::Vec;

use crate::cpu::elementwise::OutPtr;
use crate::cpu::gemm::{gemm_at, MatMut, MatRef};
use crate::cpu::isa::Isa;
use crate::dtype::DType;
use crate::error::Result;
use crate::parallel::{num_threads, parallel_for};
use crate::quant::mlx::{try_zeroed, widen_f32, QFloat};

pub(crate) const OP: &str = "quantized_matmul";

/// Activation rows up to which the decode kernels run; above, the dequantized-panel GEMM.
pub const GEMV_MAX_M: usize = 8;
/// Weight bytes per GEMV task: a task's slice should outweigh claiming it (a few µs).
pub(crate) const GEMV_GRAIN_BYTES: usize = 16 << 10;
/// Columns per tile of `x @ Ŵ` on the decode path (its decoded values stay in L1).
pub(crate) const TILE_COLS: usize = 4096;
/// Stored rows per slice of `x @ Ŵ` on the decode path (the unit of its split over threads).
pub(crate) const K_SLICE: usize = 256;
/// Weight rows (`x @ Ŵᵀ`) or columns (`x @ Ŵ`) per dequantized GEMM panel.
const PANEL: usize = 128;
/// Activation rows per GEMM task, at least (below, the panel's dequantization dominates).
const MIN_TASK_ROWS: usize = 32;

/// A quantized weight as the panel builders read it.
pub(crate) trait PanelSource: Sync {
    /// Elements per quantization group.
    fn group_size(&self) -> usize;
    /// Raw values (codes) of elements `c0..c0 + dst.len()` of stored row `row` (rows of `len`).
    fn decode(&self, row: usize, len: usize, c0: usize, dst: &mut [f32]);
    /// `dst` = the dequantized weights of the raw values `v`, groups `g0..` of the stored
    /// scales (and biases).
    fn expand(&self, v: &[f32], g0: usize, dst: &mut [f32]);
}

/// Runs `f(x as f32, out as f32)`: `x` widened once, `out` written in place when it is f32,
/// else through an f32 buffer rounded into it afterwards.
pub(crate) fn with_f32_io<T: QFloat>(x: &[T], out: &mut [T], f: impl FnOnce(&[f32], OutPtr<f32>) -> Result<()>) -> Result<()> {
    let xf = widen_f32(x);
    let mut tmp = Vec::new();
    let of: &mut [f32] = match as_f32_mut(out) {
        Some(o) => o,
        None => {
            tmp = try_zeroed(OP, out.len(), 0f32)?;
            &mut tmp
        }
    };
    f(&xf, OutPtr(of.as_mut_ptr()))?;
    if T::DTYPE != DType::Float32 {
        for (d, &v) in out.iter_mut().zip(&tmp) {
            *d = T::from_f32(v);
        }
    }
    Ok(())
}

/// What both drivers do once the shapes are checked: `Ok(None)` when the product is already
/// written (no rows or columns; `k = 0` gives zeros; a big-endian target, where the kernels'
/// little-endian reads do not hold, runs `reference`), else the packed words as bytes.
pub(crate) fn packed_bytes<'w, T: QFloat>(
    w: &'w [u32],
    m: usize,
    k: usize,
    n: usize,
    out: &mut [T],
    reference: impl FnOnce(&mut [T]) -> Result<()>,
) -> Result<Option<&'w [u8]>> {
    if cfg!(target_endian = "big") {
        return reference(out).map(|()| None);
    }
    if m == 0 || n == 0 {
        return Ok(None);
    }
    if k == 0 {
        out.fill(T::from_f32(0.0));
        return Ok(None);
    }
    // SAFETY: u32 has no padding and u8 no alignment; the slice covers the same bytes
    // (little-endian checked above, so byte i of the stream is byte i of the buffer).
    Ok(Some(unsafe { core::slice::from_raw_parts(w.as_ptr() as *const u8, w.len() * 4) }))
}

fn as_f32_mut<T: QFloat>(v: &mut [T]) -> Option<&mut [f32]> {
    // SAFETY: T is f32 (same dtype), so the slice reinterprets exactly.
    (T::DTYPE == DType::Float32).then(|| unsafe { core::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut f32, v.len()) })
}

/// How many row blocks to split `m` into so that `panels × blocks` tasks feed every thread.
fn row_blocks(m: usize, panels: usize) -> usize {
    let want = (2 * num_threads()).div_ceil(panels.max(1));
    want.min(m.div_ceil(MIN_TASK_ROWS)).max(1)
}

/// Runs `gemm(rows of x, panel)` into output columns `c0..c0 + cols` for row block `blk`.
#[allow(clippy::too_many_arguments)]
fn panel_product(level: Isa, xf: &[f32], m: usize, k: usize, n: usize, mb: usize, blk: usize, panel: MatRef<f32>, c0: usize, cols: usize, o: OutPtr<f32>) {
    let r0 = blk * mb;
    let rows = mb.min(m - r0);
    // SAFETY: x rows r0..r0+rows are inside xf (m×k, row stride k); the panel covers k×cols
    // (caller); output rows r0.. and columns c0..c0+cols lie inside m×n and belong to this
    // task alone.
    unsafe {
        let a = MatRef::new(xf.as_ptr().add(r0 * k), k as isize, 1);
        let c = MatMut::new(o.0.add(r0 * n + c0), n);
        gemm_at(level, rows, cols, k, 1.0f32, a, panel, 0.0, c, false);
    }
}

/// GEMM path of `x @ Ŵᵀ`: panels of `PANEL` weight rows dequantized to f32 (`cols × k`, read
/// transposed by the GEMM), times row blocks of x.
pub(crate) fn gemm_t<Q: PanelSource>(level: Isa, q: &Q, xf: &[f32], m: usize, k: usize, n: usize, o: OutPtr<f32>) {
    let gpr = k / q.group_size();
    let panels = n.div_ceil(PANEL);
    let blocks = row_blocks(m, panels);
    let mb = m.div_ceil(blocks);
    parallel_for(panels * blocks, 1, &|tasks| {
        let mut vals = vec![0f32; k];
        let mut panel = vec![0f32; PANEL * k];
        let mut built = usize::MAX;
        for t in tasks {
            let (pi, blk) = (t / blocks, t % blocks);
            let (j0, cols) = (pi * PANEL, PANEL.min(n - pi * PANEL));
            if built != pi {
                for (j, dst) in (j0..j0 + cols).zip(panel.chunks_exact_mut(k)) {
                    q.decode(j, k, 0, &mut vals);
                    q.expand(&vals, j * gpr, dst);
                }
                built = pi;
            }
            // SAFETY: the panel holds cols rows of k floats: element (p, j) at j·k + p.
            let b = unsafe { MatRef::new(panel.as_ptr(), 1, k as isize) };
            panel_product(level, xf, m, k, n, mb, blk, b, j0, cols, o);
        }
    });
}

/// GEMM path of `x @ Ŵ` (W stored `(k, n)`): panels of whole groups of columns dequantized
/// to f32 (`k × cols`), times row blocks of x.
pub(crate) fn gemm_n<Q: PanelSource>(level: Isa, q: &Q, xf: &[f32], m: usize, k: usize, n: usize, o: OutPtr<f32>) {
    let gs = q.group_size();
    let gpr = n / gs;
    let pg = (PANEL / gs).max(1);
    let panels = gpr.div_ceil(pg);
    let blocks = row_blocks(m, panels);
    let mb = m.div_ceil(blocks);
    parallel_for(panels * blocks, 1, &|tasks| {
        let mut vals = vec![0f32; pg * gs];
        let mut panel = vec![0f32; k * pg * gs];
        let mut built = usize::MAX;
        for t in tasks {
            let (pi, blk) = (t / blocks, t % blocks);
            let (g0, g1) = (pi * pg, ((pi + 1) * pg).min(gpr));
            let cols = (g1 - g0) * gs;
            if built != pi {
                for (kk, dst) in panel.chunks_exact_mut(cols).take(k).enumerate() {
                    q.decode(kk, n, g0 * gs, &mut vals[..cols]);
                    q.expand(&vals[..cols], kk * gpr + g0, dst);
                }
                built = pi;
            }
            // SAFETY: the panel holds k rows of cols floats: element (p, j) at p·cols + j.
            let b = unsafe { MatRef::new(panel.as_ptr(), cols as isize, 1) };
            panel_product(level, xf, m, k, n, mb, blk, b, g0 * gs, cols, o);
        }
    });
}
