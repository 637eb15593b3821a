//! mlx-c `transforms.h`: evaluation (`mlx_eval`, `mlx_async_eval`) and the autodiff
//! transforms over closures (`mlx_vjp`, `mlx_jvp`, `mlx_value_and_grad`), which run core's
//! `transforms` on the closure's Rust function. An error inside the closure (a failed op, or
//! the C function returning non-zero) fails the transform with status 1.
//!
//! `mlx_arm_vmap` (an extension) runs core's `vmap`. `mlx_checkpoint`, `mlx_custom_function`
//! and `mlx_custom_vjp` live in `custom.rs`.

use crate::arg;
use crate::closure::{self, check_pair};
use crate::error::status;
use crate::prelude::*;
use crate::types::*;
use alloc::sync::Arc;
use core::ffi::c_int;
use mlx_arm_core::transforms;
use mlx_arm_core::{Array, Error, Result};

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

/// `mlx_vjp`: `*res_0` = `fun(primals)`, `*res_1` = the vector-Jacobian products with
/// `cotangents` (one per output), one per primal.
///
/// # Safety
/// `res_0`, `res_1` valid; the handles live.
#[no_mangle]
pub unsafe extern "C" fn mlx_vjp(
    res_0: *mut mlx_vector_array,
    res_1: *mut mlx_vector_array,
    fun: mlx_closure,
    primals: mlx_vector_array,
    cotangents: mlx_vector_array,
) -> c_int {
    status("mlx_vjp", || {
        check_pair(res_0, res_1)?;
        let f = closure::get(fun)?;
        let (outs, grads) = transforms::vjp(&*f, &arg::vector_array(primals)?, &arg::vector_array(cotangents)?)?;
        arg::set_vector_array(res_0, outs)?;
        arg::set_vector_array(res_1, grads)
    })
}

/// `mlx_jvp`: `*res_0` = `fun(primals)`, `*res_1` = the Jacobian-vector products with
/// `tangents` (one per primal), one per output.
///
/// # Safety
/// `res_0`, `res_1` valid; the handles live.
#[no_mangle]
pub unsafe extern "C" fn mlx_jvp(
    res_0: *mut mlx_vector_array,
    res_1: *mut mlx_vector_array,
    fun: mlx_closure,
    primals: mlx_vector_array,
    tangents: mlx_vector_array,
) -> c_int {
    status("mlx_jvp", || {
        check_pair(res_0, res_1)?;
        let f = closure::get(fun)?;
        let (outs, tans) = transforms::jvp(&*f, &arg::vector_array(primals)?, &arg::vector_array(tangents)?)?;
        arg::set_vector_array(res_0, outs)?;
        arg::set_vector_array(res_1, tans)
    })
}

/// MLX's argument numbers for one call: negative ones count from the end, the result is
/// sorted (gradients come back in that order), repeats and out-of-range numbers are errors
/// (MLX's messages).
fn sorted_argnums(argnums: &[c_int], n: usize) -> Result<Vec<usize>> {
    let mut args: Vec<i64> = argnums.iter().map(|&a| if a < 0 { a as i64 + n as i64 } else { a as i64 }).collect();
    args.sort_unstable();
    args.dedup();
    if args.len() != argnums.len() {
        return Err(Error::invalid("grad", "Repeat argument number not allowed in grad."));
    }
    if args.first().is_some_and(|&a| a < 0) || args.last().is_some_and(|&a| a >= n as i64) {
        return Err(Error::invalid("grad", format!("Invalid argument number for function with {n} inputs.")));
    }
    Ok(args.into_iter().map(|a| a as usize).collect())
}

/// `mlx_value_and_grad`: `*res` becomes a closure returning `(fun(inputs), gradients of the
/// first output — a scalar — with respect to inputs[argnums])`. Outputs after the first are
/// auxiliary: returned, not differentiated.
///
/// # Safety
/// `res` valid; `fun` live; `argnums` holds `argnums_num` ints.
#[no_mangle]
pub unsafe extern "C" fn mlx_value_and_grad(
    res: *mut mlx_closure_value_and_grad,
    fun: mlx_closure,
    argnums: *const c_int,
    argnums_num: usize,
) -> c_int {
    status("mlx_value_and_grad", || {
        if res.is_null() {
            return Err(Error::invalid("mlx_value_and_grad", "the result mlx_closure_value_and_grad* is NULL"));
        }
        let f = closure::get(fun)?;
        let argnums = arg::slice(argnums, argnums_num, "argnums")?.to_vec();
        if argnums.is_empty() {
            return Err(Error::invalid("grad", "Must specify at least one argument."));
        }
        let vg: closure::ValueAndGradFn = Arc::new(move |xs: &[Array]| {
            let nums = sorted_argnums(&argnums, xs.len())?;
            transforms::value_and_grad(&*f, xs, &nums)
        });
        // Replaced in place (every copy of *res sees it), as other results are.
        crate::handle::assign(res, vg)
    })
}

/// `mlx_arm_vmap`: `*res` = `vmap(fun, in_axes, out_axes)(inputs)` — `fun` vectorized over
/// axis `in_axes[i]` of input `i` (-1: not mapped), the mapped axis of output `j` placed at
/// `out_axes[j]`. Empty axis lists mean 0 for every input / output. (mlx-c exposes vmap only
/// through its `mlx_detail_vmap_*` internals; this is the one-call form.)
///
/// # Safety
/// `res` valid; handles live; the axis pointers hold their counts.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_vmap(
    res: *mut mlx_vector_array,
    fun: mlx_closure,
    inputs: mlx_vector_array,
    in_axes: *const c_int,
    in_axes_num: usize,
    out_axes: *const c_int,
    out_axes_num: usize,
) -> c_int {
    status("mlx_arm_vmap", || {
        if res.is_null() {
            return Err(Error::invalid("mlx_arm_vmap", "the result mlx_vector_array* is NULL"));
        }
        let f = closure::get(fun)?;
        let ins = arg::slice(in_axes, in_axes_num, "in_axes")?;
        let outs = arg::slice(out_axes, out_axes_num, "out_axes")?;
        let r = transforms::vmap(&*f, &arg::vector_array(inputs)?, ins, outs)?;
        arg::set_vector_array(res, r)
    })
}
