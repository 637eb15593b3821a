//! `mlx_array`: creation from scalars and user buffers, metadata, evaluation, element access
//! and printing (mlx-c `array.h`).

use crate::arg;
use crate::error::{guard, status};
use crate::handle;
use crate::types::*;
use core::ffi::{c_int, c_void};
use mlx_arm_core::array::Data;
use mlx_arm_core::buffer::{Buffer, ExternalBytes};
use mlx_arm_core::{ops, Array, Complex64, DType, Element, Error, Result};
use crate::prelude::*;

/// What an `mlx_array` handle owns: the array plus the C views handed out from it
/// (shape, strides, a dense copy for `mlx_array_data_*`), valid until the handle changes.
/// The views are made on first request, not with every op's result (most results are never
/// asked for their shape through C: one allocation less per op).
pub struct ArrayCtx {
    /// The array.
    pub array: Array,
    shape: spin::Once<Vec<c_int>>,
    strides: Vec<usize>,
    dense: Option<Data>,
}

impl ArrayCtx {
    /// State for a new or reassigned handle.
    pub fn new(array: Array) -> ArrayCtx {
        ArrayCtx { array, shape: spin::Once::new(), strides: Vec::new(), dense: None }
    }

    /// The dimensions as C ints, made once (the pointer stays valid until the handle changes;
    /// `Once`: two threads may ask a shared handle at the same time, as reads).
    fn c_shape(&self) -> *const c_int {
        self.shape
            .call_once(|| self.array.shape().iter().map(|&d| c_int::try_from(d).unwrap_or(c_int::MAX)).collect())
            .as_ptr()
    }
}

unsafe fn new_array(name: &'static str, f: impl FnOnce() -> Result<Array>) -> mlx_array {
    guard(name, handle::empty(), || Ok(handle::new(ArrayCtx::new(f()?))))
}

unsafe fn set_to(name: &'static str, arr: *mut mlx_array, f: impl FnOnce() -> Result<Array>) -> c_int {
    status(name, || arg::set_array(arr, f()?))
}

/// `mlx_dtype_size`: bytes per element (0 for an invalid dtype, after reporting it).
#[no_mangle]
pub extern "C" fn mlx_dtype_size(dtype: mlx_dtype) -> usize {
    guard("mlx_dtype_size", 0, || Ok(arg::dtype(dtype)?.size()))
}

/// `mlx_array_new`: the empty array handle.
#[no_mangle]
pub extern "C" fn mlx_array_new() -> mlx_array {
    handle::empty()
}

/// `mlx_array_free`.
///
/// # Safety
/// `arr` must be empty or a live handle, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_free(arr: mlx_array) -> c_int {
    status("mlx_array_free", || {
        handle::free(arr);
        Ok(())
    })
}

/// `mlx_array_set`: makes `*arr` refer to `src`'s array.
///
/// # Safety
/// `arr` must point to a valid handle; `src` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_set(arr: *mut mlx_array, src: mlx_array) -> c_int {
    set_to("mlx_array_set", arr, || arg::array(src, "src"))
}

macro_rules! scalar_ctors {
    ($( $new:ident, $set:ident, $t:ty, $conv:expr; )*) => {$(
        #[doc = concat!("`", stringify!($new), "`: a 0-d array holding `val`.")]
        #[no_mangle]
        pub extern "C" fn $new(val: $t) -> mlx_array {
            // SAFETY: no pointer arguments.
            unsafe { new_array(stringify!($new), || Array::scalar($conv(val))) }
        }
        #[doc = concat!("`", stringify!($set), "`: sets `*arr` to a 0-d array holding `val`.")]
        ///
        /// # Safety
        /// `arr` must point to a valid handle.
        #[no_mangle]
        pub unsafe extern "C" fn $set(arr: *mut mlx_array, val: $t) -> c_int {
            set_to(stringify!($set), arr, || Array::scalar($conv(val)))
        }
    )*};
}

