//! `mlx-arm-capi`: the C API of mlx-arm, shaped like Apple's mlx-c so that programs written
//! for mlx-c compile unchanged against `include/mlx/c/mlx.h` and link against `libmlx_arm`.
//!
//! - Handles are `struct { void* ctx; }` passed by value; `ctx == NULL` is the empty handle.
//!   Each `*_new*` is matched by one `*_free`; `*_set(&dst, src)` reassigns in place.
//! - Ops are `int mlx_<op>(mlx_array* res, inputs…, const mlx_stream s)`: 0 on success,
//!   non-zero after sending one message to the error handler ([`error`]).
//! - No panic crosses the boundary: every entry point runs inside `catch_unwind` (with
//!   `std`); on bare metal (`--no-default-features --features bare-metal`) a panic goes to the
//!   firmware's `mlx_arm_platform_panic` hook and halts ([`bare_metal`]).
//! - Op wrappers live in `generated_ops.rs`, written with `include/mlx/c/ops.h` by the
//!   generator in `codegen` (`MLX_ARM_BLESS=1 cargo test -p mlx-arm-capi codegen`).
//!
//! See docs/C-API.md for ownership, threading and what is not done.
#![allow(clippy::missing_safety_doc)]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

// First: on bare metal it defines the `thread_local!` the other modules use.
#[macro_use]
mod sync;

#[cfg_attr(test, allow(dead_code))]
pub mod arg;
pub mod arm;
pub mod array;
#[cfg(all(feature = "bare-metal", not(feature = "std"), not(test)))]
pub mod bare_metal;
pub mod buffer_size; // more ops
pub mod closure;
pub mod custom;
pub mod compile;
pub mod device;
pub mod error;
#[cfg(feature = "std")]
pub mod export;
#[cfg_attr(test, allow(dead_code))]
mod compose;
mod format;
// Left out of the test build so that a stale or broken generated file never blocks the
// generator (a unit test) from rewriting it; `cargo build` compiles it.
#[cfg(not(test))]
mod generated_ops;
pub mod graph_utils;
pub mod handle;
pub mod index;
mod host;
#[cfg(feature = "std")]
pub mod io;
#[cfg(feature = "std")]
pub mod io_gguf;
mod io_maps;
pub mod io_types;
pub mod map;
pub mod map_string;
pub mod memory;
pub mod cuda_kernel;
pub mod metal_kernel;
pub mod model;
mod named_stream;
mod prelude;
pub mod stream;
pub mod string;
pub mod transforms;
pub mod transforms_impl;
pub mod types;
pub mod vector;
pub mod version;

#[cfg(test)]
mod codegen;

/// The C ABI version (`MLX_ARM_ABI_VERSION`).
pub fn arm_abi() -> core::ffi::c_int {
    version::abi()
}
