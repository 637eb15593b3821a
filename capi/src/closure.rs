//! Closures (mlx-c `closure.h`): C functions (with an optional payload and its destructor)
//! wrapped as callable handles, which the transforms (`transforms.rs`) take and return.
//!
//! - A handle holds an `Arc` of a Rust closure, so `*_set` shares it and the payload's
//!   destructor runs once, when the last handle (or transform result) holding it is freed.
//! - A C function reports failure by returning non-zero; that becomes an error (mlx-c's
//!   message `mlx_closure returned a non-zero value`) which travels up through the transform
//!   that called it and comes out as the outer call's error status — never a crash.
//! - The C function gets fresh handles for its inputs and a fresh (non-empty, as in mlx-c)
//!   result vector; all are freed after it returns.

use crate::arg;
use crate::error::{guard, status};
use crate::handle::{self, Handle};
use crate::map::ArrayMap;
use crate::prelude::*;
use crate::types::*;
use alloc::sync::Arc;
use core::ffi::{c_int, c_void};
use mlx_arm_core::{Array, Error, Result};

/// `mlx_closure`: arrays to arrays.
pub type ClosureFn = Arc<dyn Fn(&[Array]) -> Result<Vec<Array>>>;
/// `mlx_closure_kwargs`: arrays and named arrays to arrays.
pub type KwargsFn = Arc<dyn Fn(&[Array], &ArrayMap) -> Result<Vec<Array>>>;
/// `mlx_closure_value_and_grad`: arrays to (values, gradients).
pub type ValueAndGradFn = Arc<dyn Fn(&[Array]) -> Result<(Vec<Array>, Vec<Array>)>>;
/// `mlx_closure_custom`: (primals, cotangents, outputs) to vjps, as MLX's custom vjp takes them.
pub type CustomFn = Arc<dyn Fn(&[Array], &[Array], &[Array]) -> Result<Vec<Array>>>;
/// `mlx_closure_custom_jvp`: (primals, tangents, argnums) to jvps.
pub type CustomJvpFn = Arc<dyn Fn(&[Array], &[Array], &[c_int]) -> Result<Vec<Array>>>;
/// `mlx_closure_custom_vmap`: (inputs, axes) to (outputs, output axes).
pub type CustomVmapFn = Arc<dyn Fn(&[Array], &[c_int]) -> Result<(Vec<Array>, Vec<c_int>)>>;

/// A C payload and its destructor, run when the last closure holding it goes away.
struct Payload {
    ptr: *mut c_void,
    dtor: mlx_dtor,
}

impl Drop for Payload {
    fn drop(&mut self) {
        if let Some(d) = self.dtor {
            // SAFETY: the caller gave this destructor for this payload; it runs once.
            unsafe { d(self.ptr) }
        }
    }
}

/// The error for a C function that returned non-zero (mlx-c's wording).
fn failed(what: &'static str) -> Error {
    Error::runtime(what, "mlx_closure returned a non-zero value")
}

/// A NULL function pointer is an error at creation, not a crash at the first call.
fn need<F>(f: Option<F>, what: &'static str) -> Result<F> {
    f.ok_or_else(|| Error::invalid(what, format!("[{what}] the function pointer is NULL")))
}

/// Input handles owned for one call into C (freed on drop, even on error).
struct Owned<H: Handle>(H);

impl<H: Handle> Owned<H> {
    fn new(inner: H::Inner) -> Owned<H> {
        Owned(handle::new(inner))
    }
}

impl<H: Handle> Drop for Owned<H> {
    fn drop(&mut self) {
        // SAFETY: made by `handle::new` above and freed only here. The C function is told
        // (as in mlx-c) not to free its inputs.
        unsafe { handle::free(self.0) }
    }
}

/// Calls `f` with a fresh result vector; the vector's arrays once `f` returns 0.
fn call_vec(what: &'static str, f: impl FnOnce(*mut mlx_vector_array) -> c_int) -> Result<Vec<Array>> {
    let mut res = Owned::<mlx_vector_array>::new(Vec::new());
    if f(&mut res.0) != 0 {
        return Err(failed(what));
    }
    // SAFETY: `res.0` is the handle made above, or one the C function stored there.
    unsafe { Ok(handle::get(res.0)?.clone()) }
}

