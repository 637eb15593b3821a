//! mlx-c `compile.h`: compiled closures over core's `transforms::compile`, the global compile
//! mode, and `mlx_detail_compile`'s process-wide cache of compiled functions keyed by a
//! function id and scalar constants.

use crate::closure::{self, ClosureFn};
use crate::error::status;
use crate::handle;
use crate::types::mlx_closure;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_int;
use mlx_arm_core::transforms::compile::{compile, set_compile_mode, CompileMode, Compiled};
use mlx_arm_core::{Array, Error};

/// mlx-c's `mlx_compile_mode` (an `int`-sized C enum).
#[allow(non_camel_case_types)]
pub type mlx_compile_mode = c_int;

/// `(fun_id, shapeless, constants)` → the compiled function kept for them.
type Kept = (usize, bool, Vec<u64>, Arc<Compiled>);

/// The functions `mlx_detail_compile` keeps.
struct Cache(spin::Mutex<Vec<Kept>>);
static CACHE: Cache = Cache(spin::Mutex::new(Vec::new()));

/// The C closure of a compiled function.
fn closure_of(c: Arc<Compiled>) -> ClosureFn {
    Arc::new(move |xs: &[Array]| c.call(xs))
}

/// `mlx_compile`: `*res` = the compiled form of `fun`.
///
/// # Safety
/// `res` valid; `fun` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_compile(res: *mut mlx_closure, fun: mlx_closure, shapeless: bool) -> c_int {
    status("mlx_compile", || {
        let f = closure::get(fun)?;
        handle::assign(res, closure_of(Arc::new(compile(crate::custom::array_fn(f), shapeless))))
    })
}

/// `mlx_detail_compile`: like `mlx_compile`, kept under `fun_id` and `constants`.
///
/// # Safety
/// `res` valid; `fun` live; `constants` holds `constants_num` values (or is NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn mlx_detail_compile(
    res: *mut mlx_closure,
    fun: mlx_closure,
    fun_id: usize,
    shapeless: bool,
    constants: *const u64,
    constants_num: usize,
) -> c_int {
    status("mlx_detail_compile", || {
        let consts: Vec<u64> = if constants_num == 0 {
            Vec::new()
        } else if constants.is_null() {
            return Err(Error::invalid("mlx_detail_compile", "constants is NULL but constants_num is not 0"));
        } else {
            core::slice::from_raw_parts(constants, constants_num).to_vec()
        };
        let mut cache = CACHE.0.lock();
        let found = cache.iter().find(|(id, s, c, _)| *id == fun_id && *s == shapeless && *c == consts).map(|k| k.3.clone());
        let compiled = match found {
            Some(c) => c,
            None => {
                let c = Arc::new(compile(crate::custom::array_fn(closure::get(fun)?), shapeless));
                cache.push((fun_id, shapeless, consts, c.clone()));
                c
            }
        };
        drop(cache);
        handle::assign(res, closure_of(compiled))
    })
}

/// `mlx_detail_compile_clear_cache`.
#[no_mangle]
pub extern "C" fn mlx_detail_compile_clear_cache() -> c_int {
    CACHE.0.lock().clear();
    0
}

/// `mlx_detail_compile_erase`: forgets the functions kept under `fun_id`.
#[no_mangle]
pub extern "C" fn mlx_detail_compile_erase(fun_id: usize) -> c_int {
    CACHE.0.lock().retain(|k| k.0 != fun_id);
    0
}

/// `mlx_disable_compile`.
#[no_mangle]
pub extern "C" fn mlx_disable_compile() -> c_int {
    set_compile_mode(CompileMode::Disabled);
    0
}

/// `mlx_enable_compile`.
#[no_mangle]
pub extern "C" fn mlx_enable_compile() -> c_int {
    set_compile_mode(CompileMode::Enabled);
    0
}

/// `mlx_set_compile_mode`.
#[no_mangle]
pub extern "C" fn mlx_set_compile_mode(mode: mlx_compile_mode) -> c_int {
    status("mlx_set_compile_mode", || {
        let m = match mode {
            0 => CompileMode::Disabled,
            1 => CompileMode::NoSimplify,
            2 => CompileMode::NoFuse,
            3 => CompileMode::Enabled,
            _ => return Err(Error::invalid("mlx_set_compile_mode", alloc::format!("unknown compile mode {mode}"))),
        };
        set_compile_mode(m);
        Ok(())
    })
}
