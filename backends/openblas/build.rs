//! Links the system OpenBLAS: pkg-config's `openblas` (Debian's libopenblas-dev; when
//! cross-compiling, point `PKG_CONFIG_LIBDIR` and `PKG_CONFIG_ALLOW_CROSS=1` at the target's
//! .pc files), else plain `-lopenblas` from the linker's default paths.
//!
//! `MLX_ARM_OPENBLAS_RPATH_LINK` (dirs separated by `:`) adds `-rpath-link` for this crate's
//! tests and examples: a cross linker does not search a multiarch dir such as
//! /usr/lib/aarch64-linux-gnu for libopenblas's own dependencies (libgfortran).

fn main() {
    println!("cargo:rerun-if-env-changed=MLX_ARM_OPENBLAS_RPATH_LINK");
    if let Err(e) = pkg_config::Config::new().probe("openblas") {
        println!("cargo:warning=pkg-config found no openblas ({e}); linking -lopenblas from the default paths");
        println!("cargo:rustc-link-lib=dylib=openblas");
    }
    if let Ok(dirs) = std::env::var("MLX_ARM_OPENBLAS_RPATH_LINK") {
        for d in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath-link,{d}");
        }
    }
}
