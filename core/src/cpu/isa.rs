//! The instruction-set level the CPU kernels run at: detected once at run time with `std`,
//! taken from compile-time target features without it, and overridable — by the
//! `MLX_ARM_ISA` environment variable (read at first use) or [`set_isa`] — so tests and
//! benchmarks can force every path. Kernels ask [`isa`] and pick their variant; the portable
//! kernel always exists and is the reference the others are tested against.
//!
//! Levels are ordered within an architecture: a kernel written for `Avx2` also runs at
//! `Avx512`, one for `Neon` also runs at `Dotprod` and `Sve`.

use core::sync::atomic::{AtomicU8, Ordering};

use crate::error::{Error, Result};

/// An instruction-set level. Each one includes the levels below it on its architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Isa {
    /// Portable Rust, no `core::arch` (the reference).
    Portable = 1,
    /// x86-64 AVX2 + FMA + F16C.
    Avx2 = 2,
    /// x86-64 AVX-512 F/BW/VL/DQ on top of AVX2 (VNNI and BF16 are asked separately).
    Avx512 = 3,
    /// aarch64 Advanced SIMD (always present on aarch64).
    Neon = 10,
    /// aarch64 NEON with the dot-product extension (`sdot`/`udot`).
    Dotprod = 11,
    /// aarch64 SVE (vector-length agnostic) on top of NEON + dotprod.
    Sve = 12,
}

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 6] = [Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::Dotprod, Isa::Sve];

    /// The lower-case name used by `MLX_ARM_ISA` and platform info.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
            Isa::Dotprod => "dotprod",
            Isa::Sve => "sve",
        }
    }

    /// The level named `name` (as [`Isa::name`] writes it).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name().eq_ignore_ascii_case(name.trim()))
    }

    fn from_u8(v: u8) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| *i as u8 == v)
    }

    /// Whether this machine can run kernels of this level.
    pub fn is_available(self) -> bool {
        self == Isa::Portable || (same_arch(self, best()) && self <= best())
    }

    /// Whether a kernel written for `level` may run when this level is active: same
    /// architecture family and not above it.
    pub fn allows(self, level: Isa) -> bool {
        level == Isa::Portable || (same_arch(self, level) && level <= self)
    }
}

fn same_arch(a: Isa, b: Isa) -> bool {
    let x86 = |i: Isa| matches!(i, Isa::Avx2 | Isa::Avx512);
    let arm = |i: Isa| matches!(i, Isa::Neon | Isa::Dotprod | Isa::Sve);
    (x86(a) && x86(b)) || (arm(a) && arm(b)) || (a == Isa::Portable && b == Isa::Portable)
}

/// 0 = not chosen yet.
static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// 0 = not detected yet.
static BEST: AtomicU8 = AtomicU8::new(0);

/// The best level this machine supports (detected once: kernels ask on every call).
pub fn best() -> Isa {
    if let Some(i) = Isa::from_u8(BEST.load(Ordering::Relaxed)) {
        return i;
    }
    let found = detect();
    BEST.store(found as u8, Ordering::Relaxed);
    found
}

fn detect() -> Isa {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    {
        extern crate std;
        use std::is_x86_feature_detected as has;
        if has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") && has!("avx2") && has!("fma") {
            return Isa::Avx512;
        }
        if has!("avx2") && has!("fma") && has!("f16c") {
            return Isa::Avx2;
        }
        Isa::Portable
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    {
        if cfg!(all(target_feature = "avx512f", target_feature = "avx512bw", target_feature = "avx512vl", target_feature = "avx512dq")) {
            return Isa::Avx512;
        }
        if cfg!(all(target_feature = "avx2", target_feature = "fma", target_feature = "f16c")) {
            return Isa::Avx2;
        }
        Isa::Portable
    }
    #[cfg(all(target_arch = "aarch64", feature = "std"))]
    {
        extern crate std;
        use std::arch::is_aarch64_feature_detected as has;
        if has!("sve") && has!("dotprod") {
            return Isa::Sve;
        }
        if has!("dotprod") {
            return Isa::Dotprod;
        }
        Isa::Neon
    }
    #[cfg(all(target_arch = "aarch64", not(feature = "std")))]
    {
        if cfg!(all(target_feature = "sve", target_feature = "dotprod")) {
            return Isa::Sve;
        }
        if cfg!(target_feature = "dotprod") {
            return Isa::Dotprod;
        }
        Isa::Neon
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Isa::Portable
    }
}