/// The payload's `void*` (NULL when there is none).
fn raw(p: &Option<Arc<Payload>>) -> *mut c_void {
    p.as_ref().map_or(core::ptr::null_mut(), |p| p.ptr)
}

/// The value of a closure handle, with its empty-handle error.
///
/// # Safety
/// `h` must be empty or live.
pub(crate) unsafe fn get<H: Handle>(h: H) -> Result<H::Inner>
where
    H::Inner: Clone,
{
    Ok(handle::get(h)?.clone())
}

/// `new` (the empty handle), `free` and `set` of each closure type.
macro_rules! closure_handle_api {
    ($($h:ident => $new:ident, $free:ident, $set:ident;)*) => {$(
        #[doc = concat!("`", stringify!($new), "`: the empty handle.")]
        #[no_mangle]
        pub extern "C" fn $new() -> $h {
            handle::empty()
        }
        #[doc = concat!("`", stringify!($free), "`.")]
        ///
        /// # Safety
        /// `cls` must be empty or live, freed once.
        #[no_mangle]
        pub unsafe extern "C" fn $free(cls: $h) -> c_int {
            handle::free(cls);
            0
        }
        #[doc = concat!("`", stringify!($set), "`: `*cls` shares `src`'s function.")]
        ///
        /// # Safety
        /// `cls` must point to a valid handle; `src` must be live.
        #[no_mangle]
        pub unsafe extern "C" fn $set(cls: *mut $h, src: $h) -> c_int {
            status(stringify!($set), || { let f = get(src)?; handle::assign(cls, f) })
        }
    )*};
}

closure_handle_api! {
    mlx_closure => mlx_closure_new, mlx_closure_free, mlx_closure_set;
    mlx_closure_kwargs => mlx_closure_kwargs_new, mlx_closure_kwargs_free, mlx_closure_kwargs_set;
    mlx_closure_value_and_grad => mlx_closure_value_and_grad_new, mlx_closure_value_and_grad_free, mlx_closure_value_and_grad_set;
    mlx_closure_custom => mlx_closure_custom_new, mlx_closure_custom_free, mlx_closure_custom_set;
    mlx_closure_custom_jvp => mlx_closure_custom_jvp_new, mlx_closure_custom_jvp_free, mlx_closure_custom_jvp_set;
    mlx_closure_custom_vmap => mlx_closure_custom_vmap_new, mlx_closure_custom_vmap_free, mlx_closure_custom_vmap_set;
}

// --- mlx_closure ---------------------------------------------------------------------------

type VecFn = unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, *mut c_void) -> c_int;

fn closure_of(f: impl Fn(*mut mlx_vector_array, mlx_vector_array) -> c_int + 'static) -> mlx_closure {
    let f: ClosureFn = Arc::new(move |xs: &[Array]| {
        let input = Owned::<mlx_vector_array>::new(xs.to_vec());
        call_vec("mlx_closure", |res| f(res, input.0))
    });
    handle::new(f)
}

/// `mlx_closure_new_func`: a closure calling `fun(&res, inputs)`.
///
/// # Safety
/// `fun` must be a valid function for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_new_func(fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array) -> c_int>) -> mlx_closure {
    guard("mlx_closure_new_func", handle::empty(), || {
        let fun = need(fun, "mlx_closure_new_func")?;
        Ok(closure_of(move |res, x| unsafe { fun(res, x) }))
    })
}

/// `mlx_closure_new_func_payload`: a closure calling `fun(&res, inputs, payload)`;
/// `dtor(payload)` (if not NULL) runs when the last holder is freed.
///
/// # Safety
/// `fun` and `dtor` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_new_func_payload(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, *mut c_void) -> c_int>,
    payload: *mut c_void,
    dtor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> mlx_closure {
    let p = payload_or_dtor(payload, dtor);
    guard("mlx_closure_new_func_payload", handle::empty(), || {
        let fun: VecFn = need(fun, "mlx_closure_new_func_payload")?;
        let p = p;
        Ok(closure_of(move |res, x| unsafe { fun(res, x, raw(&p)) }))
    })
}

