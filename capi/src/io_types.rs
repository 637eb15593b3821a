//! mlx-c's `io_types.h`: custom readers and writers (a table of callbacks over the caller's
//! descriptor) and the GGUF object (`mlx_io_gguf`: tensors plus typed metadata).
//!
//! These are plain memory objects, so they exist in the bare-metal build too: firmware can
//! load an `.npy` or safetensors image through a reader over flash or a network buffer.

use crate::arg;
use crate::error::{guard, status};
use crate::handle;
use crate::prelude::*;
use crate::string::cstring;
use crate::types::*;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use core::ffi::{c_char, c_int, c_void, CStr};
use mlx_arm_core::buffer::Buffer;
use mlx_arm_core::{Array, Error, Result};

/// mlx-c's `mlx_io_vtable`: the callbacks a custom reader or writer supplies. A reader needs
/// `tell`, `seek` and `read`; a writer needs `write`; `is_open`, `good`, `label` and `free`
/// are optional (NULL).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mlx_io_vtable {
    /// Whether the descriptor is open.
    pub is_open: Option<unsafe extern "C" fn(*mut c_void) -> bool>,
    /// Whether the last operation succeeded.
    pub good: Option<unsafe extern "C" fn(*mut c_void) -> bool>,
    /// The current position.
    pub tell: Option<unsafe extern "C" fn(*mut c_void) -> usize>,
    /// Moves the position (`whence` as C's SEEK_SET/SEEK_CUR/SEEK_END).
    pub seek: Option<unsafe extern "C" fn(*mut c_void, i64, c_int)>,
    /// Reads `n` bytes at the position.
    pub read: Option<unsafe extern "C" fn(*mut c_void, *mut c_char, usize)>,
    /// Reads `n` bytes at an offset.
    pub read_at_offset: Option<unsafe extern "C" fn(*mut c_void, *mut c_char, usize, usize)>,
    /// Writes `n` bytes at the position.
    pub write: Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize)>,
    /// A description for messages.
    pub label: Option<unsafe extern "C" fn(*mut c_void) -> *const c_char>,
    /// Releases the descriptor.
    pub free: Option<unsafe extern "C" fn(*mut c_void)>,
}

const SEEK_SET: c_int = 0;
const SEEK_END: c_int = 2;
/// Bytes per `read`/`write` callback: bounded so a callback never sees a huge request.
const CHUNK: usize = 1 << 20;

/// The state behind `mlx_io_reader` and `mlx_io_writer`: the caller's descriptor and its
/// callbacks. Dropping it calls `free(desc)`: data is read eagerly, so no array keeps the
/// descriptor alive after the handle is freed.
pub struct Stream {
    desc: *mut c_void,
    vt: mlx_io_vtable,
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(f) = self.vt.free {
            // SAFETY: the caller's contract for mlx_io_*_new: `free` accepts `desc` once.
            unsafe { f(self.desc) }
        }
    }
}

