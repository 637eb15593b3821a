//! aarch64 kernels (NEON, dotprod).
pub mod quant;
