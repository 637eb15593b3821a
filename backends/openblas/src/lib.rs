//! OpenBLAS as mlx-arm's alternative f32/f64 GEMM: [`register`] adds it to the core's provider
//! table (`mlx_arm_core::cpu::gemm_provider`), after which `MLX_ARM_GEMM=openblas` or
//! `set_gemm_provider("openblas")` (both also done by [`install`]) sends every float matmul the
//! core would run on its own GEMM to `cblas_sgemm` / `cblas_dgemm`. The built-in kernels stay
//! the default: this is the yardstick they are measured against, and a user's choice.
//!
//! OpenBLAS's thread count follows the core's (`mlx_arm_core::parallel::num_threads`, i.e.
//! `MLX_ARM_NUM_THREADS` / `set_num_threads`), set before a product whenever it changed. Sizes
//! that its 32-bit integers cannot hold are declined, and the core's kernels run them.

mod ffi;

use core::sync::atomic::{AtomicUsize, Ordering};
use mlx_arm_core::cpu::gemm_provider::{register_gemm_provider, set_gemm_provider, BlasGemm, GemmProvider};
use mlx_arm_core::Result;
use std::os::raw::c_int;

/// The name this provider is selected by.
pub const NAME: &str = "openblas";

/// The provider table handed to the core.
pub static PROVIDER: GemmProvider = GemmProvider { name: NAME, sgemm, dgemm };

/// Makes OpenBLAS selectable (and selects it if `MLX_ARM_GEMM=openblas` and no choice was made
/// in code). Safe to call more than once.
pub fn register() -> Result<()> {
    register_gemm_provider(&PROVIDER)
}

/// Registers OpenBLAS and selects it for every later f32/f64 GEMM.
pub fn install() -> Result<()> {
    register()?;
    set_gemm_provider(NAME)
}

/// Products OpenBLAS has run in this process (tests and users check the provider is used).
pub fn calls() -> usize {
    CALLS.load(Ordering::Relaxed)
}

/// The threads OpenBLAS uses now.
pub fn threads() -> usize {
    // SAFETY: a plain query of the library's state.
    unsafe { ffi::openblas_get_num_threads() }.max(1) as usize
}