impl Stream {
    /// The caller's label, or a generic one.
    fn label(&self) -> String {
        match self.vt.label {
            // SAFETY: `label` returns NULL or a NUL-terminated string valid for this call.
            Some(f) => unsafe {
                let p = f(self.desc);
                if p.is_null() {
                    String::from("<custom stream>")
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            },
            None => String::from("<custom stream>"),
        }
    }

    fn need<T>(&self, f: Option<T>, what: &str, op: &'static str) -> Result<T> {
        f.ok_or_else(|| Error::invalid(op, format!("the stream '{}' has no {what} callback", self.label())))
    }

    /// After a callback: fails when the stream reports it is not open or not good.
    unsafe fn check(&self, op: &'static str, doing: &str) -> Result<()> {
        let open = self.vt.is_open.map_or(true, |f| f(self.desc));
        let good = self.vt.good.map_or(true, |f| f(self.desc));
        if open && good {
            Ok(())
        } else {
            Err(Error::runtime(op, format!("{doing} failed on stream '{}'", self.label())))
        }
    }

    /// Everything from the current position to the end, in one allocator buffer (fallible,
    /// within the memory limit), for core's loaders.
    unsafe fn read_rest(&self, op: &'static str) -> Result<Arc<Buffer>> {
        let tell = self.need(self.vt.tell, "tell", op)?;
        let seek = self.need(self.vt.seek, "seek", op)?;
        let read = self.need(self.vt.read, "read", op)?;
        self.check(op, "opening")?;
        let start = tell(self.desc);
        seek(self.desc, 0, SEEK_END);
        let end = tell(self.desc);
        self.check(op, "seeking to the end")?;
        let len = end
            .checked_sub(start)
            .ok_or_else(|| Error::runtime(op, format!("stream '{}' ends ({end}) before its position ({start})", self.label())))?;
        let back = i64::try_from(start).map_err(|_| Error::runtime(op, "stream position does not fit in 64 bits"))?;
        seek(self.desc, back, SEEK_SET);
        self.check(op, "seeking back")?;
        let buf = Buffer::new(len, op)?;
        let mut done = 0;
        while done < len {
            let n = CHUNK.min(len - done);
            // SAFETY: `buf` is fresh and ours alone; [done, done + n) lies inside it.
            read(self.desc, buf.as_mut_ptr().add(done) as *mut c_char, n);
            self.check(op, "reading")?;
            done += n;
        }
        Ok(buf)
    }

    /// Writes all of `bytes`.
    unsafe fn write_all(&self, op: &'static str, bytes: &[u8]) -> Result<()> {
        let write = self.need(self.vt.write, "write", op)?;
        self.check(op, "opening")?;
        for chunk in bytes.chunks(CHUNK) {
            write(self.desc, chunk.as_ptr() as *const c_char, chunk.len());
            self.check(op, "writing")?;
        }
        Ok(())
    }
}

/// One GGUF metadata value as MLX holds it (`GGUFMetaData`).
#[derive(Clone)]
pub enum Meta {
    /// Numbers: 0-d arrays; numeric lists: 1-D arrays.
    Array(Array),
    /// A string.
    String(CString),
    /// A list of strings.
    Strings(Vec<CString>),
}

/// The state behind `mlx_io_gguf`: named tensors and metadata (keys sorted, like the maps).
#[derive(Clone, Default)]
pub struct Gguf {
    /// Tensors by name.
    pub arrays: BTreeMap<CString, Array>,
    /// Metadata by key.
    pub metadata: BTreeMap<CString, Meta>,
}

// ---- readers and writers ------------------------------------------------------------------

macro_rules! stream_api {
    ($h:ident, $new:ident, $descriptor:ident, $tostring:ident, $free:ident) => {
        #[doc = concat!("`", stringify!($new), "(desc, vtable)`: a stream over the caller's descriptor.")]
        ///
        /// # Safety
        /// The callbacks must accept `desc` until the handle is freed; `free` (if any) is called
        /// once, when it is.
        #[no_mangle]
        pub unsafe extern "C" fn $new(desc: *mut c_void, vtable: mlx_io_vtable) -> $h {
            handle::new(Stream { desc, vt: vtable })
        }

        #[doc = concat!("`", stringify!($descriptor), "`: the caller's descriptor.")]
        ///
        /// # Safety
        /// `desc_` valid; the handle live.
        #[no_mangle]
        pub unsafe extern "C" fn $descriptor(desc_: *mut *mut c_void, io: $h) -> c_int {
            status(stringify!($descriptor), || arg::out(desc_, handle::get(io)?.desc, "desc_"))
        }

        #[doc = concat!("`", stringify!($tostring), "`: the stream's label.")]
        ///
        /// # Safety
        /// `str_` valid; the handle live.
        #[no_mangle]
        pub unsafe extern "C" fn $tostring(str_: *mut mlx_string, io: $h) -> c_int {
            status(stringify!($tostring), || handle::assign(str_, cstring(&handle::get(io)?.label())))
        }

        #[doc = concat!("`", stringify!($free), "`: frees the handle and calls the vtable's `free`.")]
        ///
        /// # Safety
        /// The handle empty or live, freed once.
        #[no_mangle]
        pub unsafe extern "C" fn $free(io: $h) -> c_int {
            guard(stringify!($free), 1, || {
                handle::free(io);
                Ok(0)
            })
        }
    };
}

stream_api!(
    mlx_io_reader, mlx_io_reader_new, mlx_io_reader_descriptor, mlx_io_reader_tostring, mlx_io_reader_free
);
stream_api!(
    mlx_io_writer, mlx_io_writer_new, mlx_io_writer_descriptor, mlx_io_writer_tostring, mlx_io_writer_free
);

/// Names the stream in a load/save error.
fn on_stream<T>(r: Result<T>, s: &Stream) -> Result<T> {
    r.map_err(|mut e| {
        e.msg = format!("{} (stream '{}')", e.msg, s.label());
        e
    })
}

/// `mlx_load_reader(res, in_stream, s)`: one `.npy` array read from a custom stream (from its
/// current position to its end).
///
/// # Safety
/// `res` valid; `in_stream` live; `s` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_load_reader(res: *mut mlx_array, in_stream: mlx_io_reader, s: mlx_stream) -> c_int {
    status("mlx_load_reader", || {
        arg::stream(s)?;
        let r = handle::get(in_stream)?;
        let buf = r.read_rest("load")?;
        let mut loaded = on_stream(mlx_arm_core::io::arrays::load_npy_buffer(buf), r)?;
        let a = loaded.arrays.pop().map(|(_, a)| a).ok_or_else(|| Error::runtime("load", "no array in the stream"))?;
        arg::set_array(res, a)
    })
}

