//! The one general matrix multiply every CPU kernel that multiplies matrices goes through
//! (matmul, addmm, convolution via im2col, attention; quantized matmul later): a cache-blocked,
//! packed scalar GEMM, `C = alpha·A·B + beta·C`, that accumulates in f32 (f16/bf16/f32 inputs)
//! or f64, reads A and B through arbitrary element strides (so transposed views need no copy)
//! and spreads row blocks over `parallel_for`.
//!
//! Structure (Goto/BLIS style): for each `KC`-deep slice of the shared dimension and each
//! `NC`-wide slice of B, B is packed once into `NR`-wide column panels; row blocks of `MC` rows
//! of A are packed into `MR`-tall row panels (per worker) and an `MR×NR` register tile is
//! computed by the micro-kernel. The micro-kernel is plain Rust over fixed-size arrays, which
//! the compiler vectorizes. It is the reference every SIMD variant is tested against.
//!
//! The SIMD path ([`fast_f32`], f32/f16/bf16 inputs with f32 accumulation) keeps the same
//! structure with per-ISA register tiles from `arch/<cpu>/gemm.rs` (AVX2 6×16, AVX-512 14×32,
//! NEON 8×12) and a work split over (row block × column block) tasks so a short, wide product
//! (e.g. 64×4096×4096) still feeds every core; f16/bf16 are widened while packing. Products
//! with one row or one column take a GEMV path that streams the matrix once.

use super::gemm_provider;
use super::isa::{isa, Isa};
use crate::parallel::parallel_for;
use alloc::vec::Vec;
use half::{bf16, f16};

/// Rows of the register tile.
pub const MR: usize = 4;
/// Columns of the register tile.
pub const NR: usize = 16;
/// Rows of A per packed block (a multiple of `MR`); sized so the block stays in L2.
const MC: usize = 64;
/// Depth of one packed slice.
const KC: usize = 256;
/// Columns of B per packed slice (a multiple of `NR`).
const NC: usize = 1024;

/// The accumulator type: f32 or f64.
pub trait Acc: Copy + Default + Send + Sync + PartialEq + core::ops::Add<Output = Self> + core::ops::Mul<Output = Self> + 'static {
    /// 0
    const ZERO: Self;
    /// 1
    const ONE: Self;
}
impl Acc for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}
impl Acc for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}

/// An input element that widens to the accumulator `A`.
pub trait GemmIn<A: Acc>: Copy + Send + Sync + 'static {
    /// Widen.
    fn load(self) -> A;
    /// Runs the product on the SIMD f32 path of `level` if this input type has one there;
    /// false leaves it to the portable kernel.
    ///
    /// # Safety
    /// As [`gemm`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn fast(_level: Isa, _m: usize, _n: usize, _k: usize, _alpha: A, _a: MatRef<Self>, _b: MatRef<Self>, _beta: A, _c: MatMut<A>, _parallel: bool) -> bool {
        false
    }
    /// Runs the product on the selected [`gemm_provider`] if this type has a provider entry
    /// (f32 and f64) and the provider takes it; false leaves it to the built-in kernels.
    ///
    /// # Safety
    /// As [`gemm`], with `m, n, k > 0`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn provided(_m: usize, _n: usize, _k: usize, _alpha: A, _a: MatRef<Self>, _b: MatRef<Self>, _beta: A, _c: MatMut<A>) -> bool {
        false
    }
}
impl GemmIn<f32> for f32 {
    #[inline(always)]
    fn load(self) -> f32 {
        self
    }
    unsafe fn provided(m: usize, n: usize, k: usize, alpha: f32, a: MatRef<f32>, b: MatRef<f32>, beta: f32, c: MatMut<f32>) -> bool {
        gemm_provider::try_run(m, n, k, alpha, a, b, beta, c)
    }
    unsafe fn fast(level: Isa, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<Self>, b: MatRef<Self>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
        fast_f32(level, m, n, k, alpha, a, b, beta, c, parallel)
    }
}
impl GemmIn<f32> for f16 {
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    unsafe fn fast(level: Isa, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<Self>, b: MatRef<Self>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
        fast_f32(level, m, n, k, alpha, a, b, beta, c, parallel)
    }
}
impl GemmIn<f32> for bf16 {
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    unsafe fn fast(level: Isa, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<Self>, b: MatRef<Self>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
        fast_f32(level, m, n, k, alpha, a, b, beta, c, parallel)
    }
}
impl GemmIn<f64> for f64 {
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
    unsafe fn provided(m: usize, n: usize, k: usize, alpha: f64, a: MatRef<f64>, b: MatRef<f64>, beta: f64, c: MatMut<f64>) -> bool {
        gemm_provider::try_run(m, n, k, alpha, a, b, beta, c)
    }
}

/// A read-only strided matrix: element `(i, j)` sits at `ptr + i·rs + j·cs` (in elements).
#[derive(Clone, Copy)]
pub struct MatRef<T> {
    ptr: *const T,
    rs: isize,
    cs: isize,
}
// SAFETY: only read, and the caller of `MatRef::new` vouches the memory outlives the GEMM.
unsafe impl<T: Sync> Send for MatRef<T> {}
unsafe impl<T: Sync> Sync for MatRef<T> {}

impl<T: Copy> MatRef<T> {
    /// A view of `rows × cols` elements.
    ///
    /// # Safety
    /// Every `ptr + i·rs + j·cs` for `i < rows`, `j < cols` must be readable for the GEMM's duration.
    pub unsafe fn new(ptr: *const T, rs: isize, cs: isize) -> Self {
        MatRef { ptr, rs, cs }
    }
    /// `(ptr, rs, cs)`.
    pub(crate) fn parts(&self) -> (*const T, isize, isize) {
        (self.ptr, self.rs, self.cs)
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize, j: usize) -> T {
        core::ptr::read_unaligned(self.ptr.offset(i as isize * self.rs + j as isize * self.cs))
    }
}

/// A writable row-major output with row stride `ldc` (elements), column stride 1.
#[derive(Clone, Copy)]
pub struct MatMut<A> {
    ptr: *mut A,
    ldc: usize,
}
// SAFETY: workers write disjoint row blocks.
unsafe impl<A: Send> Send for MatMut<A> {}
unsafe impl<A: Send> Sync for MatMut<A> {}

impl<A> MatMut<A> {
    /// An output of `rows × cols` elements with row stride `ldc`.
    ///
    /// # Safety
    /// `ptr + i·ldc + j` must be writable for `i < rows`, `j < cols`, and nothing else may
    /// access those elements during the GEMM.
    pub unsafe fn new(ptr: *mut A, ldc: usize) -> Self {
        MatMut { ptr, ldc }
    }
    /// `(ptr, ldc)`.
    pub(crate) fn parts(&self) -> (*mut A, usize) {
        (self.ptr, self.ldc)
    }
}

/// `C[m×n] = alpha·A[m×k]·B[k×n] + beta·C`. With `beta == 0`, C is overwritten without being
/// read (NaN in C does not leak, as with BLAS). `parallel` allows spreading row blocks over
/// threads; callers that already run many GEMMs in parallel pass false. A selected
/// [`gemm_provider`] (e.g. OpenBLAS) gets the f32/f64 products first when `parallel` is set.
///
/// # Safety
/// `a`, `b`, `c` must satisfy the contracts of [`MatRef::new`] and [`MatMut::new`] for these sizes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<S: GemmIn<A>, A: Acc>(
    m: usize,
    n: usize,
    k: usize,
    alpha: A,
    a: MatRef<S>,
    b: MatRef<S>,
    beta: A,
    c: MatMut<A>,
    parallel: bool,
) {
    if parallel && m > 0 && n > 0 && k > 0 && S::provided(m, n, k, alpha, a, b, beta, c) {
        return;
    }
    gemm_at(isa(), m, n, k, alpha, a, b, beta, c, parallel)
}

