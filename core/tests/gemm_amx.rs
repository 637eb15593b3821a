//! bf16 × bf16 products forced onto AMX tiles (`MLX_ARM_BF16_GEMM=amx`): every result against
//! an f64 product of the same bf16 inputs, the same bits at 1, 2 and 3 threads, and the route
//! itself — `gemm::amx_bf16_products()` must count every product that is not a GEMV, so
//! the test fails if AMX was silently not taken on a CPU that has it. On a CPU without AMX the
//! same checks run on the fallback (bf16 widened to f32) and the counter must stay at zero; the
//! test says loudly that the AMX kernels were not exercised.
//!
//! Bound per element: `(k+2)·2⁻²³·Σ_p |a_ip·b_pj|` (f32 accumulation: every bf16·bf16 product
//! is exact in f32, each add rounds once), plus 2⁻⁸·|c| where the output is rounded to bf16.
//!
//! One test function: the variable is read once per process, and the thread count is global.

use half::bf16;
use mlx_arm_core::cpu::gemm::{self, amx_bf16_products, MatMut, MatRef};
use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::parallel::set_num_threads;
use mlx_arm_core::{ops, Array, DType};

/// Deterministic values in [-1, 1), rounded to bf16.
fn fill(n: usize, seed: u32) -> Vec<bf16> {
    (0..n as u32).map(|i| bf16::from_f32(((i.wrapping_mul(2654435761) ^ seed.wrapping_mul(40503)) % 2000) as f32 / 1000.0 - 1.0)).collect()
}

/// `(Σ_p a_ip·b_pj, Σ_p |a_ip·b_pj|)` for every (i, j), A m×k and B k×n row-major.
fn oracle(a: &[bf16], b: &[bf16], m: usize, n: usize, k: usize) -> Vec<(f64, f64)> {
    let mut r = vec![(0f64, 0f64); m * n];
    for i in 0..m {
        for p in 0..k {
            let x = a[i * k + p].to_f64();
            for j in 0..n {
                let t = x * b[p * n + j].to_f64();
                r[i * n + j].0 += t;
                r[i * n + j].1 += t.abs();
            }
        }
    }
    r
}

/// `src` (r×c row-major) stored with strides `(rs, cs)` in a NaN-filled buffer.
fn store(src: &[bf16], r: usize, c: usize, rs: usize, cs: usize) -> Vec<bf16> {
    let mut out = vec![bf16::NAN; (r - 1) * rs + (c - 1) * cs + 1];
    for i in 0..r {
        for j in 0..c {
            out[i * rs + j * cs] = src[i * c + j];
        }
    }
    out
}

