//! `MLX_ARM_GEMM=openblas` selects OpenBLAS when it registers (its own test binary: the
//! variable is read once, at registration, and the choice is process-wide).

use mlx_arm_core::cpu::gemm_provider::{gemm_provider, gemm_providers, set_gemm_provider};
use mlx_arm_core::{ops, Array};

#[test]
fn the_environment_variable_selects_openblas_at_registration() {
    std::env::set_var("MLX_ARM_GEMM", "OpenBLAS");
    assert_eq!(gemm_provider(), "builtin");
    mlx_arm_openblas::register().unwrap();
    assert_eq!(gemm_provider(), "openblas");
    assert_eq!(gemm_providers(), vec!["builtin", "openblas"]);
    let a = Array::from_slice(&[1f64, 2., 3., 4.], &[2, 2]).unwrap();
    let before = mlx_arm_openblas::calls();
    let v = ops::matmul(&a, &a).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(v, vec![7., 10., 15., 22.]);
    assert_eq!(mlx_arm_openblas::calls(), before + 1);
    // A choice in code wins over the variable from then on, as with MLX_ARM_ISA / set_isa.
    set_gemm_provider("builtin").unwrap();
    mlx_arm_openblas::register().unwrap();
    assert_eq!(gemm_provider(), "builtin");
}
