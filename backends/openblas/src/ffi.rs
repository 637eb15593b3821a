//! The few OpenBLAS symbols used, declared by hand: the CBLAS f32/f64 GEMM and GEMV and the thread and
//! config queries (OpenBLAS extensions no bindings crate covers). Integers are the LP64
//! `blasint` (32-bit) of Debian's libopenblas0; enum values are CBLAS's.

use std::os::raw::{c_char, c_int};

pub const CBLAS_ROW_MAJOR: c_int = 101;
pub const CBLAS_NO_TRANS: c_int = 111;
pub const CBLAS_TRANS: c_int = 112;

extern "C" {
    #[allow(clippy::too_many_arguments)]
    pub fn cblas_sgemm(
        layout: c_int,
        trans_a: c_int,
        trans_b: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: f32,
        a: *const f32,
        lda: c_int,
        b: *const f32,
        ldb: c_int,
        beta: f32,
        c: *mut f32,
        ldc: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    pub fn cblas_dgemm(
        layout: c_int,
        trans_a: c_int,
        trans_b: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: f64,
        a: *const f64,
        lda: c_int,
        b: *const f64,
        ldb: c_int,
        beta: f64,
        c: *mut f64,
        ldc: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    pub fn cblas_sgemv(
        layout: c_int,
        trans: c_int,
        m: c_int,
        n: c_int,
        alpha: f32,
        a: *const f32,
        lda: c_int,
        x: *const f32,
        incx: c_int,
        beta: f32,
        y: *mut f32,
        incy: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    pub fn cblas_dgemv(
        layout: c_int,
        trans: c_int,
        m: c_int,
        n: c_int,
        alpha: f64,
        a: *const f64,
        lda: c_int,
        x: *const f64,
        incx: c_int,
        beta: f64,
        y: *mut f64,
        incy: c_int,
    );
    pub fn openblas_set_num_threads(n: c_int);
    pub fn openblas_get_num_threads() -> c_int;
    pub fn openblas_get_config() -> *const c_char;
}
