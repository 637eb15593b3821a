//! Memory-mapped files (std only): a whole file becomes one external [`Buffer`], so arrays
//! loaded from it are views into the page cache — nothing is read until an element is
//! touched, and the kernel can drop clean pages under memory pressure.
//!
//! [`read_file_huge`] is the alternative for weights that every decode step streams whole: the
//! file's bytes, unchanged, in anonymous memory backed by transparent huge pages. Page-cache
//! mappings use 4 KiB pages, so streaming a 100 MB model walks the page tables for every 4 KiB
//! and misses the TLB; with 2 MiB pages a two-thread decode of the default model runs about
//! a third faster (docs/BENCHMARKS.md, "Weights in huge pages").
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

/// A read-only mapping of a whole file, of which the buffer holds the bytes from `from` on;
/// kept alive by the [`Buffer`] that wraps it.
struct Mapping {
    map: memmap2::Mmap,
    from: usize,
}

impl ExternalBytes for Mapping {
    fn bytes(&self) -> &[u8] {
        &self.map[self.from..]
    }
}

/// Maps `path` read-only and wraps the mapping in an external buffer. `op` names the caller
/// in errors (`"[load] Failed to open x.safetensors: ..."`). Empty files get an empty
/// (unmapped) buffer, since zero-length mappings are refused by the OS.
pub fn map_file(op: &'static str, path: &Path) -> Result<Arc<Buffer>> {
    map_file_from(op, path, 0)
}

/// [`map_file`] whose buffer holds the file's bytes from `from` on (pages before it are
/// mapped but never touched, so they cost no memory).
pub fn map_file_from(op: &'static str, path: &Path, from: usize) -> Result<Arc<Buffer>> {
    let file = File::open(path)
        .map_err(|e| Error::invalid(op, alloc::format!("Failed to open {}: {e}", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| Error::invalid(op, alloc::format!("Failed to open {}: {e}", path.display())))?
        .len();
    if usize::try_from(len).is_err() {
        return Err(Error::invalid(op, alloc::format!("{} ({len} bytes) does not fit the address space", path.display())));
    }
    if from as u64 > len {
        return Err(Error::invalid(op, alloc::format!("{}: bytes from {from} of a {len}-byte file", path.display())));
    }
    if len == from as u64 {
        return Ok(Buffer::external(Box::new(Vec::<u8>::new())));
    }
    // SAFETY: the mapping is read-only; the file must not be truncated or modified while
    // mapped (see the module documentation), as with any memory-mapped model file.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Error::runtime(op, alloc::format!("Failed to map {}: {e}", path.display())))?;
    Ok(Buffer::external(Box::new(Mapping { map, from })))
}

/// Size of a transparent huge page on the targets we build for (x86-64, aarch64 with 4 KiB
/// base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Reads bytes `from..` of `path` (0: the whole file) into anonymous memory that asks the
/// kernel for transparent huge pages (`MADV_HUGEPAGE`), calling `progress(bytes_read, total)`
/// about every MiB. The file's byte `align_at` (at or after `from`) lands on a 64-byte
/// boundary, the rest follows it (`align_at == from`: byte `from` starts a huge page): a
/// safetensors file's tensors start at its data section, which MLX's writer does not pad, so
/// placing that section aligned lets every tensor be viewed in place instead of copied. The
/// bytes are the file's, unchanged; the buffer holds them privately, so the file may change
/// afterwards. Costs the bytes' size in memory, as a fully touched mapping does; only whole
/// huge pages ask for huge pages, so the last one does not hold up to 2 MiB of nothing.
pub fn read_file_huge(op: &'static str, path: &Path, from: usize, align_at: usize, progress: &mut dyn FnMut(u64, u64)) -> Result<Arc<Buffer>> {
    use std::io::{Read, Seek, SeekFrom};
    let open_err = |e: std::io::Error| Error::invalid(op, alloc::format!("Failed to open {}: {e}", path.display()));
    let mut file = File::open(path).map_err(open_err)?;
    let file_len = file.metadata().map_err(open_err)?.len();
    let file_len = usize::try_from(file_len)
        .map_err(|_| Error::invalid(op, alloc::format!("{} ({file_len} bytes) does not fit the address space", path.display())))?;
    if from > file_len || align_at < from {
        return Err(Error::invalid(op, alloc::format!("{}: bytes from {from} (aligned at {align_at}) of a {file_len}-byte file", path.display())));
    }
    let len = file_len - from;
    if len == 0 {
        return Ok(Buffer::external(Box::new(Vec::<u8>::new())));
    }
    file.seek(SeekFrom::Start(from as u64))
        .map_err(|e| Error::runtime(op, alloc::format!("cannot read {}: {e}", path.display())))?;
    let oom = || Error::out_of_memory(op, len);
    // One huge page extra, so the bytes can start on a huge-page boundary, plus the shift
    // (under 64 bytes) that puts byte `align_at` on a 64-byte one.
    let shift = (64 - (align_at - from) % 64) % 64;
    let mut map = memmap2::MmapOptions::new()
        .len(len.checked_add(HUGE_PAGE + 64).ok_or_else(oom)?)
        .map_anon()
        .map_err(|_| oom())?;
    let base = map.as_ptr().align_offset(HUGE_PAGE).min(HUGE_PAGE);
    let start = base + shift;
    #[cfg(target_os = "linux")]
    // Advice only: without transparent huge pages the bytes still load, on small pages.
    let _ = map.advise_range(memmap2::Advice::HugePage, base, (shift + len) / HUGE_PAGE * HUGE_PAGE);
    let bytes = &mut map[start..start + len];
    let total = len as u64;
    progress(0, total);
    for (i, chunk) in bytes.chunks_mut(1 << 20).enumerate() {
        file.read_exact(chunk)
            .map_err(|e| Error::runtime(op, alloc::format!("cannot read {}: {e}", path.display())))?;
        progress(((i << 20) + chunk.len()) as u64, total);
    }
    let map = map.make_read_only().map_err(|e| Error::runtime(op, alloc::format!("cannot protect {}: {e}", path.display())))?;
    Ok(Buffer::external(Box::new(Resident { map, start, len })))
}

/// Whether transparent huge pages can back memory that asks for them (Linux `madvise` or
/// `always` mode); false elsewhere.
pub fn huge_pages_available() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|s| !s.contains("[never]"))
        .unwrap_or(false)
}