scalar_ctors! {
    mlx_array_new_bool, mlx_array_set_bool, bool, |v| v;
    mlx_array_new_int, mlx_array_set_int, c_int, |v: c_int| v as i32;
    mlx_array_new_float32, mlx_array_set_float32, f32, |v| v;
    mlx_array_new_float, mlx_array_set_float, f32, |v| v;
    mlx_array_new_float64, mlx_array_set_float64, f64, |v| v;
    mlx_array_new_double, mlx_array_set_double, f64, |v| v;
}

/// `mlx_array_new_complex`: a 0-d complex64 array.
#[no_mangle]
pub extern "C" fn mlx_array_new_complex(real_val: f32, imag_val: f32) -> mlx_array {
    // SAFETY: no pointer arguments.
    unsafe { new_array("mlx_array_new_complex", || Array::scalar(Complex64::new(real_val, imag_val))) }
}

/// `mlx_array_set_complex`.
///
/// # Safety
/// `arr` must point to a valid handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_set_complex(arr: *mut mlx_array, real_val: f32, imag_val: f32) -> c_int {
    set_to("mlx_array_set_complex", arr, || Array::scalar(Complex64::new(real_val, imag_val)))
}

/// A copy of `shape` elements of `dtype` read from `data`.
unsafe fn from_data(data: *const c_void, shape: *const c_int, dim: c_int, dtype: mlx_dtype, op: &'static str) -> Result<Array> {
    let dtype = arg::dtype(dtype)?;
    let shape = arg::shape_dim(shape, dim, "shape")?;
    let n = mlx_arm_core::shape::checked_size(&shape, op)?;
    let bytes = n.checked_mul(dtype.size()).ok_or_else(|| Error::invalid(op, "array is too large"))?;
    let src = arg::slice(data as *const u8, bytes, "data")?;
    Array::from_bytes(src, &shape, dtype)
}

/// `mlx_array_new_data`: an array holding a copy of `data` (row-major, `dim` dimensions).
///
/// # Safety
/// `data` must hold the elements and `shape` `dim` ints.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_new_data(data: *const c_void, shape: *const c_int, dim: c_int, dtype: mlx_dtype) -> mlx_array {
    new_array("mlx_array_new_data", || from_data(data, shape, dim, dtype, "mlx_array_new_data"))
}

/// `mlx_array_set_data`.
///
/// # Safety
/// As [`mlx_array_new_data`]; `arr` must point to a valid handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_set_data(arr: *mut mlx_array, data: *const c_void, shape: *const c_int, dim: c_int, dtype: mlx_dtype) -> c_int {
    set_to("mlx_array_set_data", arr, || from_data(data, shape, dim, dtype, "mlx_array_set_data"))
}

/// User memory viewed without a copy; `dtor(payload)` runs when the last view goes away.
struct Managed {
    ptr: *const u8,
    len: usize,
    payload: *mut c_void,
    dtor: mlx_dtor,
}

// SAFETY: the user hands the buffer over to the array; it is only read.
unsafe impl Send for Managed {}
unsafe impl Sync for Managed {}

impl ExternalBytes for Managed {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the user guarantees `len` readable bytes until the destructor runs.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        if let Some(d) = self.dtor {
            // SAFETY: the user's destructor, called once with its payload.
            unsafe { d(self.payload) }
        }
    }
}

unsafe fn from_managed(data: *mut c_void, shape: *const c_int, dim: c_int, dtype: mlx_dtype, payload: *mut c_void, dtor: mlx_dtor) -> Result<Array> {
    const OP: &str = "mlx_array_new_data_managed";
    // Owns the user buffer from here on, so every error path still calls the destructor.
    let mut managed = Managed { ptr: data as *const u8, len: 0, payload, dtor };
    let dtype = arg::dtype(dtype)?;
    let shape = arg::shape_dim(shape, dim, "shape")?;
    let n = mlx_arm_core::shape::checked_size(&shape, OP)?;
    let bytes = n.checked_mul(dtype.size()).ok_or_else(|| Error::invalid(OP, "array is too large"))?;
    if bytes > 0 && data.is_null() {
        return Err(Error::invalid(OP, "data is NULL"));
    }
    managed.len = bytes;
    if dtype == DType::Bool {
        // bool bytes must be 0/1: copy (normalizing), then release the user buffer.
        let a = Array::from_bytes(managed.bytes(), &shape, dtype);
        drop(managed);
        return a;
    }
    Array::from_buffer(Buffer::external(Box::new(managed)), 0, &shape, dtype)
}

