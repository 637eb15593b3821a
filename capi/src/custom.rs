//! mlx-c `transforms.h`: `mlx_custom_function`, `mlx_custom_vjp` and `mlx_checkpoint`, over
//! core's `transforms::custom`. The result is an `mlx_closure` that runs `fun` and records one
//! custom node, whose vjp / jvp / vmap call the C rules (`mlx_closure_custom`,
//! `mlx_closure_custom_jvp`, `mlx_closure_custom_vmap`); an empty rule handle (`ctx == NULL`,
//! "may be null" in mlx-c) falls back to transforming `fun`.

use crate::closure::{self, ClosureFn};
use crate::error::status;
use crate::prelude::*;
use crate::types::*;
use alloc::sync::Arc;
use core::ffi::c_int;
use mlx_arm_core::transforms::custom::{self, ArrayFn, CustomFunction, JvpRule, VjpRule, VmapRule};
use mlx_arm_core::{Array, Error, Result};

/// A C closure stored in the graph. Core asks the rules to be `Send + Sync` because arrays
/// may move between threads; a C function pointer and its payload carry no thread affinity
/// of their own (mlx-c stores them in a `std::function` with the same contract): the rule runs
/// on whichever thread runs the transform, and the payload's destructor where the last
/// holder is dropped.
struct Shared<T>(T);

// SAFETY: see above — the closures hold only C function pointers, payload pointers and
// atomically counted `Arc`s; the C side's thread-safety is the caller's, as in mlx-c.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as for `Send`; calls take `&self` only.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The closure (a method, so closures capture the whole wrapper, not its field).
    fn get(&self) -> &T {
        &self.0
    }
}

/// A C closure as a `Send + Sync` function of arrays (custom functions and compile take one).
pub(crate) fn array_fn(f: ClosureFn) -> ArrayFn {
    let f = Shared(f);
    Arc::new(move |xs: &[Array]| (f.get())(xs))
}

/// `Some(rule)` for a non-empty handle, `None` for the empty one.
unsafe fn optional<H: crate::handle::Handle>(h: H) -> Result<Option<H::Inner>>
where
    H::Inner: Clone,
{
    if h.ctx().is_null() {
        return Ok(None);
    }
    Ok(Some(closure::get(h)?))
}

fn vjp_rule(f: closure::CustomFn) -> VjpRule {
    let f = Shared(f);
    Arc::new(move |p: &[Array], c: &[Array], o: &[Array]| (f.get())(p, c, o))
}

fn jvp_rule(f: closure::CustomJvpFn) -> JvpRule {
    let f = Shared(f);
    Arc::new(move |p: &[Array], t: &[Array], argnums: &[usize]| {
        let nums: Vec<c_int> = argnums.iter().map(|&a| a as c_int).collect();
        (f.get())(p, t, &nums)
    })
}

fn vmap_rule(f: closure::CustomVmapFn) -> VmapRule {
    let f = Shared(f);
    Arc::new(move |x: &[Array], axes: &[i32]| {
        let axes: Vec<c_int> = axes.iter().map(|&a| a as c_int).collect();
        let (outs, out_axes) = (f.get())(x, &axes)?;
        Ok((outs, out_axes.into_iter().map(|a| a as i32).collect()))
    })
}

/// `*res` = a closure calling `f` (wrapped for C).
unsafe fn set_result(res: *mut mlx_closure, f: Arc<CustomFunction>) -> Result<()> {
    if res.is_null() {
        return Err(Error::invalid("mlx_closure", "the result mlx_closure* is NULL"));
    }
    let f = Shared(f);
    let c: ClosureFn = Arc::new(move |xs: &[Array]| f.get().call(xs));
    crate::handle::assign(res, c)
}

/// `mlx_custom_function`: `*res` = `fun` with the given vjp, jvp and vmap rules; an empty
/// rule handle keeps the default (transforming `fun`).
///
/// # Safety
/// `res` valid; `fun` live; each rule handle empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_custom_function(
    res: *mut mlx_closure,
    fun: mlx_closure,
    fun_vjp: mlx_closure_custom,
    fun_jvp: mlx_closure_custom_jvp,
    fun_vmap: mlx_closure_custom_vmap,
) -> c_int {
    status("mlx_custom_function", || {
        let f = array_fn(closure::get(fun)?);
        let vjp = optional(fun_vjp)?.map(vjp_rule);
        let jvp = optional(fun_jvp)?.map(jvp_rule);
        let vmap = optional(fun_vmap)?.map(vmap_rule);
        set_result(res, CustomFunction::new(f, vjp, jvp, vmap))
    })
}

/// `mlx_custom_vjp`: `*res` = `fun` with the vjp rule `fun_vjp` (which must not be empty).
///
/// # Safety
/// `res` valid; `fun`, `fun_vjp` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_custom_vjp(res: *mut mlx_closure, fun: mlx_closure, fun_vjp: mlx_closure_custom) -> c_int {
    status("mlx_custom_vjp", || {
        let f = array_fn(closure::get(fun)?);
        set_result(res, custom::custom_vjp(f, vjp_rule(closure::get(fun_vjp)?)))
    })
}

/// `mlx_checkpoint`: `*res` = `fun`, whose vjp runs `fun` again instead of keeping its
/// intermediates.
///
/// # Safety
/// `res` valid; `fun` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_checkpoint(res: *mut mlx_closure, fun: mlx_closure) -> c_int {
    status("mlx_checkpoint", || set_result(res, custom::checkpoint(array_fn(closure::get(fun)?))))
}