/// The payload, owned from now on: if creation fails the guard drops it and `dtor` runs at
/// once (as mlx-c's shared_ptr does).
fn payload_or_dtor(ptr: *mut c_void, dtor: mlx_dtor) -> Option<Arc<Payload>> {
    Some(Arc::new(Payload { ptr, dtor }))
}

/// `mlx_closure_new_unary`: a closure of one array to one array.
///
/// # Safety
/// `fun` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_new_unary(fun: Option<unsafe extern "C" fn(*mut mlx_array, mlx_array) -> c_int>) -> mlx_closure {
    guard("mlx_closure_new_unary", handle::empty(), || {
        let fun = need(fun, "mlx_closure_new_unary")?;
        let f: ClosureFn = Arc::new(move |xs: &[Array]| {
            if xs.len() != 1 {
                return Err(Error::invalid("mlx_closure", "closure: expected unary input"));
            }
            let input = Owned::<mlx_array>::new(crate::array::ArrayCtx::new(xs[0].clone()));
            let mut res = Owned::<mlx_array>(handle::empty());
            if unsafe { fun(&mut res.0, input.0) } != 0 {
                return Err(failed("mlx_closure"));
            }
            Ok(vec![unsafe { arg::array(res.0, "res")? }])
        });
        Ok(handle::new(f))
    })
}

/// `mlx_closure_apply`: `*res` = `cls(input)`.
///
/// # Safety
/// `res` must point to a valid handle; `cls` and `input` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_apply(res: *mut mlx_vector_array, cls: mlx_closure, input: mlx_vector_array) -> c_int {
    status("mlx_closure_apply", || {
        let f = get(cls)?;
        let out = f(&arg::vector_array(input)?)?;
        arg::set_vector_array(res, out)
    })
}

// --- mlx_closure_kwargs ---------------------------------------------------------------------

fn kwargs_of(f: impl Fn(*mut mlx_vector_array, mlx_vector_array, mlx_map_string_to_array) -> c_int + 'static) -> mlx_closure_kwargs {
    let f: KwargsFn = Arc::new(move |xs: &[Array], kw: &ArrayMap| {
        let input = Owned::<mlx_vector_array>::new(xs.to_vec());
        let map = Owned::<mlx_map_string_to_array>::new(kw.clone());
        call_vec("mlx_closure_kwargs", |res| f(res, input.0, map.0))
    });
    handle::new(f)
}

/// `mlx_closure_kwargs_new_func`.
///
/// # Safety
/// `fun` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_kwargs_new_func(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, mlx_map_string_to_array) -> c_int>,
) -> mlx_closure_kwargs {
    guard("mlx_closure_kwargs_new_func", handle::empty(), || {
        let fun = need(fun, "mlx_closure_kwargs_new_func")?;
        Ok(kwargs_of(move |r, x, k| unsafe { fun(r, x, k) }))
    })
}

/// `mlx_closure_kwargs_new_func_payload`.
///
/// # Safety
/// `fun` and `dtor` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_kwargs_new_func_payload(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, mlx_map_string_to_array, *mut c_void) -> c_int>,
    payload: *mut c_void,
    dtor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> mlx_closure_kwargs {
    let p = payload_or_dtor(payload, dtor);
    guard("mlx_closure_kwargs_new_func_payload", handle::empty(), || {
        let fun = need(fun, "mlx_closure_kwargs_new_func_payload")?;
        let p = p;
        Ok(kwargs_of(move |r, x, k| unsafe { fun(r, x, k, raw(&p)) }))
    })
}

/// `mlx_closure_kwargs_apply`.
///
/// # Safety
/// `res` valid; the other handles live.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_kwargs_apply(
    res: *mut mlx_vector_array,
    cls: mlx_closure_kwargs,
    input_0: mlx_vector_array,
    input_1: mlx_map_string_to_array,
) -> c_int {
    status("mlx_closure_kwargs_apply", || {
        let f = get(cls)?;
        let out = f(&arg::vector_array(input_0)?, handle::get(input_1)?)?;
        arg::set_vector_array(res, out)
    })
}

