//! Our f32 GEMM beside OpenBLAS's (issue 17: OpenBLAS is the yardstick) on the same threads:
//! square products at 256/512/1024/2048 and a decode-style GEMV (`y = W·x`, W 4096×4096 stored
//! [out, in]). Both sides are called at kernel level on the same buffers (ours: the core's
//! `gemm`, which runs its GEMV path for one row; OpenBLAS: the provider's entry, i.e.
//! `cblas_sgemm`, or `cblas_sgemv` for one row, and a direct `cblas_sgemv` call beside it). The ratio is ours ÷ OpenBLAS in
//! GFLOP/s (> 1: ours is faster). Threads: `MLX_ARM_NUM_THREADS` (both libraries follow it).
//!
//! `cargo run --release -p mlx-arm-openblas --example bench_openblas [-- --quick]`
//! (`--quick` drops the 2048³ product).

#[path = "../../../core/examples/common/mod.rs"]
mod common;

use mlx_arm_core::cpu::gemm::{gemm, MatMut, MatRef};
use mlx_arm_core::cpu::gemm_provider::BlasGemm;
use mlx_arm_openblas as openblas;
use std::os::raw::c_int;

extern "C" {
    // The GEMV anchor only; products go through the provider itself.
    #[allow(clippy::too_many_arguments)]
    fn cblas_sgemv(layout: c_int, trans: c_int, m: c_int, n: c_int, alpha: f32, a: *const f32, lda: c_int, x: *const f32, incx: c_int, beta: f32, y: *mut f32, incy: c_int);
}

/// GFLOP/s of `flops` work timed by the shared rule (median of `runs` after a warm-up).
fn gflops(flops: f64, runs: usize, f: impl FnMut()) -> f64 {
    flops / common::median_seconds(1, runs, f) / 1e9
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    openblas::follow_core_threads();
    println!("threads: ours {} | OpenBLAS {} ({})", mlx_arm_core::parallel::num_threads(), openblas::threads(), openblas::config());
    println!("{:<26} {:>12} {:>14} {:>8}", "case", "ours GFLOP/s", "OpenBLAS", "ratio");
    let sizes: &[usize] = if quick { &[256, 512, 1024] } else { &[256, 512, 1024, 2048] };
    for &s in sizes {
        let (a, b) = (common::fill(s * s, 1), common::fill(s * s, 2));
        let mut c = vec![0f32; s * s];
        let flops = 2.0 * (s * s * s) as f64;
        let runs = if s >= 1024 { 5 } else { 20 };
        let ours = gflops(flops, runs, || unsafe {
            // SAFETY: s×s row-major buffers.
            gemm(s, s, s, 1.0, MatRef::new(a.as_ptr(), s as isize, 1), MatRef::new(b.as_ptr(), s as isize, 1), 0.0, MatMut::new(c.as_mut_ptr(), s), true)
        });
        let call = BlasGemm { trans_a: false, trans_b: false, m: s, n: s, k: s, alpha: 1.0, a: a.as_ptr(), lda: s, b: b.as_ptr(), ldb: s, beta: 0.0, c: c.as_mut_ptr(), ldc: s };
        let theirs = gflops(flops, runs, || unsafe {
            // SAFETY: as above.
            assert!((openblas::PROVIDER.sgemm)(&call));
        });
        println!("{:<26} {:>12.1} {:>14.1} {:>8.2}", format!("sgemm {s}x{s}x{s}"), ours, theirs, ours / theirs);
    }
    let (n, k) = (4096, 4096);
    let (w, x) = (common::fill(n * k, 3), common::fill(k, 4));
    let mut y = vec![0f32; n];
    let flops = 2.0 * (n * k) as f64;
    let ours = gflops(flops, 20, || unsafe {
        // SAFETY: x is 1×k; Wᵀ is the k×n view (strides 1, k) of the n×k row-major W.
        gemm(1, n, k, 1.0, MatRef::new(x.as_ptr(), k as isize, 1), MatRef::new(w.as_ptr(), 1, k as isize), 0.0, MatMut::new(y.as_mut_ptr(), n), true)
    });
    let call = BlasGemm { trans_a: false, trans_b: true, m: 1, n, k, alpha: 1.0, a: x.as_ptr(), lda: k, b: w.as_ptr(), ldb: k, beta: 0.0, c: y.as_mut_ptr(), ldc: n };
    let theirs_gemm = gflops(flops, 20, || unsafe {
        // SAFETY: as above, in CBLAS terms.
        assert!((openblas::PROVIDER.sgemm)(&call));
    });
    let theirs_gemv = gflops(flops, 20, || unsafe {
        // SAFETY: W is n×k row-major, x has k elements, y n.
        cblas_sgemv(101, 111, n as c_int, k as c_int, 1.0, w.as_ptr(), k as c_int, x.as_ptr(), 1, 0.0, y.as_mut_ptr(), 1)
    });
    println!("{:<26} {:>12.1} {:>14.1} {:>8.2}", "gemv 4096x4096 (provider)", ours, theirs_gemm, ours / theirs_gemm);
    println!("{:<26} {:>12.1} {:>14.1} {:>8.2}", "gemv 4096x4096 (sgemv)", ours, theirs_gemv, ours / theirs_gemv);
}
