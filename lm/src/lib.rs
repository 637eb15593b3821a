//! `mlx-arm-lm`: language models written on mlx-arm's public array API (so every backend
//! runs them), `no_std + alloc` like the core. Model hyper-parameters ([`config`]), weights
//! kept in their file format ([`weights`]), the Llama-family forward pass ([`model`]), the
//! KV cache ([`kv_cache`]), tokenizers ([`tokenizer`]), text generation ([`text`]),
//! loading ([`load`]: GGUF and MLX/Hugging Face tensors; files and directories with `std`), sampling ([`sample`]) and the generation loop ([`generate`]).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

#[cfg(feature = "std")]
pub mod chat;
pub mod attention;
pub mod config;
pub mod gemma;
pub mod generate;
pub mod kv_cache;
pub mod load;
pub mod model;
pub mod sample;
pub mod text;
pub mod weights;
pub mod tokenizer;

pub use mlx_arm_core::{Error, Result};
