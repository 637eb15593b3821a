//! GGUF files on the C surface:
//! - mlx-c's `mlx_load_gguf` / `mlx_save_gguf` over the `mlx_io_gguf` object, with MLX's
//!   conversions (what `mx.load(f, return_metadata=True)` and `mx.save_gguf` give);
//! - the `mlx_arm_` pair that keeps every tensor as GGML blocks, with no conversion.

use crate::arg;
use crate::error::status;
use crate::handle;
use crate::io::in_file;
use crate::io_types::{Gguf, Meta};
use crate::map::ArrayMap;
use crate::map_string::StringMap;
use crate::prelude::*;
use crate::string::cstring;
use crate::types::*;
use core::ffi::{c_char, c_int};
use mlx_arm_core::io::arrays as files;
use mlx_arm_core::io::gguf::{Array as GArray, Value as GValue};
use mlx_arm_core::{Array, DType, Error, Result};

/// Numbers and numeric lists as arrays (0-d and 1-D); `None` for strings and lists of them.
/// MLX reads float64 values as float32 (`f64_as_f32`); the native path keeps them.
fn numeric(v: &GValue, f64_as_f32: bool) -> Result<Option<Array>> {
    macro_rules! list {
        ($v:expr) => {
            Array::from_slice($v, &[$v.len()])?
        };
    }
    Ok(Some(match v {
        GValue::U8(x) => Array::scalar(*x)?,
        GValue::I8(x) => Array::scalar(*x)?,
        GValue::U16(x) => Array::scalar(*x)?,
        GValue::I16(x) => Array::scalar(*x)?,
        GValue::U32(x) => Array::scalar(*x)?,
        GValue::I32(x) => Array::scalar(*x)?,
        GValue::U64(x) => Array::scalar(*x)?,
        GValue::I64(x) => Array::scalar(*x)?,
        GValue::F32(x) => Array::scalar(*x)?,
        GValue::F64(x) if f64_as_f32 => Array::scalar(*x as f32)?,
        GValue::F64(x) => Array::scalar(*x)?,
        GValue::Bool(x) => Array::scalar(*x)?,
        GValue::String(_) => return Ok(None),
        GValue::Array(a) => match a {
            GArray::U8(v) => list!(v),
            GArray::I8(v) => list!(v),
            GArray::U16(v) => list!(v),
            GArray::I16(v) => list!(v),
            GArray::U32(v) => list!(v),
            GArray::I32(v) => list!(v),
            GArray::U64(v) => list!(v),
            GArray::I64(v) => list!(v),
            GArray::F32(v) => list!(v),
            GArray::F64(v) if f64_as_f32 => {
                let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                list!(&f)
            }
            GArray::F64(v) => list!(v),
            GArray::Bool(v) => list!(v),
            GArray::String(_) | GArray::Array(_) => return Ok(None),
        },
    }))
}

/// A metadata value as a GGUF object holds it. Lists of lists, which MLX refuses to load,
/// become their JSON text rather than failing the whole file.
fn meta(v: &GValue, f64_as_f32: bool) -> Result<Meta> {
    if let Some(a) = numeric(v, f64_as_f32)? {
        return Ok(Meta::Array(a));
    }
    Ok(match v {
        GValue::String(s) => Meta::String(cstring(s)),
        GValue::Array(GArray::String(list)) => Meta::Strings(list.iter().map(|s| cstring(s)).collect()),
        GValue::Array(a) => Meta::String(cstring(&json(a))),
        _ => return Err(Error::runtime("load_gguf", "unexpected metadata value")),
    })
}

