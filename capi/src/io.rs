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
use crate::map_string::StringMap;
use crate::prelude::*;
use crate::string::cstring;
use crate::types::*;
use core::ffi::{c_char, c_int};
use mlx_arm_core::io::arrays::{self as files, Metadata};
use mlx_arm_core::io::gguf::{Array as GArray, Value as GValue};
use mlx_arm_core::{Array, DType, Error, Result};

/// Names the file in a load/save error (core's format errors name the defect only).
fn in_file<T>(r: Result<T>, file: &str) -> Result<T> {
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
        let loaded = in_file(files::load(file, Some("safetensors")), file)?;
        let arrays: ArrayMap = loaded.arrays.into_iter().map(|(k, a)| (cstring(&k), a)).collect();
        let meta: StringMap = match loaded.metadata {
            Metadata::Strings(v) => v.into_iter().map(|(k, v)| (cstring(&k), cstring(&v))).collect(),
            _ => StringMap::new(),
        };
        handle::assign(res_0, arrays)?;
        handle::assign(res_1, meta)
    })
}

/// Name/array pairs of a map handle, in key order.
unsafe fn named_arrays(m: mlx_map_string_to_array) -> Result<Vec<(String, Array)>> {
    let map = handle::get(m)?;
    map.iter()
        .map(|(k, a)| {
            let k = k.to_str().map_err(|_| Error::invalid("save", "array names must be UTF-8"))?;
            Ok((String::from(k), a.clone()))
        })
        .collect()
}

/// Key/value pairs of a string map; the empty handle is no metadata.
unsafe fn named_strings(m: mlx_map_string_to_string) -> Result<Vec<(String, String)>> {
    if m.ctx.is_null() {
        return Ok(Vec::new());
    }
    handle::get(m)?
        .iter()
        .map(|(k, v)| match (k.to_str(), v.to_str()) {
            (Ok(k), Ok(v)) => Ok((String::from(k), String::from(v))),
            _ => Err(Error::invalid("save", "metadata must be UTF-8")),
        })
        .collect()
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

/// A GGUF metadata value: numbers and numeric arrays become arrays, strings stay strings,
/// and arrays of strings (or of arrays) become JSON text.
enum Meta {
    Array(Array),
    Text(String),
}

fn meta_of(v: &GValue) -> Result<Meta> {
    Ok(Meta::Array(match v {
        GValue::U8(x) => Array::scalar(*x)?,
        GValue::I8(x) => Array::scalar(*x)?,
        GValue::U16(x) => Array::scalar(*x)?,
        GValue::I16(x) => Array::scalar(*x)?,
        GValue::U32(x) => Array::scalar(*x)?,
        GValue::I32(x) => Array::scalar(*x)?,
        GValue::U64(x) => Array::scalar(*x)?,
        GValue::I64(x) => Array::scalar(*x)?,
        GValue::F32(x) => Array::scalar(*x)?,
        GValue::F64(x) => Array::scalar(*x)?,
        GValue::Bool(x) => Array::scalar(*x)?,
        GValue::String(s) => return Ok(Meta::Text(s.clone())),
        GValue::Array(a) => match a {
            GArray::U8(v) => Array::from_slice(v, &[v.len()])?,
            GArray::I8(v) => Array::from_slice(v, &[v.len()])?,
            GArray::U16(v) => Array::from_slice(v, &[v.len()])?,
            GArray::I16(v) => Array::from_slice(v, &[v.len()])?,
            GArray::U32(v) => Array::from_slice(v, &[v.len()])?,
            GArray::I32(v) => Array::from_slice(v, &[v.len()])?,
            GArray::U64(v) => Array::from_slice(v, &[v.len()])?,
            GArray::I64(v) => Array::from_slice(v, &[v.len()])?,
            GArray::F32(v) => Array::from_slice(v, &[v.len()])?,
            GArray::F64(v) => Array::from_slice(v, &[v.len()])?,
            GArray::Bool(v) => Array::from_slice(v, &[v.len()])?,
            GArray::String(_) | GArray::Array(_) => return Ok(Meta::Text(json(a))),
        },
    }))
}

/// JSON text of a GGUF metadata array (strings escaped per RFC 8259).
fn json(a: &GArray) -> String {
    fn list<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
        let items: Vec<String> = v.iter().map(f).collect();
        format!("[{}]", items.join(","))
    }
    fn string(s: &str) -> String {
        let mut o = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => o.push_str("\\\""),
                '\\' => o.push_str("\\\\"),
                c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
                c => o.push(c),
            }
        }
        o.push('"');
        o
    }
    match a {
        GArray::U8(v) => list(v, |x| format!("{x}")),
        GArray::I8(v) => list(v, |x| format!("{x}")),
        GArray::U16(v) => list(v, |x| format!("{x}")),
        GArray::I16(v) => list(v, |x| format!("{x}")),
        GArray::U32(v) => list(v, |x| format!("{x}")),
        GArray::I32(v) => list(v, |x| format!("{x}")),
        GArray::U64(v) => list(v, |x| format!("{x}")),
        GArray::I64(v) => list(v, |x| format!("{x}")),
        GArray::F32(v) => list(v, |x| format!("{x:?}")),
        GArray::F64(v) => list(v, |x| format!("{x:?}")),
        GArray::Bool(v) => list(v, |x| format!("{x}")),
        GArray::String(v) => list(v, |x| string(x)),
        GArray::Array(v) => list(v, json),
    }
}