/// `mlx_load_safetensors_reader(res_0, res_1, in_stream, s)`: arrays and `__metadata__`.
///
/// # Safety
/// Result pointers valid; `in_stream` live; `s` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_load_safetensors_reader(
    res_0: *mut mlx_map_string_to_array,
    res_1: *mut mlx_map_string_to_string,
    in_stream: mlx_io_reader,
    s: mlx_stream,
) -> c_int {
    status("mlx_load_safetensors_reader", || {
        arg::stream(s)?;
        if res_0.is_null() || res_1.is_null() {
            return Err(Error::invalid("mlx_load_safetensors_reader", "a result pointer is NULL"));
        }
        let r = handle::get(in_stream)?;
        let buf = r.read_rest("load_safetensors")?;
        let loaded = on_stream(mlx_arm_core::io::arrays::load_safetensors_buffer(buf), r)?;
        let (arrays, meta) = crate::io_maps::safetensors_maps(loaded);
        handle::assign(res_0, arrays)?;
        handle::assign(res_1, meta)
    })
}

/// `mlx_save_writer(out_stream, a)`: `a` as `.npy` bytes through a custom stream.
///
/// # Safety
/// `out_stream` live; `a` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_save_writer(out_stream: mlx_io_writer, a: mlx_array) -> c_int {
    status("mlx_save_writer", || {
        let w = handle::get(out_stream)?;
        let bytes = mlx_arm_core::io::arrays::npy_bytes(&arg::array(a, "a")?)?;
        on_stream(w.write_all("save", &bytes), w)
    })
}

/// `mlx_save_safetensors_writer(in_stream, param, metadata)`: safetensors bytes through a
/// custom stream (mlx-c names the writer `in_stream` here); `metadata` may be empty.
///
/// # Safety
/// `in_stream` live; `param` live; `metadata` empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_save_safetensors_writer(
    in_stream: mlx_io_writer,
    param: mlx_map_string_to_array,
    metadata: mlx_map_string_to_string,
) -> c_int {
    status("mlx_save_safetensors_writer", || {
        let w = handle::get(in_stream)?;
        let arrays = crate::io_maps::named_arrays(param)?;
        let meta = crate::io_maps::named_strings(metadata)?;
        let a: Vec<(&str, &Array)> = arrays.iter().map(|(k, a)| (k.as_str(), a)).collect();
        let m: Vec<(&str, &str)> = meta.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let bytes = mlx_arm_core::io::arrays::safetensors_bytes(&a, &m)?;
        on_stream(w.write_all("save_safetensors", &bytes), w)
    })
}

