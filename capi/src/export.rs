//! mlx-c `export.h`: functions traced and saved to a file (`mlx_export_function*`,
//! `mlx_function_exporter_*`) and loaded back (`mlx_imported_function_*`), over core's
//! `transforms::export` (docs/EXPORT.md). Hosted builds only: files need `std`.
//!
//! Keyword arguments: the traced closure of `mlx_function_exporter_apply_kwargs` receives the
//! positional arrays followed by the keyword arrays in name order (mlx-c's exporter takes a
//! plain `mlx_closure`); `mlx_export_function_kwargs` calls its `mlx_closure_kwargs` with the
//! map rebuilt.

use crate::arg;
use crate::closure::{self, ClosureFn};
use crate::error::{guard, status};
use crate::handle;
use crate::io::in_file;
use crate::map::ArrayMap;
use crate::prelude::*;
use crate::types::*;
use core::ffi::{c_char, c_int};
use mlx_arm_core::transforms::export::ExportedFunction;
use mlx_arm_core::{Array, Error, Result};

/// What an `mlx_function_exporter` holds: the file, the function, and the traces so far
/// (the file is rewritten with all of them after each call).
pub struct Exporter {
    file: String,
    fun: ClosureFn,
    shapeless: bool,
    traces: ExportedFunction,
}

/// The map's entries as `(name, array)` pairs (names must be UTF-8).
fn kwargs_of(map: &ArrayMap) -> Result<Vec<(String, Array)>> {
    map.iter()
        .map(|(k, v)| {
            let k = k.to_str().map_err(|_| Error::invalid("export_function", "a keyword name is not UTF-8"))?;
            Ok((String::from(k), v.clone()))
        })
        .collect()
}

/// `map` of a C handle, where the empty handle is the empty map.
unsafe fn kwargs_arg(map: mlx_map_string_to_array) -> Result<Vec<(String, Array)>> {
    if map.ctx.is_null() {
        return Ok(Vec::new());
    }
    kwargs_of(handle::get(map)?)
}

// The two handle types of this header (written out here: they exist only with `std`).
impl handle::Handle for mlx_function_exporter {
    type Inner = Exporter;
    const WHAT: &'static str = "mlx_function_exporter";
    fn ctx(self) -> *mut core::ffi::c_void {
        self.ctx
    }
    fn from_ctx(ctx: *mut core::ffi::c_void) -> Self {
        mlx_function_exporter { ctx }
    }
}

impl handle::Handle for mlx_imported_function {
    type Inner = ExportedFunction;
    const WHAT: &'static str = "mlx_imported_function";
    fn ctx(self) -> *mut core::ffi::c_void {
        self.ctx
    }
    fn from_ctx(ctx: *mut core::ffi::c_void) -> Self {
        mlx_imported_function { ctx }
    }
}

impl Exporter {
    /// Traces one more signature and rewrites the file.
    fn add(&mut self, args: &[Array], kwargs: &[(String, Array)]) -> Result<()> {
        let fun = self.fun.clone();
        self.traces.add(&*fun, args, kwargs, self.shapeless)?;
        let bytes = self.traces.to_bytes()?;
        std::fs::write(&self.file, bytes)
            .map_err(|e| Error::runtime("export_function", format!("Failed to write {}: {e}", self.file)))
    }
}

/// `mlx_export_function(file, fun, args, shapeless)`.
///
/// # Safety
/// `file` NUL-terminated; handles live.
#[no_mangle]
pub unsafe extern "C" fn mlx_export_function(file: *const c_char, fun: mlx_closure, args: mlx_vector_array, shapeless: bool) -> c_int {
    status("mlx_export_function", || {
        let mut x = Exporter { file: arg::string(file, "file")?.into(), fun: closure::get(fun)?, shapeless, traces: ExportedFunction::new() };
        x.add(&arg::vector_array(args)?, &[])
    })
}

