//! bfloat16 GEMM on AMX tiles (Sapphire Rapids and later): `tdpbf16ps` multiplies a 16×32 bf16
//! tile of A by a 32×16 bf16 tile of B into a 16×16 f32 tile of C, 16 384 multiply-adds per
//! instruction — the unit PyTorch's bf16 matmul runs on there. The default for bf16 × bf16
//! products where the CPU has it (`isa::has_amx_bf16()`, which also asks Linux for the tile
//! state) and the active level allows AVX-512; `MLX_ARM_BF16_GEMM=widen|dot|amx` picks a path.
//!
//! Register tile: 32×32 of C as four f32 tiles (tmm0–3), two A tiles (tmm4–5, rows 0–15 and
//! 16–31) and two B tiles (tmm6–7, columns 0–15 and 16–31) per 32-element step of K; every tile
//! is 16 rows × 64 bytes, so the one configuration below serves every call. Packing (per slice
//! of K, padded with zeros to a whole number of 32-element steps):
//! - A: `[step][row][32 bf16]` — each tile row is 32 consecutive elements of a row of A, so a
//!   row-major A is copied, not transposed; other layouts element by element.
//! - B: `[pair][column]` 32-bit words holding `b(2q, c)` (low half) and `b(2q+1, c)` (high
//!   half): the pair ("VNNI") layout the instruction wants for B, which is exactly what the
//!   AVX-512 BF16 pair packers of `cpu/gemm_pairs.rs` write (transposer, interleaver, scalar),
//!   so they are reused; zero pairs pad the slice to whole steps.
//!
//! Numerics: as `vdpbf16ps` — each bf16·bf16 product is exact in f32 and sums are rounded to
//! nearest even in f32, so the f32 path's bound `(k+2)·2⁻²³·Σ|a·b|` holds; bf16 subnormal
//! inputs are read as zero and subnormal results flushed. Zero padding adds nothing.
//!
//! Each worker loads the tile configuration before its share of a pass's register tiles and
//! releases the tile state (`tilerelease`) after it ([`Panels::begin`]/[`Panels::end`]), so no
//! tile state outlives a pass on a worker thread (another AMX user on the same thread — e.g. a
//! different library — cannot see ours or change ours between our calls). Loading it per
//! micro-kernel call instead ran at 0.6–0.9× the speed on the device (docs/BENCHMARKS.md "amx29").

use super::pairs::{self, Bf16Gemm, PairKernels};
use super::{blocked, f32_kernels, Isa, MatMut, MatRef, PackT, Panels, KCF};
use crate::cpu::isa;
use alloc::vec::Vec;
use core::arch::asm;
use core::sync::atomic::{AtomicUsize, Ordering};
use half::bf16;

/// Rows of the register tile (two A tiles).
const MR: usize = 32;
/// Columns of the register tile (two B tiles).
const NR: usize = 32;
/// Pair words per tile row (64 bytes): one step of K is 2·TQ = 32 elements.
const TQ: usize = 16;
/// Elements of K per step.
const STEP: usize = 2 * TQ;

/// bf16 products run on AMX so far in this process (tests and benchmarks check the route).
static PRODUCTS: AtomicUsize = AtomicUsize::new(0);

/// How many bf16 products ran on AMX tiles in this process.
pub(super) fn products() -> usize {
    PRODUCTS.load(Ordering::Relaxed)
}

/// The pair packers AMX reuses, when `level` may run AMX here: AMX-BF16 with the tile state
/// granted, and a level allowing AVX-512 (every AMX CPU has AVX-512 BF16, whose interleaver
/// and transposer pack B).
fn usable(level: Isa) -> Option<&'static PairKernels> {
    if level == Isa::Portable || !level.allows(Isa::Avx512) || !isa::has_amx_bf16() {
        return None;
    }
    pairs::runnable(level)
}

/// The blocked bf16 product on AMX tiles when `MLX_ARM_BF16_GEMM` is unset or `amx` and this
/// CPU and `level` allow it; false leaves it to the other paths.
///
/// # Safety
/// As [`super::gemm`]; k > 0, m > 0, n > 0.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run(level: Isa, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<bf16>, b: MatRef<bf16>, beta: f32, c: MatMut<f32>, parallel: bool) -> bool {
    if !matches!(pairs::bf16_mode(), Bf16Gemm::Auto | Bf16Gemm::Amx) {
        return false;
    }
    let Some(kern) = usable(level) else { return false };
    // The level's f32 transposer moves 32-bit words: it packs B = Wᵀ's pairs (see pairs).
    let transpose = f32_kernels(level).and_then(|f| f.pack_t).map(|p| p[0]);
    run_with(&AMX, kern, transpose, m, n, k, alpha, a, b, beta, c, parallel);
    PRODUCTS.fetch_add(1, Ordering::Relaxed);
    true
}