/// [`gemm`] with the kernels of `level` (an available level; tests run every one). Levels
/// without SIMD kernels for this input type, and f64, run the portable kernel.
///
/// # Safety
/// As [`gemm`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_at<S: GemmIn<A>, A: Acc>(
    level: Isa,
    m: usize,
    n: usize,
    k: usize,
    alpha: A,
    a: MatRef<S>,
    b: MatRef<S>,
    beta: A,
    c: MatMut<A>,
    parallel: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k > 0 && S::fast(level, m, n, k, alpha, a, b, beta, c, parallel) {
        return;
    }
    if k == 0 {
        scale_c(m, n, beta, c);
        return;
    }
    let n_mblocks = m.div_ceil(MC);
    let flops = m.saturating_mul(n).saturating_mul(k);
    // Below ~64³ multiply-adds, threads cost more than they save.
    let grain = if parallel && flops >= 1 << 18 { 1 } else { n_mblocks };
    let mut bpack: Vec<A> = Vec::new();
    let mut pc = 0;
    while pc < k {
        let kc = KC.min(k - pc);
        let beta_here = if pc == 0 { beta } else { A::ONE };
        let mut jc = 0;
        while jc < n {
            let nc = NC.min(n - jc);
            pack_b(&mut bpack, b, pc, kc, jc, nc);
            let bp: &[A] = &bpack;
            parallel_for(n_mblocks, grain, &|blocks| {
                let mut apack: Vec<A> = Vec::new();
                for blk in blocks {
                    let ic = blk * MC;
                    let mc = MC.min(m - ic);
                    pack_a(&mut apack, a, ic, mc, pc, kc);
                    // SAFETY: rows ic..ic+mc belong to this block alone.
                    unsafe { block(mc, nc, kc, alpha, &apack, bp, beta_here, c, ic, jc) };
                }
            });
            jc += nc;
        }
        pc += kc;
    }
}

/// `C = beta·C` (the k = 0 case).
unsafe fn scale_c<A: Acc>(m: usize, n: usize, beta: A, c: MatMut<A>) {
    for i in 0..m {
        let row = core::slice::from_raw_parts_mut(c.ptr.add(i * c.ldc), n);
        for x in row {
            *x = if beta == A::ZERO { A::ZERO } else { beta * *x };
        }
    }
}

/// Packs `A[ic.., pc..]` (mc × kc) into MR-row panels laid out `[panel][p][r]`, zero-padded.
fn pack_a<S: GemmIn<A>, A: Acc>(buf: &mut Vec<A>, a: MatRef<S>, ic: usize, mc: usize, pc: usize, kc: usize) {
    let panels = mc.div_ceil(MR);
    buf.clear();
    buf.resize(panels * MR * kc, A::ZERO);
    for pnl in 0..panels {
        let dst = &mut buf[pnl * MR * kc..(pnl + 1) * MR * kc];
        let rows = MR.min(mc - pnl * MR);
        for r in 0..rows {
            let i = ic + pnl * MR + r;
            for p in 0..kc {
                // SAFETY: i < m and pc + p < k, inside the caller's view.
                dst[p * MR + r] = unsafe { a.at(i, pc + p) }.load();
            }
        }
    }
}

/// Packs `B[pc.., jc..]` (kc × nc) into NR-column panels laid out `[panel][p][c]`, zero-padded.
fn pack_b<S: GemmIn<A>, A: Acc>(buf: &mut Vec<A>, b: MatRef<S>, pc: usize, kc: usize, jc: usize, nc: usize) {
    let panels = nc.div_ceil(NR);
    buf.clear();
    buf.resize(panels * NR * kc, A::ZERO);
    for pnl in 0..panels {
        let dst = &mut buf[pnl * NR * kc..(pnl + 1) * NR * kc];
        let cols = NR.min(nc - pnl * NR);
        for p in 0..kc {
            let row = &mut dst[p * NR..p * NR + cols];
            for (cc, x) in row.iter_mut().enumerate() {
                // SAFETY: pc + p < k and jc + pnl·NR + cc < n, inside the caller's view.
                *x = unsafe { b.at(pc + p, jc + pnl * NR + cc) }.load();
            }
        }
    }
}

/// One packed block: every MR×NR tile of `mc × nc`, accumulated over `kc`.
#[allow(clippy::too_many_arguments)]
unsafe fn block<A: Acc>(mc: usize, nc: usize, kc: usize, alpha: A, ap: &[A], bp: &[A], beta: A, c: MatMut<A>, ic: usize, jc: usize) {
    for jp in 0..nc.div_ceil(NR) {
        let bpanel = &bp[jp * NR * kc..(jp + 1) * NR * kc];
        let cols = NR.min(nc - jp * NR);
        for ip in 0..mc.div_ceil(MR) {
            let apanel = &ap[ip * MR * kc..(ip + 1) * MR * kc];
            let rows = MR.min(mc - ip * MR);
            let tile = micro(kc, apanel, bpanel);
            for (r, trow) in tile.iter().enumerate().take(rows) {
                let dst = c.ptr.add((ic + ip * MR + r) * c.ldc + jc + jp * NR);
                let out = core::slice::from_raw_parts_mut(dst, cols);
                if beta == A::ZERO {
                    for (o, &t) in out.iter_mut().zip(trow) {
                        *o = alpha * t;
                    }
                } else {
                    for (o, &t) in out.iter_mut().zip(trow) {
                        *o = alpha * t + beta * *o;
                    }
                }
            }
        }
    }
}

/// The register tile: `sum_p a[p][r] · b[p][c]`. Fixed sizes let the compiler keep the tile in
/// vector registers; this is the function SIMD variants replace.
#[inline(always)]
fn micro<A: Acc>(kc: usize, ap: &[A], bp: &[A]) -> [[A; NR]; MR] {
    let mut acc = [[A::ZERO; NR]; MR];
    for (av, bv) in ap.chunks_exact(MR).zip(bp.chunks_exact(NR)).take(kc) {
        let mut a4 = [A::ZERO; MR];
        a4.copy_from_slice(av);
        let mut b16 = [A::ZERO; NR];
        b16.copy_from_slice(bv);
        for r in 0..MR {
            let x = a4[r];
            for cc in 0..NR {
                acc[r][cc] = acc[r][cc] + x * b16[cc];
            }
        }
    }
    acc
}

// ---------------------------------------------------------------------------------------------
// SIMD f32 path.

#[cfg(target_arch = "x86_64")]
#[path = "arch/x86_64/gemm.rs"]
mod x86;

#[cfg(target_arch = "aarch64")]
#[path = "arch/aarch64/gemm.rs"]
mod arm;

#[path = "gemm_pairs.rs"]
mod pairs;

#[cfg(target_arch = "x86_64")]
#[path = "arch/x86_64/gemm_bf16.rs"]
mod x86_bf16;

#[cfg(all(target_arch = "x86_64", feature = "std"))]
#[path = "arch/x86_64/amx.rs"]
mod x86_amx;

/// How many bf16 × bf16 products ran on AMX tiles in this process (0 where there is no AMX):
/// tests and benchmarks check which path `MLX_ARM_BF16_GEMM` and the CPU led to.
pub fn amx_bf16_products() -> usize {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    return x86_amx::products();
    #[allow(unreachable_code)]
    0
}

/// One ISA's f32 kernels (see `arch/<cpu>/gemm.rs`). Strides are in elements.
pub(crate) struct F32Kernels {
    /// Rows of the register tile.
    pub mr: usize,
    /// Columns of the register tile.
    pub nr: usize,
    /// `C[mr×nr] (row stride ldc) = alpha·Σ_p ap[p·mr + r]·bp[p·nr + c] + beta·C`; C is not
    /// read when beta == 0.
    pub micro: unsafe fn(kc: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32),
    /// `out[j] += Σ_p x[p]·w[j·ld + p]`, j < n (rows of W contiguous).
    pub dots: unsafe fn(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, out: *mut f32),
    /// `y[j] += Σ_p x[p]·w[p·ld + j]`, j < n (columns of W contiguous).
    pub axpys: unsafe fn(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, y: *mut f32),
    /// Widens n f16 (as bits) to f32.
    pub widen_f16: unsafe fn(src: *const u16, dst: *mut f32, n: usize),
    /// `dots` with W in f16 (as bits), widened in registers; None: widen tiles, then `dots`.
    pub dots_f16: Option<HalfDots>,
    /// `dots` with W in bfloat16 (as bits), as `dots_f16`.
    pub dots_bf16: Option<HalfDots>,
    /// Transposing packers for sources in f32, f16 and bf16 ([`Widen::FORMAT`] indexes them);
    /// None: the scalar loops of `pack_a_panel`/`pack_b_panel`.
    pub pack_t: Option<[PackT; 3]>,
}

/// `dst[p·w + r] = src[r·ld + p]` widened to f32 for r < rows ≤ w, p < kc, zero for rows
/// `rows..w` (`ld` in elements of the source format).
pub(crate) type PackT = unsafe fn(src: *const u8, ld: isize, rows: usize, w: usize, kc: usize, dst: *mut f32);