/// `mlx_array_new_data_managed`: views `data` without a copy; `dtor(data)` runs when the
/// array's memory is released (also when creation fails).
///
/// # Safety
/// `data` must stay valid and unmodified until `dtor` is called.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_new_data_managed(data: *mut c_void, shape: *const c_int, dim: c_int, dtype: mlx_dtype, dtor: mlx_dtor) -> mlx_array {
    new_array("mlx_array_new_data_managed", || from_managed(data, shape, dim, dtype, data, dtor))
}

/// `mlx_array_new_data_managed_payload`: like the above, `dtor(payload)` instead of `dtor(data)`.
///
/// # Safety
/// As [`mlx_array_new_data_managed`].
#[no_mangle]
pub unsafe extern "C" fn mlx_array_new_data_managed_payload(
    data: *mut c_void,
    shape: *const c_int,
    dim: c_int,
    dtype: mlx_dtype,
    payload: *mut c_void,
    dtor: mlx_dtor,
) -> mlx_array {
    new_array("mlx_array_new_data_managed_payload", || from_managed(data, shape, dim, dtype, payload, dtor))
}

macro_rules! meta {
    ($( $name:ident -> $t:ty, $fallback:expr, |$a:ident| $e:expr; )*) => {$(
        #[doc = concat!("`", stringify!($name), "` (reports and returns a fallback for the empty handle).")]
        ///
        /// # Safety
        /// `arr` must be empty or a live handle.
        #[no_mangle]
        pub unsafe extern "C" fn $name(arr: mlx_array) -> $t {
            guard(stringify!($name), $fallback, || { let $a = arg::array(arr, "arr")?; Ok($e) })
        }
    )*};
}

meta! {
    mlx_array_itemsize -> usize, 0, |a| a.itemsize();
    mlx_array_size -> usize, 0, |a| a.size();
    mlx_array_nbytes -> usize, 0, |a| a.nbytes();
    mlx_array_ndim -> usize, 0, |a| a.ndim();
    mlx_array_dtype -> mlx_dtype, 0, |a| a.dtype().code() as mlx_dtype;
}

/// `mlx_array_shape`: the dimensions, owned by the handle (NULL for the empty handle).
///
/// # Safety
/// `arr` must be empty or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_shape(arr: mlx_array) -> *const c_int {
    guard("mlx_array_shape", core::ptr::null(), || Ok(handle::get(arr)?.c_shape()))
}

/// `mlx_array_strides`: element strides (row-major until evaluated), owned by the handle.
///
/// # Safety
/// `arr` must be empty or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_strides(arr: mlx_array) -> *const usize {
    guard("mlx_array_strides", core::ptr::null(), || {
        let ctx = handle::get_mut(arr)?;
        ctx.strides = if ctx.array.is_available() {
            ctx.array.data()?.strides.iter().map(|&s| s.max(0) as usize).collect()
        } else {
            mlx_arm_core::shape::row_major_strides(ctx.array.shape()).iter().map(|&s| s.max(0) as usize).collect()
        };
        Ok(ctx.strides.as_ptr())
    })
}

/// `mlx_array_dim`: the size of axis `dim` (negative counts from the end).
///
/// # Safety
/// `arr` must be empty or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_dim(arr: mlx_array, dim: c_int) -> c_int {
    guard("mlx_array_dim", 0, || {
        let a = arg::array(arr, "arr")?;
        let ax = mlx_arm_core::shape::normalize_axis(dim as isize, a.ndim(), "mlx_array_dim")?;
        Ok(c_int::try_from(a.shape()[ax]).unwrap_or(c_int::MAX))
    })
}

