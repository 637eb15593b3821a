//! OpenBLAS as the GEMM provider, through the public ops: against the built-in GEMM, a
//! hand-computed product, transposed and strided views, batched and f64 products, addmm, and
//! the thread count. The provider is a process-wide choice, so the tests take turns.

use mlx_arm_core::cpu::gemm_provider::{gemm_provider, set_gemm_provider, BlasGemm, BUILTIN};
use mlx_arm_core::{ops, Array, Element};
use mlx_arm_openblas as openblas;
use std::sync::{Mutex, MutexGuard};

static TURN: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    let g = TURN.lock().unwrap_or_else(|e| e.into_inner());
    openblas::register().unwrap();
    g
}

/// Deterministic values in [-1, 1).
fn values<T: From<f32>>(n: usize, seed: u32) -> Vec<T> {
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            T::from((s >> 8) as f32 / (1u32 << 23) as f32 - 1.0)
        })
        .collect()
}

/// Evaluates `f` with `provider` selected; returns the values and how many products OpenBLAS ran.
fn with<T: Element>(provider: &str, f: impl Fn() -> Array) -> (Vec<T>, usize) {
    set_gemm_provider(provider).unwrap();
    let before = openblas::calls();
    let out = f();
    out.eval().unwrap();
    let v = out.to_vec::<T>().unwrap();
    let used = openblas::calls() - before;
    set_gemm_provider(BUILTIN).unwrap();
    (v, used)
}

/// The product on both providers: equal within `tol` (relative to the largest |value|), and
/// OpenBLAS ran `want_calls` products.
fn same<T: Element + Into<f64>>(f: impl Fn() -> Array, want_calls: usize, tol: f64) {
    let (ours, none) = with::<T>(BUILTIN, &f);
    assert_eq!(none, 0, "the built-in provider must not call OpenBLAS");
    let (theirs, used) = with::<T>(openblas::NAME, &f);
    assert_eq!(used, want_calls, "products OpenBLAS ran");
    assert_eq!(ours.len(), theirs.len());
    let scale = ours.iter().map(|&x| Into::<f64>::into(x).abs()).fold(1.0, f64::max);
    for (i, (&x, &y)) in ours.iter().zip(&theirs).enumerate() {
        let (x, y): (f64, f64) = (x.into(), y.into());
        assert!((x - y).abs() <= tol * scale, "element {i}: built-in {x} vs OpenBLAS {y}");
    }
}

fn mat<T: Element + From<f32>>(r: usize, c: usize, seed: u32) -> Array {
    Array::from_slice(&values::<T>(r * c, seed), &[r, c]).unwrap()
}

