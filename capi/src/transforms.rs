//! `mlx_eval` / `mlx_async_eval` (the part of mlx-c `transforms.h` that needs no closures).

use crate::arg;
use crate::error::status;
use crate::types::mlx_vector_array;
use core::ffi::c_int;

/// `mlx_eval`: computes every array of `outputs`.
///
/// # Safety
/// `outputs` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_eval(outputs: mlx_vector_array) -> c_int {
    status("mlx_eval", || mlx_arm_core::eval(&arg::vector_array(outputs)?))
}

/// `mlx_async_eval`: like `mlx_eval` (CPU work completes before it returns).
///
/// # Safety
/// `outputs` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_async_eval(outputs: mlx_vector_array) -> c_int {
    status("mlx_async_eval", || mlx_arm_core::async_eval(&arg::vector_array(outputs)?))
}