/// `mlx_array_eval`: computes the array.
///
/// # Safety
/// `arr` must be empty or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_eval(arr: mlx_array) -> c_int {
    status("mlx_array_eval", || arg::array(arr, "arr")?.eval())
}

unsafe fn item<T: Element>(res: *mut T, arr: mlx_array, name: &'static str) -> c_int {
    status(name, || {
        if res.is_null() {
            return Err(Error::invalid(name, "the result pointer is NULL"));
        }
        // (a clone: evaluation releases the GIL, and another thread may reassign the handle)
        let a = arg::array(arr, "arr")?;
        if a.dtype() != T::DTYPE {
            return Err(Error::type_error(name, format!("array has dtype {}, not {}", a.dtype(), T::DTYPE)));
        }
        if a.size() != 1 {
            return Err(Error::invalid(name, "item can only be called on arrays of size 1."));
        }
        // The one element read in place (no copy of the data into a vector).
        let d = a.data()?;
        let v = d.read::<T>(a.shape())?;
        let x = *v.first().ok_or_else(|| Error::runtime(name, "the array has no element"))?;
        arg::out(res, x, name)
    })
}

/// `mlx_arm_array_item_computed`: `a.item()` in one call for an array already computed (no
/// evaluation, so a caller holding a lock such as Python's GIL need not release it). Writes
/// the element to `res` as its C type (bool, the integer types, float, double: at most 8
/// bytes) and its dtype to `*dtype`, returning 0. Returns -1, with nothing written or
/// reported, when the array is not computed yet or its dtype has no direct read (half
/// precision, complex): the caller then takes the evaluating path. Returns 1 with the error
/// reported for an empty handle or a size other than 1.
///
/// # Safety
/// `res` must be writable for 8 bytes, aligned for 8; `dtype` writable; `arr` empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_array_item_computed(res: *mut core::ffi::c_void, dtype: *mut mlx_dtype, arr: mlx_array) -> c_int {
    const NAME: &str = "mlx_arm_array_item_computed";
    let mut skipped = false;
    let rc = status(NAME, || {
        if res.is_null() || dtype.is_null() {
            return Err(Error::invalid(NAME, "the result pointer is NULL"));
        }
        // Borrowed, not cloned: nothing here releases the caller's lock or evaluates.
        let a = &handle::get(arr)?.array;
        if a.size() != 1 {
            return Err(Error::invalid(NAME, "item can only be called on arrays of size 1."));
        }
        if !a.is_available() {
            skipped = true;
            return Ok(());
        }
        let d = a.data()?;
        macro_rules! put {
            ($t:ty) => {{
                let v = d.read::<$t>(a.shape())?;
                (res as *mut $t).write(*v.first().ok_or_else(|| Error::runtime(NAME, "the array has no element"))?)
            }};
        }
        match a.dtype() {
            DType::Bool => put!(bool),
            DType::Uint8 => put!(u8),
            DType::Uint16 => put!(u16),
            DType::Uint32 => put!(u32),
            DType::Uint64 => put!(u64),
            DType::Int8 => put!(i8),
            DType::Int16 => put!(i16),
            DType::Int32 => put!(i32),
            DType::Int64 => put!(i64),
            DType::Float32 => put!(f32),
            DType::Float64 => put!(f64),
            DType::Float16 | DType::Bfloat16 | DType::Complex64 => {
                skipped = true;
                return Ok(());
            }
        }
        dtype.write(a.dtype().code() as mlx_dtype);
        Ok(())
    });
    if rc == 0 && skipped {
        -1
    } else {
        rc
    }
}

macro_rules! items {
    ($( $name:ident, $t:ty; )*) => {$(
        #[doc = concat!("`", stringify!($name), "`: the value of a size-1 array of exactly this dtype.")]
        ///
        /// # Safety
        /// `res` must be writable; `arr` empty or live.
        #[no_mangle]
        pub unsafe extern "C" fn $name(res: *mut $t, arr: mlx_array) -> c_int {
            item::<$t>(res, arr, stringify!($name))
        }
    )*};
}

