//! Vectors (mlx-c `vector.h`): `mlx_vector_array`, `mlx_vector_vector_array`, `mlx_vector_int`,
//! `mlx_vector_string`. A vector keeps its elements alive until it is freed; `*_get` hands out a
//! new reference (arrays), a copy (vectors of arrays: a new vector sharing the arrays), a value
//! (ints) or a pointer owned by the vector (strings).

use crate::arg;
use crate::error::{guard, status};
use crate::handle::{self, Handle};
use crate::types::*;
use core::ffi::{c_char, c_int};
use mlx_arm_core::{Error, Result};
use crate::prelude::*;
use core::ffi::CStr;

/// How one element type crosses the boundary.
trait Elem: Sized {
    /// The C element type.
    type C: Copy;
    /// The vector handle.
    type V: Handle<Inner = Vec<Self>>;
    /// Converts an incoming element.
    unsafe fn from_c(c: Self::C) -> Result<Self>;
}

impl Elem for mlx_arm_core::Array {
    type C = mlx_array;
    type V = mlx_vector_array;
    unsafe fn from_c(c: mlx_array) -> Result<Self> {
        arg::array(c, "val")
    }
}

impl Elem for Vec<mlx_arm_core::Array> {
    type C = mlx_vector_array;
    type V = mlx_vector_vector_array;
    unsafe fn from_c(c: mlx_vector_array) -> Result<Self> {
        Ok(handle::get(c)?.clone())
    }
}

impl Elem for c_int {
    type C = c_int;
    type V = mlx_vector_int;
    unsafe fn from_c(c: c_int) -> Result<Self> {
        Ok(c)
    }
}

impl Elem for CString {
    type C = *const c_char;
    type V = mlx_vector_string;
    unsafe fn from_c(c: *const c_char) -> Result<Self> {
        arg::string(c, "val")?;
        Ok(CStr::from_ptr(c).to_owned())
    }
}

unsafe fn collect<E: Elem>(data: *const E::C, size: usize) -> Result<Vec<E>> {
    arg::slice(data, size, "data")?.iter().map(|&c| E::from_c(c)).collect()
}

macro_rules! vector_api {
    ($E:ty, $V:ident, $C:ty, $data_ptr:ty,
     $new:ident, $set:ident, $free:ident, $new_data:ident, $new_value:ident, $set_data:ident,
     $set_value:ident, $append_data:ident, $append_value:ident, $size:ident) => {
        #[doc = concat!("`", stringify!($new), "`: a new vector with no elements (as in mlx-c, not the empty handle).")]
        #[no_mangle]
        pub extern "C" fn $new() -> $V {
            handle::new(Vec::new())
        }
        #[doc = concat!("`", stringify!($set), "`: `*vec` becomes a copy of `src`.")]
        ///
        /// # Safety
        /// `vec` must point to a valid handle; `src` must be live.
        #[no_mangle]
        pub unsafe extern "C" fn $set(vec: *mut $V, src: $V) -> c_int {
            status(stringify!($set), || { let v = handle::get(src)?.clone(); handle::assign(vec, v) })
        }
        #[doc = concat!("`", stringify!($free), "`.")]
        ///
        /// # Safety
        /// `vec` must be empty or live, freed once.
        #[no_mangle]
        pub unsafe extern "C" fn $free(vec: $V) -> c_int {
            handle::free(vec);
            0
        }
        #[doc = concat!("`", stringify!($new_data), "`: a vector of `size` elements.")]
        ///
        /// # Safety
        /// `data` must hold `size` elements.
        #[no_mangle]
        pub unsafe extern "C" fn $new_data(data: $data_ptr, size: usize) -> $V {
            guard(stringify!($new_data), handle::empty(), || Ok(handle::new(collect::<$E>(data as *const $C, size)?)))
        }
        #[doc = concat!("`", stringify!($new_value), "`: a vector of one element.")]
        ///
        /// # Safety
        /// `val` must be valid.
        #[no_mangle]
        pub unsafe extern "C" fn $new_value(val: $C) -> $V {
            guard(stringify!($new_value), handle::empty(), || Ok(handle::new(vec![<$E as Elem>::from_c(val)?])))
        }
        #[doc = concat!("`", stringify!($set_data), "`.")]
        ///
        /// # Safety
        /// `vec` must point to a valid handle; `data` must hold `size` elements.
        #[no_mangle]
        pub unsafe extern "C" fn $set_data(vec: *mut $V, data: $data_ptr, size: usize) -> c_int {
            status(stringify!($set_data), || handle::assign(vec, collect::<$E>(data as *const $C, size)?))
        }
        #[doc = concat!("`", stringify!($set_value), "`.")]
        ///
        /// # Safety
        /// `vec` must point to a valid handle.
        #[no_mangle]
        pub unsafe extern "C" fn $set_value(vec: *mut $V, val: $C) -> c_int {
            status(stringify!($set_value), || handle::assign(vec, vec![<$E as Elem>::from_c(val)?]))
        }
        #[doc = concat!("`", stringify!($append_data), "`: appends `size` elements.")]
        ///
        /// # Safety
        /// `vec` must be live; `data` must hold `size` elements.
        #[no_mangle]
        pub unsafe extern "C" fn $append_data(vec: $V, data: $data_ptr, size: usize) -> c_int {
            status(stringify!($append_data), || {
                let items = collect::<$E>(data as *const $C, size)?;
                append(vec, items)
            })
        }
        #[doc = concat!("`", stringify!($append_value), "`.")]
        ///
        /// # Safety
        /// `vec` must be live.
        #[no_mangle]
        pub unsafe extern "C" fn $append_value(vec: $V, val: $C) -> c_int {
            status(stringify!($append_value), || {
                let item = <$E as Elem>::from_c(val)?;
                append(vec, vec![item])
            })
        }
        #[doc = concat!("`", stringify!($size), "`: the number of elements (0 for the empty handle).")]
        ///
        /// # Safety
        /// `vec` must be empty or live.
        #[no_mangle]
        pub unsafe extern "C" fn $size(vec: $V) -> usize {
            handle::get(vec).map_or(0, |v| v.len())
        }
    };
}

