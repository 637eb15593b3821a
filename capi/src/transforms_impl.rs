//! mlx-c `transforms_impl.h`: the two halves of vmap (`mlx_detail_vmap_trace`,
//! `mlx_detail_vmap_replace`) over core's `transforms::vmap_trace` / `vmap_replace`, which
//! `mlx_arm_vmap` runs back to back.

use crate::arg;
use crate::closure::{self, check_pair};
use crate::error::status;
use crate::types::*;
use core::ffi::c_int;
use mlx_arm_core::transforms;
use mlx_arm_core::Error;

/// `mlx_detail_vmap_trace`: `*res_0` = tracers of one example of each mapped input (`in_axes[i]`
/// its mapped axis; an input with -1 passed as it is), `*res_1` = `fun` on them.
///
/// # Safety
/// `res_0`, `res_1` valid; handles live; `in_axes` holds `in_axes_num` ints.
#[no_mangle]
pub unsafe extern "C" fn mlx_detail_vmap_trace(
    res_0: *mut mlx_vector_array,
    res_1: *mut mlx_vector_array,
    fun: mlx_closure,
    inputs: mlx_vector_array,
    in_axes: *const c_int,
    in_axes_num: usize,
) -> c_int {
    status("mlx_detail_vmap_trace", || {
        check_pair(res_0, res_1)?;
        let f = closure::get(fun)?;
        let axes = arg::slice(in_axes, in_axes_num, "in_axes")?;
        let (s_inputs, s_outputs) = transforms::vmap_trace(&*f, &arg::vector_array(inputs)?, axes)?;
        arg::set_vector_array(res_0, s_inputs)?;
        arg::set_vector_array(res_1, s_outputs)
    })
}

/// `mlx_detail_vmap_replace`: `*res` = the graph from `s_inputs` to `s_outputs` (from
/// `mlx_detail_vmap_trace` with the same `in_axes`) replayed on the batched `inputs`, output
/// `j`'s mapped axis at `out_axes[j]`.
///
/// # Safety
/// `res` valid; handles live; the axis pointers hold their counts.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn mlx_detail_vmap_replace(
    res: *mut mlx_vector_array,
    inputs: mlx_vector_array,
    s_inputs: mlx_vector_array,
    s_outputs: mlx_vector_array,
    in_axes: *const c_int,
    in_axes_num: usize,
    out_axes: *const c_int,
    out_axes_num: usize,
) -> c_int {
    status("mlx_detail_vmap_replace", || {
        if res.is_null() {
            return Err(Error::invalid("mlx_detail_vmap_replace", "the result mlx_vector_array* is NULL"));
        }
        let ins = arg::slice(in_axes, in_axes_num, "in_axes")?;
        let outs = arg::slice(out_axes, out_axes_num, "out_axes")?;
        let r = transforms::vmap_replace(
            &arg::vector_array(inputs)?,
            &arg::vector_array(s_inputs)?,
            &arg::vector_array(s_outputs)?,
            ins,
            outs,
        )?;
        arg::set_vector_array(res, r)
    })
}