// ---- the GGUF object --------------------------------------------------------------------

/// `mlx_io_gguf_new`: an object with no tensors and no metadata (not the empty handle).
#[no_mangle]
pub extern "C" fn mlx_io_gguf_new() -> mlx_io_gguf {
    handle::new(Gguf::default())
}

/// `mlx_io_gguf_free`.
///
/// # Safety
/// `io` empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_free(io: mlx_io_gguf) -> c_int {
    handle::free(io);
    0
}

/// `mlx_io_gguf_get_keys`: the tensor names, sorted.
///
/// # Safety
/// `keys` valid; `io` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_get_keys(keys: *mut mlx_vector_string, io: mlx_io_gguf) -> c_int {
    status("mlx_io_gguf_get_keys", || handle::assign(keys, handle::get(io)?.arrays.keys().cloned().collect()))
}

/// `mlx_arm_io_gguf_get_metadata_keys`: the metadata keys, sorted (mlx-c has no way to list
/// them; `mx.load(..., return_metadata=True)` needs one).
///
/// # Safety
/// `keys` valid; `io` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_io_gguf_get_metadata_keys(keys: *mut mlx_vector_string, io: mlx_io_gguf) -> c_int {
    status("mlx_arm_io_gguf_get_metadata_keys", || handle::assign(keys, handle::get(io)?.metadata.keys().cloned().collect()))
}

/// The `key` argument as an owned C string.
///
/// # Safety
/// `key` NULL (an error) or NUL-terminated.
unsafe fn key_of(key: *const c_char) -> Result<CString> {
    Ok(cstring(arg::string(key, "key")?))
}

fn missing(op: &'static str, what: &str, key: &CStr) -> Error {
    Error::invalid(op, format!("no {what} named '{}'", key.to_string_lossy()))
}

/// `mlx_io_gguf_get_array(arr, io, key)`: a tensor (an error if absent).
///
/// # Safety
/// `arr` valid; `io` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_get_array(arr: *mut mlx_array, io: mlx_io_gguf, key: *const c_char) -> c_int {
    const OP: &str = "mlx_io_gguf_get_array";
    status(OP, || {
        let k = key_of(key)?;
        let a = handle::get(io)?.arrays.get(&k).cloned().ok_or_else(|| missing(OP, "tensor", &k))?;
        arg::set_array(arr, a)
    })
}

/// One metadata entry of the wanted kind, or an error naming what is there instead.
unsafe fn meta_entry<'a>(io: mlx_io_gguf, key: *const c_char, op: &'static str) -> Result<(&'a Meta, CString)> {
    let k = key_of(key)?;
    let m = handle::get(io)?.metadata.get(&k).ok_or_else(|| missing(op, "metadata", &k))?;
    Ok((m, k))
}

fn wrong_kind(op: &'static str, key: &CStr, want: &str) -> Error {
    Error::invalid(op, format!("metadata '{}' is not {want}", key.to_string_lossy()))
}

/// `mlx_io_gguf_get_metadata_array`: a numeric metadata value (0-d or 1-D).
///
/// # Safety
/// `arr` valid; `io` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_get_metadata_array(arr: *mut mlx_array, io: mlx_io_gguf, key: *const c_char) -> c_int {
    const OP: &str = "mlx_io_gguf_get_metadata_array";
    status(OP, || match meta_entry(io, key, OP)? {
        (Meta::Array(a), _) => arg::set_array(arr, a.clone()),
        (_, k) => Err(wrong_kind(OP, &k, "an array")),
    })
}

/// `mlx_io_gguf_get_metadata_string`: a string metadata value.
///
/// # Safety
/// `str_` valid; `io` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_get_metadata_string(str_: *mut mlx_string, io: mlx_io_gguf, key: *const c_char) -> c_int {
    const OP: &str = "mlx_io_gguf_get_metadata_string";
    status(OP, || match meta_entry(io, key, OP)? {
        (Meta::String(s), _) => handle::assign(str_, s.clone()),
        (_, k) => Err(wrong_kind(OP, &k, "a string")),
    })
}