/// A micro-kernel over the packed layouts: `C[32×32] (row stride ldc) = alpha·A·B + beta·C`
/// over `depth` pair words (a multiple of [`TQ`]); C is not read when beta == 0.
type Micro = unsafe fn(depth: usize, ap: *const u32, bp: *const u32, c: *mut f32, ldc: usize, alpha: f32, beta: f32);

/// A micro-kernel and the per-thread set-up around a worker's share of its calls.
struct Tiles {
    micro: Micro,
    begin: unsafe fn(),
    end: unsafe fn(),
}

/// The AMX tiles.
static AMX: Tiles = Tiles { micro: micro_amx, begin: configure, end: release };

/// [`run`] on a given micro-kernel (tests pass an emulation of the tile instructions).
///
/// # Safety
/// As [`run`]; `micro` must run on this CPU.
#[allow(clippy::too_many_arguments)]
unsafe fn run_with(tiles: &Tiles, kern: &PairKernels, transpose: Option<PackT>, m: usize, n: usize, k: usize, alpha: f32, a: MatRef<bf16>, b: MatRef<bf16>, beta: f32, c: MatMut<f32>, parallel: bool) {
    let bits = |x: MatRef<bf16>| MatRef { ptr: x.ptr as *const u16, rs: x.rs, cs: x.cs };
    blocked(&AmxPanels { tiles, kern, transpose, a: bits(a), b: bits(b) }, m, n, k, alpha, beta, c, parallel);
}

/// [`Panels`] for AMX: A as `[step][row][32 bf16]`, B as `[pair][column]` words.
struct AmxPanels<'a> {
    tiles: &'a Tiles,
    kern: &'a PairKernels,
    transpose: Option<PackT>,
    a: MatRef<u16>,
    b: MatRef<u16>,
}

impl Panels for AmxPanels<'_> {
    fn tile(&self) -> (usize, usize) {
        (MR, NR)
    }
    fn kc_max(&self) -> usize {
        // 512 elements: a 32 KiB A micro-panel and 32 KiB B panel, 64 tile products per call.
        2 * KCF
    }
    fn depth(&self, kc: usize) -> usize {
        kc.div_ceil(STEP) * TQ
    }
    unsafe fn pack_a(&self, dst: *mut f32, i0: usize, rows: usize, mr: usize, pc: usize, kc: usize, _: &mut Vec<f32>) {
        pack_a_steps(self.a, dst as *mut u16, i0, rows, mr, pc, kc)
    }
    unsafe fn pack_b(&self, dst: *mut f32, j0: usize, cols: usize, nr: usize, pc: usize, kc: usize, _: &mut Vec<f32>) {
        let b = self.b;
        let src = b.ptr.offset(j0 as isize * b.cs + pc as isize * b.rs);
        let words = dst as *mut u32;
        pairs::pack_pairs(self.kern, self.transpose, src, b.cs, b.rs, cols, nr, kc, words);
        let kq = kc.div_ceil(2);
        core::ptr::write_bytes(words.add(kq * nr), 0, (self.depth(kc) - kq) * nr);
    }
    #[inline(always)]
    unsafe fn micro(&self, depth: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
        (self.tiles.micro)(depth, ap as *const u32, bp as *const u32, c, ldc, alpha, beta)
    }
    unsafe fn begin(&self) {
        (self.tiles.begin)()
    }
    unsafe fn end(&self) {
        (self.tiles.end)()
    }
}

