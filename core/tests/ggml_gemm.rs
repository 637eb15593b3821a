//! The quantized GEMM paths (`qmatmul_rows`, `ops::ggml_matmul` with many activation rows)
//! at every ISA level this machine runs, against two oracles:
//! - each output equals that level's dot kernel on the same (weight row, quantized activation
//!   row) pair, bit for bit — the register-tiled kernels promise this, so tiling, edge tiles,
//!   row ranges and thread counts cannot change a result (the kernels over prepared
//!   activations, including the weight-panel GEMM (from 8, 64 or 512 rows), sum in another float order:
//!   they meet the dot bound instead, and are bit-identical across splits and threads);
//! - the f64 product of the dequantized operands, within the dot bound of ggml_simd.rs.
//!
//! - weight blocks at the edges of their formats (all-zero, min and max quants, every bit
//!   pattern, extreme and non-finite super-scales) against the dot kernel within the dot bound
//!   of ggml_simd.rs.
//!
//! One test function: it switches the global ISA level and thread count, which other tests in
//! the same process must not see change under them.

use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::parallel::set_num_threads;
use mlx_arm_core::quant::ggml::{
    dequantize_row, matmul_equals_dot, qmatmul_rows, quantize_activations, quantize_row_at, vec_dot_at, vec_dot_type,
};
use mlx_arm_core::quant::GgmlType as T;
use mlx_arm_core::{ops, Array, DType};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;
#[path = "common/ggml_blocks.rs"]
mod blocks;
use blocks::{d_offset, magnitude, map_quants, set_f16};
#[path = "common/levels.rs"]
mod levels;

const TYPES: [T; 15] = [
    T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_NL, T::IQ4_XS,
    T::MXFP4, T::TQ1_0, T::TQ2_0,
];

