//! MLX writes safetensors without padding its header, so a file's tensors can sit at odd
//! addresses; read into memory, the file is placed so its data section is aligned and every
//! tensor is viewed in place (a 4-bit model directory from `mlx_lm.convert` used to be copied
//! whole, doubling the memory it takes). One test per process: it reads the allocator's
//! process-wide counters.

use std::path::PathBuf;

use mlx_arm_lm::load::files::{load_model_with, WeightMemory};

#[test]
fn an_unpadded_safetensors_directory_is_viewed_in_place() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/python/golden/mlx_lm/tiny_llama_q4");
    let file = std::fs::read(dir.join("model.safetensors")).unwrap();
    let data_start = 8 + u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    assert_ne!(data_start % 4, 0, "the fixture should have an unpadded (misaligned) data section");
    let before = mlx_arm_core::buffer::active_memory();
    let loaded = load_model_with(&dir, WeightMemory::HugePages, &mut |_, _| {}).unwrap();
    let copied = mlx_arm_core::buffer::active_memory().saturating_sub(before);
    assert!(copied < file.len() / 8, "{copied} bytes of buffers after loading a {}-byte file", file.len());
    assert_eq!(loaded.model.config.n_layers, 2);
}
