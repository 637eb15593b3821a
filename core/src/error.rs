//! Typed errors. Every public operation returns [`Result`]; no bad input panics.
//!
//! An error carries the op that raised it, so messages read like MLX's
//! (`[reshape] Cannot reshape array of size 6 into shape (4).`), and a kind that
//! the C and Python layers map onto their own conventions (status + message,
//! `ValueError`/`IndexError`/`TypeError`/`NotImplementedError`/`MemoryError`).

use alloc::string::String;
use core::fmt;

/// What went wrong, coarse enough for bindings to pick an exception type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ErrorKind {
    /// A bad shape, axis, dtype or value (Python `ValueError`).
    InvalidArgument,
    /// An index out of range (Python `IndexError`).
    Index,
    /// An argument of the wrong type (Python `TypeError`).
    Type,
    /// Valid input that this build or backend does not implement (Python `NotImplementedError`).
    Unsupported,
    /// An allocation that cannot be satisfied, or the memory limit was hit (Python `MemoryError`).
    OutOfMemory,
    /// A failure while evaluating (Python `RuntimeError`).
    Runtime,
    /// A malformed file or byte buffer.
    Format,
    /// A size that does not fit MLX's 32-bit shape dimensions, or an arithmetic overflow
    /// (Python `OverflowError`).
    Overflow,
}

/// An error raised by an operation, tagged with that operation's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The coarse category.
    pub kind: ErrorKind,
    /// The op (or subsystem) that raised it, e.g. `"reshape"`.
    pub op: &'static str,
    /// Human-readable detail, without the `[op]` tag.
    pub msg: String,
}

impl Error {
    /// Builds an error of the given kind.
    pub fn new(kind: ErrorKind, op: &'static str, msg: impl Into<String>) -> Self {
        Error { kind, op, msg: msg.into() }
    }
    /// `InvalidArgument` shorthand.
    pub fn invalid(op: &'static str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, op, msg)
    }
    /// `Index` shorthand.
    pub fn index(op: &'static str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Index, op, msg)
    }
    /// `Type` shorthand.
    pub fn type_error(op: &'static str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Type, op, msg)
    }
    /// `Unsupported` shorthand.
    pub fn unsupported(op: &'static str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, op, msg)
    }
    /// `OutOfMemory` for an allocation of `bytes`.
    pub fn out_of_memory(op: &'static str, bytes: usize) -> Self {
        Self::new(ErrorKind::OutOfMemory, op, alloc::format!("Unable to allocate {bytes} bytes."))
    }
    /// `Format` shorthand (malformed files and buffers).
    pub fn format(op: &'static str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Format, op, msg)
    }
    /// `Runtime` shorthand.
    pub fn runtime(op: &'static str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Runtime, op, msg)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.op, self.msg)
    }
}

impl core::error::Error for Error {}

/// The result type of every fallible core operation.
pub type Result<T> = core::result::Result<T, Error>;

/// Returns early with an error tagged by op: `bail!(InvalidArgument, "reshape", "bad {x}")`.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $op:expr, $($fmt:tt)+) => {
        return Err($crate::error::Error::new(
            $crate::error::ErrorKind::$kind, $op, alloc::format!($($fmt)+)))
    };
}
