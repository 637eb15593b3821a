//! Memory-mapped files (std only): a whole file becomes one external [`Buffer`], so arrays
//! loaded from it are views into the page cache — nothing is read until an element is
//! touched, and the kernel can drop clean pages under memory pressure.
//!
//! The mapping is owned by the buffer; every array viewing the file holds an `Arc` to that
//! buffer, so the mapping lives exactly as long as the last array (or other handle) using it.
//!
//! Like every memory map, the bytes are only as stable as the file: truncating or rewriting
//! a file while it is mapped can fault (SIGBUS) or change array contents. Model files are
//! treated as read-only while loaded, as MLX and llama.cpp also assume.

extern crate std;

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::fs::File;
use std::path::Path;

use crate::buffer::{Buffer, ExternalBytes};
use crate::error::{Error, Result};

/// A read-only mapping of a whole file, kept alive by the [`Buffer`] that wraps it.
struct Mapping(memmap2::Mmap);

impl ExternalBytes for Mapping {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Maps `path` read-only and wraps the mapping in an external buffer. `op` names the caller
/// in errors (`"[load] Failed to open x.safetensors: ..."`). Empty files get an empty
/// (unmapped) buffer, since zero-length mappings are refused by the OS.
pub fn map_file(op: &'static str, path: &Path) -> Result<Arc<Buffer>> {
    let file = File::open(path)
        .map_err(|e| Error::invalid(op, alloc::format!("Failed to open {}: {e}", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| Error::invalid(op, alloc::format!("Failed to open {}: {e}", path.display())))?
        .len();
    if len == 0 {
        return Ok(Buffer::external(Box::new(Vec::<u8>::new())));
    }
    if usize::try_from(len).is_err() {
        return Err(Error::invalid(op, alloc::format!("{} ({len} bytes) does not fit the address space", path.display())));
    }
    // SAFETY: the mapping is read-only; the file must not be truncated or modified while
    // mapped (see the module documentation), as with any memory-mapped model file.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Error::runtime(op, alloc::format!("Failed to map {}: {e}", path.display())))?;
    Ok(Buffer::external(Box::new(Mapping(map))))
}