// --- mlx_closure_value_and_grad -------------------------------------------------------------

/// Calls `f` with two fresh result vectors.
fn call_vec2(what: &'static str, f: impl FnOnce(*mut mlx_vector_array, *mut mlx_vector_array) -> c_int) -> Result<(Vec<Array>, Vec<Array>)> {
    let mut r0 = Owned::<mlx_vector_array>::new(Vec::new());
    let mut r1 = Owned::<mlx_vector_array>::new(Vec::new());
    if f(&mut r0.0, &mut r1.0) != 0 {
        return Err(failed(what));
    }
    unsafe { Ok((handle::get(r0.0)?.clone(), handle::get(r1.0)?.clone())) }
}

fn value_and_grad_of(f: impl Fn(*mut mlx_vector_array, *mut mlx_vector_array, mlx_vector_array) -> c_int + 'static) -> mlx_closure_value_and_grad {
    let f: ValueAndGradFn = Arc::new(move |xs: &[Array]| {
        let input = Owned::<mlx_vector_array>::new(xs.to_vec());
        call_vec2("mlx_closure_value_and_grad", |r0, r1| f(r0, r1, input.0))
    });
    handle::new(f)
}

/// `mlx_closure_value_and_grad_new_func`.
///
/// # Safety
/// `fun` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_value_and_grad_new_func(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, *mut mlx_vector_array, mlx_vector_array) -> c_int>,
) -> mlx_closure_value_and_grad {
    guard("mlx_closure_value_and_grad_new_func", handle::empty(), || {
        let fun = need(fun, "mlx_closure_value_and_grad_new_func")?;
        Ok(value_and_grad_of(move |a, b, x| unsafe { fun(a, b, x) }))
    })
}

/// `mlx_closure_value_and_grad_new_func_payload`.
///
/// # Safety
/// `fun` and `dtor` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_value_and_grad_new_func_payload(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, *mut mlx_vector_array, mlx_vector_array, *mut c_void) -> c_int>,
    payload: *mut c_void,
    dtor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> mlx_closure_value_and_grad {
    let p = payload_or_dtor(payload, dtor);
    guard("mlx_closure_value_and_grad_new_func_payload", handle::empty(), || {
        let fun = need(fun, "mlx_closure_value_and_grad_new_func_payload")?;
        let p = p;
        Ok(value_and_grad_of(move |a, b, x| unsafe { fun(a, b, x, raw(&p)) }))
    })
}

/// `mlx_closure_value_and_grad_apply`: `(*res_0, *res_1)` = `cls(input)`.
///
/// # Safety
/// `res_0`, `res_1` valid; `cls`, `input` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_value_and_grad_apply(
    res_0: *mut mlx_vector_array,
    res_1: *mut mlx_vector_array,
    cls: mlx_closure_value_and_grad,
    input: mlx_vector_array,
) -> c_int {
    status("mlx_closure_value_and_grad_apply", || {
        check_pair(res_0, res_1)?;
        let f = get(cls)?;
        let (v, g) = f(&arg::vector_array(input)?)?;
        arg::set_vector_array(res_0, v)?;
        arg::set_vector_array(res_1, g)
    })
}

/// Both result pointers are checked before anything is written, so a failure changes neither.
pub(crate) fn check_pair<A, B>(a: *mut A, b: *mut B) -> Result<()> {
    if a.is_null() || b.is_null() {
        return Err(Error::invalid("mlx_vector_array", "the result mlx_vector_array* is NULL"));
    }
    Ok(())
}

// --- mlx_closure_custom (custom vjp) --------------------------------------------------------

