//! The C-visible types: handles (`struct { void* ctx; }` passed by value, `ctx == NULL` means
//! empty, exactly as mlx-c lays them out), optionals and enum aliases.
//!
//! C enums (`mlx_dtype`, `mlx_device_type`) cross the boundary as plain unsigned integers and
//! are validated on the Rust side: a Rust `enum` receiving an out-of-range value would be UB.
#![allow(non_camel_case_types)]

use core::ffi::{c_int, c_uint, c_void};

macro_rules! handles {
    ($( $name:ident, $c:literal; )*) => {$(
        #[doc = concat!("`", $c, "`: an owning handle (`ctx == NULL` is the empty handle).")]
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct $name {
            /// Boxed Rust state, or null.
            pub ctx: *mut c_void,
        }
    )*};
}

handles! {
    mlx_array, "mlx_array";
    mlx_stream, "mlx_stream";
    mlx_device, "mlx_device";
    mlx_device_info, "mlx_device_info";
    mlx_string, "mlx_string";
    mlx_vector_array, "mlx_vector_array";
    mlx_vector_int, "mlx_vector_int";
    mlx_vector_string, "mlx_vector_string";
    mlx_vector_vector_array, "mlx_vector_vector_array";
    mlx_map_string_to_array, "mlx_map_string_to_array";
    mlx_map_string_to_string, "mlx_map_string_to_string";
    mlx_io_reader, "mlx_io_reader";
    mlx_io_writer, "mlx_io_writer";
    mlx_io_gguf, "mlx_io_gguf";
    mlx_node_namer, "mlx_node_namer";
    mlx_closure, "mlx_closure";
    mlx_closure_kwargs, "mlx_closure_kwargs";
    mlx_closure_value_and_grad, "mlx_closure_value_and_grad";
    mlx_closure_custom, "mlx_closure_custom";
    mlx_closure_custom_jvp, "mlx_closure_custom_jvp";
    mlx_closure_custom_vmap, "mlx_closure_custom_vmap";
    mlx_function_exporter, "mlx_function_exporter";
    mlx_imported_function, "mlx_imported_function";
}

/// `mlx_map_string_to_string_iterator`: a position (`ctx`) over a map (`map_ctx`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx_map_string_to_string_iterator {
    /// Boxed iterator state, or null.
    pub ctx: *mut c_void,
    /// The map iterated (not owned).
    pub map_ctx: *mut c_void,
}

/// `mlx_map_string_to_array_iterator`: a position (`ctx`) over a map (`map_ctx`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx_map_string_to_array_iterator {
    /// Boxed iterator state, or null.
    pub ctx: *mut c_void,
    /// The map iterated (not owned).
    pub map_ctx: *mut c_void,
}

/// `mlx_dtype` (mlx-c's enum order, which `DType::code` follows).
pub type mlx_dtype = c_uint;
/// `mlx_device_type`: 0 = `MLX_CPU`, 1 = `MLX_GPU`.
pub type mlx_device_type = c_uint;
/// `mlx_fft_norm`: 0 = `MLX_FFT_NORM_BACKWARD`, 1 = `MLX_FFT_NORM_ORTHO`, 2 = `MLX_FFT_NORM_FORWARD`.
pub type mlx_fft_norm = c_uint;

/// `mlx_optional_int`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx_optional_int {
    /// The value when `has_value`.
    pub value: c_int,
    /// Whether a value is present.
    pub has_value: bool,
}

/// `mlx_optional_float`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx_optional_float {
    /// The value when `has_value`.
    pub value: f32,
    /// Whether a value is present.
    pub has_value: bool,
}

/// `mlx_optional_dtype`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx_optional_dtype {
    /// The value when `has_value` (an `mlx_dtype`).
    pub value: mlx_dtype,
    /// Whether a value is present.
    pub has_value: bool,
}

/// `mlx_error_handler_func`.
pub type mlx_error_handler_func = Option<unsafe extern "C" fn(msg: *const core::ffi::c_char, data: *mut c_void)>;
/// A destructor for user data (`void (*dtor)(void*)`).
pub type mlx_dtor = Option<unsafe extern "C" fn(data: *mut c_void)>;
