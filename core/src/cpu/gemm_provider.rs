//! An alternative implementation of the f32/f64 GEMM, chosen at run time: a backend crate
//! (`backends/openblas`) registers a table of BLAS-style `sgemm`/`dgemm` entries and a user
//! selects it by name ([`set_gemm_provider`], or `MLX_ARM_GEMM=<name>` read when the provider
//! registers, with `std`). The built-in kernels stay the default and the fallback.
//!
//! [`super::gemm::gemm`] asks [`try_run`] first for f32×f32 and f64×f64 products that it may
//! spread over threads. The product reaches the provider only when its operands have a BLAS
//! layout (row-major with a leading dimension, possibly transposed) and aligned elements;
//! broadcast (stride 0), reversed or doubly-strided views, and anything the provider declines (a size its integer
//! type cannot hold), run on the built-in kernels. Products the caller already runs many at a
//! time on the thread pool (small batched matmuls) stay built-in too: a BLAS threads on its own,
//! and nesting its threads inside ours would oversubscribe the cores.

use super::gemm::{MatMut, MatRef};
use crate::error::{Error, Result};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// The name [`gemm_provider`] reports, and [`set_gemm_provider`] takes, for the built-in kernels.
pub const BUILTIN: &str = "builtin";

/// The environment variable that selects a provider by name when it registers (`std`).
pub const ENV_VAR: &str = "MLX_ARM_GEMM";

/// One row-major product for a provider, in CBLAS terms: `C[m×n] = alpha·op(A)·op(B) + beta·C`
/// where `op(X)` is X or its transpose. `A` is stored `m×k` (`k×m` when `trans_a`) with row
/// stride `lda`, likewise `B` (`k×n`, or `n×k` when `trans_b`) with `ldb`; `C` has row stride
/// `ldc` and column stride 1. Sizes are > 0, every leading dimension is at least the stored row
/// length, and C does not overlap A or B. With `beta == 0`, C must be overwritten, not read.
#[derive(Clone, Copy, Debug)]
pub struct BlasGemm<T> {
    /// Whether A is stored transposed (`k×m`).
    pub trans_a: bool,
    /// Whether B is stored transposed (`n×k`).
    pub trans_b: bool,
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// The shared dimension.
    pub k: usize,
    /// Scale of the product.
    pub alpha: T,
    /// First element of A.
    pub a: *const T,
    /// Row stride of A as stored (elements).
    pub lda: usize,
    /// First element of B.
    pub b: *const T,
    /// Row stride of B as stored (elements).
    pub ldb: usize,
    /// Scale of the old C.
    pub beta: T,
    /// First element of C.
    pub c: *mut T,
    /// Row stride of C (elements).
    pub ldc: usize,
}

/// A provider's entry: runs the product and returns true, or returns false without touching
/// anything to leave it to the built-in kernels (e.g. a size that does not fit its integers).
///
/// # Safety
/// The pointers of the call satisfy the layout [`BlasGemm`] describes.
pub type GemmEntry<T> = unsafe fn(&BlasGemm<T>) -> bool;

/// A registered GEMM implementation.
#[derive(Debug)]
pub struct GemmProvider {
    /// The name users select it by (`MLX_ARM_GEMM`, [`set_gemm_provider`]); not [`BUILTIN`].
    pub name: &'static str,
    /// f32 products.
    pub sgemm: GemmEntry<f32>,
    /// f64 products.
    pub dgemm: GemmEntry<f64>,
}

/// The providers registered so far.
static REGISTERED: spin::RwLock<Vec<&'static GemmProvider>> = spin::RwLock::new(Vec::new());
/// The selected provider; null = the built-in kernels.
static ACTIVE: AtomicPtr<GemmProvider> = AtomicPtr::new(core::ptr::null_mut());
/// Whether code chose explicitly (then `MLX_ARM_GEMM` no longer applies, as with `set_isa`).
static CHOSEN_IN_CODE: AtomicBool = AtomicBool::new(false);

/// Makes `provider` selectable by its name, and selects it if `MLX_ARM_GEMM` names it (with
/// `std`) and no selection was made in code. Registering the same table twice is a no-op; a
/// different table under a taken name (or under [`BUILTIN`]) is an error.
pub fn register_gemm_provider(provider: &'static GemmProvider) -> Result<()> {
    if provider.name.eq_ignore_ascii_case(BUILTIN) || provider.name.trim().is_empty() {
        return Err(Error::invalid("register_gemm_provider", alloc::format!("'{}' cannot name a GEMM provider.", provider.name)));
    }
    {
        let mut reg = REGISTERED.write();
        match reg.iter().find(|p| p.name.eq_ignore_ascii_case(provider.name)) {
            Some(p) if core::ptr::eq(*p, provider) => {}
            Some(_) => {
                return Err(Error::invalid(
                    "register_gemm_provider",
                    alloc::format!("Another GEMM provider is already registered as '{}'.", provider.name),
                ))
            }
            None => reg.push(provider),
        }
    }
    if !CHOSEN_IN_CODE.load(Ordering::Relaxed) && env_names(provider.name) {
        ACTIVE.store(provider as *const GemmProvider as *mut GemmProvider, Ordering::Relaxed);
    }
    Ok(())
}

