//! mlx-c's `io.h` over core's file formats (hosted builds only: files need `std`), plus
//! `mlx_arm_` extensions for what mlx-c reaches through other types: GGUF tensors kept as
//! GGML blocks with their metadata, any-format `load`, and `.npz` saving.
//!
//! Loaded arrays view the memory-mapped file (no copy). Malformed files give status 1 and a
//! message naming the file and the defect (core validates every size before allocating).

use crate::arg;
use crate::error::status;
use crate::handle;
use crate::map::ArrayMap;
use crate::prelude::*;
use crate::string::cstring;
use crate::types::*;
use core::ffi::{c_char, c_int};
use crate::io_maps::{named_arrays, named_strings, safetensors_maps};
use mlx_arm_core::io::arrays as files;
use mlx_arm_core::{Array, Error, Result};

/// Names the file in a load/save error (core's format errors name the defect only).
pub(crate) fn in_file<T>(r: Result<T>, file: &str) -> Result<T> {
    r.map_err(|mut e| {
        if !e.msg.contains(file) {
            e.msg = format!("{} (file '{file}')", e.msg);
        }
        e
    })
}

/// `mlx_load(res, file, s)`: one `.npy` array (MLX's C++ `load(file)`).
///
/// # Safety
/// `res` a valid handle pointer; `file` NUL-terminated; `s` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_load(res: *mut mlx_array, file: *const c_char, s: mlx_stream) -> c_int {
    status("mlx_load", || {
        let file = arg::string(file, "file")?;
        arg::stream(s)?;
        arg::set_array(res, in_file(files::load_npy(file), file)?)
    })
}

/// `mlx_save(file, a)`: `a` as `.npy` (the suffix is appended when missing).
///
/// # Safety
/// `file` NUL-terminated; `a` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_save(file: *const c_char, a: mlx_array) -> c_int {
    status("mlx_save", || {
        let file = arg::string(file, "file")?;
        in_file(files::save(file, &arg::array(a, "a")?), file)
    })
}

/// `mlx_load_safetensors(res_0, res_1, file, s)`: the arrays and the `__metadata__` strings.
/// Both results are checked before either is written, so a failure changes neither.
///
/// # Safety
/// Result pointers valid; `file` NUL-terminated; `s` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_load_safetensors(
    res_0: *mut mlx_map_string_to_array,
    res_1: *mut mlx_map_string_to_string,
    file: *const c_char,
    s: mlx_stream,
) -> c_int {
    status("mlx_load_safetensors", || {
        let file = arg::string(file, "file")?;
        arg::stream(s)?;
        if res_0.is_null() || res_1.is_null() {
            return Err(Error::invalid("mlx_load_safetensors", "a result pointer is NULL"));
        }
        let (arrays, meta) = safetensors_maps(in_file(files::load(file, Some("safetensors")), file)?);
        handle::assign(res_0, arrays)?;
        handle::assign(res_1, meta)
    })
}

/// `mlx_save_safetensors(file, param, metadata)`: `metadata` may be the empty handle.
///
/// # Safety
/// `file` NUL-terminated; `param` live; `metadata` empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_save_safetensors(file: *const c_char, param: mlx_map_string_to_array, metadata: mlx_map_string_to_string) -> c_int {
    status("mlx_save_safetensors", || {
        let file = arg::string(file, "file")?;
        let arrays = named_arrays(param)?;
        let meta = named_strings(metadata)?;
        let a: Vec<(&str, &Array)> = arrays.iter().map(|(k, a)| (k.as_str(), a)).collect();
        let m: Vec<(&str, &str)> = meta.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        in_file(files::save_safetensors(file, &a, &m), file)
    })
}

/// `mlx_arm_load(res, file, format, s)`: `mx.load` for any format (`"npy"`, `"npz"`,
/// `"safetensors"`, `"gguf"`; NULL infers it from the extension). A `.npy` gives one entry
/// named `""`; GGUF tensors are converted as MLX converts them.
///
/// # Safety
/// `res` valid; `file` NUL-terminated; `format` NULL or NUL-terminated; `s` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_load(res: *mut mlx_map_string_to_array, file: *const c_char, format: *const c_char, s: mlx_stream) -> c_int {
    status("mlx_arm_load", || {
        let file = arg::string(file, "file")?;
        let format = if format.is_null() { None } else { Some(arg::string(format, "format")?) };
        arg::stream(s)?;
        let loaded = in_file(files::load(file, format), file)?;
        handle::assign(res, loaded.arrays.into_iter().map(|(k, a)| (cstring(&k), a)).collect::<ArrayMap>())
    })
}

/// `mlx_arm_savez(file, arrays, compressed)`: `mx.savez` / `mx.savez_compressed`.
///
/// # Safety
/// `file` NUL-terminated; `arrays` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_savez(file: *const c_char, arrays: mlx_map_string_to_array, compressed: bool) -> c_int {
    status("mlx_arm_savez", || {
        let file = arg::string(file, "file")?;
        let arrays = named_arrays(arrays)?;
        let a: Vec<(&str, &Array)> = arrays.iter().map(|(k, a)| (k.as_str(), a)).collect();
        in_file(if compressed { files::savez_compressed(file, &a) } else { files::savez(file, &a) }, file)
    })
}

