//! Boxing Rust state behind C handles: one `new`/`free`/`set` discipline for every handle
//! type, so ownership rules (each `*_new*` matched by one `*_free`, `*_set` reassigns in
//! place) are implemented once.

use crate::types::*;
use crate::prelude::*;
use core::ffi::c_void;
use mlx_arm_core::{Error, Result};

/// A C handle type and the Rust state its `ctx` points to.
pub(crate) trait Handle: Copy {
    /// The boxed state.
    type Inner;
    /// The C type name, for messages.
    const WHAT: &'static str;
    /// The raw context pointer.
    fn ctx(self) -> *mut c_void;
    /// A handle around a raw context pointer.
    fn from_ctx(ctx: *mut c_void) -> Self;
}

macro_rules! impl_handle {
    ($($h:ident => $inner:ty;)*) => {$(
        impl Handle for $h {
            type Inner = $inner;
            const WHAT: &'static str = stringify!($h);
            fn ctx(self) -> *mut c_void { self.ctx }
            fn from_ctx(ctx: *mut c_void) -> Self { $h { ctx } }
        }
    )*};
}

impl_handle! {
    mlx_array => crate::array::ArrayCtx;
    mlx_stream => mlx_arm_core::Stream;
    mlx_device => mlx_arm_core::Device;
    mlx_device_info => crate::device::DeviceInfo;
    mlx_string => alloc::ffi::CString;
    mlx_vector_array => Vec<mlx_arm_core::Array>;
    mlx_vector_int => Vec<core::ffi::c_int>;
    mlx_vector_string => Vec<alloc::ffi::CString>;
    mlx_vector_vector_array => Vec<Vec<mlx_arm_core::Array>>;
    mlx_map_string_to_array => crate::map::ArrayMap;
    mlx_map_string_to_string => crate::map_string::StringMap;
    mlx_io_reader => crate::io_types::Stream;
    mlx_io_writer => crate::io_types::Stream;
    mlx_io_gguf => crate::io_types::Gguf;
    mlx_node_namer => crate::graph_utils::Namer;
    mlx_closure => crate::closure::ClosureFn;
    mlx_closure_kwargs => crate::closure::KwargsFn;
    mlx_closure_value_and_grad => crate::closure::ValueAndGradFn;
    mlx_closure_custom => crate::closure::CustomFn;
    mlx_closure_custom_jvp => crate::closure::CustomJvpFn;
    mlx_closure_custom_vmap => crate::closure::CustomVmapFn;
}

/// A handle owning `inner`.
pub(crate) fn new<H: Handle>(inner: H::Inner) -> H {
    H::from_ctx(Box::into_raw(Box::new(inner)) as *mut c_void)
}

/// The empty handle.
pub(crate) fn empty<H: Handle>() -> H {
    H::from_ctx(core::ptr::null_mut())
}

/// The state behind `h`, or an error for the empty handle.
///
/// # Safety
/// `h` must be empty or come from [`new`] and not be freed.
pub(crate) unsafe fn get<'a, H: Handle>(h: H) -> Result<&'a H::Inner> {
    let p = h.ctx() as *const H::Inner;
    if p.is_null() {
        return Err(empty_error::<H>());
    }
    Ok(&*p)
}

/// Mutable state behind `h` (the caller holds no other reference into it).
///
/// # Safety
/// As [`get`], and no other reference to the state may be live.
pub(crate) unsafe fn get_mut<'a, H: Handle>(h: H) -> Result<&'a mut H::Inner> {
    let p = h.ctx() as *mut H::Inner;
    if p.is_null() {
        return Err(empty_error::<H>());
    }
    Ok(&mut *p)
}

/// The error for an empty handle where a value is needed (mlx-c's wording).
pub(crate) fn empty_error<H: Handle>() -> Error {
    Error::invalid(H::WHAT, format!("expected a non-empty {}", H::WHAT))
}

/// Frees the state behind `h` (nothing for the empty handle).
///
/// # Safety
/// `h` must be empty or come from [`new`] and not be freed yet.
pub(crate) unsafe fn free<H: Handle>(h: H) {
    let p = h.ctx() as *mut H::Inner;
    if !p.is_null() {
        drop(Box::from_raw(p));
    }
}

/// mlx-c's `*_set_`: replaces the state of `*dst` in place (every copy of the handle sees it),
/// or gives an empty `*dst` new state.
///
/// # Safety
/// `dst` must be null (an error) or point to a valid handle.
pub(crate) unsafe fn assign<H: Handle>(dst: *mut H, inner: H::Inner) -> Result<()> {
    if dst.is_null() {
        return Err(Error::invalid(H::WHAT, format!("the result {}* is NULL", H::WHAT)));
    }
    let p = (*dst).ctx() as *mut H::Inner;
    if p.is_null() {
        *dst = new(inner);
    } else {
        *p = inner;
    }
    Ok(())
}