/// Appends in place (every copy of the handle sees it); the empty handle is an error.
unsafe fn append<H: Handle<Inner = Vec<T>>, T>(vec: H, mut items: Vec<T>) -> Result<()> {
    handle::get_mut(vec)?.append(&mut items);
    Ok(())
}

fn index_error(idx: usize, len: usize, what: &'static str) -> Error {
    Error::index(what, format!("index {idx} is out of range for a vector of size {len}"))
}

vector_api!(
    mlx_arm_core::Array, mlx_vector_array, mlx_array, *const mlx_array,
    mlx_vector_array_new, mlx_vector_array_set, mlx_vector_array_free, mlx_vector_array_new_data,
    mlx_vector_array_new_value, mlx_vector_array_set_data, mlx_vector_array_set_value,
    mlx_vector_array_append_data, mlx_vector_array_append_value, mlx_vector_array_size
);

vector_api!(
    Vec<mlx_arm_core::Array>, mlx_vector_vector_array, mlx_vector_array, *const mlx_vector_array,
    mlx_vector_vector_array_new, mlx_vector_vector_array_set, mlx_vector_vector_array_free,
    mlx_vector_vector_array_new_data, mlx_vector_vector_array_new_value,
    mlx_vector_vector_array_set_data, mlx_vector_vector_array_set_value,
    mlx_vector_vector_array_append_data, mlx_vector_vector_array_append_value,
    mlx_vector_vector_array_size
);

vector_api!(
    c_int, mlx_vector_int, c_int, *mut c_int,
    mlx_vector_int_new, mlx_vector_int_set, mlx_vector_int_free, mlx_vector_int_new_data,
    mlx_vector_int_new_value, mlx_vector_int_set_data, mlx_vector_int_set_value,
    mlx_vector_int_append_data, mlx_vector_int_append_value, mlx_vector_int_size
);

vector_api!(
    CString, mlx_vector_string, *const c_char, *mut *const c_char,
    mlx_vector_string_new, mlx_vector_string_set, mlx_vector_string_free, mlx_vector_string_new_data,
    mlx_vector_string_new_value, mlx_vector_string_set_data, mlx_vector_string_set_value,
    mlx_vector_string_append_data, mlx_vector_string_append_value, mlx_vector_string_size
);

/// `mlx_vector_array_get`: `*res` becomes element `idx`.
///
/// # Safety
/// `res` must point to a valid handle; `vec` must be live.
#[no_mangle]
pub unsafe extern "C" fn mlx_vector_array_get(res: *mut mlx_array, vec: mlx_vector_array, idx: usize) -> c_int {
    status("mlx_vector_array_get", || {
        let v = handle::get(vec)?;
        let a = v.get(idx).cloned().ok_or_else(|| index_error(idx, v.len(), "mlx_vector_array_get"))?;
        arg::set_array(res, a)
    })
}

/// `mlx_vector_vector_array_get`: `*res` becomes a copy of element `idx` (its own vector,
/// sharing the arrays), as mlx-c assigns it.
///
/// # Safety
/// `res` must point to a valid handle; `vec` must be live.
#[no_mangle]
pub unsafe extern "C" fn mlx_vector_vector_array_get(res: *mut mlx_vector_array, vec: mlx_vector_vector_array, idx: usize) -> c_int {
    status("mlx_vector_vector_array_get", || {
        let v = handle::get(vec)?;
        let item = v.get(idx).cloned().ok_or_else(|| index_error(idx, v.len(), "mlx_vector_vector_array_get"))?;
        handle::assign(res, item)
    })
}

/// `mlx_vector_int_get`.
///
/// # Safety
/// `res` writable; `vec` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_vector_int_get(res: *mut c_int, vec: mlx_vector_int, idx: usize) -> c_int {
    status("mlx_vector_int_get", || {
        let v = handle::get(vec)?;
        let x = *v.get(idx).ok_or_else(|| index_error(idx, v.len(), "mlx_vector_int_get"))?;
        arg::out(res, x, "res")
    })
}

/// `mlx_vector_string_get`: `*res` points to the string owned by the vector.
///
/// # Safety
/// `res` writable; `vec` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_vector_string_get(res: *mut *mut c_char, vec: mlx_vector_string, idx: usize) -> c_int {
    status("mlx_vector_string_get", || {
        let v = handle::get(vec)?;
        let s = v.get(idx).ok_or_else(|| index_error(idx, v.len(), "mlx_vector_string_get"))?;
        arg::out(res, s.as_ptr() as *mut c_char, "res")
    })
}
