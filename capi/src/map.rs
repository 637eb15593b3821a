//! `mlx_map_string_to_array` and its iterator (mlx-c `map.h`): named arrays, as the
//! safetensors/gguf loaders return them. Keys iterate in sorted order.

use crate::arg;
use crate::error::{guard, status};
use crate::handle;
use crate::types::*;
use core::ffi::{c_char, c_int, c_void};
use mlx_arm_core::{Array, Error};
use crate::prelude::*;
use alloc::collections::BTreeMap;

/// The map state.
pub type ArrayMap = BTreeMap<CString, Array>;

/// `mlx_map_string_to_array_new`: a new map with no entries.
#[no_mangle]
pub extern "C" fn mlx_map_string_to_array_new() -> mlx_map_string_to_array {
    handle::new(ArrayMap::new())
}

/// `mlx_map_string_to_array_set`: `*map` becomes a copy of `src`.
///
/// # Safety
/// `map` must point to a valid handle; `src` must be live.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_array_set(map: *mut mlx_map_string_to_array, src: mlx_map_string_to_array) -> c_int {
    status("mlx_map_string_to_array_set", || {
        let m = handle::get(src)?.clone();
        handle::assign(map, m)
    })
}

/// `mlx_map_string_to_array_free`.
///
/// # Safety
/// `map` must be empty or live, freed once (and its iterators no longer used).
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_array_free(map: mlx_map_string_to_array) -> c_int {
    handle::free(map);
    0
}

/// `mlx_map_string_to_array_insert`: sets `key` to `value` (replacing an existing entry).
///
/// # Safety
/// `map` and `value` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_array_insert(map: mlx_map_string_to_array, key: *const c_char, value: mlx_array) -> c_int {
    status("mlx_map_string_to_array_insert", || {
        let k = crate::string::cstring(arg::string(key, "key")?);
        let v = arg::array(value, "value")?;
        handle::get_mut(map)?.insert(k, v);
        Ok(())
    })
}

/// `mlx_map_string_to_array_get`: `*value` becomes the array at `key` (an error if absent).
///
/// # Safety
/// `value` points to a valid handle; `map` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_array_get(value: *mut mlx_array, map: mlx_map_string_to_array, key: *const c_char) -> c_int {
    status("mlx_map_string_to_array_get", || {
        let k = arg::string(key, "key")?;
        let a = handle::get(map)?
            .get(crate::string::cstring(k).as_c_str())
            .cloned()
            .ok_or_else(|| Error::index("mlx_map_string_to_array_get", format!("key '{k}' is not in the map")))?;
        arg::set_array(value, a)
    })
}

/// Iterator state: the last key returned (the next entry is the first one after it).
struct MapIter {
    last: Option<CString>,
}

/// `mlx_map_string_to_array_iterator_new`: an iterator over `map` (which must outlive it).
///
/// # Safety
/// `map` must be live.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_array_iterator_new(map: mlx_map_string_to_array) -> mlx_map_string_to_array_iterator {
    let empty = mlx_map_string_to_array_iterator { ctx: core::ptr::null_mut(), map_ctx: core::ptr::null_mut() };
    guard("mlx_map_string_to_array_iterator_new", empty, || {
        handle::get(map)?;
        let it = Box::into_raw(Box::new(MapIter { last: None })) as *mut c_void;
        Ok(mlx_map_string_to_array_iterator { ctx: it, map_ctx: map.ctx })
    })
}

/// `mlx_map_string_to_array_iterator_free`.
///
/// # Safety
/// `it` must come from `_iterator_new`, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_array_iterator_free(it: mlx_map_string_to_array_iterator) -> c_int {
    if !it.ctx.is_null() {
        drop(Box::from_raw(it.ctx as *mut MapIter));
    }
    0
}

/// `mlx_map_string_to_array_iterator_next`: the next entry; returns 2 at the end (as mlx-c),
/// 1 on error. `*key` stays valid while the map entry exists.
///
/// # Safety
/// `key` writable, `value` a valid handle pointer, `it` live over a live map.
#[no_mangle]
pub unsafe extern "C" fn mlx_map_string_to_array_iterator_next(key: *mut *const c_char, value: *mut mlx_array, it: mlx_map_string_to_array_iterator) -> c_int {
    guard("mlx_map_string_to_array_iterator_next", 1, || {
        if it.ctx.is_null() || it.map_ctx.is_null() {
            return Err(Error::invalid("mlx_map_string_to_array_iterator", "expected a non-empty iterator"));
        }
        let state = &mut *(it.ctx as *mut MapIter);
        let map = &*(it.map_ctx as *const ArrayMap);
        use core::ops::Bound;
        let next = match &state.last {
            None => map.iter().next(),
            Some(last) => map.range::<CString, _>((Bound::Excluded(last), Bound::Unbounded)).next(),
        };
        let Some((k, v)) = next else { return Ok(2) };
        arg::out(key, k.as_ptr(), "key")?;
        arg::set_array(value, v.clone())?;
        state.last = Some(k.clone());
        Ok(0)
    })
}