fn custom_of(
    f: impl Fn(*mut mlx_vector_array, mlx_vector_array, mlx_vector_array, mlx_vector_array) -> c_int + 'static,
) -> mlx_closure_custom {
    let f: CustomFn = Arc::new(move |a: &[Array], b: &[Array], c: &[Array]| {
        let (a, b, c) = (Owned::<mlx_vector_array>::new(a.to_vec()), Owned::<mlx_vector_array>::new(b.to_vec()), Owned::<mlx_vector_array>::new(c.to_vec()));
        call_vec("mlx_closure_custom", |res| f(res, a.0, b.0, c.0))
    });
    handle::new(f)
}

/// `mlx_closure_custom_new_func`.
///
/// # Safety
/// `fun` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_new_func(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, mlx_vector_array, mlx_vector_array) -> c_int>,
) -> mlx_closure_custom {
    guard("mlx_closure_custom_new_func", handle::empty(), || {
        let fun = need(fun, "mlx_closure_custom_new_func")?;
        Ok(custom_of(move |r, a, b, c| unsafe { fun(r, a, b, c) }))
    })
}

/// `mlx_closure_custom_new_func_payload`.
///
/// # Safety
/// `fun` and `dtor` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_new_func_payload(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, mlx_vector_array, mlx_vector_array, *mut c_void) -> c_int>,
    payload: *mut c_void,
    dtor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> mlx_closure_custom {
    let p = payload_or_dtor(payload, dtor);
    guard("mlx_closure_custom_new_func_payload", handle::empty(), || {
        let fun = need(fun, "mlx_closure_custom_new_func_payload")?;
        let p = p;
        Ok(custom_of(move |r, a, b, c| unsafe { fun(r, a, b, c, raw(&p)) }))
    })
}

/// `mlx_closure_custom_apply`.
///
/// # Safety
/// `res` valid; the other handles live.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_apply(
    res: *mut mlx_vector_array,
    cls: mlx_closure_custom,
    input_0: mlx_vector_array,
    input_1: mlx_vector_array,
    input_2: mlx_vector_array,
) -> c_int {
    status("mlx_closure_custom_apply", || {
        let f = get(cls)?;
        let out = f(&arg::vector_array(input_0)?, &arg::vector_array(input_1)?, &arg::vector_array(input_2)?)?;
        arg::set_vector_array(res, out)
    })
}

// --- mlx_closure_custom_jvp -----------------------------------------------------------------

fn custom_jvp_of(
    f: impl Fn(*mut mlx_vector_array, mlx_vector_array, mlx_vector_array, *const c_int, usize) -> c_int + 'static,
) -> mlx_closure_custom_jvp {
    let f: CustomJvpFn = Arc::new(move |a: &[Array], b: &[Array], n: &[c_int]| {
        let (a, b) = (Owned::<mlx_vector_array>::new(a.to_vec()), Owned::<mlx_vector_array>::new(b.to_vec()));
        call_vec("mlx_closure_custom_jvp", |res| f(res, a.0, b.0, n.as_ptr(), n.len()))
    });
    handle::new(f)
}

/// `mlx_closure_custom_jvp_new_func`.
///
/// # Safety
/// `fun` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_jvp_new_func(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, mlx_vector_array, *const c_int, usize) -> c_int>,
) -> mlx_closure_custom_jvp {
    guard("mlx_closure_custom_jvp_new_func", handle::empty(), || {
        let fun = need(fun, "mlx_closure_custom_jvp_new_func")?;
        Ok(custom_jvp_of(move |r, a, b, p, n| unsafe { fun(r, a, b, p, n) }))
    })
}

/// `mlx_closure_custom_jvp_new_func_payload`.
///
/// # Safety
/// `fun` and `dtor` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_jvp_new_func_payload(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, mlx_vector_array, mlx_vector_array, *const c_int, usize, *mut c_void) -> c_int>,
    payload: *mut c_void,
    dtor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> mlx_closure_custom_jvp {
    let p = payload_or_dtor(payload, dtor);
    guard("mlx_closure_custom_jvp_new_func_payload", handle::empty(), || {
        let fun = need(fun, "mlx_closure_custom_jvp_new_func_payload")?;
        let p = p;
        Ok(custom_jvp_of(move |r, a, b, q, n| unsafe { fun(r, a, b, q, n, raw(&p)) }))
    })
}

