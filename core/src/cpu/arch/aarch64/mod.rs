//! aarch64 kernels (NEON, dotprod).
pub mod quant;
pub mod quant_iq4;
pub mod quant_fp;
pub mod quant_tq;
pub mod gemv;
pub mod gemm_panel;
pub mod gemv_k;
pub mod gemv_k23;
pub mod affine;
pub mod mlx_fp;