/// `out[j] += Σ_p x[p]·w[j·ld + p]`, j < n, for W in a 16-bit float format (as bits).
pub(crate) type HalfDots = unsafe fn(n: usize, k: usize, w: *const u16, ld: isize, x: *const f32, out: *mut f32);

/// The largest register tile of any kernel set (for edge-tile scratch): AMX's 32×32.
const MAX_TILE: usize = 32 * 32;

/// The f32 kernel set `level` runs, if it has one.
fn f32_kernels(level: Isa) -> Option<&'static F32Kernels> {
    super::arch::float_table!(level, x86::AVX512, x86::AVX2, arm::NEON)
}

/// An input type of the SIMD path: widens contiguous runs to f32.
trait Widen: GemmIn<f32> {
    /// `dst[i] = src[i]` widened, i < n.
    ///
    /// # Safety
    /// `src` holds n elements, `dst` n floats.
    unsafe fn widen(kern: &F32Kernels, src: *const Self, dst: *mut f32, n: usize);
    /// Whether the element already is an f32 (no conversion pass needed).
    const IS_F32: bool = false;
    /// Index of this format in [`F32Kernels::pack_t`]: 0 f32, 1 f16, 2 bf16.
    const FORMAT: usize;
    /// The kernel set's GEMV dot kernel reading this 16-bit format directly, if it has one.
    fn half_dots(_kern: &F32Kernels) -> Option<HalfDots> {
        None
    }
    /// Runs the blocked product on kernels that multiply this format directly (bf16 pairs on
    /// AVX-512 BF16, [`pairs`]) if `level` has them here; false leaves it to the f32 kernels.
    ///
    /// # Safety
    /// As [`gemm`]; k > 0, m > 0, n > 0.
    #[allow(clippy::too_many_arguments)]
    unsafe fn pairs(_level: Isa, _m: usize, _n: usize, _k: usize, _alpha: f32, _a: MatRef<Self>, _b: MatRef<Self>, _beta: f32, _c: MatMut<f32>, _parallel: bool) -> bool {
        false
    }
}
impl Widen for f32 {
    const IS_F32: bool = true;
    const FORMAT: usize = 0;
    unsafe fn widen(_: &F32Kernels, src: *const f32, dst: *mut f32, n: usize) {
        core::ptr::copy_nonoverlapping(src, dst, n);
    }
}
impl Widen for f16 {
    const FORMAT: usize = 1;
    fn half_dots(kern: &F32Kernels) -> Option<HalfDots> {
        kern.dots_f16
    }
    unsafe fn widen(kern: &F32Kernels, src: *const f16, dst: *mut f32, n: usize) {
        (kern.widen_f16)(src as *const u16, dst, n)
    }
}
impl Widen for bf16 {
    const FORMAT: usize = 2;
    fn half_dots(kern: &F32Kernels) -> Option<HalfDots> {
        kern.dots_bf16
    }
    unsafe fn pairs(level: Isa, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<bf16>, b: MatRef<bf16>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
        // AMX tiles first (the default where present), then the opt-in pair kernels.
        #[cfg(all(target_arch = "x86_64", feature = "std"))]
        if x86_amx::run(level, m, n, k, alpha, a, b, beta, c, parallel) {
            return true;
        }
        pairs::run(level, m, n, k, alpha, a, b, beta, c, parallel)
    }
    unsafe fn widen(_: &F32Kernels, src: *const bf16, dst: *mut f32, n: usize) {
        // bf16 is the top half of an f32: a shift the compiler vectorizes.
        let (s, d) = (core::slice::from_raw_parts(src as *const u16, n), core::slice::from_raw_parts_mut(dst, n));
        for (o, &h) in d.iter_mut().zip(s) {
            *o = f32::from_bits((h as u32) << 16);
        }
    }
}

/// A raw pointer handed to workers that write disjoint parts.
#[derive(Clone, Copy)]
struct SyncPtr<T>(*mut T);
// SAFETY: every use writes (or reads) regions no other worker touches during the call.
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}

/// A 64-byte aligned scratch region inside `buf` of at least `len` floats (contents unspecified).
fn aligned(buf: &mut Vec<f32>, len: usize) -> *mut f32 {
    if buf.len() < len + 16 {
        buf.resize(len + 16, 0.0);
    }
    let p = buf.as_mut_ptr();
    let skew = (p as usize / 4) % 16;
    // SAFETY: at most 15 floats of slack are skipped, and len + 16 are there.
    unsafe { p.add((16 - skew) % 16) }
}

/// Depth of one packed slice: an A micro-panel (≤ 14·256 floats = 14 KiB) stays in L1.
const KCF: usize = 256;
/// Columns of B packed at once (bounds the packed B to KCF·NCF floats = 4 MiB).
const NCF: usize = 4096;
/// Register-tile columns per task (a B block of ≤ 16 panels, ≤ 512 KiB, stays in L2 while
/// one thread runs the tasks of that block one after another).
const TASK_PANELS_N: usize = 16;
/// Tasks per thread below which [`task_panels`] narrows the B blocks (the pool hands out at
/// most four chunks per thread; sixteen tasks each keeps the last round short).
const TASKS_PER_THREAD: usize = 16;
/// Products with at most this many rows of A pack B panel by panel inside the tile tasks
/// ([`blocked`]'s short-A mode).
const SHORT_A_ROWS: usize = 128;
/// Below this many multiply-adds a product runs on one thread.
const PAR_MIN_FLOPS: usize = 1 << 18;
/// Pack buffers up to this many floats (16 MiB) go back to [`PACK_CACHE`] after a product.
const CACHED_PACK_MAX: usize = 1 << 22;
/// Buffers [`PACK_CACHE`] keeps (a product takes four; a few products may run at once).
const CACHED_PACKS: usize = 8;

/// Pack buffers of finished products, so that the next one neither allocates nor zeroes
/// megabytes (a fresh large `Vec` is a fresh mapping: zero-filling it page-faults every page,
/// and freeing it unmaps them again, per call).
static PACK_CACHE: spin::Mutex<Vec<Vec<f32>>> = spin::Mutex::new(Vec::new());

/// A pack buffer taken from [`PACK_CACHE`] (or new) that returns there when dropped.
struct PackBuf(Vec<f32>);

impl PackBuf {
    fn take() -> Self {
        PackBuf(PACK_CACHE.lock().pop().unwrap_or_default())
    }
}

impl Drop for PackBuf {
    fn drop(&mut self) {
        let buf = core::mem::take(&mut self.0);
        if buf.capacity() <= CACHED_PACK_MAX {
            let mut cache = PACK_CACHE.lock();
            if cache.len() < CACHED_PACKS {
                cache.push(buf);
            }
        }
    }
}

/// The SIMD f32 product: false if `level` has no kernels (or the layout is not handled),
/// leaving the work to the portable kernel.
///
/// # Safety
/// As [`gemm`]; k > 0, m > 0, n > 0.
#[allow(clippy::too_many_arguments)]
unsafe fn fast_f32<S: Widen>(level: Isa, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<S>, b: MatRef<S>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
    let Some(kern) = f32_kernels(level) else { return false };
    if (m == 1 || n == 1) && gemv(kern, m, n, k, alpha, a, b, beta, c, parallel) {
        return true;
    }
    if !S::pairs(level, m, n, k, alpha, a, b, beta, c, parallel) {
        blocked(&WidenPanels { kern, a, b }, m, n, k, alpha, beta, c, parallel);
    }
    true
}

