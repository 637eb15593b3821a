//! `mlx-arm-core`: the `no_std + alloc` core of mlx-arm — lazy arrays and their graph, dtypes,
//! the `mlx.core` operation set with scalar CPU kernels, quantized and model-file formats.
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![warn(clippy::alloc_instead_of_core, clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

extern crate alloc;

pub mod error;
pub mod dtype;
pub mod quant;

pub use dtype::DType;
pub use error::{Error, ErrorKind, Result};
