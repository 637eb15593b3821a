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
//! the compiler vectorizes; per-ISA SIMD micro-kernels slot in at [`micro`] later.

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
}
impl GemmIn<f32> for f32 {
    #[inline(always)]
    fn load(self) -> f32 {
        self
    }
}
impl GemmIn<f32> for f16 {
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
}
impl GemmIn<f32> for bf16 {
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
}
impl GemmIn<f64> for f64 {
    #[inline(always)]
    fn load(self) -> f64 {
        self
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
}

/// `C[m×n] = alpha·A[m×k]·B[k×n] + beta·C`. With `beta == 0`, C is overwritten without being
/// read (NaN in C does not leak, as with BLAS). `parallel` allows spreading row blocks over
/// threads; callers that already run many GEMMs in parallel pass false.
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
    if m == 0 || n == 0 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
