//! Per-ISA micro-kernels, one directory per architecture and one file per kernel family
//! (DESIGN.md "Wave 2"). The portable kernels stay in their family's file and remain the
//! reference; each family's table asks the lookup functions here for a faster variant at the
//! active [`Isa`] level and keeps the portable one when there is none.

use crate::cpu::isa::Isa;
use crate::quant::GgmlType;

pub(crate) mod affine;
pub(crate) mod mlx_fp;
#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod prefetch;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) use prefetch::prefetch_rows_ahead;
#[cfg(target_arch = "x86_64")]
pub(crate) use prefetch::{lines_ahead as prefetch_lines_ahead, tile_distance as prefetch_distance};
#[cfg(target_arch = "x86_64")]
pub mod x86_64;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) mod prepared;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) mod panel;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) mod dot_gemv;

/// The register family the float kernels (GEMM, vector math) of a level are written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatSimd {
    /// x86-64 AVX2 + FMA, 8 f32 lanes.
    Avx2,
    /// x86-64 AVX-512, 16 f32 lanes.
    Avx512,
    /// aarch64 NEON, 4 f32 lanes (every aarch64 level above portable).
    Neon,
}

/// The float kernel family `level` runs on this architecture; None at the portable level.
pub(crate) fn float_simd(level: Isa) -> Option<FloatSimd> {
    match level {
        Isa::Avx512 if cfg!(target_arch = "x86_64") => Some(FloatSimd::Avx512),
        Isa::Avx2 if cfg!(target_arch = "x86_64") => Some(FloatSimd::Avx2),
        Isa::Neon | Isa::Dotprod | Isa::Sve if cfg!(target_arch = "aarch64") => Some(FloatSimd::Neon),
        _ => None,
    }
}

/// The kernel table of the float family `level` runs: `Some(&$avx512)`, `Some(&$avx2)` or
/// `Some(&$neon)` (each name only resolved on its own architecture), None at the portable level.
macro_rules! float_table {
    ($level:expr, $avx512:path, $avx2:path, $neon:path) => {
        match $crate::cpu::arch::float_simd($level) {
            #[cfg(target_arch = "x86_64")]
            Some($crate::cpu::arch::FloatSimd::Avx512) => Some(&$avx512),
            #[cfg(target_arch = "x86_64")]
            Some($crate::cpu::arch::FloatSimd::Avx2) => Some(&$avx2),
            #[cfg(target_arch = "aarch64")]
            Some($crate::cpu::arch::FloatSimd::Neon) => Some(&$neon),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    };
}
pub(crate) use float_table;

/// A GGUF dot kernel (weight row · activation row).
pub(crate) type QuantDotFn = fn(&[u8], &[u8]) -> f32;
/// A GGUF row quantizer.
pub(crate) type QuantizeFn = fn(&[f32], &mut [u8]);

/// The SIMD dot kernel for weight type `ty` at `level`, if one exists and this CPU runs it.
#[allow(unused_variables)]
pub(crate) fn quant_dot(ty: GgmlType, level: Isa) -> Option<QuantDotFn> {
    // MXFP4 and the ternary formats have their own files (quant_fp.rs, quant_tq.rs).
    #[cfg(target_arch = "x86_64")]
    return x86_64::quant::dot_for(ty, level)
        .or_else(|| x86_64::quant_fp::dot_for(ty, level))
        .or_else(|| x86_64::quant_tq::dot_for(ty, level));
    #[cfg(target_arch = "aarch64")]
    return aarch64::quant::dot_for(ty, level)
        .or_else(|| aarch64::quant_fp::dot_for(ty, level))
        .or_else(|| aarch64::quant_tq::dot_for(ty, level));
    #[allow(unreachable_code)]
    None
}

/// A register-tiled quantized GEMM block: `out[i·ldo + j] = W_j · X_i` for the `nw` weight
/// rows in `w` and the `nx` activation rows (already in the partner type) in `x`, each output
/// bit-identical to the same level's dot kernel on that pair.
pub(crate) type QuantGemmFn = fn(w: &[u8], nw: usize, x: &[u8], nx: usize, out: &mut [f32], ldo: usize);

/// The tiled GEMM for weight type `ty` at `level`, if one exists and this CPU runs it.
#[allow(unused_variables)]
pub(crate) fn quant_gemm(ty: GgmlType, level: Isa) -> Option<QuantGemmFn> {
    #[cfg(target_arch = "x86_64")]
    return x86_64::quant::gemm_for(ty, level);
    #[cfg(target_arch = "aarch64")]
    return aarch64::quant::gemm_for(ty, level);
    #[allow(unreachable_code)]
    None
}

/// One activation row rearranged for a [`QuantGemv`] (once per matmul call, shared by its
/// threads): the quants in the byte order the kernel's registers take, and per block the
/// scale and the format's second term as f32, padded with zeros to a multiple of 8 blocks.
#[derive(Clone, Debug)]
// Only x86-64 and aarch64 have such kernels; elsewhere the type exists for the matmul's signature.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) struct GemvActivations {
    pub(crate) q: alloc::vec::Vec<u8>,
    pub(crate) d: alloc::vec::Vec<f32>,
    pub(crate) s: alloc::vec::Vec<f32>,
    /// Per super-block, the 16 sums of 16 quants as i16 (Q8_K rows the AVX2 Q6_K kernel
    /// prepares, which removes the quants' offset in integers); empty for every other kernel.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) sums: alloc::vec::Vec<i16>,
    /// Blocks in the row.
    pub(crate) nb: usize,
}