/// What [`blocked`] needs from one way of packing and multiplying: the register tile, the
/// depth of a slice, the two panel packers and the micro-kernel. Packed panels are 4-byte
/// words (f32, or a pair of 16-bit floats along the shared dimension) laid out `[d][r]`.
pub(crate) trait Panels: Sync {
    /// Rows and columns of the register tile.
    fn tile(&self) -> (usize, usize);
    /// Elements of the shared dimension per slice.
    fn kc_max(&self) -> usize;
    /// Packed words per tile row or column for a slice of `kc` elements.
    fn depth(&self, kc: usize) -> usize;
    /// Packs rows `i0..i0+rows` of A over `pc..pc+kc` into one panel of `mr` rows (zero rows
    /// past `rows`), `depth(kc)·mr` words at `dst`.
    ///
    /// # Safety
    /// The rows and columns lie inside A's view; `dst` holds `depth(kc)·mr` words.
    #[allow(clippy::too_many_arguments)]
    unsafe fn pack_a(&self, dst: *mut f32, i0: usize, rows: usize, mr: usize, pc: usize, kc: usize, scratch: &mut Vec<f32>);
    /// Packs columns `j0..j0+cols` of B over `pc..pc+kc` into one panel of `nr` columns.
    ///
    /// # Safety
    /// As [`Panels::pack_a`] for B.
    #[allow(clippy::too_many_arguments)]
    unsafe fn pack_b(&self, dst: *mut f32, j0: usize, cols: usize, nr: usize, pc: usize, kc: usize, scratch: &mut Vec<f32>);
    /// `C[mr×nr] (row stride ldc) = alpha·(packed A panel)·(packed B panel) + beta·C` over
    /// `depth` words; C is not read when beta == 0.
    ///
    /// # Safety
    /// The panels hold `depth·mr` / `depth·nr` words; C's `mr` rows hold `nr` writable floats.
    #[allow(clippy::too_many_arguments)]
    unsafe fn micro(&self, depth: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32);
    /// Called by a worker before the register tiles of its share of a pass, and [`Panels::end`]
    /// after them, on the same thread: kernels with per-thread state (AMX's tile
    /// configuration) set it up once per share instead of once per tile.
    ///
    /// # Safety
    /// Paired with `end` on the same thread, with only this object's packing and `micro` calls
    /// between.
    unsafe fn begin(&self) {}
    /// See [`Panels::begin`].
    ///
    /// # Safety
    /// After `begin` on the same thread.
    unsafe fn end(&self) {}
}

/// The f32 kernels of a level, with f16/bf16 widened to f32 while packing.
struct WidenPanels<'a, S> {
    kern: &'a F32Kernels,
    a: MatRef<S>,
    b: MatRef<S>,
}

impl<S: Widen> Panels for WidenPanels<'_, S> {
    fn tile(&self) -> (usize, usize) {
        (self.kern.mr, self.kern.nr)
    }
    fn kc_max(&self) -> usize {
        KCF
    }
    fn depth(&self, kc: usize) -> usize {
        kc
    }
    unsafe fn pack_a(&self, dst: *mut f32, i0: usize, rows: usize, mr: usize, pc: usize, kc: usize, scratch: &mut Vec<f32>) {
        pack_a_panel(self.kern, dst, self.a, i0, rows, mr, pc, kc, scratch)
    }
    unsafe fn pack_b(&self, dst: *mut f32, j0: usize, cols: usize, nr: usize, pc: usize, kc: usize, scratch: &mut Vec<f32>) {
        pack_b_panel(self.kern, dst, self.b, j0, cols, nr, pc, kc, scratch)
    }
    #[inline(always)]
    unsafe fn micro(&self, depth: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
        (self.kern.micro)(depth, ap, bp, c, ldc, alpha, beta)
    }
}

/// Register-tile columns per task: at most [`TASK_PANELS_N`], fewer when that would leave
/// fewer than [`TASKS_PER_THREAD`] tasks per thread (16 threads on 1024³ got 148 tasks of
/// 25 µs — about nine each, the last round a third idle; 64×4096² got 40 for 16 threads).
fn task_panels(mpanels: usize, npanels: usize, threads: usize) -> usize {
    let want = threads.saturating_mul(TASKS_PER_THREAD).max(1);
    (mpanels.saturating_mul(npanels) / want).clamp(1, TASK_PANELS_N)
}

/// The general case: Goto-style packing in steps (a slice of the shared dimension × a block
/// of ≤ [`NCF`] columns). One parallel pass packs step 0's panels; then each pass runs the
/// register tiles of step s and packs step s + 1's A and B panels into the other of two
/// buffers each, so packing overlaps arithmetic and there is one barrier per step.
///
/// Work split: a task is one A micro-panel (`mr` rows) against one block of up to
/// [`TASK_PANELS_N`] B panels ([`task_panels`]), and tasks are numbered block-major, so the
/// contiguous task ranges the pool hands a thread reuse one L2-resident B block while the A
/// micro-panel sits in L1. Each tile is still one kernel call per slice whatever the split, so
/// results do not depend on the thread count.
///
/// Short A (m ≤ [`SHORT_A_ROWS`], e.g. 64×4096×4096): each B panel feeds only a few tiles, so
/// packing B in a pass of its own (written by one core, read back by another through L3, the
/// pass not overlapping any arithmetic) cost as much as the tiles (device: 11.7 of 28.3 ms on
/// one thread). There the pass packs only A, and a task is one B panel: the thread packs it
/// into a buffer of its own and runs every A micro-panel against it while it is in L1. Same
/// kernel calls per tile, so the same bits.
#[allow(clippy::too_many_arguments)]
unsafe fn blocked<P: Panels>(pk: &P, m: usize, n: usize, k: usize, alpha: f32, beta: f32, c: MatMut<f32>, parallel: bool) {
    let (mr, nr) = pk.tile();
    let par = parallel && m.saturating_mul(n).saturating_mul(k) >= PAR_MIN_FLOPS;
    if m <= SHORT_A_ROWS {
        return short_a(pk, m, n, k, alpha, beta, c, par);
    }
    let threads = if par { crate::parallel::num_threads() } else { 1 };
    let mpanels = m.div_ceil(mr);
    let kcm = pk.kc_max();
    let nblk = n.div_ceil(NCF);
    let steps = k.div_ceil(kcm) * nblk;
    let dmax = pk.depth(kcm.min(k));
    // Two buffers each: step s packs into one while the tiles of step s − 1 read the other.
    let mut bufs = [PackBuf::take(), PackBuf::take(), PackBuf::take(), PackBuf::take()];
    let alen = mpanels * mr * dmax;
    let blen = NCF.min(n).div_ceil(nr) * nr * dmax;
    let [a0, a1, b0, b1] = &mut bufs;
    let abufs = [SyncPtr(aligned(&mut a0.0, alen)), SyncPtr(aligned(&mut a1.0, alen))];
    let bbufs = [SyncPtr(aligned(&mut b0.0, blen)), SyncPtr(aligned(&mut b1.0, blen))];
    let at = |s: usize| {
        let (q, blk) = (s / nblk, s % nblk);
        let (pc, jc) = (q * kcm, blk * NCF);
        let (kc, nc) = (kcm.min(k - pc), NCF.min(n - jc));
        // A's panels for a slice are packed with B's first block, in the same pass.
        let apanels = if blk == 0 { mpanels } else { 0 };
        Step { pc, kc, depth: pk.depth(kc), jc, nc, npanels: nc.div_ceil(nr), apanels, ap: abufs[q % 2], bp: bbufs[s % 2] }
    };
    let pack = |st: &Step, it: usize, scratch: &mut Vec<f32>| {
        // SAFETY: each panel of the packed buffers belongs to one item; no tile of this pass
        // reads the buffers of step `st`.
        unsafe {
            if it < st.apanels {
                let rows = mr.min(m - it * mr);
                pk.pack_a(st.ap.0.add(it * mr * st.depth), it * mr, rows, mr, st.pc, st.kc, scratch);
            } else {
                let pnl = it - st.apanels;
                let cols = nr.min(st.nc - pnl * nr);
                pk.pack_b(st.bp.0.add(pnl * nr * st.depth), st.jc + pnl * nr, cols, nr, st.pc, st.kc, scratch);
            }
        }
    };
    let first = at(0);
    let items = first.apanels + first.npanels;
    let grain = if par && (first.apanels * mr + first.nc) * first.kc >= 1 << 15 { 1 } else { items };
    parallel_for(items, grain, &|r| {
        let mut scratch = Vec::new();
        r.for_each(|it| pack(&first, it, &mut scratch));
    });
    let cp = SyncPtr(c.ptr);
    for s in 0..steps {
        let cur = at(s);
        let next = (s + 1 < steps).then(|| at(s + 1));
        let beta_here = if cur.pc == 0 { beta } else { 1.0 };
        let tn = task_panels(mpanels, cur.npanels, threads);
        let tasks = cur.npanels.div_ceil(tn) * mpanels;
        // The next step's packing rides in this pass after the tiles (its own buffers), so
        // packing — bound by memory, 25 % of a 16-thread 1024³ product as a pass of its own —
        // overlaps the arithmetic, and a product has one barrier per step instead of two.
        let items = tasks + next.as_ref().map_or(0, |x| x.apanels + x.npanels);
        parallel_for(items, if par { 1 } else { items }, &|r| {
            let (cur, cp) = (&cur, cp);
            let mut scratch = Vec::new();
            // SAFETY: paired with `end` below on this thread; only tiles run between.
            unsafe { pk.begin() };
            for t in r {
                if t >= tasks {
                    if let Some(nx) = &next {
                        pack(nx, t - tasks, &mut scratch);
                    }
                    continue;
                }
                let (blk, ip) = (t / mpanels, t % mpanels);
                let jp_end = ((blk + 1) * tn).min(cur.npanels);
                let i = ip * mr;
                for jp in blk * tn..jp_end {
                    // Columns end at this NCF block's end (nr need not divide NCF).
                    let j = cur.jc + jp * nr;
                    // SAFETY: the packed panels hold mr·depth / nr·depth words; tile (i, j)
                    // of C belongs to this task alone.
                    unsafe { tile(pk, cur.depth, cur.ap.0.add(ip * mr * cur.depth), cur.bp.0.add(jp * nr * cur.depth), cp.0, c.ldc, i, j, mr.min(m - i), nr.min(cur.jc + cur.nc - j), alpha, beta_here) };
                }
            }
            unsafe { pk.end() };
        });
    }
}

