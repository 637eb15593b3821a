//! x86-64 kernels (AVX2, AVX-512 VNNI).
pub mod quant;
pub mod quant_iq4;
pub mod quant_fp;
pub mod quant_tq;
pub mod gemv;
pub mod gemv_quad;
pub mod gemm_panel;
pub mod gemm_panel_avx2;
pub mod gemv_k;
pub mod gemv_k23;
pub mod gemv_avx2;
pub mod gemv_avx2_k;
pub mod gemv_avx2_q6k;
pub mod affine;
pub mod mlx_fp;
