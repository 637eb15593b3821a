//! Links the system OpenBLAS: pkg-config's `openblas` (Debian's libopenblas-dev; when
//! cross-compiling, point `PKG_CONFIG_LIBDIR` and `PKG_CONFIG_ALLOW_CROSS=1` at the target's
//! .pc files, as scripts/test.sh does for aarch64), else plain `-lopenblas` from the linker's
//! default paths.

fn main() {
    if let Err(e) = pkg_config::Config::new().probe("openblas") {
        println!("cargo:warning=pkg-config found no openblas ({e}); linking -lopenblas from the default paths");
        println!("cargo:rustc-link-lib=dylib=openblas");
    }
}
