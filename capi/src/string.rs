//! `mlx_string` (mlx-c `string.h`): an owned NUL-terminated string.

use crate::arg;
use crate::error::{guard, status};
use crate::handle;
use crate::types::mlx_string;
use core::ffi::{c_char, c_int};
use crate::prelude::*;
use core::ffi::CStr;

/// `mlx_string_new`: the empty string handle.
#[no_mangle]
pub extern "C" fn mlx_string_new() -> mlx_string {
    handle::empty()
}

/// `mlx_string_new_data`: a copy of `str`.
///
/// # Safety
/// `str` must be NULL (an error) or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_string_new_data(str: *const c_char) -> mlx_string {
    guard("mlx_string_new_data", handle::empty(), || {
        arg::string(str, "str")?;
        Ok(handle::new(CStr::from_ptr(str).to_owned()))
    })
}

/// `mlx_string_set`: `*str` becomes a copy of `src`.
///
/// # Safety
/// `str` must point to a valid handle; `src` must be live.
#[no_mangle]
pub unsafe extern "C" fn mlx_string_set(str: *mut mlx_string, src: mlx_string) -> c_int {
    status("mlx_string_set", || {
        let v: CString = handle::get(src)?.clone();
        handle::assign(str, v)
    })
}

/// `mlx_string_data`: the contents, valid while the handle is unchanged (NULL if empty).
///
/// # Safety
/// `str` must be empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_string_data(str: mlx_string) -> *const c_char {
    guard("mlx_string_data", core::ptr::null(), || Ok(handle::get(str)?.as_ptr()))
}

/// `mlx_string_free`.
///
/// # Safety
/// `str` must be empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_string_free(str: mlx_string) -> c_int {
    handle::free(str);
    0
}

/// A `CString` from Rust text (interior NULs become spaces).
pub(crate) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}