/// File bytes held in anonymous memory, from `start` of the mapping.
struct Resident {
    map: memmap2::Mmap,
    start: usize,
    len: usize,
}

impl ExternalBytes for Resident {
    fn bytes(&self) -> &[u8] {
        &self.map[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch file of `n` patterned bytes.
    fn scratch(name: &str, n: usize) -> (std::path::PathBuf, Vec<u8>) {
        let bytes: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
        let path = std::env::temp_dir().join(alloc::format!("mlx-arm-mmap-{}-{name}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        (path, bytes)
    }

    #[test]
    fn byte_ranges_read_and_map_the_files_bytes_aligned_as_asked() {
        let (path, bytes) = scratch("ranges", 5000);
        for from in [0usize, 1, 4097, 4999, 5000] {
            for align_at in [from, from + 7] {
                let mut last = None;
                let b = read_file_huge("t", &path, from, align_at, &mut |d, t| last = Some((d, t))).unwrap();
                assert_eq!(b.bytes(), &bytes[from..], "read from {from}");
                if from < bytes.len() {
                    assert_eq!(last, Some(((5000 - from) as u64, (5000 - from) as u64)));
                    assert_eq!((b.as_ptr() as usize + (align_at - from)) % 64, 0, "byte {align_at} aligned");
                }
            }
            assert_eq!(map_file_from("t", &path, from).unwrap().bytes(), &bytes[from..], "mapped from {from}");
        }
        assert!(read_file_huge("t", &path, 5001, 5001, &mut |_, _| {}).is_err());
        assert!(read_file_huge("t", &path, 8, 7, &mut |_, _| {}).is_err());
        assert!(map_file_from("t", &path, 5001).is_err());
        std::fs::remove_file(&path).ok();
    }
}