/// `mlx_closure_custom_jvp_apply`.
///
/// # Safety
/// `res` valid; handles live; `input_2` holds `input_2_num` ints.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_jvp_apply(
    res: *mut mlx_vector_array,
    cls: mlx_closure_custom_jvp,
    input_0: mlx_vector_array,
    input_1: mlx_vector_array,
    input_2: *const c_int,
    input_2_num: usize,
) -> c_int {
    status("mlx_closure_custom_jvp_apply", || {
        let f = get(cls)?;
        let ints = arg::slice(input_2, input_2_num, "input_2")?;
        let out = f(&arg::vector_array(input_0)?, &arg::vector_array(input_1)?, ints)?;
        arg::set_vector_array(res, out)
    })
}

// --- mlx_closure_custom_vmap ----------------------------------------------------------------

fn custom_vmap_of(
    f: impl Fn(*mut mlx_vector_array, *mut mlx_vector_int, mlx_vector_array, *const c_int, usize) -> c_int + 'static,
) -> mlx_closure_custom_vmap {
    let f: CustomVmapFn = Arc::new(move |a: &[Array], n: &[c_int]| {
        let a = Owned::<mlx_vector_array>::new(a.to_vec());
        let mut r0 = Owned::<mlx_vector_array>::new(Vec::new());
        let mut r1 = Owned::<mlx_vector_int>::new(Vec::new());
        if f(&mut r0.0, &mut r1.0, a.0, n.as_ptr(), n.len()) != 0 {
            return Err(failed("mlx_closure_custom_vmap"));
        }
        unsafe { Ok((handle::get(r0.0)?.clone(), handle::get(r1.0)?.clone())) }
    });
    handle::new(f)
}

/// `mlx_closure_custom_vmap_new_func`.
///
/// # Safety
/// `fun` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_vmap_new_func(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, *mut mlx_vector_int, mlx_vector_array, *const c_int, usize) -> c_int>,
) -> mlx_closure_custom_vmap {
    guard("mlx_closure_custom_vmap_new_func", handle::empty(), || {
        let fun = need(fun, "mlx_closure_custom_vmap_new_func")?;
        Ok(custom_vmap_of(move |r0, r1, a, p, n| unsafe { fun(r0, r1, a, p, n) }))
    })
}

/// `mlx_closure_custom_vmap_new_func_payload`.
///
/// # Safety
/// `fun` and `dtor` valid for the closure's lifetime.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_vmap_new_func_payload(
    fun: Option<unsafe extern "C" fn(*mut mlx_vector_array, *mut mlx_vector_int, mlx_vector_array, *const c_int, usize, *mut c_void) -> c_int>,
    payload: *mut c_void,
    dtor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> mlx_closure_custom_vmap {
    let p = payload_or_dtor(payload, dtor);
    guard("mlx_closure_custom_vmap_new_func_payload", handle::empty(), || {
        let fun = need(fun, "mlx_closure_custom_vmap_new_func_payload")?;
        let p = p;
        Ok(custom_vmap_of(move |r0, r1, a, q, n| unsafe { fun(r0, r1, a, q, n, raw(&p)) }))
    })
}

/// `mlx_closure_custom_vmap_apply`.
///
/// # Safety
/// `res_0`, `res_1` valid; handles live; `input_1` holds `input_1_num` ints.
#[no_mangle]
pub unsafe extern "C" fn mlx_closure_custom_vmap_apply(
    res_0: *mut mlx_vector_array,
    res_1: *mut mlx_vector_int,
    cls: mlx_closure_custom_vmap,
    input_0: mlx_vector_array,
    input_1: *const c_int,
    input_1_num: usize,
) -> c_int {
    status("mlx_closure_custom_vmap_apply", || {
        check_pair(res_0, res_1)?;
        let f = get(cls)?;
        let ints = arg::slice(input_1, input_1_num, "input_1")?;
        let (a, axes) = f(&arg::vector_array(input_0)?, ints)?;
        arg::set_vector_array(res_0, a)?;
        handle::assign(res_1, axes)
    })
}