/// One step of [`blocked`]: the slice `pc..pc+kc` of the shared dimension (`depth` packed
/// words) against the B block of columns `jc..jc+nc`, and the buffers its panels go to.
struct Step {
    pc: usize,
    kc: usize,
    depth: usize,
    jc: usize,
    nc: usize,
    npanels: usize,
    /// A panels packed at this step (all of them at a slice's first block, else none).
    apanels: usize,
    ap: SyncPtr<f32>,
    bp: SyncPtr<f32>,
}

/// [`blocked`] for short A: per slice one pass packs A, then [`short_a_tiles`] packs and
/// multiplies B panel by panel.
#[allow(clippy::too_many_arguments)]
unsafe fn short_a<P: Panels>(pk: &P, m: usize, n: usize, k: usize, alpha: f32, beta: f32, c: MatMut<f32>, par: bool) {
    let (mr, _) = pk.tile();
    let mpanels = m.div_ceil(mr);
    let mut abuf = PackBuf::take();
    let mut pc = 0;
    while pc < k {
        let kc = pk.kc_max().min(k - pc);
        let depth = pk.depth(kc);
        let beta_here = if pc == 0 { beta } else { 1.0 };
        let ap = SyncPtr(aligned(&mut abuf.0, mpanels * mr * depth));
        let grain = if par && mpanels * mr * kc >= 1 << 15 { 1 } else { mpanels };
        parallel_for(mpanels, grain, &|r| {
            let ap = ap;
            let mut scratch = Vec::new();
            for it in r {
                let rows = mr.min(m - it * mr);
                // SAFETY: each panel of the packed buffer belongs to one item.
                unsafe { pk.pack_a(ap.0.add(it * mr * depth), it * mr, rows, mr, pc, kc, &mut scratch) };
            }
        });
        let mut jc = 0;
        while jc < n {
            let nc = NCF.min(n - jc);
            short_a_tiles(pk, mpanels, nc.div_ceil(pk.tile().1), depth, ap, c, m, jc, nc, pc, kc, alpha, beta_here, par);
            jc += nc;
        }
        pc += kc;
    }
}

/// The tiles of one slice and B block in [`blocked`]'s short-A mode: a task is one B panel,
/// packed by the thread that runs it into its own buffer, then multiplied by every packed A
/// micro-panel at `ap`.
#[allow(clippy::too_many_arguments)]
unsafe fn short_a_tiles<P: Panels>(pk: &P, mpanels: usize, npanels: usize, depth: usize, ap: SyncPtr<f32>, c: MatMut<f32>, m: usize, jc: usize, nc: usize, pc: usize, kc: usize, alpha: f32, beta: f32, par: bool) {
    let (mr, nr) = pk.tile();
    let cp = SyncPtr(c.ptr);
    parallel_for(npanels, if par { 1 } else { npanels }, &|r| {
        let (ap, cp) = (ap, cp);
        let (mut scratch, mut local) = (Vec::new(), Vec::new());
        let bl = aligned(&mut local, nr * depth);
        // SAFETY: paired with `end` below on this thread; only packing and tiles run between.
        unsafe { pk.begin() };
        for jp in r {
            let j = jc + jp * nr;
            let cols = nr.min(jc + nc - j);
            // SAFETY: `bl` holds nr·depth words of this task's own; the packed A panels hold
            // mr·depth words each; tiles (·, j) of C belong to this task alone.
            unsafe {
                pk.pack_b(bl, j, cols, nr, pc, kc, &mut scratch);
                for ip in 0..mpanels {
                    let i = ip * mr;
                    tile(pk, depth, ap.0.add(ip * mr * depth), bl, cp.0, c.ldc, i, j, mr.min(m - i), cols, alpha, beta);
                }
            }
        }
        unsafe { pk.end() };
    });
}

/// One register tile at C(i, j) with `rows × cols` valid; edge tiles go through scratch so
/// the kernel never writes outside C.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn tile<P: Panels>(pk: &P, depth: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, i: usize, j: usize, rows: usize, cols: usize, alpha: f32, beta: f32) {
    let (mr, nr) = pk.tile();
    let dst = c.add(i * ldc + j);
    if rows == mr && cols == nr {
        pk.micro(depth, ap, bp, dst, ldc, alpha, beta);
        return;
    }
    let mut t = [0f32; MAX_TILE];
    pk.micro(depth, ap, bp, t.as_mut_ptr(), nr, 1.0, 0.0);
    for r in 0..rows {
        let row = dst.add(r * ldc);
        for cc in 0..cols {
            let v = alpha * t[r * nr + cc];
            *row.add(cc) = if beta == 0.0 { v } else { v + beta * *row.add(cc) };
        }
    }
}

/// Packs rows `i0..i0+rows` of A over `pc..pc+kc` into one `[p][r]` panel of `mr` rows
/// (zero rows past the edge).
#[allow(clippy::too_many_arguments)]
unsafe fn pack_a_panel<S: Widen>(kern: &F32Kernels, dst: *mut f32, a: MatRef<S>, i0: usize, rows: usize, mr: usize, pc: usize, kc: usize, scratch: &mut Vec<f32>) {
    if rows < mr {
        core::ptr::write_bytes(dst, 0, mr * kc);
    }
    if a.rs == 1 {
        // Column-major A (a transposed view): each step of p is a contiguous run of rows.
        for p in 0..kc {
            S::widen(kern, a.ptr.offset(i0 as isize + (pc + p) as isize * a.cs), dst.add(p * mr), rows);
        }
    } else if let (1, Some(packs)) = (a.cs, kern.pack_t) {
        // Row-major A: transposed in registers.
        packs[S::FORMAT](a.ptr.offset(i0 as isize * a.rs + pc as isize) as *const u8, a.rs, rows, mr, kc, dst);
    } else if a.cs == 1 {
        // Row-major A: widen each row's run, then transpose it into the panel.
        if scratch.len() < kc {
            scratch.resize(kc, 0.0);
        }
        for r in 0..rows {
            let src = a.ptr.offset((i0 + r) as isize * a.rs + pc as isize);
            let run: *const f32 = if S::IS_F32 {
                src as *const f32
            } else {
                S::widen(kern, src, scratch.as_mut_ptr(), kc);
                scratch.as_ptr()
            };
            for p in 0..kc {
                *dst.add(p * mr + r) = *run.add(p);
            }
        }
    } else {
        for p in 0..kc {
            for r in 0..rows {
                *dst.add(p * mr + r) = a.at(i0 + r, pc + p).load();
            }
        }
    }
}

/// Packs columns `j0..j0+cols` of B over `pc..pc+kc` into one `[p][c]` panel of `nr`
/// columns (zero columns past the edge).
#[allow(clippy::too_many_arguments)]
unsafe fn pack_b_panel<S: Widen>(kern: &F32Kernels, dst: *mut f32, b: MatRef<S>, j0: usize, cols: usize, nr: usize, pc: usize, kc: usize, scratch: &mut Vec<f32>) {
    if cols < nr {
        core::ptr::write_bytes(dst, 0, nr * kc);
    }
    if b.cs == 1 {
        // Row-major B: each row's run of columns is contiguous.
        for p in 0..kc {
            S::widen(kern, b.ptr.offset((pc + p) as isize * b.rs + j0 as isize), dst.add(p * nr), cols);
        }
    } else if let (1, Some(packs)) = (b.rs, kern.pack_t) {
        // B = Wᵀ with W row-major (the Linear layer layout): transposed in registers.
        packs[S::FORMAT](b.ptr.offset(j0 as isize * b.cs + pc as isize) as *const u8, b.cs, cols, nr, kc, dst);
    } else if b.rs == 1 {
        // B = Wᵀ with W row-major (the Linear layer layout): each column is a contiguous run.
        if scratch.len() < kc {
            scratch.resize(kc, 0.0);
        }
        for cc in 0..cols {
            let src = b.ptr.offset((j0 + cc) as isize * b.cs + pc as isize);
            let run: *const f32 = if S::IS_F32 {
                src as *const f32
            } else {
                S::widen(kern, src, scratch.as_mut_ptr(), kc);
                scratch.as_ptr()
            };
            for p in 0..kc {
                *dst.add(p * nr + cc) = *run.add(p);
            }
        }
    } else {
        for p in 0..kc {
            for cc in 0..cols {
                *dst.add(p * nr + cc) = b.at(pc + p, j0 + cc).load();
            }
        }
    }
}

