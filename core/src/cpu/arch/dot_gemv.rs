//! A [`super::QuantGemv`] for the weight types whose matmul below the panel threshold is the
//! SIMD dot kernel per (weight row, activation row) pair — GGUF MXFP4, TQ1_0 and TQ2_0
//! (`arch/*/quant_fp.rs`, `quant_tq.rs`): their dot kernels already decode a block in
//! registers at about the rate a tile kernel would, so the only thing a prepared matmul adds
//! is the weight-panel GEMM ([`super::panel`]) for prompt-sized batches.
//!
//! The "prepared" activation row is therefore the quantized row itself, byte for byte (Q8_0:
//! f16 `d` and 32 quants per block; Q8_K: f32 `d`, 256 quants, 16 sums), plus each block's
//! `d` as f32 for the panel kernels; the panel reads the quants in place
//! ([`super::panel::Layout::act_block_bytes`]). `run` calls the dot kernel on the raw rows, so
//! below the panel threshold (GEMV, small batches) every output is the dot kernel's, bit for
//! bit, as before.

use alloc::vec::Vec;

use super::{GemvActivations as Act, QuantDotFn};

/// The activation row `x` (whole blocks of `block_bytes`, `d` at the block's start, f16 or
/// f32) as a [`Act`]: `q` the row as it is, `d` per block, `s` empty (these formats have an
/// offset, not a min).
fn prepare_raw<const F32_D: bool>(x: &[u8], block_bytes: usize) -> Act {
    let nb = x.len() / block_bytes;
    let d: Vec<f32> = x
        .chunks_exact(block_bytes)
        .map(|b| if F32_D { f32::from_le_bytes([b[0], b[1], b[2], b[3]]) } else { crate::quant::ggml::util::f16_to_f32([b[0], b[1]]) })
        .collect();
    Act { q: x[..nb * block_bytes].to_vec(), d, s: Vec::new(), sums: Vec::new(), nb }
}

/// A Q8_0 row (MXFP4's partner) for [`prepare_raw`].
pub(crate) fn prepare_q8_0_raw(x: &[u8]) -> Act {
    prepare_raw::<false>(x, crate::quant::GgmlType::Q8_0.block_bytes())
}

/// A Q8_K row (TQ1_0's and TQ2_0's partner) for [`prepare_raw`].
pub(crate) fn prepare_q8_k_raw(x: &[u8]) -> Act {
    prepare_raw::<true>(x, crate::quant::GgmlType::Q8_K.block_bytes())
}

/// `out[i·ldo + j] = dot(W_j, act_i)` over the raw rows (see the module comment). Sizes that
/// do not fit write nothing (the callers check them first).
pub(crate) fn run_dots(dot: QuantDotFn, w: &[u8], nw: usize, acts: &[Act], out: &mut [f32], ldo: usize) {
    let Some(wrb) = super::prepared::row_bytes_if_fits(w, nw, acts.len(), out, ldo) else { return };
    for (j, wr) in w.chunks_exact(wrb).take(nw).enumerate() {
        for (i, a) in acts.iter().enumerate() {
            if let Some(o) = out.get_mut(i * ldo + j) {
                *o = dot(wr, &a.q);
            }
        }
    }
}

/// The [`super::QuantGemv`] of a dot kernel `$dot` over rows prepared by `$prepare` (one of
/// this file's); the architecture's `quant_gemv` adds the panel.
macro_rules! dot_gemv {
    ($prepare:path, $dot:path) => {
        $crate::cpu::arch::QuantGemv {
            prepare: $prepare,
            run: |w, nw, acts, out, ldo| $crate::cpu::arch::dot_gemv::run_dots($dot, w, nw, acts, out, ldo),
            panel: None,
            panel_min_rows: usize::MAX,
        }
    };
}
pub(crate) use dot_gemv;