/// A GGUF object holding `metadata` (and no tensors).
fn with_metadata(metadata: &[(String, GValue)], f64_as_f32: bool) -> Result<Gguf> {
    let mut g = Gguf::default();
    for (k, v) in metadata {
        g.metadata.insert(cstring(k), meta(v, f64_as_f32)?);
    }
    Ok(g)
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

/// `mlx_arm_load_gguf(tensors, types, shapes, metadata, file, s)`: every GGUF tensor exactly
/// as stored, no conversion (a Q4_0 model stays 4.5 bits/weight):
/// - `tensors[name]`: a uint8 array `(rows, row_bytes)` viewing the GGML blocks in the file
///   (rows = product of all but the last dimension);
/// - `types[name]`: the GGML type name (`"q4_0"`, `"f32"`, ...);
/// - `shapes[name]`: the logical shape (int64, elements);
/// - `metadata`: an `mlx_io_gguf` holding the metadata with its GGUF types (float64 kept).
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
    metadata: *mut mlx_io_gguf,
    file: *const c_char,
    s: mlx_stream,
) -> c_int {
    status("mlx_arm_load_gguf", || {
        let file = arg::string(file, "file")?;
        arg::stream(s)?;
        if tensors.is_null() || types.is_null() || shapes.is_null() || metadata.is_null() {
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
        let md = with_metadata(&g.metadata, false)?;
        handle::assign(tensors, t)?;
        handle::assign(types, ty)?;
        handle::assign(shapes, sh)?;
        handle::assign(metadata, md)
    })
}

/// `mlx_load_gguf(gguf, file, s)`: tensors and metadata as MLX loads them (Q4_0/Q4_1/Q8_0
/// become affine group-32 `weight`/`scales`/`biases`, other block types float16; float64
/// metadata float32; lists of strings stay lists).
///
/// # Safety
/// `gguf` valid; `file` NUL-terminated; `s` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_load_gguf(gguf: *mut mlx_io_gguf, file: *const c_char, s: mlx_stream) -> c_int {
    status("mlx_load_gguf", || {
        let file = arg::string(file, "file")?;
        arg::stream(s)?;
        let loaded = in_file(files::load(file, Some("gguf")), file)?;
        let mut g = match &loaded.metadata {
            files::Metadata::Gguf(meta) => with_metadata(meta, true)?,
            _ => Gguf::default(),
        };
        for (k, a) in loaded.arrays {
            g.arrays.insert(cstring(&k), a);
        }
        handle::assign(gguf, g)
    })
}

/// Text of a C string key or value (UTF-8 required: GGUF strings are UTF-8).
fn text(s: &CString, what: &str) -> Result<String> {
    s.to_str().map(String::from).map_err(|_| Error::invalid("save_gguf", format!("{what} must be UTF-8")))
}

/// `mlx_save_gguf(file, gguf)`: `mx.save_gguf` of the object's tensors and metadata.
///
/// # Safety
/// `file` NUL-terminated; `gguf` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_save_gguf(file: *const c_char, gguf: mlx_io_gguf) -> c_int {
    status("mlx_save_gguf", || {
        let file = arg::string(file, "file")?;
        let g = handle::get(gguf)?;
        let arrays: Vec<(String, &Array)> = g.arrays.iter().map(|(k, a)| Ok((text(k, "tensor names")?, a))).collect::<Result<_>>()?;
        let mut meta: Vec<(String, GValue)> = Vec::with_capacity(g.metadata.len());
        for (k, m) in &g.metadata {
            let key = text(k, "metadata keys")?;
            let v = match m {
                Meta::Array(a) => gguf_value(&key, a)?,
                Meta::String(s) => GValue::String(text(s, "metadata strings")?),
                Meta::Strings(v) => GValue::Array(GArray::String(v.iter().map(|s| text(s, "metadata strings")).collect::<Result<_>>()?)),
            };
            meta.push((key, v));
        }
        let a: Vec<(&str, &Array)> = arrays.iter().map(|(k, a)| (k.as_str(), *a)).collect();
        let m: Vec<(&str, GValue)> = meta.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        in_file(files::save_gguf(file, &a, &m), file)
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
    if a.size() == 0 {
        return Err(Error::invalid(OP, format!("metadata array '{key}' is empty (GGUF cannot store empty arrays)")));
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
