//! Checks shared by the fuzz targets in `fuzz_targets/`.
//!
//! A fuzz target feeds arbitrary bytes to a parser. Errors are the expected outcome for most
//! inputs; what must never happen is a panic, an abort, an out-of-bounds access, an
//! allocation out of proportion to the input (libFuzzer's `-malloc_limit_mb`) or a hang
//! (`-timeout`). When a parse *succeeds*, the helpers here check that what it returned is
//! consistent (every range inside the input, sizes equal to shape × element size) and then do
//! what a user does next — load arrays from it and read every byte — so a parser that accepts
//! an inconsistent file is caught where the bad value would be used.

use std::ops::Range;
use std::sync::Arc;

use mlx_arm_core::buffer::Buffer;
use mlx_arm_core::io::{self, TensorInfo};
use mlx_arm_core::{Array, DType};

/// Caps the memory the core may allocate for one input (npz inflation, conversions), so a
/// decompression bomb is refused by the loader rather than by libFuzzer's malloc limit.
pub const MEMORY_LIMIT: usize = 64 << 20;

/// Sets [`MEMORY_LIMIT`] (idempotent; every target calls it first).
pub fn init() {
    mlx_arm_core::buffer::set_memory_limit(MEMORY_LIMIT);
}

/// A buffer holding a copy of `data`, as a loader gets it from a mapping.
pub fn buffer(data: &[u8]) -> Arc<Buffer> {
    Buffer::external(Box::new(data.to_vec()))
}

/// Every tensor's data range lies inside `bounds` and holds exactly shape × type bytes.
pub fn check_infos(tensors: &[TensorInfo], bounds: Range<usize>) {
    for t in tensors {
        assert!(
            bounds.start <= t.data.start && t.data.start <= t.data.end && t.data.end <= bounds.end,
            "tensor {:?} range {:?} outside {:?}",
            t.name,
            t.data,
            bounds
        );
        let n = t.ty.byte_len("fuzz", &t.shape).expect("a parsed tensor's byte size must be computable");
        assert_eq!(n, t.data.len(), "tensor {:?}: range length != byte size of {:?}", t.name, t.shape);
    }
}

/// Reads every byte of `a` (what a user does next with a loaded array) and checks the count.
pub fn materialize(a: &Array) -> Vec<u8> {
    let bytes = match a.to_bytes() {
        Ok(b) => b,
        // A `.npy` whose data is cut short loads and fails when evaluated, as in MLX
        // (`io::arrays::load_npy_buffer`): the one defect a loader may report lazily.
        Err(e) if e.kind == mlx_arm_core::ErrorKind::Runtime && e.msg.contains("truncated") => return Vec::new(),
        Err(e) => panic!("a loaded array must be readable: {e:?}"),
    };
    let n = io::checked_numel("fuzz", a.shape()).expect("a loaded array's shape must not overflow");
    assert_eq!(bytes.len(), n * a.dtype().size(), "materialized size of {:?} {:?}", a.shape(), a.dtype());
    bytes
}

/// The bytes a loader must produce for stored elements `raw` of `dtype`: bools normalized to
/// 0/1 (MLX's bool is one byte that is 0 or 1), everything else unchanged.
pub fn expected_elements(dtype: DType, raw: &[u8]) -> Vec<u8> {
    if dtype == DType::Bool {
        raw.iter().map(|&b| (b != 0) as u8).collect()
    } else {
        raw.to_vec()
    }
}

/// Reads every array of a successful `load` and checks sizes.
pub fn materialize_all(loaded: &io::arrays::Loaded) {
    for (_, a) in &loaded.arrays {
        materialize(a);
    }
}