/// `dst[(p/32·mr + r)·32 + p%32] = a(i0 + r, pc + p)` for r < rows, p < kc; zeros for rows
/// `rows..mr` and for p up to the next multiple of 32.
///
/// # Safety
/// The rows and columns lie inside A's view; `dst` holds `⌈kc/32⌉·mr·32` elements.
unsafe fn pack_a_steps(a: MatRef<u16>, dst: *mut u16, i0: usize, rows: usize, mr: usize, pc: usize, kc: usize) {
    let steps = kc.div_ceil(STEP);
    if rows < mr || kc % STEP != 0 {
        core::ptr::write_bytes(dst, 0, steps * mr * STEP);
    }
    let src = a.ptr.offset(i0 as isize * a.rs + pc as isize * a.cs);
    if a.cs == 1 {
        // Row-major A: each tile row is a run of the row (bytes copied: views may be unaligned).
        for r in 0..rows {
            let row = src.offset(r as isize * a.rs);
            for s in 0..steps {
                let len = STEP.min(kc - s * STEP);
                core::ptr::copy_nonoverlapping(row.add(s * STEP) as *const u8, dst.add((s * mr + r) * STEP) as *mut u8, 2 * len);
            }
        }
    } else {
        // p outer: a column-major A (a transposed view, rs == 1) is read along its runs.
        for p in 0..kc {
            let d = dst.add((p / STEP) * mr * STEP + p % STEP);
            for r in 0..rows {
                *d.add(r * STEP) = core::ptr::read_unaligned(src.offset(r as isize * a.rs + p as isize * a.cs));
            }
        }
    }
}

/// The tile configuration: palette 1, eight tiles of 16 rows × 64 bytes (tmm0–3 C, tmm4–5 A,
/// tmm6–7 B). Layout: byte 0 palette, 16 + 2t the bytes per row of tile t, 48 + t its rows.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

static CONFIG: TileConfig = {
    let mut b = [0u8; 64];
    b[0] = 1;
    let mut t = 0;
    while t < 8 {
        b[16 + 2 * t] = 64;
        b[48 + t] = 16;
        t += 1;
    }
    TileConfig(b)
};

/// Loads [`CONFIG`] into this thread's tile configuration.
///
/// # Safety
/// AMX with the tile state granted ([`isa::has_amx_bf16`]).
unsafe fn configure() {
    // SAFETY: the configuration is 64 valid bytes (palette 1, every tile within its limits).
    asm!("ldtilecfg [{cfg}]", cfg = in(reg) &CONFIG as *const TileConfig, options(nostack, readonly, preserves_flags));
}

/// Returns this thread's tiles to the init state (`tilerelease`).
///
/// # Safety
/// As [`configure`].
unsafe fn release() {
    asm!("tilerelease", options(nostack, nomem, preserves_flags));
}