/// Elements of a converted (f16/bf16) matrix tile handled at once by the GEMV (16 KiB of f32).
const GEMV_TILE: usize = 4096;
/// Output elements per GEMV work item.
const GEMV_CHUNK: usize = 64;

/// One output row or column: `y = alpha·W·x + beta·y` where W is A (n == 1) or Bᵀ (m == 1).
/// False when W has no unit stride (the blocked path packs it instead).
#[allow(clippy::too_many_arguments)]
unsafe fn gemv<S: Widen>(kern: &F32Kernels, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<S>, b: MatRef<S>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
    // W(j, p) at w + j·wj + p·wp; x(p) at xv + p·xs; y(j) at c + j·ys.
    let (len, w, wj, wp, xv, xs, ys) = if m == 1 { (n, b.ptr, b.cs, b.rs, a.ptr, a.cs, 1) } else { (m, a.ptr, a.rs, a.cs, b.ptr, b.rs, c.ldc) };
    let rows_contiguous = wp == 1;
    if !rows_contiguous && wj != 1 {
        return false;
    }
    let x: Vec<f32> = (0..k).map(|p| core::ptr::read_unaligned(xv.offset(p as isize * xs)).load()).collect();
    let mut y = alloc::vec![0f32; len];
    let (xp, yp, wp_) = (SyncPtr(x.as_ptr() as *mut f32), SyncPtr(y.as_mut_ptr()), SyncPtr(w as *mut S));
    let chunks = len.div_ceil(GEMV_CHUNK);
    let per_chunk = GEMV_CHUNK.saturating_mul(k);
    let grain = if parallel && len.saturating_mul(k) >= 1 << 16 { (1usize << 15).div_ceil(per_chunk).max(1) } else { chunks };
    parallel_for(chunks, grain, &|r| {
        let (xp, yp, w) = (xp, yp, wp_);
        let (j0, j1) = (r.start * GEMV_CHUNK, (r.end * GEMV_CHUNK).min(len));
        let mut scratch: Vec<f32> = Vec::new();
        // SAFETY: outputs j0..j1 belong to this worker; W and x are read within their views.
        unsafe {
            if rows_contiguous {
                gemv_dots::<S>(kern, j0, j1, k, w.0, wj, xp.0, yp.0, &mut scratch)
            } else {
                gemv_axpys::<S>(kern, j0, j1, k, w.0, wp, xp.0, yp.0, &mut scratch)
            }
        }
    });
    for (j, &v) in y.iter().enumerate() {
        let o = c.ptr.add(j * ys);
        *o = if beta == 0.0 { alpha * v } else { alpha * v + beta * *o };
    }
    true
}

/// `y[j] += Σ_p W(j, p)·x[p]` for j in j0..j1, rows of W contiguous (stride wj).
#[allow(clippy::too_many_arguments)]
unsafe fn gemv_dots<S: Widen>(kern: &F32Kernels, j0: usize, j1: usize, k: usize, w: *const S, wj: isize, x: *const f32, y: *mut f32, scratch: &mut Vec<f32>) {
    if S::IS_F32 {
        (kern.dots)(j1 - j0, k, w.offset(j0 as isize * wj) as *const f32, wj, x, y.add(j0));
        return;
    }
    if let Some(dots) = S::half_dots(kern) {
        dots(j1 - j0, k, w.offset(j0 as isize * wj) as *const u16, wj, x, y.add(j0));
        return;
    }
    // Widen a few rows × a run of k at a time into an L1-sized tile, then dot it. The row
    // count is a power of two dividing GEMV_CHUNK, so tiles (and the kernel's 4-row groups)
    // start at the same rows however the output is split between threads: a row's sum does not
    // depend on the thread count.
    let kt = k.min(GEMV_TILE);
    let rt = 1usize << (GEMV_TILE / kt).max(1).ilog2();
    let rt = rt.min(GEMV_CHUNK);
    scratch.resize(rt * kt, 0.0);
    let mut j = j0;
    while j < j1 {
        let rows = rt.min(j1 - j);
        let mut p = 0;
        while p < k {
            let kk = kt.min(k - p);
            for r in 0..rows {
                S::widen(kern, w.offset((j + r) as isize * wj + p as isize), scratch.as_mut_ptr().add(r * kk), kk);
            }
            (kern.dots)(rows, kk, scratch.as_ptr(), kk as isize, x.add(p), y.add(j));
            p += kk;
        }
        j += rows;
    }
}

/// `y[j] += Σ_p W(j, p)·x[p]` for j in j0..j1, columns of W contiguous (row p of Wᵀ at p·wp).
#[allow(clippy::too_many_arguments)]
unsafe fn gemv_axpys<S: Widen>(kern: &F32Kernels, j0: usize, j1: usize, k: usize, w: *const S, wp: isize, x: *const f32, y: *mut f32, scratch: &mut Vec<f32>) {
    let jn = j1 - j0;
    if S::IS_F32 {
        (kern.axpys)(jn, k, w.add(j0) as *const f32, wp, x, y.add(j0));
        return;
    }
    let pt = (GEMV_TILE / jn).max(1);
    scratch.resize(pt * jn, 0.0);
    let mut p = 0;
    while p < k {
        let pp = pt.min(k - p);
        for q in 0..pp {
            S::widen(kern, w.offset((p + q) as isize * wp + j0 as isize), scratch.as_mut_ptr().add(q * jn), jn);
        }
        (kern.axpys)(jn, pp, scratch.as_ptr(), jn as isize, x.add(p), y.add(j0));
        p += pp;
    }
}

/// `out[j] = Σ_p w[j·ld + p]·x[p]` for j < out.len() (p < x.len()), on the GEMV dot kernel of
/// the active level (a plain loop where it has none). Single-threaded: callers split work.
/// Rows that do not fit in `w` are left untouched rather than read out of bounds.
pub(crate) fn dot_rows(w: &[f32], ld: usize, x: &[f32], out: &mut [f32]) {
    let k = x.len();
    // Rows j with j·ld + k ≤ w.len() are inside `w`.
    let fit = if k == 0 { out.len() } else if w.len() < k { 0 } else { ((w.len() - k) / ld.max(1) + 1).min(out.len()) };
    out[..fit].iter_mut().for_each(|o| *o = 0.0);
    match f32_kernels(isa()) {
        // SAFETY: rows j < fit hold k floats at j·ld (checked above); x holds k, out fit.
        Some(kern) => unsafe { (kern.dots)(fit, k, w.as_ptr(), ld as isize, x.as_ptr(), out.as_mut_ptr()) },
        None => {
            for (j, o) in out[..fit].iter_mut().enumerate() {
                *o = w[j * ld..j * ld + k].iter().zip(x).map(|(a, b)| a * b).sum();
            }
        }
    }
}

