//! `mlx_arm_get_array_buffer_size` (more ops): the bytes of the buffers behind evaluated arrays,
//! each buffer counted once however many arrays view it — `mx.get_array_buffer_size`.

use crate::arg;
use crate::error::status;
use crate::types::mlx_vector_array;
use core::ffi::c_int;
use mlx_arm_core::array::array_buffer_size;

/// `*res` = [`array_buffer_size`] of `arrays` (an unevaluated array is MLX's ValueError).
///
/// # Safety
/// `res` writable; `arrays` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_get_array_buffer_size(res: *mut usize, arrays: mlx_vector_array) -> c_int {
    status("mlx_arm_get_array_buffer_size", || {
        let total = array_buffer_size(&arg::vector_array(arrays)?)?;
        arg::out(res, total, "res")
    })
}
