//! Nothing to link: `tests/cbindgen_headers.rs` reads `capi/src` with cbindgen and compares what
//! the compiler will export with the hand-written and generated headers in `include/mlx/c`.