/// `mlx_export_function_kwargs(file, fun, args, kwargs, shapeless)`.
///
/// # Safety
/// `file` NUL-terminated; handles live (`kwargs` may be empty).
#[no_mangle]
pub unsafe extern "C" fn mlx_export_function_kwargs(
    file: *const c_char,
    fun: mlx_closure_kwargs,
    args: mlx_vector_array,
    kwargs: mlx_map_string_to_array,
    shapeless: bool,
) -> c_int {
    status("mlx_export_function_kwargs", || {
        let f = closure::get(fun)?;
        let args = arg::vector_array(args)?;
        let mut kw = kwargs_arg(kwargs)?;
        kw.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<alloc::ffi::CString> = kw
            .iter()
            .map(|(k, _)| alloc::ffi::CString::new(k.as_bytes()).map_err(|_| Error::invalid("export_function", "a keyword name holds NUL")))
            .collect::<Result<_>>()?;
        let n = args.len();
        // The flat inputs (positional, then keywords by name) back into a call with a map.
        let flat: ClosureFn = alloc::sync::Arc::new(move |xs: &[Array]| {
            let map: ArrayMap = names.iter().cloned().zip(xs[n.min(xs.len())..].iter().cloned()).collect();
            f(&xs[..n.min(xs.len())], &map)
        });
        let mut x = Exporter { file: arg::string(file, "file")?.into(), fun: flat, shapeless, traces: ExportedFunction::new() };
        x.add(&args, &kw)
    })
}

/// `mlx_function_exporter_new(file, fun, shapeless)`: the empty handle (and an error
/// reported) when an argument is bad.
///
/// # Safety
/// `file` NUL-terminated; `fun` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_function_exporter_new(file: *const c_char, fun: mlx_closure, shapeless: bool) -> mlx_function_exporter {
    guard("mlx_function_exporter_new", handle::empty(), || {
        let x = Exporter { file: arg::string(file, "file")?.into(), fun: closure::get(fun)?, shapeless, traces: ExportedFunction::new() };
        Ok(handle::new(x))
    })
}

/// `mlx_function_exporter_free`.
///
/// # Safety
/// `xfunc` empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_function_exporter_free(xfunc: mlx_function_exporter) -> c_int {
    handle::free(xfunc);
    0
}

/// `mlx_function_exporter_apply(xfunc, args)`: traces `args`' signature into the file.
///
/// # Safety
/// Handles live; not called on one exporter from two threads at once.
#[no_mangle]
pub unsafe extern "C" fn mlx_function_exporter_apply(xfunc: mlx_function_exporter, args: mlx_vector_array) -> c_int {
    status("mlx_function_exporter_apply", || handle::get_mut(xfunc)?.add(&arg::vector_array(args)?, &[]))
}

/// `mlx_function_exporter_apply_kwargs(xfunc, args, kwargs)`: the closure receives the
/// keyword arrays after the positional ones, in name order.
///
/// # Safety
/// Handles live (`kwargs` may be empty); not called on one exporter from two threads at once.
#[no_mangle]
pub unsafe extern "C" fn mlx_function_exporter_apply_kwargs(
    xfunc: mlx_function_exporter,
    args: mlx_vector_array,
    kwargs: mlx_map_string_to_array,
) -> c_int {
    status("mlx_function_exporter_apply_kwargs", || {
        let kw = kwargs_arg(kwargs)?;
        handle::get_mut(xfunc)?.add(&arg::vector_array(args)?, &kw)
    })
}

/// `mlx_imported_function_new(file)`: the empty handle (and an error reported) when the file
/// cannot be read or is not a function this library exported.
///
/// # Safety
/// `file` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_imported_function_new(file: *const c_char) -> mlx_imported_function {
    guard("mlx_imported_function_new", handle::empty(), || {
        let file = arg::string(file, "file")?;
        let bytes = std::fs::read(file).map_err(|_| Error::runtime("import_function", format!("Failed to open {file}")))?;
        let read = ExportedFunction::from_bytes(&bytes);
        // A file holding a Metal kernel is refused with MLX's own message (no defect of the
        // file to name: core `custom_kernel::refuse_import`).
        if read.as_ref().is_err_and(|e| e.op == "new_stream") {
            return read.map(handle::new);
        }
        Ok(handle::new(in_file(read, file)?))
    })
}