#[test]
fn bf16_products_forced_onto_amx_match_f64_at_every_thread_count() {
    std::env::set_var("MLX_ARM_BF16_GEMM", "amx");
    let amx = isa::has_amx_bf16() && isa::isa().allows(Isa::Avx512) && isa::has_avx512_bf16();
    if !amx {
        eprintln!(
            "gemm_amx: this CPU has no usable AMX-BF16 (CPUID, the Linux tile-state grant, or level {}): \
             THE AMX KERNELS ARE NOT EXERCISED HERE; checking that forcing amx falls back to widening, correctly",
            isa::isa().name()
        );
    }
    let mut expected = amx_bf16_products();
    // (m, n, k): 1×1×1 and one-row/one-column products take the GEMV (not AMX); the rest cover
    // M, N not multiples of 32, odd K, K below one 32-step and across the 512-deep slice, and
    // both of the driver's modes (≤ 128 rows of A: B packed per task; more: shared B pass).
    let shapes = [(1usize, 1usize, 1usize), (17, 33, 65), (100, 3, 200), (33, 31, 31), (2, 2, 3), (300, 530, 600), (64, 700, 1100), (150, 70, 1099), (1, 300, 70)];
    for &(m, n, k) in &shapes {
        let (av, bv) = (fill(m * k, 1 + m as u32), fill(k * n, 2 + n as u32));
        let want = oracle(&av, &bv, m, n, k);
        // A: row-major, transposed (column-major). B: row-major, Wᵀ of a row-major W, padded strides.
        let a_layouts = [(k, 1), (1, m)];
        let b_layouts = [(n, 1), (1, k), (2 * n + 2, 2)];
        for (la, &(ars, acs)) in a_layouts.iter().enumerate() {
            for (lb, &(brs, bcs)) in b_layouts.iter().enumerate() {
                let (ab, bb) = (store(&av, m, k, ars, acs), store(&bv, k, n, brs, bcs));
                let mut first: Option<Vec<u32>> = None;
                for threads in [1usize, 2, 3] {
                    set_num_threads(threads);
                    let mut c = vec![f32::NAN; m * n];
                    unsafe {
                        gemm::gemm(m, n, k, 1.0f32, MatRef::new(ab.as_ptr(), ars as isize, acs as isize), MatRef::new(bb.as_ptr(), brs as isize, bcs as isize), 0.0, MatMut::new(c.as_mut_ptr(), n), true);
                    }
                    // One-row/one-column products take the GEMV when their matrix has a unit
                    // stride (m == 1: B's rows or columns; n == 1: A's); the rest are blocked.
                    let gemv = if m == 1 { brs == 1 || bcs == 1 } else { n == 1 && (ars == 1 || acs == 1) };
                    if amx && !gemv {
                        expected += 1;
                    }
                    assert_eq!(amx_bf16_products(), expected, "{m}x{n}x{k} layouts {la}/{lb}: AMX taken {} (expected {amx})", amx_bf16_products() != expected);
                    let bits: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
                    match &first {
                        None => {
                            for (idx, (&got, &(s, mag))) in c.iter().zip(&want).enumerate() {
                                let bound = (k as f64 + 2.0) * f64::powi(2.0, -23) * mag + 1e-30;
                                assert!((got as f64 - s).abs() <= bound, "{m}x{n}x{k} layouts {la}/{lb} at {idx}: {got} vs {s} (bound {bound})");
                            }
                            first = Some(bits);
                        }
                        Some(b1) => assert!(bits == *b1, "{m}x{n}x{k} layouts {la}/{lb}: {threads} threads differ from 1"),
                    }
                }
            }
        }
    }
    // Batched matmul through the array API: [3, 40, 70] @ [3, 70, 50] in bf16 (output rounded to bf16).
    set_num_threads(0);
    let (bt, m, k, n) = (3usize, 40usize, 70usize, 50usize);
    let (av, bv) = (fill(bt * m * k, 7), fill(bt * k * n, 8));
    let arr = |v: &[bf16], shape: &[usize]| {
        let f: Vec<f32> = v.iter().map(|x| x.to_f32()).collect();
        ops::astype(&Array::from_slice(&f, shape).unwrap(), DType::Bfloat16).unwrap()
    };
    let before = amx_bf16_products();
    let c = ops::matmul(&arr(&av, &[bt, m, k]), &arr(&bv, &[bt, k, n])).unwrap();
    let got = ops::astype(&c, DType::Float32).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(amx_bf16_products() > before, amx, "batched matmul: AMX taken {}", amx_bf16_products() > before);
    for b in 0..bt {
        let want = oracle(&av[b * m * k..(b + 1) * m * k], &bv[b * k * n..(b + 1) * k * n], m, n, k);
        for (idx, &(s, mag)) in want.iter().enumerate() {
            let g = got[b * m * n + idx] as f64;
            let bound = (k as f64 + 2.0) * f64::powi(2.0, -23) * mag + f64::powi(2.0, -8) * s.abs() * 1.01 + 1e-30;
            assert!((g - s).abs() <= bound, "batch {b} at {idx}: {g} vs {s}");
        }
    }
    if !amx {
        assert_eq!(amx_bf16_products(), 0, "no AMX here, yet the counter moved");
    }
}