/// The AMX micro-kernel ([`Micro`]). With alpha == 1 and beta ∈ {0, 1} (every slice after the
/// first, and plain matmul) the C tiles are zeroed or loaded from C and stored back in place;
/// otherwise they go through a local tile and `alpha·t + beta·C`.
///
/// # Safety
/// [`configure`] ran on this thread (and no other tile configuration since); `ap` holds `32·depth` and `bp` `32·depth` words in the
/// packed layouts; C's 32 rows (stride ldc) hold 32 writable floats.
unsafe fn micro_amx(depth: usize, ap: *const u32, bp: *const u32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
    let direct = alpha == 1.0 && (beta == 0.0 || beta == 1.0);
    let mut local = core::mem::MaybeUninit::<[f32; MR * NR]>::uninit();
    let (out, ld) = if direct { (c, ldc) } else { (local.as_mut_ptr() as *mut f32, NR) };
    let (stride, lower) = (ld * 4, out.add(16 * ld));
    // SAFETY (all blocks): every tile load and store covers 16 rows of 64 bytes inside the
    // panels or C as the contract states. Tile registers are not compiler-managed, so they carry
    // values from one block to the next; no block is `pure`, so they stay in order.
    if direct && beta == 1.0 {
        asm!(
            "tileloadd tmm0, [{u} + {s}*1]",
            "tileloadd tmm1, [{u} + {s}*1 + 64]",
            "tileloadd tmm2, [{l} + {s}*1]",
            "tileloadd tmm3, [{l} + {s}*1 + 64]",
            u = in(reg) out, l = in(reg) lower, s = in(reg) stride,
            options(nostack, readonly, preserves_flags),
        );
    } else {
        asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nostack, nomem, preserves_flags));
    }
    let mut s = 0;
    while s < depth {
        asm!(
            "tileloadd tmm4, [{a} + {sa}*1]",
            "tileloadd tmm6, [{b} + {sb}*1]",
            "tileloadd tmm5, [{a} + {sa}*1 + 1024]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tileloadd tmm7, [{b} + {sb}*1 + 64]",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm3, tmm5, tmm7",
            a = in(reg) ap.add(s * MR), b = in(reg) bp.add(s * NR),
            sa = in(reg) TQ * 4, sb = in(reg) NR * 4,
            options(nostack, readonly, preserves_flags),
        );
        s += TQ;
    }
    asm!(
        "tilestored [{u} + {s}*1], tmm0",
        "tilestored [{u} + {s}*1 + 64], tmm1",
        "tilestored [{l} + {s}*1], tmm2",
        "tilestored [{l} + {s}*1 + 64], tmm3",
        u = in(reg) out, l = in(reg) lower, s = in(reg) stride,
        options(nostack, preserves_flags),
    );
    if !direct {
        let t = local.assume_init_ref();
        for r in 0..MR {
            let row = c.add(r * ldc);
            for cc in 0..NR {
                let v = alpha * t[r * NR + cc];
                *row.add(cc) = if beta == 0.0 { v } else { v + beta * *row.add(cc) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// `tdpbf16ps` and the tile moves of [`micro_amx`] in plain Rust, reading the packed panels
    /// at the offsets and strides the assembly uses: A tile 0/1 at `ap + s·32` words (+256 for
    /// rows 16–31) with 16-word rows, B tile 0/1 at `bp + s·32` words (+16 for columns 16–31)
    /// with 32-word rows. Each lane adds its low then its high product, rounding each sum.
    unsafe fn micro_emulated(depth: usize, ap: *const u32, bp: *const u32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
        let h = |w: u32, hi: bool| f32::from_bits(if hi { w & 0xffff_0000 } else { w << 16 });
        let direct = alpha == 1.0 && (beta == 0.0 || beta == 1.0);
        let mut t = [0f32; MR * NR];
        for r in 0..MR {
            for cc in 0..NR {
                let mut acc = if direct && beta == 1.0 { *c.add(r * ldc + cc) } else { 0.0 };
                let mut s = 0;
                while s < depth {
                    let a_tile = ap.add(s * MR + (r / 16) * 16 * TQ);
                    let b_tile = bp.add(s * NR + (cc / 16) * TQ);
                    for q in 0..TQ {
                        let (aw, bw) = (*a_tile.add((r % 16) * TQ + q), *b_tile.add(q * NR + cc % 16));
                        acc += h(aw, false) * h(bw, false);
                        acc += h(aw, true) * h(bw, true);
                    }
                    s += TQ;
                }
                t[r * NR + cc] = acc;
            }
        }
        for r in 0..MR {
            for cc in 0..NR {
                let o = c.add(r * ldc + cc);
                *o = if direct { t[r * NR + cc] } else if beta == 0.0 { alpha * t[r * NR + cc] } else { alpha * t[r * NR + cc] + beta * *o };
            }
        }
    }

    /// The portable stand-ins for the pair packers (the contract of the AVX-512 BF16 ones).
    unsafe fn interleave(lo: *const u16, hi: *const u16, n: usize, dst: *mut u32) {
        for c in 0..n {
            *dst.add(c) = *lo.add(c) as u32 | (*hi.add(c) as u32) << 16;
        }
    }
    unsafe fn transpose(src: *const u8, ld: isize, rows: usize, w: usize, kc: usize, dst: *mut f32) {
        let (src, dst) = (src as *const u32, dst as *mut u32);
        for p in 0..kc {
            for r in 0..w {
                *dst.add(p * w + r) = if r < rows { core::ptr::read_unaligned(src.offset(r as isize * ld + p as isize)) } else { 0 };
            }
        }
    }
    unsafe fn nothing() {}
    static EMULATED: Tiles = Tiles { micro: micro_emulated, begin: nothing, end: nothing };
    unsafe fn no_micro(_: usize, _: *const u32, _: *const u32, _: *mut f32, _: usize, _: f32, _: f32) {}
    static PACKERS: PairKernels = PairKernels { mr: MR, nr: NR, micro: no_micro, interleave };

    fn vals(n: usize, seed: u64) -> Vec<bf16> {
        crate::cpu::gemm::tests::vals(n, seed).into_iter().map(bf16::from_f32).collect()
    }

    /// Runs `micro` through the AMX packing and driver on A and B in every layout (row-major,
    /// column-major, padded strides), with and without the transposer, beta 0 (NaN output must
    /// not leak) and beta ≠ 0, alpha 1 and 1.5, against an f64 product of the same bf16 inputs.
    /// Bound: `(k+2)·2⁻²³·(|alpha|·Σ|a·b| + |beta·c|)` (f32 accumulation, one rounding per add).
    fn check(tiles: &Tiles, shapes: &[(usize, usize, usize)]) {
        for &(m, n, k) in shapes {
            let (av, bv) = (vals(m * k, 3 + m as u64), vals(k * n, 5 + n as u64 + k as u64));
            let c0: Vec<f32> = crate::cpu::gemm::tests::vals(m * n, 11);
            let layouts = |r: usize, c: usize| [(c as isize, 1isize), (1, r as isize), (2 * c as isize + 2, 2)];
            for la in 0..3 {
                for lb in 0..3 {
                    let ((ars, acs), (brs, bcs)) = (layouts(m, k)[la], layouts(k, n)[lb]);
                    let span = |r: usize, c: usize, rs: isize, cs: isize| (r - 1) * rs as usize + (c - 1) * cs as usize + 1;
                    let mut ab = vec![bf16::NAN; span(m, k, ars, acs)];
                    let mut bb = vec![bf16::NAN; span(k, n, brs, bcs)];
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
                    for (alpha, beta, t) in [(1.0f32, 0.0f32, true), (1.5, -0.5, false), (1.0, 1.0, true), (1.5, 0.0, false)] {
                        let mut c: Vec<f32> = if beta == 0.0 { vec![f32::NAN; m * n] } else { c0.clone() };
                        unsafe {
                            let tr: Option<PackT> = if t { Some(transpose) } else { None };
                            run_with(tiles, &PACKERS, tr, m, n, k, alpha, MatRef::new(ab.as_ptr(), ars, acs), MatRef::new(bb.as_ptr(), brs, bcs), beta, MatMut::new(c.as_mut_ptr(), n), true);
                        }
                        for i in 0..m {
                            for j in 0..n {
                                let (mut s, mut mag) = (0f64, 0f64);
                                for p in 0..k {
                                    let x = av[i * k + p].to_f64() * bv[p * n + j].to_f64();
                                    s += x;
                                    mag += x.abs();
                                }
                                let cin = if beta == 0.0 { 0.0 } else { c0[i * n + j] as f64 };
                                let want = alpha as f64 * s + beta as f64 * cin;
                                let bound = (k as f64 + 2.0) * f64::powi(2.0, -23) * (alpha as f64 * mag + (beta as f64 * cin).abs()) + 1e-30;
                                let got = c[i * n + j] as f64;
                                assert!((got - want).abs() <= bound, "{m}x{n}x{k} layouts {la}/{lb} alpha {alpha} beta {beta} at ({i},{j}): {got} vs {want}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Shapes hitting every tail: M, N not multiples of 32, K odd, below one step, crossing the
    /// 512-element slice; more than 128 rows (blocked()'s shared-B mode) and fewer.
    const SHAPES: [(usize, usize, usize); 9] = [(2, 2, 1), (17, 33, 65), (100, 3, 200), (33, 31, 31), (32, 32, 32), (5, 70, 513), (40, 9, 1100), (130, 40, 600), (3, 2, 64)];

    /// The packing, the padding and the driver on the emulated tile instructions (runs on
    /// every x86-64 CPU; the real instructions are checked by `core/tests/gemm_amx.rs`).
    #[test]
    fn amx_packing_on_emulated_tiles() {
        check(&EMULATED, &SHAPES);
    }

    /// The real AMX micro-kernel on the same shapes, where this CPU has AMX (skipped, with a
    /// note, elsewhere).
    #[test]
    fn amx_tiles_match_f64() {
        if !isa::has_amx_bf16() {
            std::eprintln!("amx_tiles_match_f64: no AMX-BF16 (or Linux refused the tile state) on this CPU, skipped");
            return;
        }
        check(&AMX, &SHAPES);
    }

    #[test]
    fn the_tile_configuration_is_sixteen_rows_of_64_bytes() {
        assert_eq!(core::mem::size_of::<TileConfig>(), 64);
        assert_eq!(CONFIG.0[0], 1);
        for t in 0..8 {
            assert_eq!((CONFIG.0[16 + 2 * t], CONFIG.0[17 + 2 * t], CONFIG.0[48 + t]), (64, 0, 16));
        }
    }
}