/// `mlx_imported_function_free`.
///
/// # Safety
/// `xfunc` empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_imported_function_free(xfunc: mlx_imported_function) -> c_int {
    handle::free(xfunc);
    0
}

/// `mlx_imported_function_apply(res, xfunc, args)`.
///
/// # Safety
/// `res` valid; handles live.
#[no_mangle]
pub unsafe extern "C" fn mlx_imported_function_apply(res: *mut mlx_vector_array, xfunc: mlx_imported_function, args: mlx_vector_array) -> c_int {
    status("mlx_imported_function_apply", || {
        let out = handle::get(xfunc)?.call(&arg::vector_array(args)?, &[])?;
        arg::set_vector_array(res, out)
    })
}

/// `mlx_imported_function_apply_kwargs(res, xfunc, args, kwargs)`.
///
/// # Safety
/// `res` valid; handles live (`kwargs` may be empty).
#[no_mangle]
pub unsafe extern "C" fn mlx_imported_function_apply_kwargs(
    res: *mut mlx_vector_array,
    xfunc: mlx_imported_function,
    args: mlx_vector_array,
    kwargs: mlx_map_string_to_array,
) -> c_int {
    status("mlx_imported_function_apply_kwargs", || {
        let out = handle::get(xfunc)?.call(&arg::vector_array(args)?, &kwargs_arg(kwargs)?)?;
        arg::set_vector_array(res, out)
    })
}

/// `mlx_arm_function_exporter_new_metadata(file, fun, shapeless, metadata)`: as
/// `mlx_function_exporter_new`, the file also keeping the string `metadata` (MLX's
/// `metadata=`; read back with `mlx_arm_imported_function_metadata`).
///
/// # Safety
/// `file` and `metadata` NUL-terminated; `fun` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_function_exporter_new_metadata(
    file: *const c_char,
    fun: mlx_closure,
    shapeless: bool,
    metadata: *const c_char,
) -> mlx_function_exporter {
    guard("mlx_arm_function_exporter_new_metadata", handle::empty(), || {
        let traces = ExportedFunction::with_metadata(arg::string(metadata, "metadata")?);
        let x = Exporter { file: arg::string(file, "file")?.into(), fun: closure::get(fun)?, shapeless, traces };
        Ok(handle::new(x))
    })
}

/// `mlx_arm_imported_function_metadata(res, xfunc)`: `*res` = the metadata string the file
/// was exported with (empty when none).
///
/// # Safety
/// `res` valid; `xfunc` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_imported_function_metadata(res: *mut mlx_string, xfunc: mlx_imported_function) -> c_int {
    status("mlx_arm_imported_function_metadata", || handle::assign(res, crate::string::cstring(handle::get(xfunc)?.metadata())))
}

/// `mlx_arm_export_listing(json, constants, fun, args, kwargs, shapeless)`: traces `fun` (a
/// plain closure receiving the positional arrays, then the keyword arrays in name order) and
/// describes the trace as MLX's export-to-callback does: `*json` = the events (see core's
/// `transforms::export::listing`), `*constants` = the captured arrays they index.
///
/// # Safety
/// `json` and `constants` valid; handles live (`kwargs` may be empty).
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_export_listing(
    json: *mut mlx_string,
    constants: *mut mlx_vector_array,
    fun: mlx_closure,
    args: mlx_vector_array,
    kwargs: mlx_map_string_to_array,
    shapeless: bool,
) -> c_int {
    status("mlx_arm_export_listing", || {
        let f = closure::get(fun)?;
        let l = mlx_arm_core::transforms::export::listing::list(&*f, &arg::vector_array(args)?, &kwargs_arg(kwargs)?, shapeless)?;
        handle::assign(json, crate::string::cstring(&l.json))?;
        arg::set_vector_array(constants, l.constants)
    })
}
