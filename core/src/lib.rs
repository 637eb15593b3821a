//! `mlx-arm-core`: the `no_std + alloc` core of mlx-arm — lazy arrays and their graph, dtypes,
//! the `mlx.core` operation set with scalar CPU kernels, quantized and model-file formats.
//!
//! ```
//! use mlx_arm_core::{ops, Array};
//! let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = ops::exp(&ops::add(&a, &Array::scalar(1.0f32)?)?)?; // recorded, not computed
//! let s = ops::sum(&b, Some(&[1]), false)?;
//! assert_eq!(s.shape(), &[2]);
//! let v = s.to_vec::<f32>()?; // evaluates
//! assert!((v[0] - (2f32.exp() + 3f32.exp())).abs() < 1e-4);
//! # Ok::<(), mlx_arm_core::Error>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![warn(clippy::alloc_instead_of_core, clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

extern crate alloc;

#[macro_use]
pub mod error;
pub mod array;
pub mod backend;
pub mod buffer;
pub mod cpu;
pub mod device;
pub mod dtype;
pub mod element;
pub mod eval;
pub mod graph_utils;
pub mod ops;
pub mod parallel;
pub mod primitive;
#[cfg(feature = "std")]
pub mod profile;
pub mod quant;
pub mod registry;
pub mod io;
pub mod random;
pub mod shape;
pub mod transforms;

pub use array::Array;
pub use device::{Device, DeviceType, Stream};
pub use dtype::DType;
pub use element::{Complex64, Element, Value};
pub use error::{Error, ErrorKind, Result};
pub use eval::{async_eval, eval};