items! {
    mlx_array_item_bool, bool;
    mlx_array_item_uint8, u8;
    mlx_array_item_uint16, u16;
    mlx_array_item_uint32, u32;
    mlx_array_item_uint64, u64;
    mlx_array_item_int8, i8;
    mlx_array_item_int16, i16;
    mlx_array_item_int32, i32;
    mlx_array_item_int64, i64;
    mlx_array_item_float32, f32;
    mlx_array_item_float64, f64;
    mlx_array_item_complex64, Complex64;
    mlx_array_item_float16, half::f16;
    mlx_array_item_bfloat16, half::bf16;
}

/// Evaluates and returns a pointer to dense row-major elements of `want` (a copy owned by the
/// handle when the array is a strided or broadcast view).
unsafe fn data_ptr(arr: mlx_array, want: Option<DType>, name: &'static str) -> *const c_void {
    guard(name, core::ptr::null(), || {
        let ctx = handle::get_mut(arr)?;
        let a = &ctx.array;
        if let Some(want) = want {
            if a.dtype() != want {
                return Err(Error::type_error(name, format!("array has dtype {}, not {}", a.dtype(), want)));
            }
        }
        let d = a.data()?;
        let align = a.itemsize().max(1);
        let dense = d.is_row_contiguous(a.shape()) && (d.buf.as_ptr() as usize + d.offset) % align == 0;
        let d = if dense { d } else { ops::contiguous(a)?.data()? };
        // SAFETY: offset lies within the buffer (checked when the view was made).
        let p = d.buf.as_ptr().add(d.offset) as *const c_void;
        ctx.dense = Some(d);
        Ok(p)
    })
}

macro_rules! datas {
    ($( $name:ident, $t:ty, $dt:ident; )*) => {$(
        #[doc = concat!("`", stringify!($name), "`: evaluates and returns the dense elements (NULL on a dtype mismatch); valid while the handle holds this array.")]
        ///
        /// # Safety
        /// `arr` must be empty or a live handle.
        #[no_mangle]
        pub unsafe extern "C" fn $name(arr: mlx_array) -> *const $t {
            data_ptr(arr, Some(DType::$dt), stringify!($name)) as *const $t
        }
    )*};
}

datas! {
    mlx_array_data_bool, bool, Bool;
    mlx_array_data_uint8, u8, Uint8;
    mlx_array_data_uint16, u16, Uint16;
    mlx_array_data_uint32, u32, Uint32;
    mlx_array_data_uint64, u64, Uint64;
    mlx_array_data_int8, i8, Int8;
    mlx_array_data_int16, i16, Int16;
    mlx_array_data_int32, i32, Int32;
    mlx_array_data_int64, i64, Int64;
    mlx_array_data_float32, f32, Float32;
    mlx_array_data_float64, f64, Float64;
    mlx_array_data_complex64, Complex64, Complex64;
    mlx_array_data_float16, u16, Float16;
    mlx_array_data_bfloat16, u16, Bfloat16;
}

/// `mlx_arm_array_data`: like `mlx_array_data_<dtype>` for any dtype (raw bytes).
///
/// # Safety
/// `arr` must be empty or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_array_data(arr: mlx_array) -> *const c_void {
    data_ptr(arr, None, "mlx_arm_array_data")
}

/// `mlx_arm_array_data_strided`: evaluates and returns the address of element `[0, 0, …]` of
/// the array's own memory, writing its `ndim` element strides to `strides` — no copy for a
/// broadcast, transposed or sliced view, so numpy's `copy=False` view of a broadcast array has
/// MLX's strides (0 on broadcast axes). A view whose start is not aligned to its element size
/// is made dense first (row-major strides then). NULL on error.
///
/// # Safety
/// `arr` must be empty or a live handle; `strides` must have room for `ndim` values.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_array_data_strided(arr: mlx_array, strides: *mut i64) -> *const c_void {
    guard("mlx_arm_array_data_strided", core::ptr::null(), || {
        if strides.is_null() {
            return Err(Error::invalid("mlx_arm_array_data_strided", "strides is NULL"));
        }
        let ctx = handle::get_mut(arr)?;
        let a = &ctx.array;
        let d = a.data()?;
        let align = a.itemsize().max(1);
        let d = if (d.buf.as_ptr() as usize + d.offset) % align == 0 { d } else { ops::contiguous(a)?.data()? };
        for (i, &st) in d.strides.iter().enumerate() {
            // SAFETY: the caller gives room for ndim strides (`d.strides` has ndim entries).
            *strides.add(i) = st as i64;
        }
        // SAFETY: offset lies within the buffer (checked when the view was made).
        let p = d.buf.as_ptr().add(d.offset) as *const c_void;
        ctx.dense = Some(d);
        Ok(p)
    })
}

