//! `mlx_stream` (mlx-c `stream.h`). Only CPU streams exist without a GPU backend; asking for
//! the GPU stream reports an error and returns the empty handle.

use crate::arg;
use crate::device::device_text;
use crate::error::{guard, status};
use crate::handle;
use crate::string::cstring;
use crate::types::*;
use crate::prelude::*;
use core::ffi::c_int;
use mlx_arm_core::{device, Device};

/// `mlx_stream_new`: the empty stream handle.
#[no_mangle]
pub extern "C" fn mlx_stream_new() -> mlx_stream {
    handle::empty()
}

/// `mlx_stream_new_device`: a new stream on `dev`.
///
/// # Safety
/// `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_stream_new_device(dev: mlx_device) -> mlx_stream {
    guard("mlx_stream_new_device", handle::empty(), || Ok(handle::new(device::new_stream(arg::device(dev)?)?)))
}

/// `mlx_stream_set`.
///
/// # Safety
/// `stream` points to a valid handle; `src` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_stream_set(stream: *mut mlx_stream, src: mlx_stream) -> c_int {
    status("mlx_stream_set", || handle::assign(stream, *handle::get(src)?))
}

/// `mlx_stream_free`.
///
/// # Safety
/// `stream` empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_stream_free(stream: mlx_stream) -> c_int {
    handle::free(stream);
    0
}

/// `mlx_stream_tostring`: `Stream(Device(cpu, 0), 0)`.
///
/// # Safety
/// `str` points to a valid handle; `stream` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_stream_tostring(str: *mut mlx_string, stream: mlx_stream) -> c_int {
    status("mlx_stream_tostring", || {
        let s = *handle::get(stream)?;
        handle::assign(str, cstring(&format!("Stream({}, {})", device_text(s.device), s.index)))
    })
}

/// `mlx_stream_equal` (false when either handle is empty).
///
/// # Safety
/// Both empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_stream_equal(lhs: mlx_stream, rhs: mlx_stream) -> bool {
    matches!((handle::get(lhs), handle::get(rhs)), (Ok(a), Ok(b)) if a == b)
}

/// `mlx_stream_get_device`.
///
/// # Safety
/// `dev` points to a valid handle; `stream` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_stream_get_device(dev: *mut mlx_device, stream: mlx_stream) -> c_int {
    status("mlx_stream_get_device", || handle::assign(dev, handle::get(stream)?.device))
}

/// `mlx_stream_get_index`.
///
/// # Safety
/// `index` writable; `stream` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_stream_get_index(index: *mut c_int, stream: mlx_stream) -> c_int {
    status("mlx_stream_get_index", || arg::out(index, handle::get(stream)?.index as c_int, "index"))
}

/// `mlx_synchronize`: waits for the stream's queued work.
///
/// # Safety
/// `stream` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_synchronize(stream: mlx_stream) -> c_int {
    status("mlx_synchronize", || device::synchronize(*handle::get(stream)?))
}

/// `mlx_get_default_stream`: the default stream of `dev`.
///
/// # Safety
/// `stream` points to a valid handle; `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_get_default_stream(stream: *mut mlx_stream, dev: mlx_device) -> c_int {
    status("mlx_get_default_stream", || handle::assign(stream, device::default_stream(arg::device(dev)?)?))
}

/// `mlx_set_default_stream`.
///
/// # Safety
/// `stream` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_set_default_stream(stream: mlx_stream) -> c_int {
    status("mlx_set_default_stream", || device::set_default_stream(*handle::get(stream)?))
}

/// `mlx_default_cpu_stream_new`: the current default CPU stream.
#[no_mangle]
pub extern "C" fn mlx_default_cpu_stream_new() -> mlx_stream {
    guard("mlx_default_cpu_stream_new", handle::empty(), || Ok(handle::new(device::default_stream(Device::CPU)?)))
}

/// `mlx_default_gpu_stream_new`: the current default GPU stream; without a GPU backend this
/// reports an error and returns the empty handle.
#[no_mangle]
pub extern "C" fn mlx_default_gpu_stream_new() -> mlx_stream {
    guard("mlx_default_gpu_stream_new", handle::empty(), || Ok(handle::new(device::default_stream(Device::GPU)?)))
}