/// `y[j] += Σ_p x[p]·w[p·ld + j]` for j < y.len(), p < x.len(), on the GEMV axpy kernel of the
/// active level. Single-threaded. Does nothing if `w` is too short for that shape.
pub(crate) fn axpy_rows(w: &[f32], ld: usize, x: &[f32], y: &mut [f32]) {
    let (k, n) = (x.len(), y.len());
    if k == 0 || n == 0 || (k - 1).saturating_mul(ld).saturating_add(n) > w.len() {
        return;
    }
    match f32_kernels(isa()) {
        // SAFETY: rows p < k hold n floats at p·ld (checked above).
        Some(kern) => unsafe { (kern.axpys)(n, k, w.as_ptr(), ld as isize, x.as_ptr(), y.as_mut_ptr()) },
        None => {
            for (p, &xp) in x.iter().enumerate() {
                for (yj, &wj) in y.iter_mut().zip(&w[p * ld..p * ld + n]) {
                    *yj += xp * wj;
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use alloc::vec;

    /// Deterministic values in [-2, 2) with awkward mantissas (exact in f16 and bf16 after
    /// rounding, since the reference uses the rounded inputs).
    pub(crate) fn vals(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
            })
            .collect()
    }

    /// Runs `C = alpha·A·B + beta·C` at every level of `levels` for A and B stored in the
    /// `pairs` of layouts (0 row-major, 1 column-major, 2 and 3 padded strides in both axes so
    /// neither is unit) and checks every element against an f64 reference over the same (rounded) inputs. Bound:
    /// the standard dot-product error `|ĉ − c| ≤ γ·(|alpha|·Σ_p |a_ip·b_pj| + |beta·c_ij|)` with
    /// γ = (k + 2)·2⁻²³ (f32 accumulation, one rounding per FMA plus the alpha/beta update).
    /// The reference sums depend only on the shape, so they are computed once: the test's cost
    /// stays the kernels' own even under qemu.
    fn check<S: GemmIn<f32> + Widen>(levels: &[Isa], pairs: &[(usize, usize)], m: usize, n: usize, k: usize, from: fn(f32) -> S) {
        check_with(levels, pairs, m, n, k, from, &|level, m, n, k, alpha, a, b, beta, c| unsafe { gemm_at(level, m, n, k, alpha, a, b, beta, c, true) });
    }

    /// A product under test: `(level, m, n, k, alpha, A, B, beta, C)`.
    type Runner<'a, S> = &'a dyn Fn(Isa, usize, usize, usize, f32, MatRef<S>, MatRef<S>, f32, MatMut<f32>);

    /// [`check`] on any runner (a particular packer or kernel set).
    #[allow(clippy::too_many_arguments)]
    fn check_with<S: GemmIn<f32> + Widen>(levels: &[Isa], pairs: &[(usize, usize)], m: usize, n: usize, k: usize, from: fn(f32) -> S, run: Runner<'_, S>) {
        let (alpha, beta) = (1.5f32, -0.5f32);
        let av: Vec<S> = vals(m * k, 1 + m as u64 * 31 + k as u64).into_iter().map(from).collect();
        let bv: Vec<S> = vals(k * n, 7 + n as u64 * 17 + k as u64).into_iter().map(from).collect();
        let c0 = vals(m * n, 99);
        // Σ_p a_ip·b_pj and Σ_p |a_ip·b_pj| for each (i, j).
        let mut reference = vec![(0f64, 0f64); m * n];
        for i in 0..m {
            for p in 0..k {
                let a = av[i * k + p].load() as f64;
                for j in 0..n {
                    let t = a * bv[p * n + j].load() as f64;
                    let r = &mut reference[i * n + j];
                    r.0 += t;
                    r.1 += t.abs();
                }
            }
        }
        let gamma = (k as f64 + 2.0) * f64::powi(2.0, -23);
        // (row stride, col stride) for an r×c matrix in each layout; padded ones leave gaps.
        let layouts = |r: usize, c: usize| [(c as isize, 1isize), (1, r as isize), (2 * c as isize + 3, 2), (2, 2 * r as isize + 1)];
        for &(la, lb) in pairs {
            {
                let ((ars, acs), (brs, bcs)) = (layouts(m, k)[la], layouts(k, n)[lb]);
                let span = |r: usize, c: usize, rs: isize, cs: isize| (r.max(1) - 1) * rs as usize + (c.max(1) - 1) * cs as usize + 1;
                let mut ab = vec![from(f32::NAN); span(m, k, ars, acs)];
                let mut bb = vec![from(f32::NAN); span(k, n, brs, bcs)];
                for i in 0..m {
                    for p in 0..k {
                        ab[i * ars as usize + p * acs as usize] = av[i * k + p];
                    }
                }
                for p in 0..k {
                    for j in 0..n {
                        bb[p * brs as usize + j * bcs as usize] = bv[p * n + j];
                    }
                }
                for &level in levels {
                    for &bet in &[0.0f32, beta] {
                        // A NaN output buffer must not leak through beta = 0.
                        let mut c: Vec<f32> = if bet == 0.0 { vec![f32::NAN; m * n] } else { c0.clone() };
                        unsafe {
                            run(level, m, n, k, alpha, MatRef::new(ab.as_ptr(), ars, acs), MatRef::new(bb.as_ptr(), brs, bcs), bet, MatMut::new(c.as_mut_ptr(), n));
                        }
                        for (idx, (&got, &(s, mag))) in c.iter().zip(&reference).enumerate() {
                            let cin = if bet == 0.0 { 0.0 } else { c0[idx] as f64 };
                            let want = alpha as f64 * s + bet as f64 * cin;
                            let bound = gamma * (alpha.abs() as f64 * mag + (bet as f64 * cin).abs()) + 1e-30;
                            let (i, j) = (idx / n.max(1), idx % n.max(1));
                            assert!(
                                (got as f64 - want).abs() <= bound,
                                "{level:?} {m}x{n}x{k} layouts {la}/{lb} beta {bet} at ({i},{j}): {got} vs {want} (bound {bound})"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Sizes that hit every tail of every tile (MR ∈ {6, 8, 14}, NR ∈ {12, 16, 32}).
    const EDGES: [usize; 8] = [1, 2, 3, 7, 15, 16, 17, 33];

    /// One test per input type: every available level (portable included) on every
    /// combination of edge sizes, plus sizes crossing the KC slice and the task blocks.
    /// Tails and strides are independent code paths (packing reads the strides, the kernels
    /// the packed tiles), so each edge shape runs row-major plus one layout pair, rotating so
    /// that all 16 pairs recur across the shapes; the large shapes run every diagonal pair and
    /// both row/column mixes. (All 16 pairs on every shape took minutes under qemu.)
    macro_rules! kernel_test {
        ($name:ident, $t:ty, $from:expr) => {
            #[test]
            fn $name() {
                let levels = crate::cpu::isa::available();
                let mut turn = 0;
                for &m in &EDGES {
                    for &n in &EDGES {
                        for &k in &EDGES {
                            turn += 1;
                            check::<$t>(&levels, &[(0, 0), (turn % 4, (turn / 4) % 4)], m, n, k, $from);
                        }
                    }
                }
                let big_pairs = [(0, 0), (1, 1), (2, 2), (3, 3), (0, 1), (1, 0)];
                // 120 rows run blocked()'s short-A mode (B packed inside the tile tasks), 150
                // the shared B pass (more than SHORT_A_ROWS).
                for &(m, n, k) in &[(120, 530, 300), (150, 70, 300), (1, 300, 530), (300, 1, 257), (29, 45, 600), (2, 4101, 3), (3, 8200, 2)] {
                    check::<$t>(&levels, &big_pairs, m, n, k, $from);
                }
            }
        };
    }
    /// The bf16 pair kernels (AVX-512 BF16) through each of their packers — the 32-bit
    /// transposer, the interleaver and the scalar loop (`transpose = None` sends adjacent
    /// pairs there) — plus the f32 kernels they replace at that level, against the f64
    /// reference with the f32 path's bound: each lane's two exact products are added with one
    /// rounding each. Odd depths and depths crossing the 512-element slice included. Skipped
    /// (with a note) on CPUs without AVX-512 BF16; `every_level_bf16` covers the dispatch.
    #[test]
    fn bf16_pair_kernels_every_packer() {
        let level = crate::cpu::isa::best();
        let Some(kern) = pairs::runnable(level) else {
            std::eprintln!("bf16_pair_kernels_every_packer: no bf16 pair kernels on this CPU, skipped");
            return;
        };
        let transpose = f32_kernels(level).and_then(|f| f.pack_t).map(|p| p[0]);
        let with_t = |_: Isa, m, n, k, alpha, a, b, beta, c| unsafe { pairs::run_with(kern, transpose, m, n, k, alpha, a, b, beta, c, true) };
        let without_t = |_: Isa, m, n, k, alpha, a, b, beta, c| unsafe { pairs::run_with(kern, None, m, n, k, alpha, a, b, beta, c, true) };
        let widened = |level: Isa, m, n, k, alpha, a, b, beta, c| unsafe {
            let f = f32_kernels(level).expect("f32 kernels at the best level");
            blocked(&WidenPanels::<bf16> { kern: f, a, b }, m, n, k, alpha, beta, c, true)
        };
        let all: [(usize, usize); 16] = core::array::from_fn(|i| (i / 4, i % 4));
        let mut turn = 0;
        for &m in &[1usize, 3, 14, 15, 29] {
            for &n in &[1usize, 17, 32, 33, 70] {
                for &k in &[1usize, 2, 3, 16, 31, 513, 1030] {
                    turn += 1;
                    let pick = [(0, 0), (turn % 4, (turn / 4) % 4), (1, 1)];
                    check_with::<bf16>(&[level], &pick, m, n, k, bf16::from_f32, &with_t);
                    check_with::<bf16>(&[level], &pick, m, n, k, bf16::from_f32, &without_t);
                    check_with::<bf16>(&[level], &pick, m, n, k, bf16::from_f32, &widened);
                }
            }
        }
        check_with::<bf16>(&[level], &all, 120, 530, 1100, bf16::from_f32, &with_t);
        check_with::<bf16>(&[level], &all, 120, 530, 1100, bf16::from_f32, &without_t);
        // More rows than SHORT_A_ROWS: B packed in the shared pass.
        check_with::<bf16>(&[level], &all, 150, 70, 1100, bf16::from_f32, &with_t);
    }

    /// A portable stand-in for a pair instruction set (5×7 tile, so every edge is hit): the
    /// same packing and driver as the AVX-512 BF16 kernels, each lane adding its high then its
    /// low product (exact in f32) with one rounding each, as `vdpbf16ps` does.
    mod emulated {
        use super::super::pairs::PairKernels;
        pub(super) const MR: usize = 5;
        pub(super) const NR: usize = 7;
        unsafe fn micro(kq: usize, ap: *const u32, bp: *const u32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
            let h = |w: u32, hi: bool| f32::from_bits(if hi { w & 0xffff_0000 } else { w << 16 });
            for r in 0..MR {
                for cc in 0..NR {
                    let mut acc = 0f32;
                    for q in 0..kq {
                        let (a, b) = (*ap.add(q * MR + r), *bp.add(q * NR + cc));
                        acc += h(a, true) * h(b, true);
                        acc += h(a, false) * h(b, false);
                    }
                    let o = c.add(r * ldc + cc);
                    *o = if beta == 0.0 { alpha * acc } else { alpha * acc + beta * *o };
                }
            }
        }
        unsafe fn interleave(lo: *const u16, hi: *const u16, n: usize, dst: *mut u32) {
            for c in 0..n {
                *dst.add(c) = *lo.add(c) as u32 | (*hi.add(c) as u32) << 16;
            }
        }
        /// The 32-bit transposer's contract, one word at a time.
        pub(super) unsafe fn transpose(src: *const u8, ld: isize, rows: usize, w: usize, kc: usize, dst: *mut f32) {
            let (src, dst) = (src as *const u32, dst as *mut u32);
            for p in 0..kc {
                for r in 0..w {
                    *dst.add(p * w + r) = if r < rows { core::ptr::read_unaligned(src.offset(r as isize * ld + p as isize)) } else { 0 };
                }
            }
        }
        pub(super) static KERNELS: PairKernels = PairKernels { mr: MR, nr: NR, micro, interleave };
    }

    /// The pair packing and driver on the emulated kernels, with and without the transposer,
    /// on every layout pair, odd and even depths and depths crossing the 512-element slice.
    #[test]
    fn bf16_pair_packing_on_emulated_kernels() {
        let k_t = |_: Isa, m, n, k, alpha, a, b, beta, c| unsafe { pairs::run_with(&emulated::KERNELS, Some(emulated::transpose), m, n, k, alpha, a, b, beta, c, true) };
        let k_n = |_: Isa, m, n, k, alpha, a, b, beta, c| unsafe { pairs::run_with(&emulated::KERNELS, None, m, n, k, alpha, a, b, beta, c, true) };
        let all: [(usize, usize); 16] = core::array::from_fn(|i| (i / 4, i % 4));
        for &m in &[1usize, 4, 5, 6, 11] {
            for &n in &[1usize, 6, 7, 8, 15] {
                for &k in &[1usize, 2, 3, 4, 17, 513, 1026] {
                    check_with::<bf16>(&[Isa::Portable], &all, m, n, k, bf16::from_f32, &k_t);
                    check_with::<bf16>(&[Isa::Portable], &all, m, n, k, bf16::from_f32, &k_n);
                }
            }
        }
        // More rows than SHORT_A_ROWS: B packed in the shared pass.
        check_with::<bf16>(&[Isa::Portable], &all, 131, 15, 1026, bf16::from_f32, &k_t);
    }

    /// Every level's transposing packers against their contract (`dst[p·w + r] = src[r·ld + p]`
    /// widened, zero rows past `rows`), exactly (widening is exact), on every panel width up to
    /// 33 — not only the widths the level's tiles use, so every partial-chunk store runs — and
    /// depths around the 8- and 16-element blocks. The destination has NaN guard words after
    /// `w·kc` that must stay untouched.
    #[test]
    fn pack_t_every_width() {
        for level in crate::cpu::isa::available() {
            let Some(packs) = f32_kernels(level).and_then(|k| k.pack_t) else { continue };
            for w in 1..=33usize {
                for rows in [w, w.saturating_sub(1).max(1), 1] {
                    for kc in [1usize, 7, 8, 9, 16, 17, 31] {
                        let ld = kc + 3;
                        let len = (rows - 1) * ld + kc;
                        let v = vals(len, (w * 97 + rows * 13 + kc) as u64);
                        let f16s: Vec<u16> = v.iter().map(|&x| f16::from_f32(x).to_bits()).collect();
                        let bf16s: Vec<u16> = v.iter().map(|&x| bf16::from_f32(x).to_bits()).collect();
                        let srcs: [(*const u8, Vec<f32>); 3] = [
                            (v.as_ptr() as *const u8, v.clone()),
                            (f16s.as_ptr() as *const u8, f16s.iter().map(|&h| f16::from_bits(h).to_f32()).collect()),
                            (bf16s.as_ptr() as *const u8, bf16s.iter().map(|&h| bf16::from_bits(h).to_f32()).collect()),
                        ];
                        for (fmt, (src, wide)) in srcs.iter().enumerate() {
                            let guard = 8;
                            let mut dst = vec![f32::NAN; w * kc + guard];
                            unsafe { packs[fmt](*src, ld as isize, rows, w, kc, dst.as_mut_ptr()) };
                            for p in 0..kc {
                                for r in 0..w {
                                    let want = if r < rows { wide[r * ld + p] } else { 0.0 };
                                    let got = dst[p * w + r];
                                    assert!(got.to_bits() == want.to_bits(), "{level:?} format {fmt} w {w} rows {rows} kc {kc} at p {p} r {r}: {got} vs {want}");
                                }
                            }
                            assert!(dst[w * kc..].iter().all(|x| x.is_nan()), "{level:?} format {fmt} w {w} rows {rows} kc {kc}: wrote past the panel");
                        }
                    }
                }
            }
        }
    }

    kernel_test!(every_level_f32, f32, |x| x);
    kernel_test!(every_level_f16, f16, f16::from_f32);
    kernel_test!(every_level_bf16, bf16, bf16::from_f32);

    /// The blocked GEMM equals a direct triple loop (f64 reference) on awkward sizes and strides.
    #[test]
    fn matches_reference_on_edges_and_strides() {
        for &(m, n, k) in &[(1, 1, 1), (5, 17, 3), (67, 33, 300), (3, 1030, 2), (130, 7, 513)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.25).collect();
            // B stored transposed (n × k) and read through strides.
            let bt: Vec<f32> = (0..n * k).map(|i| ((i * 5 % 11) as f32 - 5.0) * 0.5).collect();
            let mut c = alloc::vec![1.0f32; m * n];
            unsafe {
                gemm(
                    m, n, k, 2.0f32,
                    MatRef::new(a.as_ptr(), k as isize, 1),
                    MatRef::new(bt.as_ptr(), 1, k as isize),
                    0.5, MatMut::new(c.as_mut_ptr(), n), true,
                );
            }
            for i in 0..m {
                for j in 0..n {
                    let mut s = 0f64;
                    for p in 0..k {
                        s += a[i * k + p] as f64 * bt[j * k + p] as f64;
                    }
                    let want = 2.0 * s + 0.5;
                    assert!((c[i * n + j] as f64 - want).abs() <= 1e-3 * (1.0 + want.abs()), "{m}x{n}x{k} at {i},{j}");
                }
            }
        }
    }
}
