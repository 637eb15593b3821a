//! What the library reports about the machine it runs on (`mlx_arm_platform_info`,
//! `mlx_device_info_get`), in both builds. Bare metal has no OS to ask, so it reports the
//! compile target and one core (kernels run on the calling core unless a parallel-for hook
//! is installed).

/// The CPU architecture, as Rust names it (`aarch64`, `arm`, `x86_64`, ...).
pub(crate) fn arch() -> &'static str {
    #[cfg(feature = "std")]
    {
        std::env::consts::ARCH
    }
    #[cfg(not(feature = "std"))]
    {
        if cfg!(target_arch = "aarch64") {
            "aarch64"
        } else if cfg!(target_arch = "arm") {
            "arm"
        } else if cfg!(target_arch = "riscv32") {
            "riscv32"
        } else if cfg!(target_arch = "riscv64") {
            "riscv64"
        } else if cfg!(target_arch = "x86_64") {
            "x86_64"
        } else {
            "unknown"
        }
    }
}

/// The OS (`linux`, `windows`, ...), or `none` on bare metal.
pub(crate) fn os() -> &'static str {
    #[cfg(feature = "std")]
    {
        std::env::consts::OS
    }
    #[cfg(not(feature = "std"))]
    {
        "none"
    }
}

/// CPU cores the library may use.
pub(crate) fn cpu_cores() -> usize {
    #[cfg(feature = "std")]
    {
        std::thread::available_parallelism().map_or(1, |c| c.get())
    }
    #[cfg(not(feature = "std"))]
    {
        1
    }
}
