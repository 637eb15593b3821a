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

/// Whether this process runs entry `i` of a long kernel test's table: `MLX_ARM_TEST_SHARD=s/n`
/// takes the entries with `i % n == s` (scripts/test.sh runs such a test as `n` processes at once
/// under qemu, where one process runs on one core); unset, every entry.
#[allow(dead_code)] // not every test that includes this module has a sharded table
pub fn in_shard(i: usize) -> bool {
    let Some(spec) = std::env::var_os("MLX_ARM_TEST_SHARD") else { return true };
    let spec = spec.to_string_lossy();
    let parsed = spec.split_once('/').and_then(|(s, n)| Some((s.parse::<usize>().ok()?, n.parse::<usize>().ok()?)));
    let (s, n) = parsed.filter(|&(s, n)| s < n).unwrap_or_else(|| panic!("MLX_ARM_TEST_SHARD={spec}: expected s/n with s < n"));
    i % n == s
}