/// The library's build description (version, core it was tuned for, threading).
pub fn config() -> String {
    // SAFETY: OpenBLAS returns a static NUL-terminated string.
    let p = unsafe { ffi::openblas_get_config() };
    if p.is_null() {
        return String::from("unknown");
    }
    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

static CALLS: AtomicUsize = AtomicUsize::new(0);
/// The thread count last handed to OpenBLAS (0 = never).
static THREADS_SET: AtomicUsize = AtomicUsize::new(0);

/// Gives OpenBLAS the core's thread count now if it changed since the last product (each
/// product does this itself; call it to make [`threads`] current before any product ran).
pub fn follow_core_threads() {
    let want = mlx_arm_core::parallel::num_threads().clamp(1, c_int::MAX as usize);
    if THREADS_SET.swap(want, Ordering::Relaxed) != want {
        // SAFETY: sets a library-wide count; in range by the clamp above.
        unsafe { ffi::openblas_set_num_threads(want as c_int) };
    }
}

/// The call's sizes as CBLAS integers `[m, n, k, lda, ldb, ldc]`, or None if one does not fit.
fn blas_ints<T>(c: &BlasGemm<T>) -> Option<[c_int; 6]> {
    let mut out = [0; 6];
    for (o, v) in out.iter_mut().zip([c.m, c.n, c.k, c.lda, c.ldb, c.ldc]) {
        *o = c_int::try_from(v).ok()?;
    }
    Some(out)
}

fn trans(t: bool) -> c_int {
    if t {
        ffi::CBLAS_TRANS
    } else {
        ffi::CBLAS_NO_TRANS
    }
}

/// A CBLAS element type: its GEMM and GEMV entries.
trait Cblas: Copy + PartialEq + Default {
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, alpha: Self, a: *const Self, lda: c_int, b: *const Self, ldb: c_int, beta: Self, c: *mut Self, ldc: c_int);
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemv(t: c_int, m: c_int, n: c_int, alpha: Self, a: *const Self, lda: c_int, x: *const Self, incx: c_int, beta: Self, y: *mut Self, incy: c_int);
}
impl Cblas for f32 {
    unsafe fn gemm(ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, alpha: f32, a: *const f32, lda: c_int, b: *const f32, ldb: c_int, beta: f32, c: *mut f32, ldc: c_int) {
        ffi::cblas_sgemm(ffi::CBLAS_ROW_MAJOR, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    }
    unsafe fn gemv(t: c_int, m: c_int, n: c_int, alpha: f32, a: *const f32, lda: c_int, x: *const f32, incx: c_int, beta: f32, y: *mut f32, incy: c_int) {
        ffi::cblas_sgemv(ffi::CBLAS_ROW_MAJOR, t, m, n, alpha, a, lda, x, incx, beta, y, incy)
    }
}
impl Cblas for f64 {
    unsafe fn gemm(ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, alpha: f64, a: *const f64, lda: c_int, b: *const f64, ldb: c_int, beta: f64, c: *mut f64, ldc: c_int) {
        ffi::cblas_dgemm(ffi::CBLAS_ROW_MAJOR, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    }
    unsafe fn gemv(t: c_int, m: c_int, n: c_int, alpha: f64, a: *const f64, lda: c_int, x: *const f64, incx: c_int, beta: f64, y: *mut f64, incy: c_int) {
        ffi::cblas_dgemv(ffi::CBLAS_ROW_MAJOR, t, m, n, alpha, a, lda, x, incx, beta, y, incy)
    }
}

/// One product on OpenBLAS: GEMV for a single row or column of C (OpenBLAS's GEMM does not
/// forward those to its GEMV kernels), GEMM otherwise. False if a size does not fit its ints.
///
/// # Safety
/// The core's provider contract ([`BlasGemm`]).
unsafe fn run<T: Cblas>(c: &BlasGemm<T>) -> bool {
    let Some([m, n, k, lda, ldb, ldc]) = blas_ints(c) else { return false };
    follow_core_threads();
    let (ta, tb) = (trans(c.trans_a), trans(c.trans_b));
    if c.m == 1 || c.n == 1 {
        // With beta = 0, C may hold garbage (a fresh buffer): clear it so no NaN survives,
        // whatever the library's SCAL does with a zero factor.
        let (len, inc) = if c.m == 1 { (c.n, 1) } else { (c.m, c.ldc) };
        if c.beta == T::default() {
            for i in 0..len {
                *c.c.add(i * inc) = T::default();
            }
        }
        if c.m == 1 {
            // C (1×n) = alpha·x·op(B) + beta·C: x is A's only row, contiguous unless A is
            // stored transposed (k×1, rows lda apart); op(B)ᵀ is B as stored, transposed or not.
            let incx = if c.trans_a { lda } else { 1 };
            let (t, rows, cols) = if c.trans_b { (ffi::CBLAS_NO_TRANS, n, k) } else { (ffi::CBLAS_TRANS, k, n) };
            T::gemv(t, rows, cols, c.alpha, c.b, ldb, c.a, incx, c.beta, c.c, 1);
        } else {
            // C (m×1, rows ldc apart) = alpha·op(A)·b + beta·C: b is B's only column.
            let incb = if c.trans_b { 1 } else { ldb };
            let (rows, cols) = if c.trans_a { (k, m) } else { (m, k) };
            T::gemv(ta, rows, cols, c.alpha, c.a, lda, c.b, incb, c.beta, c.c, ldc);
        }
    } else {
        T::gemm(ta, tb, m, n, k, c.alpha, c.a, lda, c.b, ldb, c.beta, c.c, ldc);
    }
    CALLS.fetch_add(1, Ordering::Relaxed);
    true
}

/// # Safety
/// The core's provider contract ([`BlasGemm`]).
unsafe fn sgemm(c: &BlasGemm<f32>) -> bool {
    run(c)
}

/// # Safety
/// The core's provider contract ([`BlasGemm`]).
unsafe fn dgemm(c: &BlasGemm<f64>) -> bool {
    run(c)
}
