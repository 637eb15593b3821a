//! `mlx_arm_get_array_buffer_size` (more ops): the bytes of the buffers behind evaluated arrays,
//! each buffer counted once however many arrays view it — `mx.get_array_buffer_size`.

use crate::arg;
use crate::error::status;
use crate::types::mlx_vector_array;
use core::ffi::c_int;
use mlx_arm_core::Error;

/// `*res` = the summed length of the distinct buffers of `arrays`; an unevaluated array is an
/// error (MLX's ValueError), nothing is evaluated.
///
/// # Safety
/// `res` writable; `arrays` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_get_array_buffer_size(res: *mut usize, arrays: mlx_vector_array) -> c_int {
    status("mlx_arm_get_array_buffer_size", || {
        let mut seen = alloc::collections::BTreeSet::new();
        let mut total = 0usize;
        for a in arg::vector_array(arrays)? {
            if !a.is_available() {
                return Err(Error::invalid(
                    "get_array_buffer_size",
                    "Arrays must be evaluated before querying buffer size.",
                ));
            }
            let buf = a.data()?.buf;
            let key = alloc::sync::Arc::as_ptr(&buf) as *const u8;
            if seen.insert(key) {
                total = total.saturating_add(buf.len());
            }
        }
        arg::out(res, total, "res")
    })
}
