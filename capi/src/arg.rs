//! Checked conversion of C arguments into core values: empty handles, NULL pointers with a
//! non-zero count, negative sizes and out-of-range enums become errors, never UB.

use crate::array::ArrayCtx;
use crate::handle;
use crate::types::*;
use crate::prelude::*;
use core::ffi::{c_char, c_int, CStr};
use mlx_arm_core::{Array, DType, Device, DeviceType, Error, Result, Stream};

/// The array behind a non-empty handle (a cheap clone, so results may overwrite the handle).
///
/// # Safety
/// `h` must be empty or a live handle.
pub(crate) unsafe fn array(h: mlx_array, _name: &'static str) -> Result<Array> {
    Ok(handle::get(h)?.array.clone())
}

/// An optional array: the empty handle is `None` (mlx-c's `/* may be null */`).
///
/// # Safety
/// `h` must be empty or a live handle.
#[allow(dead_code)] // for table kinds (`array?`, `opt_*`) that no landed op uses yet
pub(crate) unsafe fn array_opt(h: mlx_array) -> Result<Option<Array>> {
    if h.ctx.is_null() {
        Ok(None)
    } else {
        array(h, "").map(Some)
    }
}

/// A validated `mlx_dtype`.
pub(crate) fn dtype(code: mlx_dtype) -> Result<DType> {
    DType::from_code(code).ok_or_else(|| Error::invalid("mlx_dtype", format!("invalid mlx_dtype value {code}")))
}

/// A validated `mlx_fft_norm`.
pub(crate) fn fft_norm(code: mlx_fft_norm) -> Result<mlx_arm_core::ops::fft::FftNorm> {
    mlx_arm_core::ops::fft::FftNorm::from_code(code)
}

/// An optional dtype.
#[allow(dead_code)] // for table kinds (`array?`, `opt_*`) that no landed op uses yet
pub(crate) fn dtype_opt(d: mlx_optional_dtype) -> Result<Option<DType>> {
    if d.has_value {
        dtype(d.value).map(Some)
    } else {
        Ok(None)
    }
}

/// An optional int.
#[allow(dead_code)] // for table kinds (`array?`, `opt_*`) that no landed op uses yet
pub(crate) fn int_opt(v: mlx_optional_int) -> Option<i32> {
    v.has_value.then_some(v.value)
}

/// An optional float.
#[allow(dead_code)] // for table kinds (`array?`, `opt_*`) that no landed op uses yet
pub(crate) fn float_opt(v: mlx_optional_float) -> Option<f32> {
    v.has_value.then_some(v.value)
}

/// A validated `mlx_device_type`.
pub(crate) fn device_type(t: mlx_device_type) -> Result<DeviceType> {
    match t {
        0 => Ok(DeviceType::Cpu),
        1 => Ok(DeviceType::Gpu),
        _ => Err(Error::invalid("mlx_device_type", format!("invalid mlx_device_type value {t}"))),
    }
}

/// `n` elements at `p` (NULL is allowed only when `n == 0`).
///
/// # Safety
/// `p` must point to `n` readable elements when non-null.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize, name: &'static str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::invalid(name, format!("{name} is NULL but its length is {n}")));
    }
    if n > isize::MAX as usize / core::mem::size_of::<T>().max(1) {
        return Err(Error::invalid(name, format!("{name} length {n} is too large")));
    }
    Ok(core::slice::from_raw_parts(p, n))
}

/// Axes or other signed ints (`const int* p, size_t n`).
///
/// # Safety
/// As [`slice`].
pub(crate) unsafe fn ints(p: *const c_int, n: usize, name: &'static str) -> Result<Vec<isize>> {
    Ok(slice(p, n, name)?.iter().map(|&v| v as isize).collect())
}

/// 64-bit signed ints (`const int64_t* p, size_t n`).
///
/// # Safety
/// As [`slice`].
pub(crate) unsafe fn int64s(p: *const i64, n: usize, name: &'static str) -> Result<Vec<isize>> {
    slice(p, n, name)?
        .iter()
        .map(|&v| isize::try_from(v).map_err(|_| Error::invalid(name, format!("{name} value {v} is out of range"))))
        .collect()
}

