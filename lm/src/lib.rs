//! `mlx-arm-lm`: language models written on mlx-arm's public array API (so every backend
//! runs them), `no_std + alloc` like the core. Model hyper-parameters ([`config`]), weights
//! kept in their file format ([`weights`]), the Llama-family forward pass ([`model`]), the
//! KV cache ([`kv_cache`]), tokenizers ([`tokenizer`]), sampling ([`sample`]) and the
//! generation loop ([`generate`]). Loading from files lives behind the `std` feature
//! ([`load`]); without an OS a model is built from GGUF bytes in memory.
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

pub mod config;
pub mod tokenizer;

pub use mlx_arm_core::{Error, Result};