/// `mlx_arm_load_gguf(tensors, types, shapes, metadata_arrays, metadata_strings, file, s)`:
/// every GGUF tensor exactly as stored, no conversion (a Q4_0 model stays 4.5 bits/weight):
/// - `tensors[name]`: a uint8 array `(rows, row_bytes)` viewing the GGML blocks in the file
///   (rows = product of all but the last dimension);
/// - `types[name]`: the GGML type name (`"q4_0"`, `"f32"`, ...);
/// - `shapes[name]`: the logical shape (int64, elements);
/// - metadata: numbers and numeric arrays in `metadata_arrays`, strings in
///   `metadata_strings` (arrays of strings as JSON text).
///
/// Every result pointer is checked before any is written.
///
/// # Safety
/// Result pointers valid; `file` NUL-terminated; `s` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_load_gguf(
    tensors: *mut mlx_map_string_to_array,
    types: *mut mlx_map_string_to_string,
    shapes: *mut mlx_map_string_to_array,
    metadata_arrays: *mut mlx_map_string_to_array,
    metadata_strings: *mut mlx_map_string_to_string,
    file: *const c_char,
    s: mlx_stream,
) -> c_int {
    status("mlx_arm_load_gguf", || {
        let file = arg::string(file, "file")?;
        arg::stream(s)?;
        if tensors.is_null() || types.is_null() || shapes.is_null() || metadata_arrays.is_null() || metadata_strings.is_null() {
            return Err(Error::invalid("mlx_arm_load_gguf", "a result pointer is NULL"));
        }
        let g = in_file(files::load_gguf_native(file), file)?;
        let (mut t, mut ty, mut sh) = (ArrayMap::new(), StringMap::new(), ArrayMap::new());
        for nt in g.tensors {
            let dims: Vec<i64> = nt.shape.iter().map(|&d| d as i64).collect();
            let k = cstring(&nt.name);
            sh.insert(k.clone(), Array::from_slice(&dims, &[dims.len()])?);
            ty.insert(k.clone(), cstring(nt.ty.name()));
            t.insert(k, nt.array);
        }
        let (mut ma, mut ms) = (ArrayMap::new(), StringMap::new());
        for (key, v) in &g.metadata {
            match meta_of(v)? {
                Meta::Array(a) => {
                    ma.insert(cstring(key), a);
                }
                Meta::Text(s) => {
                    ms.insert(cstring(key), cstring(&s));
                }
            }
        }
        handle::assign(tensors, t)?;
        handle::assign(types, ty)?;
        handle::assign(shapes, sh)?;
        handle::assign(metadata_arrays, ma)?;
        handle::assign(metadata_strings, ms)
    })
}

/// A 0-d or 1-D metadata array as a GGUF value (MLX's `save_gguf` rule).
fn gguf_value(key: &str, a: &Array) -> Result<GValue> {
    const OP: &str = "save_gguf";
    macro_rules! conv {
        ($t:ty, $s:ident) => {{
            let v = a.to_vec::<$t>()?;
            if a.ndim() == 0 {
                GValue::$s(v[0])
            } else {
                GValue::Array(GArray::$s(v))
            }
        }};
    }
    if a.ndim() > 1 {
        return Err(Error::invalid(OP, format!("metadata array '{key}' must have at most 1 dimension, got {}", a.ndim())));
    }
    Ok(match a.dtype() {
        DType::Uint8 => conv!(u8, U8),
        DType::Int8 => conv!(i8, I8),
        DType::Uint16 => conv!(u16, U16),
        DType::Int16 => conv!(i16, I16),
        DType::Uint32 => conv!(u32, U32),
        DType::Int32 => conv!(i32, I32),
        DType::Uint64 => conv!(u64, U64),
        DType::Int64 => conv!(i64, I64),
        DType::Float32 => conv!(f32, F32),
        DType::Float64 => conv!(f64, F64),
        DType::Bool => conv!(bool, Bool),
        other => return Err(Error::invalid(OP, format!("metadata array '{key}' has unsupported dtype {other}"))),
    })
}

/// `mlx_arm_save_gguf(file, arrays, metadata_arrays, metadata_strings)`: `mx.save_gguf`
/// (float32, float16, int8, int16 and int32 arrays, as MLX allows); metadata arrays must be
/// 0-d (a scalar) or 1-D; either metadata map may be the empty handle.
///
/// # Safety
/// `file` NUL-terminated; `arrays` live; metadata maps empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_save_gguf(
    file: *const c_char,
    arrays: mlx_map_string_to_array,
    metadata_arrays: mlx_map_string_to_array,
    metadata_strings: mlx_map_string_to_string,
) -> c_int {
    status("mlx_arm_save_gguf", || {
        let file = arg::string(file, "file")?;
        let arrays = named_arrays(arrays)?;
        let mut meta: Vec<(String, GValue)> = Vec::new();
        if !metadata_arrays.ctx.is_null() {
            for (k, a) in named_arrays(metadata_arrays)? {
                let v = gguf_value(&k, &a)?;
                meta.push((k, v));
            }
        }
        for (k, v) in named_strings(metadata_strings)? {
            meta.push((k, GValue::String(v)));
        }
        let a: Vec<(&str, &Array)> = arrays.iter().map(|(k, a)| (k.as_str(), a)).collect();
        let m: Vec<(&str, GValue)> = meta.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        in_file(files::save_gguf(file, &a, &m), file)
    })
}
