//! A bounds-checked little-endian reader over a byte slice: every read either succeeds within
//! the slice or returns a format error naming what was being read — the one place binary
//! parsers touch raw offsets.

use alloc::string::String;

use crate::error::{Error, Result};

/// Reads little-endian values from a slice, tracking the absolute position.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    op: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`; errors are tagged with `op`.
    pub fn new(op: &'static str, buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0, op }
    }
    /// The absolute position.
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Bytes left after the position.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// Moves to an absolute position within the buffer (the end included).
    pub fn seek(&mut self, pos: usize, what: &str) -> Result<()> {
        if pos > self.buf.len() {
            return Err(self.err(alloc::format!("{what} at offset {pos} is past the end of the {}-byte input", self.buf.len())));
        }
        self.pos = pos;
        Ok(())
    }
    /// A format error tagged with this cursor's op.
    pub fn err(&self, msg: impl Into<String>) -> Error {
        Error::format(self.op, msg)
    }
    /// Takes the next `n` bytes; `what` names them in the truncation error.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.err(alloc::format!(
                "truncated: {what} needs {n} bytes at offset {} but only {} remain",
                self.pos,
                self.remaining()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// Takes `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let s = self.bytes(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    /// A `u8`.
    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    /// A little-endian `u16`.
    pub fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    /// A little-endian `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    /// A little-endian `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    /// A little-endian `u64` that must fit a `usize`.
    pub fn u64_usize(&mut self, what: &str) -> Result<usize> {
        let v = self.u64(what)?;
        usize::try_from(v).map_err(|_| self.err(alloc::format!("{what} {v} does not fit in memory on this target")))
    }
}