#[test]
fn hand_computed_product() {
    let _t = turn();
    let a = Array::from_slice(&[1f32, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    let b = Array::from_slice(&[7f32, 8., 9., 10., 11., 12.], &[3, 2]).unwrap();
    // [[1·7+2·9+3·11, 1·8+2·10+3·12], [4·7+5·9+6·11, 4·8+5·10+6·12]]
    let (v, used) = with::<f32>(openblas::NAME, || ops::matmul(&a, &b).unwrap());
    assert_eq!(v, vec![58., 64., 139., 154.]);
    assert_eq!(used, 1);
    assert_eq!(gemm_provider(), BUILTIN);
}

#[test]
fn f32_products_match_the_builtin_gemm() {
    let _t = turn();
    for (m, k, n) in [(1, 1, 1), (37, 53, 29), (128, 64, 96), (200, 300, 100)] {
        let (a, b) = (mat::<f32>(m, k, 1), mat::<f32>(k, n, 2));
        same::<f32>(|| ops::matmul(&a, &b).unwrap(), 1, 1e-5);
    }
}

#[test]
fn one_row_and_one_column_products_run_as_gemv() {
    let _t = turn();
    let t = |x: &Array| ops::transpose(x, None).unwrap();
    for (m, k, n) in [(1, 300, 200), (200, 300, 1), (1, 7, 1)] {
        let (a, b) = (mat::<f32>(m, k, 20), mat::<f32>(k, n, 21));
        // Row-major operands, then both stored transposed (`x @ W.T`, the decode layout).
        same::<f32>(|| ops::matmul(&a, &b).unwrap(), 1, 1e-5);
        let (at, bt) = (mat::<f32>(k, m, 22), mat::<f32>(n, k, 23));
        same::<f32>(|| ops::matmul(&t(&at), &t(&bt)).unwrap(), 1, 1e-5);
        let (a, b) = (mat::<f64>(m, k, 24), mat::<f64>(n, k, 25));
        same::<f64>(|| ops::matmul(&a, &t(&b)).unwrap(), 1, 1e-12);
    }
    // A 1-D vector times a matrix, and addmm's beta on a single row.
    let (x, w, c) = (mat::<f32>(1, 64, 26), mat::<f32>(64, 48, 27), mat::<f32>(1, 48, 28));
    let v = ops::reshape(&x, &[64]).unwrap();
    same::<f32>(|| ops::matmul(&v, &w).unwrap(), 1, 1e-5);
    same::<f32>(|| ops::addmm(&c, &x, &w, 2.0, 0.5).unwrap(), 1, 1e-5);
}

#[test]
fn f64_products_match_the_builtin_gemm() {
    let _t = turn();
    for (m, k, n) in [(3, 5, 7), (64, 129, 65)] {
        let (a, b) = (mat::<f64>(m, k, 3), mat::<f64>(k, n, 4));
        same::<f64>(|| ops::matmul(&a, &b).unwrap(), 1, 1e-12);
    }
}

#[test]
fn transposed_and_strided_views_go_to_openblas_without_copies() {
    let _t = turn();
    // A = (48×40)ᵀ, B = (56×48)ᵀ: both stored transposed.
    let (at, bt) = (mat::<f32>(48, 40, 5), mat::<f32>(56, 48, 6));
    same::<f32>(|| ops::matmul(&ops::transpose(&at, None).unwrap(), &ops::transpose(&bt, None).unwrap()).unwrap(), 1, 1e-5);
    // Columns 3..43 of a 40×50 matrix: row-major with leading dimension 50.
    let (wide, b) = (mat::<f64>(40, 50, 7), mat::<f64>(40, 33, 8));
    let a = ops::slice(&wide, &[0, 3], &[40, 43], &[1, 1]).unwrap();
    same::<f64>(|| ops::matmul(&a, &b).unwrap(), 1, 1e-12);
    // Every other column: no BLAS layout, so the built-in GEMM runs it (0 OpenBLAS calls).
    let a = ops::slice(&wide, &[0, 0], &[40, 50], &[1, 2]).unwrap();
    let b = mat::<f64>(25, 9, 9);
    same::<f64>(|| ops::matmul(&a, &b).unwrap(), 0, 1e-12);
}

#[test]
fn batched_and_broadcast_products() {
    let _t = turn();
    // 3 products of 64³ each: big enough that each one runs alone and reaches the provider.
    let a = Array::from_slice(&values::<f32>(3 * 64 * 64, 10), &[3, 64, 64]).unwrap();
    let b = mat::<f32>(64, 64, 11);
    same::<f32>(|| ops::matmul(&a, &b).unwrap(), 3, 1e-5);
    // Small batched products run side by side on our pool, so they stay built-in.
    let a = Array::from_slice(&values::<f32>(8 * 4 * 5, 12), &[8, 4, 5]).unwrap();
    let b = Array::from_slice(&values::<f32>(8 * 5 * 6, 13), &[8, 5, 6]).unwrap();
    same::<f32>(|| ops::matmul(&a, &b).unwrap(), 0, 1e-5);
}

#[test]
fn addmm_scales_on_openblas() {
    let _t = turn();
    let (a, b, c) = (mat::<f32>(30, 20, 14), mat::<f32>(20, 25, 15), mat::<f32>(30, 25, 16));
    same::<f32>(|| ops::addmm(&c, &a, &b, 0.5, -2.0).unwrap(), 1, 1e-5);
}

#[test]
fn openblas_follows_the_core_thread_count() {
    let _t = turn();
    let (a, b) = (mat::<f32>(16, 16, 17), mat::<f32>(16, 16, 18));
    for n in [1, 2] {
        mlx_arm_core::parallel::set_num_threads(n);
        let (_, used) = with::<f32>(openblas::NAME, || ops::matmul(&a, &b).unwrap());
        assert_eq!(used, 1);
        assert_eq!(openblas::threads(), n);
    }
    mlx_arm_core::parallel::set_num_threads(0);
}

#[test]
fn beta_zero_overwrites_nan_and_huge_sizes_are_declined() {
    let _t = turn();
    let (a, b) = ([1f32, 2., 3., 4.], [1f32, 0., 0., 1.]);
    let mut c = [f32::NAN; 4];
    let call = BlasGemm { trans_a: false, trans_b: false, m: 2, n: 2, k: 2, alpha: 1.0, a: a.as_ptr(), lda: 2, b: b.as_ptr(), ldb: 2, beta: 0.0, c: c.as_mut_ptr(), ldc: 2 };
    // SAFETY: 2×2 operands as described.
    assert!(unsafe { (openblas::PROVIDER.sgemm)(&call) });
    assert_eq!(c, [1., 2., 3., 4.]);
    // The GEMV path (one row) clears a NaN-filled C too.
    let mut y = [f32::NAN; 2];
    let row = BlasGemm { m: 1, c: y.as_mut_ptr(), ..call };
    assert!(unsafe { (openblas::PROVIDER.sgemm)(&row) });
    assert_eq!(y, [1., 2.]);
    let mut y = [f32::NAN; 2];
    let col = BlasGemm { n: 1, c: y.as_mut_ptr(), ldc: 1, ..call };
    assert!(unsafe { (openblas::PROVIDER.sgemm)(&col) });
    assert_eq!(y, [1., 3.]);
    // A dimension past i32::MAX is declined before anything is read (the pointers are never used).
    let huge = BlasGemm { m: i32::MAX as usize + 1, ldc: i32::MAX as usize + 1, ..call };
    assert!(!unsafe { (openblas::PROVIDER.sgemm)(&huge) });
    assert_eq!(c, [1., 2., 3., 4.]);
}
