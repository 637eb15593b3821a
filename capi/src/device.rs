//! `mlx_device` and `mlx_device_info` (mlx-c `device.h`). The CPU always exists; a GPU only
//! when a backend crate registers one, and asking for it otherwise is an error.

use crate::arg;
use crate::error::{guard, status};
use crate::handle;
use crate::string::cstring;
use crate::types::*;
use core::ffi::{c_char, c_int};
use mlx_arm_core::{device, Device, DeviceType, Error};
use crate::prelude::*;

/// `mlx_device_new`: the empty device handle.
#[no_mangle]
pub extern "C" fn mlx_device_new() -> mlx_device {
    handle::empty()
}

/// `mlx_device_new_type`: a device value (it need not be available).
#[no_mangle]
pub extern "C" fn mlx_device_new_type(type_: mlx_device_type, index: c_int) -> mlx_device {
    guard("mlx_device_new_type", handle::empty(), || {
        let kind = arg::device_type(type_)?;
        let index = u32::try_from(index).map_err(|_| Error::invalid("mlx_device_new_type", "negative device index"))?;
        Ok(handle::new(Device { kind, index }))
    })
}

/// `mlx_device_free`.
///
/// # Safety
/// `dev` empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_free(dev: mlx_device) -> c_int {
    handle::free(dev);
    0
}

/// `mlx_device_set`.
///
/// # Safety
/// `dev` points to a valid handle; `src` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_set(dev: *mut mlx_device, src: mlx_device) -> c_int {
    status("mlx_device_set", || handle::assign(dev, arg::device(src)?))
}

/// MLX's text for a device: `Device(cpu, 0)`.
pub(crate) fn device_text(d: Device) -> String {
    let kind = match d.kind {
        DeviceType::Cpu => "cpu",
        DeviceType::Gpu => "gpu",
    };
    format!("Device({kind}, {})", d.index)
}

/// `mlx_device_tostring`.
///
/// # Safety
/// `str` points to a valid handle; `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_tostring(str: *mut mlx_string, dev: mlx_device) -> c_int {
    status("mlx_device_tostring", || handle::assign(str, cstring(&device_text(arg::device(dev)?))))
}

/// `mlx_device_equal` (false when either handle is empty).
///
/// # Safety
/// Both empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_equal(lhs: mlx_device, rhs: mlx_device) -> bool {
    matches!((handle::get(lhs), handle::get(rhs)), (Ok(a), Ok(b)) if a == b)
}

/// `mlx_device_get_index`.
///
/// # Safety
/// `index` writable; `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_get_index(index: *mut c_int, dev: mlx_device) -> c_int {
    status("mlx_device_get_index", || arg::out(index, arg::device(dev)?.index as c_int, "index"))
}

/// `mlx_device_get_type`.
///
/// # Safety
/// `type_` writable; `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_get_type(type_: *mut mlx_device_type, dev: mlx_device) -> c_int {
    status("mlx_device_get_type", || {
        let t = match arg::device(dev)?.kind {
            DeviceType::Cpu => 0,
            DeviceType::Gpu => 1,
        };
        arg::out(type_, t, "type")
    })
}

/// `mlx_get_default_device`.
///
/// # Safety
/// `dev` points to a valid handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_get_default_device(dev: *mut mlx_device) -> c_int {
    status("mlx_get_default_device", || handle::assign(dev, device::default_device()))
}

/// `mlx_set_default_device`: an error for a device no backend provides.
///
/// # Safety
/// `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_set_default_device(dev: mlx_device) -> c_int {
    status("mlx_set_default_device", || device::set_default_device(arg::device(dev)?))
}

fn available(d: Device) -> bool {
    d.kind == DeviceType::Cpu && d.index == 0 || mlx_arm_core::backend::has_device(d)
}

/// `mlx_device_is_available`.
///
/// # Safety
/// `avail` writable; `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_is_available(avail: *mut bool, dev: mlx_device) -> c_int {
    status("mlx_device_is_available", || arg::out(avail, available(arg::device(dev)?), "avail"))
}

/// `mlx_device_count`: 1 CPU; GPUs registered by backends.
///
/// # Safety
/// `count` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_count(count: *mut c_int, type_: mlx_device_type) -> c_int {
    status("mlx_device_count", || {
        let n = match arg::device_type(type_)? {
            DeviceType::Cpu => 1,
            DeviceType::Gpu => (0..16u32).filter(|&i| mlx_arm_core::backend::has_device(Device { kind: DeviceType::Gpu, index: i })).count(),
        };
        arg::out(count, n as c_int, "count")
    })
}

