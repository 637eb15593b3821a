//! Quantized formats: GGML/GGUF block types and MLX's quantization modes.

pub mod ggml;
pub mod ggml_type;
pub mod mlx;

pub use ggml_type::GgmlType;
