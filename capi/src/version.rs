//! Versions: `mlx_version` (mlx-c `version.h`) and the `mlx_arm_` run-time queries that
//! match the `MLX_ARM_VERSION_*` / `MLX_ARM_ABI_VERSION` macros of `mlx/c/mlx_arm.h`.

use crate::error::status;
use crate::handle;
use crate::string::cstring;
use crate::types::mlx_string;
use core::ffi::{c_char, c_int};

/// The C ABI version: bumped whenever a handle layout, enum value or existing signature changes.
pub const ABI_VERSION: c_int = 1;

const VERSION_NUL: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The MLX release whose API and behaviour this library matches (the oracle of its goldens).
pub const MLX_VERSION: &str = "0.32.4";

/// `mlx_version`: the MLX version the API matches, as mlx-c's `mlx_version` reports MLX's
/// (this library's own version is `mlx_arm_version_string`).
///
/// # Safety
/// `str_` points to a valid handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_version(str_: *mut mlx_string) -> c_int {
    status("mlx_version", || handle::assign(str_, cstring(MLX_VERSION)))
}

/// `mlx_arm_version_string`: "MAJOR.MINOR.PATCH", static.
#[no_mangle]
pub extern "C" fn mlx_arm_version_string() -> *const c_char {
    VERSION_NUL.as_ptr() as *const c_char
}

/// `mlx_arm_version_number`: MAJOR * 10000 + MINOR * 100 + PATCH (as `MLX_ARM_VERSION`).
#[no_mangle]
pub extern "C" fn mlx_arm_version_number() -> c_int {
    let p = |s: &str| s.parse::<c_int>().unwrap_or(0);
    p(env!("CARGO_PKG_VERSION_MAJOR")) * 10000 + p(env!("CARGO_PKG_VERSION_MINOR")) * 100 + p(env!("CARGO_PKG_VERSION_PATCH"))
}

/// `mlx_arm_abi_version`: compare with `MLX_ARM_ABI_VERSION` to catch a header/library mismatch.
#[no_mangle]
pub extern "C" fn mlx_arm_abi_version() -> c_int {
    ABI_VERSION
}

/// The ABI version, for Rust callers (tests compare it with the header macro).
pub fn abi() -> c_int {
    ABI_VERSION
}