/// One device property.
pub enum InfoValue {
    /// Text.
    Str(CString),
    /// A size.
    Size(usize),
}

/// `mlx_device_info`: key/value properties of a device.
pub type DeviceInfo = Vec<(CString, InfoValue)>;

/// `mlx_device_info_new`: the empty handle.
#[no_mangle]
pub extern "C" fn mlx_device_info_new() -> mlx_device_info {
    handle::empty()
}

/// `mlx_device_info_get`: `device_name`, `architecture` (strings) and, for the CPU,
/// `num_cores` (size).
///
/// # Safety
/// `info` points to a valid handle; `dev` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_info_get(info: *mut mlx_device_info, dev: mlx_device) -> c_int {
    status("mlx_device_info_get", || {
        let d = arg::device(dev)?;
        device::check_available(d, "mlx_device_info_get")?;
        let mut v: DeviceInfo = Vec::new();
        match d.kind {
            DeviceType::Cpu => {
                v.push((cstring("device_name"), InfoValue::Str(cstring("cpu"))));
                v.push((cstring("architecture"), InfoValue::Str(cstring(crate::host::arch()))));
                let cores = crate::host::cpu_cores();
                v.push((cstring("num_cores"), InfoValue::Size(cores)));
            }
            DeviceType::Gpu => {
                let name = mlx_arm_core::backend::for_device(d).map(|b| b.name().to_string()).unwrap_or_default();
                v.push((cstring("device_name"), InfoValue::Str(cstring(&name))));
                v.push((cstring("architecture"), InfoValue::Str(cstring(&name))));
            }
        }
        handle::assign(info, v)
    })
}

/// `mlx_device_info_free`.
///
/// # Safety
/// `info` empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_info_free(info: mlx_device_info) -> c_int {
    handle::free(info);
    0
}

unsafe fn lookup<'a>(info: mlx_device_info, key: *const c_char) -> mlx_arm_core::Result<Option<&'a InfoValue>> {
    let k = arg::string(key, "key")?;
    Ok(handle::get(info)?.iter().find(|(name, _)| name.to_bytes() == k.as_bytes()).map(|(_, v)| v))
}

/// `mlx_device_info_has_key`.
///
/// # Safety
/// `exists` writable; `info` live; `key` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_info_has_key(exists: *mut bool, info: mlx_device_info, key: *const c_char) -> c_int {
    status("mlx_device_info_has_key", || arg::out(exists, lookup(info, key)?.is_some(), "exists"))
}

/// `mlx_device_info_is_string`.
///
/// # Safety
/// As [`mlx_device_info_has_key`].
#[no_mangle]
pub unsafe extern "C" fn mlx_device_info_is_string(is_string: *mut bool, info: mlx_device_info, key: *const c_char) -> c_int {
    status("mlx_device_info_is_string", || arg::out(is_string, matches!(lookup(info, key)?, Some(InfoValue::Str(_))), "is_string"))
}

/// `mlx_device_info_get_string`: 0, 1 on error, 2 when the key is absent or not a string.
///
/// # Safety
/// As [`mlx_device_info_has_key`].
#[no_mangle]
pub unsafe extern "C" fn mlx_device_info_get_string(value: *mut *const c_char, info: mlx_device_info, key: *const c_char) -> c_int {
    guard("mlx_device_info_get_string", 1, || match lookup(info, key)? {
        Some(InfoValue::Str(s)) => arg::out(value, s.as_ptr(), "value").map(|()| 0),
        _ => Ok(2),
    })
}

/// `mlx_device_info_get_size`: 0, 1 on error, 2 when the key is absent or not a size.
///
/// # Safety
/// As [`mlx_device_info_has_key`].
#[no_mangle]
pub unsafe extern "C" fn mlx_device_info_get_size(value: *mut usize, info: mlx_device_info, key: *const c_char) -> c_int {
    guard("mlx_device_info_get_size", 1, || match lookup(info, key)? {
        Some(InfoValue::Size(n)) => arg::out(value, *n, "value").map(|()| 0),
        _ => Ok(2),
    })
}

/// `mlx_device_info_get_keys`.
///
/// # Safety
/// `keys` points to a valid handle; `info` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_device_info_get_keys(keys: *mut mlx_vector_string, info: mlx_device_info) -> c_int {
    status("mlx_device_info_get_keys", || {
        let v: Vec<CString> = handle::get(info)?.iter().map(|(k, _)| k.clone()).collect();
        handle::assign(keys, v)
    })
}