/// A shape: non-negative dimensions.
///
/// # Safety
/// As [`slice`].
pub(crate) unsafe fn shape(p: *const c_int, n: usize, name: &'static str) -> Result<Vec<usize>> {
    slice(p, n, name)?
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| Error::invalid(name, format!("negative dimension {d} in {name}"))))
        .collect()
}

/// A shape given as `(const int* shape, int dim)` (mlx-c's array constructors).
///
/// # Safety
/// As [`slice`].
pub(crate) unsafe fn shape_dim(p: *const c_int, dim: c_int, name: &'static str) -> Result<Vec<usize>> {
    let n = usize::try_from(dim).map_err(|_| Error::invalid(name, format!("negative number of dimensions {dim}")))?;
    shape(p, n, name)
}

/// A non-negative `int` count.
pub(crate) fn count(v: c_int, name: &'static str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(name, format!("{name} must be non-negative, got {v}")))
}

/// A NUL-terminated string argument (NULL is an error).
///
/// # Safety
/// `p` must be NULL or NUL-terminated.
pub(crate) unsafe fn string<'a>(p: *const c_char, name: &'static str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::invalid(name, format!("{name} is NULL")));
    }
    CStr::from_ptr(p).to_str().map_err(|_| Error::invalid(name, format!("{name} is not UTF-8")))
}

/// The arrays of a vector handle.
///
/// # Safety
/// `v` must be empty or a live handle.
pub(crate) unsafe fn vector_array(v: mlx_vector_array) -> Result<Vec<Array>> {
    Ok(handle::get(v)?.clone())
}

/// The stream an op is recorded for: it must be non-empty (as in mlx-c) and its device
/// available. The op records `s` when it is on the default device (see [`crate::named_stream`]);
/// it runs on the default device either way (with only the CPU, every CPU stream executes the
/// same way: work completes inside `eval`).
///
/// # Safety
/// `s` must be empty or a live handle.
pub(crate) unsafe fn stream(s: mlx_stream) -> Result<Stream> {
    let st = *handle::get(s)?;
    mlx_arm_core::device::check_available(st.device, "mlx_stream")?;
    crate::named_stream::set(st);
    Ok(st)
}

/// A device handle's value.
///
/// # Safety
/// `d` must be empty or a live handle.
pub(crate) unsafe fn device(d: mlx_device) -> Result<Device> {
    Ok(*handle::get(d)?)
}

/// Stores an op's result in `*res` (in place when `*res` already holds an array).
///
/// # Safety
/// `res` must be NULL (an error) or point to a valid handle.
pub(crate) unsafe fn set_array(res: *mut mlx_array, a: Array) -> Result<()> {
    handle::assign(res, ArrayCtx::new(a))
}

/// Stores a list of arrays in `*res`.
///
/// # Safety
/// As [`set_array`].
pub(crate) unsafe fn set_vector_array(res: *mut mlx_vector_array, v: Vec<Array>) -> Result<()> {
    handle::assign(res, v)
}

/// Writes a plain value through an out-pointer.
///
/// # Safety
/// `res` must be NULL (an error) or valid for writing a `T`.
pub(crate) unsafe fn out<T>(res: *mut T, v: T, name: &'static str) -> Result<()> {
    if res.is_null() {
        return Err(Error::invalid(name, "the result pointer is NULL"));
    }
    res.write(v);
    Ok(())
}

/// Optional axes (`const int* p /* may be null */, size_t n`): NULL is `None`, as in mlx-c;
/// a non-NULL pointer with `n == 0` is the empty list.
///
/// # Safety
/// As [`slice`].
pub(crate) unsafe fn ints_opt(p: *const c_int, n: usize, name: &'static str) -> Result<Option<Vec<isize>>> {
    if p.is_null() {
        Ok(None)
    } else {
        ints(p, n, name).map(Some)
    }
}

/// Stores a pair of results; both pointers are checked first, so a failure changes neither.
///
/// # Safety
/// Each pointer must be NULL (an error) or point to a valid handle.
pub(crate) unsafe fn set_pair(res_0: *mut mlx_array, res_1: *mut mlx_array, a: Array, b: Array) -> Result<()> {
    if res_0.is_null() || res_1.is_null() {
        return Err(Error::invalid("mlx_array", "the result mlx_array* is NULL"));
    }
    set_array(res_0, a)?;
    set_array(res_1, b)
}
