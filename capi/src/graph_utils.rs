//! mlx-c `graph_utils.h`: node namers and `mlx_export_to_dot` over core's `graph_utils`.

use crate::arg;
use crate::error::status;
use crate::handle;
use crate::prelude::*;
use crate::string::cstring;
use crate::types::{mlx_array, mlx_node_namer, mlx_string, mlx_vector_array, mlx_vector_int};
use alloc::collections::BTreeMap;
use core::ffi::{c_char, c_int};
use mlx_arm_core::graph_utils::{to_dot_string, NodeNamer};
use mlx_arm_core::Error;

/// A namer and the C strings it has handed out (valid while it lives).
#[derive(Default)]
pub struct Namer {
    namer: NodeNamer,
    handed: BTreeMap<String, CString>,
}

/// `mlx_node_namer_new`: an empty namer.
#[no_mangle]
pub extern "C" fn mlx_node_namer_new() -> mlx_node_namer {
    handle::new(Namer::default())
}

/// `mlx_node_namer_free`.
///
/// # Safety
/// `namer` empty or live, freed once.
#[no_mangle]
pub unsafe extern "C" fn mlx_node_namer_free(namer: mlx_node_namer) -> c_int {
    handle::free(namer);
    0
}

/// `mlx_node_namer_set_name`: names `arr`.
///
/// # Safety
/// `namer` and `arr` live; `name` NUL-terminated (NULL is an error).
#[no_mangle]
pub unsafe extern "C" fn mlx_node_namer_set_name(namer: mlx_node_namer, arr: mlx_array, name: *const c_char) -> c_int {
    status("mlx_node_namer_set_name", || {
        let n = handle::get_mut(namer)?;
        let a = arg::array(arr, "arr")?;
        n.namer.set_name(&a, arg::string(name, "name")?);
        Ok(())
    })
}

/// `mlx_node_namer_get_name`: `*name` = the name of `arr` (generated if it has none), valid
/// while the namer lives.
///
/// # Safety
/// `name` writable; `namer` and `arr` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_node_namer_get_name(name: *mut *const c_char, namer: mlx_node_namer, arr: mlx_array) -> c_int {
    status("mlx_node_namer_get_name", || {
        if name.is_null() {
            return Err(Error::invalid("mlx_node_namer_get_name", "the result const char** is NULL"));
        }
        let n = handle::get_mut(namer)?;
        let a = arg::array(arr, "arr")?;
        let s = String::from(n.namer.get_name(&a));
        let c = n.handed.entry(s.clone()).or_insert_with(|| cstring(&s));
        *name = c.as_ptr();
        Ok(())
    })
}

/// The dot text of `outputs`, naming arrays with `namer` (an empty namer handle: a fresh one).
unsafe fn dot(namer: mlx_node_namer, outputs: mlx_vector_array) -> mlx_arm_core::Result<String> {
    let outs = arg::vector_array(outputs)?;
    if namer.ctx.is_null() {
        return Ok(to_dot_string(&mut NodeNamer::new(), &outs));
    }
    Ok(to_dot_string(&mut handle::get_mut(namer)?.namer, &outs))
}

/// `mlx_arm_pending_streams`: `*res` = the indices of the streams that evaluating `outputs`
/// would run work on (each once; none when everything is evaluated). The Python package checks
/// them against the threads its streams belong to before evaluating, as MLX refuses to
/// evaluate another thread's stream.
///
/// # Safety
/// `res` valid; `outputs` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_pending_streams(res: *mut mlx_vector_int, outputs: mlx_vector_array) -> c_int {
    status("mlx_arm_pending_streams", || {
        let outs = arg::vector_array(outputs)?;
        let idx = mlx_arm_core::graph_utils::pending_streams(&outs).iter().map(|s| s.index as c_int).collect();
        handle::assign(res, idx)
    })
}

/// `mlx_arm_export_to_dot_string`: `*res` = the dot text `mlx_export_to_dot` writes.
///
/// # Safety
/// `res` valid; `namer` empty or live; `outputs` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_export_to_dot_string(res: *mut mlx_string, namer: mlx_node_namer, outputs: mlx_vector_array) -> c_int {
    status("mlx_arm_export_to_dot_string", || handle::assign(res, cstring(&dot(namer, outputs)?)))
}

/// C's `FILE`, only ever behind a pointer (so the exported signature reads `FILE*`, as mlx-c's).
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct FILE {
    _opaque: [u8; 0],
}

#[cfg(feature = "std")]
extern "C" {
    fn fwrite(ptr: *const core::ffi::c_void, size: usize, n: usize, stream: *mut FILE) -> usize;
}

/// `mlx_export_to_dot`: writes the graph behind `outputs` to the C stream `os` as Graphviz dot.
///
/// # Safety
/// `os` an open, writable `FILE*` (NULL is an error); `namer` empty or live; `outputs` live.
#[no_mangle]
pub unsafe extern "C" fn mlx_export_to_dot(os: *mut FILE, namer: mlx_node_namer, outputs: mlx_vector_array) -> c_int {
    status("mlx_export_to_dot", || {
        if os.is_null() {
            return Err(Error::invalid("mlx_export_to_dot", "the FILE* is NULL"));
        }
        let text = dot(namer, outputs)?;
        write_file(os, text.as_bytes())
    })
}

#[cfg(feature = "std")]
unsafe fn write_file(os: *mut FILE, bytes: &[u8]) -> mlx_arm_core::Result<()> {
    if fwrite(bytes.as_ptr() as *const core::ffi::c_void, 1, bytes.len(), os) != bytes.len() {
        return Err(Error::runtime("mlx_export_to_dot", "writing the dot text to the FILE* failed"));
    }
    Ok(())
}

#[cfg(not(feature = "std"))]
unsafe fn write_file(_: *mut FILE, _: &[u8]) -> mlx_arm_core::Result<()> {
    Err(Error::unsupported("mlx_export_to_dot", "no C stdio in the bare-metal build: use mlx_arm_export_to_dot_string"))
}
