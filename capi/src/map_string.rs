//! `mlx_map_string_to_string` and its iterator (mlx-c `map.h`): safetensors metadata and the
//! string metadata of GGUF files. Keys iterate in sorted order, as `mlx_map_string_to_array`.

use crate::arg;
use crate::error::{guard, status};
use crate::handle;
use crate::prelude::*;
use crate::types::*;
use alloc::collections::BTreeMap;
use core::ffi::{c_char, c_int, c_void};
use mlx_arm_core::Error;

/// The map state.
pub type StringMap = BTreeMap<CString, CString>;

/// `mlx_map_string_to_string_new`: a new map with no entries.
#[no_mangle]
pub extern "C" fn mlx_map_string_to_string_new() -> mlx_map_string_to_string {
    handle::new(StringMap::new())
}

/// `mlx_map_string_to_string_set`: `*map` becomes a copy of `src`.
///
/// # Safety
/// `map` must point to a valid handle; `src` must be live.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_string_set(map: *mut mlx_map_string_to_string, src: mlx_map_string_to_string) -> c_int {
    status("mlx_map_string_to_string_set", || {
        let m = handle::get(src)?.clone();
        handle::assign(map, m)
    })
}

/// `mlx_map_string_to_string_free`.
///
/// # Safety
/// `map` must be empty or live, freed once (and its iterators no longer used).
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_string_free(map: mlx_map_string_to_string) -> c_int {
    handle::free(map);
    0
}

/// `mlx_map_string_to_string_insert`: sets `key` to a copy of `value`.
///
/// # Safety
/// `map` live; `key` and `value` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_string_insert(map: mlx_map_string_to_string, key: *const c_char, value: *const c_char) -> c_int {
    status("mlx_map_string_to_string_insert", || {
        let k = crate::string::cstring(arg::string(key, "key")?);
        let v = crate::string::cstring(arg::string(value, "value")?);
        handle::get_mut(map)?.insert(k, v);
        Ok(())
    })
}

/// `mlx_map_string_to_string_get`: `*value` points at the string stored for `key` (valid
/// while that entry exists); an error if absent.
///
/// # Safety
/// `value` writable; `map` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_string_get(value: *mut *const c_char, map: mlx_map_string_to_string, key: *const c_char) -> c_int {
    status("mlx_map_string_to_string_get", || {
        let k = arg::string(key, "key")?;
        let v = handle::get(map)?
            .get(crate::string::cstring(k).as_c_str())
            .ok_or_else(|| Error::index("mlx_map_string_to_string_get", format!("key '{k}' is not in the map")))?;
        arg::out(value, v.as_ptr(), "value")
    })
}

/// Iterator state: the last key returned.
struct MapIter {
    last: Option<CString>,
}

/// `mlx_map_string_to_string_iterator_new`: an iterator over `map` (which must outlive it).
///
/// # Safety
/// `map` must be live.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_string_iterator_new(map: mlx_map_string_to_string) -> mlx_map_string_to_string_iterator {
    let empty = mlx_map_string_to_string_iterator { ctx: core::ptr::null_mut(), map_ctx: core::ptr::null_mut() };
    guard("mlx_map_string_to_string_iterator_new", empty, || {
        handle::get(map)?;
        let it = Box::into_raw(Box::new(MapIter { last: None })) as *mut c_void;
        Ok(mlx_map_string_to_string_iterator { ctx: it, map_ctx: map.ctx })
    })
}

/// `mlx_map_string_to_string_iterator_free`.
///
/// # Safety
/// `it` must come from `_iterator_new`, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_string_iterator_free(it: mlx_map_string_to_string_iterator) -> c_int {
    if !it.ctx.is_null() {
        drop(Box::from_raw(it.ctx as *mut MapIter));
    }
    0
}

/// `mlx_map_string_to_string_iterator_next`: the next entry; returns 2 at the end (as mlx-c),
/// 1 on error. `*key` and `*value` stay valid while the entry exists.
///
/// # Safety
/// `key`, `value` writable; `it` live over a live map.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_string_iterator_next(key: *mut *const c_char, value: *mut *const c_char, it: mlx_map_string_to_string_iterator) -> c_int {
    guard("mlx_map_string_to_string_iterator_next", 1, || {
        if it.ctx.is_null() || it.map_ctx.is_null() {
            return Err(Error::invalid("mlx_map_string_to_string_iterator", "expected a non-empty iterator"));
        }
        let state = &mut *(it.ctx as *mut MapIter);
        let map = &*(it.map_ctx as *const StringMap);
        use core::ops::Bound;
        let next = match &state.last {
            None => map.iter().next(),
            Some(last) => map.range::<CString, _>((Bound::Excluded(last), Bound::Unbounded)).next(),
        };
        let Some((k, v)) = next else { return Ok(2) };
        if key.is_null() || value.is_null() {
            return Err(Error::invalid("mlx_map_string_to_string_iterator_next", "the key or value pointer is NULL"));
        }
        key.write(k.as_ptr());
        value.write(v.as_ptr());
        state.last = Some(k.clone());
        Ok(0)
    })
}
