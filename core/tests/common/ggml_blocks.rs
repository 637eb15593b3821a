//! Facts about GGUF weight blocks that the kernel tests share: where a block's quants and
//! super-scale sit, and the bound on the float products a dot kernel rounds.
#![allow(dead_code)]

use mlx_arm_core::quant::ggml::dequantize_row;
use mlx_arm_core::quant::GgmlType as T;

/// Byte ranges of the quants in one block (the rest are scales/mins), per weight type.
pub fn quant_ranges(ty: T) -> &'static [(usize, usize)] {
    match ty {
        T::Q4_0 => &[(2, 18)],
        T::Q4_1 => &[(4, 20)],
        T::Q5_0 => &[(2, 22)],
        T::Q5_1 => &[(4, 24)],
        T::Q8_0 => &[(2, 34)],
        T::Q2_K => &[(16, 80)],
        T::Q3_K => &[(0, 96)],
        T::Q4_K => &[(16, 144)],
        T::Q5_K => &[(16, 176)],
        T::Q6_K => &[(0, 192)],
        T::IQ4_NL => &[(2, 18)],
        T::IQ4_XS => &[(8, 136)],
        T::MXFP4 => &[(1, 17)],
        T::TQ1_0 => &[(0, 52)],
        T::TQ2_0 => &[(0, 64)],
        T::Q8_1 => &[(4, 36)],
        T::Q8_K => &[(4, 260)],
        _ => &[],
    }
}

pub fn map_quants(ty: T, row: &mut [u8], mut f: impl FnMut(&mut u8)) {
    for blk in row.chunks_exact_mut(ty.block_bytes()) {
        for &(a, b) in quant_ranges(ty) {
            blk[a..b].iter_mut().for_each(&mut f);
        }
    }
}

/// Σ_e (|w_e| + |w0_e|)·|y_e|, w0 = the row with its quants zeroed: bounds |scale·q·y| and the
/// min/offset terms, i.e. every float product the kernels round.
pub fn magnitude(ty: T, w: &[u8], bt: T, y: &[u8], n: usize) -> f64 {
    let mut wf = vec![0f32; n];
    let mut w0f = vec![0f32; n];
    let mut yf = vec![0f32; n];
    dequantize_row(ty, w, &mut wf).unwrap();
    let mut w0 = w.to_vec();
    map_quants(ty, &mut w0, |b| *b = 0);
    dequantize_row(ty, &w0, &mut w0f).unwrap();
    dequantize_row(bt, y, &mut yf).unwrap();
    (0..n).map(|e| (wf[e].abs() as f64 + w0f[e].abs() as f64) * yf[e].abs() as f64).sum()
}

pub fn set_f16(row: &mut [u8], ty: T, block: usize, offset: usize, bits: u16) {
    let at = block * ty.block_bytes() + offset;
    row[at..at + 2].copy_from_slice(&bits.to_le_bytes());
}

/// Offset of the f16 super-scale `d` in a block. MXFP4's scale is one E8M0 byte at 0: an f16
/// written there sets it to the f16's low byte (0xFF the largest, 0x00 the smallest scale) and
/// the first quant byte to its high byte.
pub fn d_offset(ty: T) -> usize {
    match ty {
        T::TQ1_0 => 52,
        T::TQ2_0 => 64,
        T::Q2_K => 80,
        T::Q3_K => 108,
        T::Q6_K => 208,
        _ => 0,
    }
}