#[test]
fn quantized_gemm_matches_the_dot_kernel_at_every_level_and_thread_count() {
    for level in levels::levels() {
        isa::set_isa(level).unwrap();
        for (ti, ty) in TYPES.into_iter().enumerate() {
            // scripts/test.sh may run this table as several processes under qemu (a shard of
            // the types each); each type's data comes from its own seed, whichever shard runs it.
            if !levels::in_shard(ti) {
                continue;
            }
            let mut rng = Rng(0x0DDB_1A5E_5BAD_5EED ^ ((ti as u64 + 1) << 40));
            let bt = vec_dot_type(ty).unwrap();
            // m, n, blocks: every edge of the 4×2 register tile and of the 16-row activation
            // tile, one weight tile boundary (64 KiB of rows at 8 blocks of Q8_0 is 240 rows);
            // GEMVs (m = 1): odd and even row counts (the 1×2 tile and its edge), and across a
            // weight tile.
            for &(m, n, blocks) in &[
                (1usize, 1usize, 1usize),
                (1, 6, 2),
                (1, 7, 3),
                (1, 9, 1),
                (1, 250, 8),
                (1, 13, 9),
                (1, 11, 18),
                (1, 5, 7),
                (1, 6, 17),
                // The AVX-512 VBMI kernel of four blocks a step (arch/x86_64/gemv_quad.rs, on
                // CPUs with VBMI): one quad alone, a whole group then a last group of a quad
                // alone, with a pair, with a pair and a block, with a block; a 2-row tile.
                (1, 3, 4),
                (1, 5, 12),
                (1, 7, 14),
                (1, 9, 15),
                (2, 5, 13),
                // A decode row of 4096 for the K-quants (16 super-blocks: the AVX2 kernels'
                // exact i32 sums per super-block, 16 of them per output), all tile edges.
                (1, 7, 16),
                (3, 5, 16),
                (2, 3, 2),
                (3, 5, 5),
                (4, 6, 4),
                (5, 7, 3),
                (6, 3, 6),
                (7, 5, 1),
                (8, 4, 1),
                (17, 9, 2),
                (37, 19, 3),
                (9, 250, 8),
                // The weight-panel GEMM (from 8 activation rows): panels of 16 weight rows
                // with tails, activation tiles of 4 with tails, odd block counts (the paired
                // activation order's last block), split across threads.
                (8, 16, 1),
                (11, 33, 5),
                (30, 50, 9),
                (64, 47, 2),
                // Panel passes over a slice of the groups at a time (AVX2: 512 elements),
                // the last one partial.
                (12, 20, 40),
                // From 64 rows where the panel lines are built word by word (AVX2, NEON,
                // dotprod): activation and panel tails, several passes.
                (64, 20, 40),
                (65, 17, 3),
                // From 512 rows where the layout's panel only pays there (Q5_0, Q5_1, Q2_K).
                (512, 17, 2),
            ] {
                let k = blocks * ty.block_len();
                let wrb = ty.row_bytes(k).unwrap();
                let mut w = vec![0u8; n * wrb];
                for r in w.chunks_exact_mut(wrb) {
                    quantize_row_at(Isa::Portable, ty, &rng.row(k, 2.0), r).unwrap();
                }
                let x = rng.row(m * k, 1.5);
                let xq = quantize_activations(ty, &x, m, k).unwrap();
                let xrb = bt.row_bytes(k).unwrap();
                let mut want = vec![0f32; m * n];
                for i in 0..m {
                    for j in 0..n {
                        want[i * n + j] =
                            vec_dot_at(level, ty, &w[j * wrb..][..wrb], &xq.data[i * xrb..][..xrb], k).unwrap();
                    }
                }
                // Second oracle: f64 product of the dequantized operands.
                let mut bound = vec![(0f64, 0f64); m * n];
                let (mut wf, mut xf) = (vec![0f32; n * k], vec![0f32; m * k]);
                dequantize_row(ty, &w, &mut wf).unwrap();
                dequantize_row(bt, &xq.data, &mut xf).unwrap();
                for i in 0..m {
                    for j in 0..n {
                        let (a, b) = (&xf[i * k..][..k], &wf[j * k..][..k]);
                        let exact: f64 = a.iter().zip(b).map(|(&p, &q)| p as f64 * q as f64).sum();
                        let mag: f64 = a.iter().zip(b).map(|(&p, &q)| (p as f64 * q as f64).abs()).sum();
                        // Q8_1's s is f16(d·Σq): its rounding is part of ggml's Q4_1/Q5_1 dot.
                        let tol = 4.0 * (blocks as f64 + 16.0) * f32::EPSILON as f64 * mag + 2e-3 * mag.max(1.0) * (bt == T::Q8_1) as u8 as f64;
                        bound[i * n + j] = (exact, tol + 1e-6);
                        let got = want[i * n + j] as f64;
                        assert!((got - exact).abs() <= tol + 1e-6, "{} {ty:?} ({m},{n},{k}) [{i},{j}]: {got} vs {exact}", level.name());
                    }
                }
                // Whole range and split ranges.
                let mut got = vec![f32::NAN; m * n];
                qmatmul_rows(ty, &w, n, k, &x, m, &mut got, 0..n).unwrap();
                if !matmul_equals_dot(ty, level) {
                    // The kernels over prepared activations (arch/x86_64/gemv*.rs AVX2 and AVX-512 VNNI,
                    // arch/aarch64/gemv*.rs NEON and dotprod) sum in another float order than
                    // the dot kernel: they must meet the same bound against the f64 product,
                    // and every split and thread count below must reproduce them bit for bit.
                    for (j, (&g, &(exact, tol))) in got.iter().zip(&bound).enumerate() {
                        assert!((g as f64 - exact).abs() <= tol, "{} {ty:?} prepared ({m},{n},{k}) [{j}]: {g} vs {exact}", level.name());
                    }
                    want = got.clone();
                }
                assert_eq!(bits(&got), bits(&want), "{} {ty:?} qmatmul_rows ({m},{n},{k})", level.name());
                let cut = n / 3;
                let mut part = vec![f32::NAN; m * (n - cut)];
                qmatmul_rows(ty, &w, n, k, &x, m, &mut part, cut..n).unwrap();
                for i in 0..m {
                    assert_eq!(bits(&part[i * (n - cut)..][..n - cut]), bits(&want[i * n + cut..][..n - cut]));
                }
                // The array op, single- and multi-threaded.
                let xa = Array::from_slice(&x, &[m, k]).unwrap();
                let wa = Array::from_bytes(&w, &[n, wrb], DType::Uint8).unwrap();
                for threads in [1usize, 2, 3] {
                    set_num_threads(threads);
                    let y = ops::ggml_matmul(&xa, &wa, ty, k).unwrap();
                    y.eval().unwrap();
                    assert_eq!(bits(&y.to_vec::<f32>().unwrap()), bits(&want), "{} {ty:?} op ({m},{n},{k}) {threads} threads", level.name());
                }
                set_num_threads(0);
            }
            edge_blocks(level, ty, &mut rng);
        }
    }
    isa::set_isa(*isa::available().last().unwrap()).unwrap();
}