/// `mlx_io_gguf_get_metadata_vector_string`: a list-of-strings metadata value.
///
/// # Safety
/// `vstr` valid; `io` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_get_metadata_vector_string(vstr: *mut mlx_vector_string, io: mlx_io_gguf, key: *const c_char) -> c_int {
    const OP: &str = "mlx_io_gguf_get_metadata_vector_string";
    status(OP, || match meta_entry(io, key, OP)? {
        (Meta::Strings(v), _) => handle::assign(vstr, v.clone()),
        (_, k) => Err(wrong_kind(OP, &k, "a list of strings")),
    })
}

macro_rules! has_meta {
    ($name:ident, $pat:pat, $doc:literal) => {
        #[doc = concat!("`", stringify!($name), "`: whether `key` holds ", $doc, ".")]
        ///
        /// # Safety
        /// `flag` valid; `io` live; `key` NUL-terminated.
        #[no_mangle]
        pub unsafe extern "C" fn $name(flag: *mut bool, io: mlx_io_gguf, key: *const c_char) -> c_int {
            status(stringify!($name), || {
                let k = key_of(key)?;
                let has = matches!(handle::get(io)?.metadata.get(&k), Some($pat));
                arg::out(flag, has, "flag")
            })
        }
    };
}

has_meta!(
    mlx_io_gguf_has_metadata_array, Meta::Array(_), "a numeric array"
);
has_meta!(
    mlx_io_gguf_has_metadata_string, Meta::String(_), "a string"
);
has_meta!(
    mlx_io_gguf_has_metadata_vector_string, Meta::Strings(_), "a list of strings"
);

/// `mlx_io_gguf_set_array(io, key, arr)`: adds or replaces a tensor.
///
/// # Safety
/// `io` live; `key` NUL-terminated; `arr` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_set_array(io: mlx_io_gguf, key: *const c_char, arr: mlx_array) -> c_int {
    status("mlx_io_gguf_set_array", || {
        let (k, a) = (key_of(key)?, arg::array(arr, "arr")?);
        handle::get_mut(io)?.arrays.insert(k, a);
        Ok(())
    })
}

/// Stores one metadata value (checked by the caller).
unsafe fn set_meta(io: mlx_io_gguf, key: *const c_char, m: Meta) -> Result<()> {
    let k = key_of(key)?;
    handle::get_mut(io)?.metadata.insert(k, m);
    Ok(())
}

/// `mlx_io_gguf_set_metadata_array(io, key, marr)`: a numeric value (0-d or 1-D; checked
/// when saved, as MLX does).
///
/// # Safety
/// `io` live; `key` NUL-terminated; `marr` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_set_metadata_array(io: mlx_io_gguf, key: *const c_char, marr: mlx_array) -> c_int {
    status("mlx_io_gguf_set_metadata_array", || set_meta(io, key, Meta::Array(arg::array(marr, "marr")?)))
}

/// `mlx_io_gguf_set_metadata_string(io, key, mstr)`.
///
/// # Safety
/// `io` live; `key` and `mstr` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_set_metadata_string(io: mlx_io_gguf, key: *const c_char, mstr: *const c_char) -> c_int {
    status("mlx_io_gguf_set_metadata_string", || set_meta(io, key, Meta::String(cstring(arg::string(mstr, "mstr")?))))
}

/// `mlx_io_gguf_set_metadata_vector_string(io, key, mvstr)`.
///
/// # Safety
/// `io` live; `key` NUL-terminated; `mvstr` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_io_gguf_set_metadata_vector_string(io: mlx_io_gguf, key: *const c_char, mvstr: mlx_vector_string) -> c_int {
    status("mlx_io_gguf_set_metadata_vector_string", || set_meta(io, key, Meta::Strings(handle::get(mvstr)?.clone())))
}
