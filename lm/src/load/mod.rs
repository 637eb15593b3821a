//! Loading models: [`gguf`] builds a model from a GGUF file's tensors and [`hf`] from Hugging
//! Face / MLX named tensors; both work on memory without an OS. With `std`, [`files`] opens a
//! `.gguf` file or a model directory (`config.json` + `*.safetensors`, sharded or not),
//! memory-mapped so weights are never copied.

pub mod gguf;
pub mod hf;
#[cfg(feature = "std")]
pub mod files;