#[cfg(feature = "std")]
fn env_names(name: &str) -> bool {
    extern crate std;
    std::env::var(ENV_VAR).is_ok_and(|v| v.trim().eq_ignore_ascii_case(name))
}

#[cfg(not(feature = "std"))]
fn env_names(_name: &str) -> bool {
    false
}

/// Selects the provider called `name` (a registered one, or [`BUILTIN`]) for every later
/// f32/f64 GEMM; an unknown name is an error listing the registered ones.
pub fn set_gemm_provider(name: &str) -> Result<()> {
    let chosen = if name.trim().eq_ignore_ascii_case(BUILTIN) {
        core::ptr::null_mut()
    } else {
        let reg = REGISTERED.read();
        let Some(p) = reg.iter().find(|p| p.name.eq_ignore_ascii_case(name.trim())) else {
            let known: Vec<&str> = core::iter::once(BUILTIN).chain(reg.iter().map(|p| p.name)).collect();
            return Err(Error::invalid(
                "set_gemm_provider",
                alloc::format!("No GEMM provider '{name}' is registered (known: {}).", known.join(", ")),
            ));
        };
        *p as *const GemmProvider as *mut GemmProvider
    };
    CHOSEN_IN_CODE.store(true, Ordering::Relaxed);
    ACTIVE.store(chosen, Ordering::Relaxed);
    Ok(())
}

/// The name of the selected provider ([`BUILTIN`] when none is).
pub fn gemm_provider() -> &'static str {
    active().map_or(BUILTIN, |p| p.name)
}

/// The names that [`set_gemm_provider`] accepts: [`BUILTIN`], then the registered providers.
pub fn gemm_providers() -> Vec<&'static str> {
    core::iter::once(BUILTIN).chain(REGISTERED.read().iter().map(|p| p.name)).collect()
}

fn active() -> Option<&'static GemmProvider> {
    // SAFETY: ACTIVE only ever holds null or a `&'static GemmProvider`.
    unsafe { ACTIVE.load(Ordering::Relaxed).as_ref() }
}

/// An element type a provider has an entry for.
pub trait BlasElem: Copy {
    /// This type's entry of `p`.
    fn entry(p: &GemmProvider) -> GemmEntry<Self>;
}
impl BlasElem for f32 {
    fn entry(p: &GemmProvider) -> GemmEntry<f32> {
        p.sgemm
    }
}
impl BlasElem for f64 {
    fn entry(p: &GemmProvider) -> GemmEntry<f64> {
        p.dgemm
    }
}

/// How a `rows × cols` operand with element strides `(rs, cs)` is stored in BLAS terms:
/// `(transposed, leading dimension)`, or None if it has no BLAS layout. A dimension of one
/// leaves its stride free (it is never stepped).
pub fn blas_layout(rows: usize, cols: usize, rs: isize, cs: isize) -> Option<(bool, usize)> {
    let (rows_free, cols_free) = (rows <= 1, cols <= 1);
    // Row-major: contiguous rows, each `ld ≥ cols` apart.
    if cs == 1 || cols_free {
        let ld = if rows_free { cols.max(1) } else { usize::try_from(rs).ok()? };
        if ld >= cols.max(1) {
            return Some((false, ld));
        }
    }
    // Stored transposed: contiguous columns, each `ld ≥ rows` apart.
    if rs == 1 || rows_free {
        let ld = if cols_free { rows.max(1) } else { usize::try_from(cs).ok()? };
        if ld >= rows.max(1) {
            return Some((true, ld));
        }
    }
    None
}

/// Runs `C = alpha·A·B + beta·C` on the selected provider if there is one and it takes this
/// layout; false leaves the product to the built-in kernels (nothing was written).
///
/// # Safety
/// As [`super::gemm::gemm`], with `m, n, k > 0`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn try_run<T: BlasElem>(m: usize, n: usize, k: usize, alpha: T, a: MatRef<T>, b: MatRef<T>, beta: T, c: MatMut<T>) -> bool {
    match active() {
        Some(p) => run_on(p, m, n, k, alpha, a, b, beta, c),
        None => false,
    }
}

