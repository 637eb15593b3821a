//! The ISA levels the kernel tests loop over: every level this machine can run
//! (`isa::available()`), or, when `MLX_ARM_TEST_ISA_FROM` names a level, those from it up.
//!
//! scripts/test.sh sets it to `dotprod` for the qemu runs at SVE vector lengths: the levels
//! below run the same instructions there as in the NEON-only (cortex-a72) run, which tests
//! them, so running them again only costs CI time.

use mlx_arm_core::cpu::isa::{self, Isa};

pub fn levels() -> Vec<Isa> {
    let all = isa::available();
    let Some(name) = std::env::var_os("MLX_ARM_TEST_ISA_FROM") else { return all };
    let name = name.to_string_lossy();
    let from = Isa::from_name(&name).unwrap_or_else(|| panic!("MLX_ARM_TEST_ISA_FROM={name}: not an ISA level"));
    let chosen: Vec<Isa> = all.iter().copied().filter(|l| *l >= from).collect();
    assert!(!chosen.is_empty(), "MLX_ARM_TEST_ISA_FROM={name}: this CPU runs none of those levels ({all:?})");
    chosen
}