/// Weight blocks at the edges of `ty` through `qmatmul_rows` at `level` (GEMV and a GEMM tile
/// with edges), against that level's dot kernel: bit for bit where the matmul promises it,
/// else within the dot bound of ggml_simd.rs (`4·(blocks + 16)·ε·Σ|terms|`). A non-finite dot
/// must stay non-finite (NaN and ±Inf may trade places, as there).
fn edge_blocks(level: Isa, ty: T, rng: &mut Rng) {
    let bt = vec_dot_type(ty).unwrap();
    // (1, 5, 9), (3, 6, 8): the AVX2 legacy kernels' whole groups of 8 blocks (their scales
    // loaded and converted 8 at a time) hold the edge scales, the +Inf one included.
    for &(m, n, blocks) in &[(1usize, 5usize, 3usize), (6, 3, 2), (9, 18, 3), (64, 18, 3), (512, 17, 1), (1, 5, 9), (3, 6, 8)] {
        let k = blocks * ty.block_len();
        let (wrb, xrb) = (ty.row_bytes(k).unwrap(), bt.row_bytes(k).unwrap());
        let nblk = n * blocks;
        for case in 0..7 {
            let mut w = vec![0u8; n * wrb];
            for r in w.chunks_exact_mut(wrb) {
                quantize_row_at(Isa::Portable, ty, &rng.row(k, 2.0), r).unwrap();
            }
            match case {
                0 => map_quants(ty, &mut w, |b| *b = 0),
                1 => map_quants(ty, &mut w, |b| *b = 0xFF),
                2 => map_quants(ty, &mut w, |b| *b = rng.next() as u8),
                3 => w.iter_mut().for_each(|b| *b = 0),
                // Largest finite f16 super-scale with large activations; smallest subnormal.
                4 => (0..nblk).for_each(|b| set_f16(&mut w, ty, b, d_offset(ty), 0x7BFF)),
                5 => (0..nblk).for_each(|b| set_f16(&mut w, ty, b, d_offset(ty), 0x0001)),
                _ => set_f16(&mut w, ty, nblk - 1, d_offset(ty), 0x7C00), // +Inf, last row
            }
            let x = rng.row(m * k, [1.5, 1.5, 1.5, 1.5, 300.0, 1e-3, 1.5][case]);
            let xq = quantize_activations(ty, &x, m, k).unwrap();
            let mut got = vec![f32::NAN; m * n];
            qmatmul_rows(ty, &w, n, k, &x, m, &mut got, 0..n).unwrap();
            for i in 0..m {
                for j in 0..n {
                    let (wr, xr) = (&w[j * wrb..][..wrb], &xq.data[i * xrb..][..xrb]);
                    let want = vec_dot_at(level, ty, wr, xr, k).unwrap();
                    let g = got[i * n + j];
                    let what = format!("{} {ty:?} edge case {case} ({m},{n},{k}) [{i},{j}]: {g} vs {want}", level.name());
                    if !want.is_finite() {
                        assert!(!g.is_finite(), "{what}");
                    } else if matmul_equals_dot(ty, level) {
                        assert_eq!(g.to_bits(), want.to_bits(), "{what}");
                    } else {
                        let tol = 4.0 * (blocks as f64 + 16.0) * f32::EPSILON as f64 * magnitude(ty, wr, bt, xr, k) + 1e-30;
                        assert!((g as f64 - want as f64).abs() <= tol, "{what} (tolerance {tol:e})");
                    }
                }
            }
        }
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}
