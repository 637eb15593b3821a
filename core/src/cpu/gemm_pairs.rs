//! bfloat16 GEMM on instructions that multiply bf16 directly (opt-in, `MLX_ARM_BF16_GEMM=dot`:
//! slower than widening to f32 on the Xeon measured, see [`kernels`]): AVX-512 BF16's `vdpbf16ps`
//! takes two vectors of bf16 pairs and adds each lane's two exact products (a bf16·bf16
//! product fits an f32 mantissa) into an f32 accumulator. The operands are packed as 32-bit
//! words holding two consecutive elements along the shared dimension — `x(r, 2q)` in the low
//! half, `x(r, 2q + 1)` in the high half — so a panel is `[q][r]` words, half the bytes of the
//! widened f32 panels and half the instructions per multiply-add.
//!
//! Numerics: each lane adds its two products one after the other with round-to-nearest-even
//! (the same count of roundings as two FMAs: the bound of the f32 path holds), but the
//! instruction treats bf16 subnormal inputs as zero and flushes subnormal results to zero
//! (|x| < 2⁻¹²⁶), where the f32 path keeps them. Odd depths pad the last pair with a zero in
//! both operands (0·0 adds nothing, even where the other element is inf or NaN).

use super::{blocked, f32_kernels, Isa, MatMut, MatRef, Panels, PackT, KCF};
use alloc::vec::Vec;
use half::bf16;

/// One level's pair kernels.
pub(crate) struct PairKernels {
    /// Rows of the register tile.
    pub mr: usize,
    /// Columns of the register tile.
    pub nr: usize,
    /// `C[mr×nr] (row stride ldc) = alpha·Σ_q Σ_h a[q][r].h·b[q][c].h + beta·C` over `kq`
    /// packed words; C is not read when beta == 0.
    pub micro: unsafe fn(kq: usize, ap: *const u32, bp: *const u32, c: *mut f32, ldc: usize, alpha: f32, beta: f32),
    /// `dst[c] = lo[c] | hi[c] << 16` for c < n: two runs of bf16 (consecutive along the
    /// shared dimension) into pair words.
    pub interleave: unsafe fn(lo: *const u16, hi: *const u16, n: usize, dst: *mut u32),
}

/// The pair kernels `level` could run on this CPU, if any (AVX-512 BF16 is asked apart from
/// the level, like VNNI: forcing `avx2` or `portable` turns it off). Tests use this; products
/// use [`kernels`].
pub(crate) fn runnable(level: Isa) -> Option<&'static PairKernels> {
    #[cfg(target_arch = "x86_64")]
    return super::x86_bf16::kernels(level);
    #[allow(unreachable_code)]
    {
        let _ = level;
        None
    }
}

/// The pair kernels bf16 products use: [`runnable`] only when `MLX_ARM_BF16_GEMM=dot` asks for
/// them. Off by default because on the one CPU measured (the device's Sapphire-Rapids-class
/// Xeon) `vdpbf16ps` ran at 0.55–0.6× the widen-to-f32 FMA kernel (docs/BENCHMARKS.md "fg26"):
/// it retires half the multiply-adds per cycle that two 512-bit FMA pipes do there.
pub(crate) fn kernels(level: Isa) -> Option<&'static PairKernels> {
    if bf16_mode() == Bf16Gemm::Dot {
        runnable(level)
    } else {
        None
    }
}

/// How bf16 × bf16 products are computed, as `MLX_ARM_BF16_GEMM` asks (read once, `std` only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[cfg_attr(not(feature = "std"), allow(dead_code))] // without `std` only `Auto` is ever chosen
pub(crate) enum Bf16Gemm {
    /// Unset (or an unknown value): AMX where this CPU has it, else widen to f32.
    Auto = 1,
    /// `widen`: always widen to f32 on the f32 kernels.
    Widen = 2,
    /// `dot`: the pair kernels of this module (AVX-512 BF16) where present, else widen.
    Dot = 3,
    /// `amx`: AMX tiles where present, else widen (same as unset today; kept explicit so a
    /// benchmark or test states what it asks for).
    Amx = 4,
}

/// The [`Bf16Gemm`] of this process.
pub(crate) fn bf16_mode() -> Bf16Gemm {
    use core::sync::atomic::AtomicU8;
    static MODE: AtomicU8 = AtomicU8::new(0);
    let code = crate::cpu::isa::asked_once(&MODE, || from_env() as u8);
    [Bf16Gemm::Widen, Bf16Gemm::Dot, Bf16Gemm::Amx].into_iter().find(|m| *m as u8 == code).unwrap_or(Bf16Gemm::Auto)
}

#[cfg(feature = "std")]
fn from_env() -> Bf16Gemm {
    extern crate std;
    match std::env::var("MLX_ARM_BF16_GEMM").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        Ok("widen") => Bf16Gemm::Widen,
        Ok("dot") => Bf16Gemm::Dot,
        Ok("amx") => Bf16Gemm::Amx,
        _ => Bf16Gemm::Auto,
    }
}