/// A quantized matmul over weight rows in file layout (x86-64 AVX2 and AVX-512 VNNI, aarch64
/// NEON and dotprod; the shared half is [`prepared`]): `prepare` turns
/// one quantized activation row (partner type) into [`GemvActivations`]; `run` computes
/// `out[i·ldo + j] = W_j · act_i` for the `nw` rows in `w` and the prepared rows `acts`.
/// Equal to the dot kernel within the dot bound (its float summation order differs), not bit
/// for bit; independent of tiling, row ranges and threads.
#[derive(Clone, Copy)]
pub(crate) struct QuantGemv {
    pub(crate) prepare: fn(x: &[u8]) -> GemvActivations,
    pub(crate) run: fn(w: &[u8], nw: usize, acts: &[GemvActivations], out: &mut [f32], ldo: usize),
    /// The weight-panel GEMM over the same prepared rows ([`panel`]), same signature as `run`,
    /// for [`PANEL_MIN_ROWS`] activation rows and more; None where the level has none.
    pub(crate) panel: Option<PanelGemm>,
    /// Activation rows from which a matmul runs `panel` (below, `run`'s tiles).
    pub(crate) panel_min_rows: usize,
}

/// [`QuantGemv::panel_min_rows`] of the AVX-512 panels, whose lines are built by gathers.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const PANEL_MIN_ROWS: usize = 8;
/// [`QuantGemv::panel_min_rows`] of the panels built by the word-level unpacker
/// ([`panel::lines_words`]: AVX2, NEON, dotprod), which costs ~4 instructions per weight:
/// under qemu (aarch64 dotprod, k = 4096) the panel took 2× the tiles' instructions per FLOP at
/// 8 rows, about as many at 32–64, and fewer from 128 (docs/BENCHMARKS.md, "kq21").
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) const PANEL_MIN_ROWS_WORDS: usize = 64;

/// A [`QuantGemv::panel`] kernel.
pub(crate) type PanelGemm = fn(w: &[u8], nw: usize, acts: &[GemvActivations], out: &mut [f32], ldo: usize);

/// The GEMV for weight type `ty` at `level`, if one exists and this CPU runs it.
#[allow(unused_variables)]
pub(crate) fn quant_gemv(ty: GgmlType, level: Isa) -> Option<QuantGemv> {
    // The level's threshold, raised where the layout's panel only pays later (Layout::min_rows).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    let layout_rows = panel::Layout::of(ty).map_or(0, panel::Layout::min_rows);
    #[cfg(target_arch = "x86_64")]
    // MXFP4 and the ternary formats: the dot kernel per pair plus the panel (dot_gemv.rs).
    return x86_64::gemv::gemv_for(ty, level)
        .or_else(|| x86_64::quant_fp::gemv_for(ty, level))
        .or_else(|| x86_64::quant_tq::gemv_for(ty, level))
        .map(|g| {
        let rows = if x86_64::gemv::avx512_vnni(level) { PANEL_MIN_ROWS } else { PANEL_MIN_ROWS_WORDS };
        QuantGemv { panel: x86_64::gemm_panel::panel_for(ty, level), panel_min_rows: rows.max(layout_rows), ..g }
    });
    #[cfg(target_arch = "aarch64")]
    return aarch64::gemv::gemv_for(ty, level)
        .or_else(|| aarch64::quant_fp::gemv_for(ty, level))
        .or_else(|| aarch64::quant_tq::gemv_for(ty, level))
        .map(|g| QuantGemv {
        panel: aarch64::gemm_panel::panel_for(ty, level),
        panel_min_rows: PANEL_MIN_ROWS_WORDS.max(layout_rows),
        ..g
    });
    #[allow(unreachable_code)]
    None
}

/// The SIMD quantizer for `ty` at `level`, if one exists and this CPU runs it.
#[allow(unused_variables)]
pub(crate) fn quant_quantize(ty: GgmlType, level: Isa) -> Option<QuantizeFn> {
    #[cfg(target_arch = "x86_64")]
    return x86_64::quant::quantize_for(ty, level);
    #[cfg(target_arch = "aarch64")]
    return aarch64::quant::quantize_for(ty, level);
    #[allow(unreachable_code)]
    None
}