/// [`try_run`] on a given provider (tests hand one in without selecting it for the process).
///
/// # Safety
/// As [`try_run`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_on<T: BlasElem>(p: &GemmProvider, m: usize, n: usize, k: usize, alpha: T, a: MatRef<T>, b: MatRef<T>, beta: T, c: MatMut<T>) -> bool {
    let (pa, ars, acs) = a.parts();
    let (pb, brs, bcs) = b.parts();
    let (pc, ldc) = c.parts();
    let (Some((trans_a, lda)), Some((trans_b, ldb))) = (blas_layout(m, k, ars, acs), blas_layout(k, n, brs, bcs)) else {
        return false;
    };
    let ldc = if m <= 1 { n } else { ldc };
    // Our views may sit at any byte offset (MatRef reads unaligned); a BLAS takes typed pointers.
    let aligned = |p: usize| p % core::mem::align_of::<T>() == 0;
    if ldc < n || !(aligned(pa as usize) && aligned(pb as usize) && aligned(pc as usize)) {
        return false;
    }
    let call = BlasGemm { trans_a, trans_b, m, n, k, alpha, a: pa, lda, b: pb, ldb, beta, c: pc, ldc };
    (T::entry(p))(&call)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::AtomicUsize;

    #[test]
    fn layouts_map_to_blas_storage() {
        // 3×4 row-major, and inside a wider buffer (ld 6).
        assert_eq!(blas_layout(3, 4, 4, 1), Some((false, 4)));
        assert_eq!(blas_layout(3, 4, 6, 1), Some((false, 6)));
        // The transpose of a row-major 4×3 (strides 1, 3).
        assert_eq!(blas_layout(3, 4, 1, 3), Some((true, 3)));
        // One row or one column: its stride is never stepped.
        assert_eq!(blas_layout(1, 4, 0, 1), Some((false, 4)));
        assert_eq!(blas_layout(4, 1, 7, 0), Some((false, 7)));
        // Broadcast, reversed, rows overlapping, and doubly strided views have none.
        assert_eq!(blas_layout(3, 4, 0, 1), None);
        assert_eq!(blas_layout(3, 4, -4, 1), None);
        assert_eq!(blas_layout(3, 4, 2, 1), None);
        assert_eq!(blas_layout(3, 4, 8, 2), None);
    }

    static SEEN: AtomicUsize = AtomicUsize::new(0);
    /// A provider that records what it was handed and declines (so the built-in kernels run).
    unsafe fn recording(call: &BlasGemm<f32>) -> bool {
        SEEN.store((call.trans_a as usize) | (call.trans_b as usize) << 1 | call.lda << 2 | call.ldb << 16, Ordering::Relaxed);
        false
    }
    unsafe fn never_f64(_: &BlasGemm<f64>) -> bool {
        false
    }
    static RECORDING: GemmProvider = GemmProvider { name: "test-recording", sgemm: recording, dgemm: never_f64 };

    #[test]
    fn a_transposed_view_reaches_the_provider_with_its_flags() {
        let (a, b, mut c) = ([0f32; 6], [0f32; 8], [0f32; 12]);
        // A: 3×2 stored as the transpose of a 2×3 (strides 1, 3); B: 2×4 row-major (ld 4).
        unsafe {
            let taken = run_on(&RECORDING, 3, 4, 2, 1.0, MatRef::new(a.as_ptr(), 1, 3), MatRef::new(b.as_ptr(), 4, 1), 0.0, MatMut::new(c.as_mut_ptr(), 4));
            assert!(!taken);
        }
        assert_eq!(SEEN.load(Ordering::Relaxed), 1 | 3 << 2 | 4 << 16);
    }

    #[test]
    fn selection_by_name() {
        unsafe fn decline(_: &BlasGemm<f32>) -> bool {
            false
        }
        static DECLINING: GemmProvider = GemmProvider { name: "test-declining", sgemm: decline, dgemm: never_f64 };
        static OTHER: GemmProvider = GemmProvider { name: "Test-Declining", sgemm: decline, dgemm: never_f64 };
        static BAD: GemmProvider = GemmProvider { name: "Builtin", sgemm: decline, dgemm: never_f64 };
        register_gemm_provider(&DECLINING).unwrap();
        register_gemm_provider(&DECLINING).unwrap();
        assert!(register_gemm_provider(&OTHER).is_err());
        assert!(register_gemm_provider(&BAD).is_err());
        assert!(gemm_providers().contains(&"test-declining"));
        let err = set_gemm_provider("no-such-blas").unwrap_err();
        assert!(alloc::format!("{err}").contains("test-declining"));
        // Selecting it is harmless to tests running beside this one: it declines every
        // product, so the built-in kernels still compute them.
        set_gemm_provider("TEST-declining").unwrap();
        assert_eq!(gemm_provider(), "test-declining");
        set_gemm_provider(BUILTIN).unwrap();
        assert_eq!(gemm_provider(), BUILTIN);
    }
}