#[cfg(not(feature = "std"))]
fn from_env() -> Bf16Gemm {
    Bf16Gemm::Auto
}

/// The blocked bf16 product on the pair kernels of `level`; false if it has none here.
///
/// # Safety
/// As [`super::gemm`]; k > 0, m > 0, n > 0.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run(level: Isa, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<bf16>, b: MatRef<bf16>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
    let Some(kern) = kernels(level) else { return false };
    // The level's f32 transposer moves 32-bit words without looking at them: it packs pairs
    // that already sit side by side in memory (row-major A, B = Wᵀ).
    let transpose = f32_kernels(level).and_then(|f| f.pack_t).map(|p| p[0]);
    run_with(kern, transpose, m, n, k, alpha, a, b, beta, c, parallel);
    true
}

/// [`run`] on given kernels (tests pass `transpose = None` to check the other packers).
///
/// # Safety
/// As [`run`]; the kernels must be runnable on this CPU.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run_with(kern: &PairKernels, transpose: Option<PackT>, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<bf16>, b: MatRef<bf16>, beta: f32, c: MatMut<f32>, parallel: bool) {
    let bits = |x: MatRef<bf16>| MatRef { ptr: x.ptr as *const u16, rs: x.rs, cs: x.cs };
    blocked(&PairPanels { kern, transpose, a: bits(a), b: bits(b) }, m, n, k, alpha, beta, c, parallel);
}

/// [`Panels`] for bf16 pairs: A and B as raw bits.
struct PairPanels<'a> {
    kern: &'a PairKernels,
    transpose: Option<PackT>,
    a: MatRef<u16>,
    b: MatRef<u16>,
}

impl Panels for PairPanels<'_> {
    fn tile(&self) -> (usize, usize) {
        (self.kern.mr, self.kern.nr)
    }
    fn kc_max(&self) -> usize {
        // Twice the f32 depth: the same words (bytes) per panel.
        2 * KCF
    }
    fn depth(&self, kc: usize) -> usize {
        kc.div_ceil(2)
    }
    unsafe fn pack_a(&self, dst: *mut f32, i0: usize, rows: usize, mr: usize, pc: usize, kc: usize, _: &mut Vec<f32>) {
        let a = self.a;
        let src = a.ptr.offset(i0 as isize * a.rs + pc as isize * a.cs);
        pack_pairs(self.kern, self.transpose, src, a.rs, a.cs, rows, mr, kc, dst as *mut u32)
    }
    unsafe fn pack_b(&self, dst: *mut f32, j0: usize, cols: usize, nr: usize, pc: usize, kc: usize, _: &mut Vec<f32>) {
        let b = self.b;
        let src = b.ptr.offset(j0 as isize * b.cs + pc as isize * b.rs);
        pack_pairs(self.kern, self.transpose, src, b.cs, b.rs, cols, nr, kc, dst as *mut u32)
    }
    #[inline(always)]
    unsafe fn micro(&self, depth: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
        (self.kern.micro)(depth, ap as *const u32, bp as *const u32, c, ldc, alpha, beta)
    }
}

/// `dst[q·w + r] = x(r, 2q) | x(r, 2q + 1) << 16` for r < rows ≤ w and q < ⌈kc/2⌉, where
/// `x(r, p) = src[r·sr + p·sp]` and `x(r, kc) = 0`; zero words for rows `rows..w`.
/// Pairs adjacent in memory (sp = 1, an even row stride) are moved as 32-bit words by the
/// transposer; rows adjacent in memory (sr = 1) are interleaved two runs at a time.
///
/// # Safety
/// Every `x(r, p)` for r < rows, p < kc is readable; `dst` holds `w·⌈kc/2⌉` words.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn pack_pairs(kern: &PairKernels, transpose: Option<PackT>, src: *const u16, sr: isize, sp: isize, rows: usize, w: usize, kc: usize, dst: *mut u32) {
    let kq = kc.div_ceil(2);
    if rows < w || kc % 2 == 1 {
        core::ptr::write_bytes(dst, 0, w * kq);
    }
    let full = kc / 2;
    let at = |r: usize, p: usize| *src.offset(r as isize * sr + p as isize * sp) as u32;
    match transpose {
        Some(t) if sp == 1 && sr > 0 && sr % 2 == 0 => t(src as *const u8, sr / 2, rows, w, full, dst as *mut f32),
        _ if sr == 1 => {
            for q in 0..full {
                (kern.interleave)(src.offset(2 * q as isize * sp), src.offset((2 * q + 1) as isize * sp), rows, dst.add(q * w));
            }
        }
        _ => {
            for q in 0..full {
                for r in 0..rows {
                    *dst.add(q * w + r) = at(r, 2 * q) | at(r, 2 * q + 1) << 16;
                }
            }
        }
    }
    if kc % 2 == 1 {
        for r in 0..rows {
            *dst.add(full * w + r) = at(r, kc - 1);
        }
    }
}
