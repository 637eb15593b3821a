//! The writing half of the export format: little-endian integers, flags, length-prefixed
//! strings and integer lists (the reading half is [`crate::io::cursor::Cursor`] plus the
//! `read_*` helpers of `prim.rs`).

use alloc::vec::Vec;

/// Bytes being written.
#[derive(Default)]
pub(super) struct Writer {
    pub(super) buf: Vec<u8>,
}

impl Writer {
    pub(super) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub(super) fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    pub(super) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn usize(&mut self, v: usize) {
        self.u64(v as u64);
    }
    /// A count that the reader takes as `u32` (every count here is far below 2^32: lists of
    /// axes, inputs, nodes).
    pub(super) fn count(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    pub(super) fn str(&mut self, s: &str) {
        self.count(s.len());
        self.buf.extend_from_slice(s.as_bytes());
    }
    pub(super) fn usizes(&mut self, v: &[usize]) {
        self.count(v.len());
        v.iter().for_each(|&x| self.usize(x));
    }
    pub(super) fn isizes(&mut self, v: &[isize]) {
        self.count(v.len());
        v.iter().for_each(|&x| self.i64(x as i64));
    }
}