/// The level kernels run at now: the override if one is set, else `MLX_ARM_ISA` (with `std`)
/// if it names an available level, else [`best`].
#[inline]
pub fn isa() -> Isa {
    if let Some(i) = Isa::from_u8(ACTIVE.load(Ordering::Relaxed)) {
        return i;
    }
    let chosen = from_env().unwrap_or_else(best);
    ACTIVE.store(chosen as u8, Ordering::Relaxed);
    chosen
}

#[cfg(feature = "std")]
fn from_env() -> Option<Isa> {
    extern crate std;
    let v = std::env::var("MLX_ARM_ISA").ok()?;
    Isa::from_name(&v).filter(|i| i.is_available())
}

#[cfg(not(feature = "std"))]
fn from_env() -> Option<Isa> {
    None
}

/// Forces the kernels to `level` (tests, benchmarks, a user working around a bad kernel).
/// An error if this machine cannot run it.
pub fn set_isa(level: Isa) -> Result<()> {
    if !level.is_available() {
        return Err(Error::invalid(
            "set_isa",
            alloc::format!("This CPU cannot run {} kernels (best level: {}).", level.name(), best().name()),
        ));
    }
    ACTIVE.store(level as u8, Ordering::Relaxed);
    Ok(())
}

/// Whether the 8-bit dot-product instructions of AVX-512 VNNI (`vpdpbusd`, `vpdpwssd` on
/// 256-bit registers, i.e. with AVX-512 VL) exist here. Asked separately from [`Isa::Avx512`]
/// because Skylake-X has AVX-512 without VNNI; kernels use it only when [`Isa::Avx512`] is allowed.
pub fn has_avx512_vnni() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    {
        extern crate std;
        static VNNI: AtomicU8 = AtomicU8::new(0);
        probed_once(&VNNI, || std::is_x86_feature_detected!("avx512vnni") && std::is_x86_feature_detected!("avx512vl"))
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    {
        cfg!(all(target_feature = "avx512vnni", target_feature = "avx512vl"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether AVX-512 BF16 (`vdpbf16ps`: bf16 pair dot products into f32) exists here. Asked
/// separately from [`Isa::Avx512`] (Sapphire Rapids and Zen 4 have it, Skylake-X and Ice Lake
/// do not); kernels use it only when [`Isa::Avx512`] is allowed.
pub fn has_avx512_bf16() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    {
        extern crate std;
        static BF16: AtomicU8 = AtomicU8::new(0);
        probed_once(&BF16, || std::is_x86_feature_detected!("avx512bf16") && std::is_x86_feature_detected!("avx512bw"))
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    {
        cfg!(all(target_feature = "avx512bf16", target_feature = "avx512bw"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether AVX-512 VBMI (`vpermb`, `vpermt2b`: byte permutes across a 512-bit register) exists
/// here (Ice Lake and later, Zen 4; not Skylake-X). Kernels use it only when [`Isa::Avx512`] is
/// allowed.
pub fn has_avx512_vbmi() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    {
        extern crate std;
        static VBMI: AtomicU8 = AtomicU8::new(0);
        probed_once(&VBMI, || std::is_x86_feature_detected!("avx512vbmi"))
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    {
        cfg!(target_feature = "avx512vbmi")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether AMX with bf16 tiles (`tdpbf16ps`: 16×32 by 32×16 bf16 tile products into f32) can
/// run in this process: CPUID.(7,0):EDX bits 24 (AMX-TILE) and 22 (AMX-BF16), and Linux
/// granting the tile data state (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`; without
/// that grant the first tile instruction raises SIGILL). Asked once per process; the request is
/// the side effect that makes AMX usable. False without `std`, off Linux and off x86-64.
/// Kernels use it only when [`Isa::Avx512`] is allowed (`MLX_ARM_ISA=avx2` turns it off).
pub fn has_amx_bf16() -> bool {
    #[cfg(all(target_arch = "x86_64", target_os = "linux", feature = "std"))]
    {
        static AMX: AtomicU8 = AtomicU8::new(0);
        probed_once(&AMX, || {
            // Leaf 7 is only meaningful where the maximum leaf reaches it.
            if core::arch::x86_64::__cpuid(0).eax < 7 {
                return false;
            }
            let edx = core::arch::x86_64::__cpuid_count(7, 0).edx;
            if edx & (1 << 24) == 0 || edx & (1 << 22) == 0 {
                return false;
            }
            request_tile_state()
        })
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux", feature = "std")))]
    {
        false
    }
}

/// Asks Linux (5.16+) for permission to use the AMX tile data state in this process:
/// `arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18)`, syscall 158. True when
/// granted (0 returned); older kernels answer EINVAL and AMX stays off.
#[cfg(all(target_arch = "x86_64", target_os = "linux", feature = "std"))]
fn request_tile_state() -> bool {
    const SYS_ARCH_PRCTL: usize = 158;
    const ARCH_REQ_XCOMP_PERM: usize = 0x1023;
    const XFEATURE_XTILEDATA: usize = 18;
    let ret: isize;
    // SAFETY: arch_prctl with these arguments only changes this process's permitted xsave
    // features; `syscall` clobbers rcx and r11, declared below.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") SYS_ARCH_PRCTL as isize => ret,
            in("rdi") ARCH_REQ_XCOMP_PERM,
            in("rsi") XFEATURE_XTILEDATA,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret == 0
}

/// A yes/no fact of this process (a CPU feature, an environment switch) asked once and kept in
/// `cell`: 0 = not asked yet, 1 = no, 2 = yes. Two threads asking at once both probe; they get
/// the same answer.
#[allow(dead_code)] // every caller is behind a target or `std` cfg
pub(crate) fn probed_once(cell: &AtomicU8, probe: impl FnOnce() -> bool) -> bool {
    asked_once(cell, || if probe() { 2 } else { 1 }) == 2
}

/// A small fact of this process (a mode chosen by an environment switch) asked once and kept
/// in `cell` as a non-zero code; 0 = not asked yet. `probe` must return a non-zero code.
pub(crate) fn asked_once(cell: &AtomicU8, probe: impl FnOnce() -> u8) -> u8 {
    match cell.load(Ordering::Relaxed) {
        0 => {
            let code = probe();
            cell.store(code, Ordering::Relaxed);
            code
        }
        code => code,
    }
}

/// Every level this machine can run, lowest first (what a kernel test iterates over).
pub fn available() -> alloc::vec::Vec<Isa> {
    Isa::ALL.into_iter().filter(|i| i.is_available()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_is_always_available_and_names_round_trip() {
        assert!(Isa::Portable.is_available());
        for i in Isa::ALL {
            assert_eq!(Isa::from_name(i.name()), Some(i));
        }
        assert_eq!(Isa::from_name("AVX2"), Some(Isa::Avx2));
        assert_eq!(Isa::from_name("mmx"), None);
    }

    #[test]
    fn levels_allow_lower_levels_of_their_architecture_only() {
        assert!(Isa::Avx512.allows(Isa::Avx2));
        assert!(!Isa::Avx2.allows(Isa::Avx512));
        assert!(Isa::Sve.allows(Isa::Neon));
        assert!(!Isa::Avx512.allows(Isa::Neon));
        assert!(Isa::Neon.allows(Isa::Portable));
    }

    #[test]
    fn an_unavailable_level_is_refused() {
        let foreign = if cfg!(target_arch = "aarch64") { Isa::Avx2 } else { Isa::Neon };
        assert!(set_isa(foreign).is_err());
        assert!(available().contains(&best()));
    }
}