/// `mlx_array_tostring`: MLX's printed form (`array([1, 2], dtype=int32)`), evaluating first.
///
/// # Safety
/// `str` must point to a valid string handle; `arr` empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_array_tostring(str: *mut mlx_string, arr: mlx_array) -> c_int {
    status("mlx_array_tostring", || {
        let s = crate::format::array_to_string(&arg::array(arr, "arr")?)?;
        handle::assign(str, CString::new(s).unwrap_or_default())
    })
}

/// `_mlx_array_is_available`: whether the array has been computed.
///
/// # Safety
/// `res` writable; `arr` empty or live.
#[no_mangle]
pub unsafe extern "C" fn _mlx_array_is_available(res: *mut bool, arr: mlx_array) -> c_int {
    status("_mlx_array_is_available", || arg::out(res, arg::array(arr, "arr")?.is_available(), "res"))
}

/// `_mlx_array_wait`: computes the array (CPU work finishes inside evaluation).
///
/// # Safety
/// `arr` empty or live.
#[no_mangle]
pub unsafe extern "C" fn _mlx_array_wait(arr: mlx_array) -> c_int {
    status("_mlx_array_wait", || arg::array(arr, "arr")?.eval())
}

unsafe fn layout_flag(res: *mut bool, arr: mlx_array, name: &'static str, f: fn(&[usize], &[isize]) -> bool) -> c_int {
    status(name, || {
        let a = arg::array(arr, "arr")?;
        let v = a.is_available() && f(a.shape(), &a.data()?.strides);
        arg::out(res, v, "res")
    })
}

fn dense_in(shape: &[usize], strides: &[isize], order: impl Iterator<Item = usize>) -> bool {
    let mut expected = 1isize;
    for i in order {
        if shape[i] != 1 && strides[i] != expected {
            return false;
        }
        expected *= shape[i] as isize;
    }
    true
}

fn row_dense(shape: &[usize], strides: &[isize]) -> bool {
    dense_in(shape, strides, (0..shape.len()).rev())
}

fn col_dense(shape: &[usize], strides: &[isize]) -> bool {
    dense_in(shape, strides, 0..shape.len())
}

/// `_mlx_array_is_contiguous`: evaluated and dense in row- or column-major order.
///
/// # Safety
/// `res` writable; `arr` empty or live.
#[no_mangle]
pub unsafe extern "C" fn _mlx_array_is_contiguous(res: *mut bool, arr: mlx_array) -> c_int {
    layout_flag(res, arr, "_mlx_array_is_contiguous", |s, st| row_dense(s, st) || col_dense(s, st))
}

/// `_mlx_array_is_row_contiguous`.
///
/// # Safety
/// `res` writable; `arr` empty or live.
#[no_mangle]
pub unsafe extern "C" fn _mlx_array_is_row_contiguous(res: *mut bool, arr: mlx_array) -> c_int {
    layout_flag(res, arr, "_mlx_array_is_row_contiguous", row_dense)
}

/// `_mlx_array_is_col_contiguous`.
///
/// # Safety
/// `res` writable; `arr` empty or live.
#[no_mangle]
pub unsafe extern "C" fn _mlx_array_is_col_contiguous(res: *mut bool, arr: mlx_array) -> c_int {
    layout_flag(res, arr, "_mlx_array_is_col_contiguous", col_dense)
}
