//! Model-file formats — safetensors, GGUF, `.npy` and `.npz` — parsed from and written to byte
//! slices, so firmware can hand us a flash region and no OS is needed.
//!
//! Parsers produce neutral records ([`TensorInfo`]: name, [`TensorType`], row-major shape and
//! the byte range of the tensor's data inside the buffer) that the array layer wraps later;
//! nothing is converted or copied unless the format forces it (compressed `.npz` members,
//! big-endian `.npy` data).
//!
//! Every input is treated as hostile: sizes are validated with checked arithmetic before
//! anything is allocated, allocations are bounded by the remaining input, and every defect
//! returns `Error::format` naming it — never a panic.

pub mod arrays;
#[cfg(feature = "std")]
pub mod mmap;
pub mod cursor;
pub mod gguf;
pub mod json;
pub mod npy;
pub mod npz;
pub mod safetensors;
pub mod zip;

pub use arrays::copied_bytes;

use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::quant::GgmlType;

/// The element encoding of a stored tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorType {
    /// Plain elements of an MLX dtype.
    Plain(DType),
    /// GGML blocks, kept bit-for-bit (also used for GGUF's plain types such as `f32`/`f16`).
    Ggml(GgmlType),
}

impl TensorType {
    /// Bytes taken by a tensor of this type with the given row-major `shape`, or an error
    /// naming the defect (element count overflow, innermost dimension not a whole number of
    /// blocks).
    pub fn byte_len(self, op: &'static str, shape: &[usize]) -> Result<usize> {
        match self {
            TensorType::Plain(dt) => {
                let n = checked_numel(op, shape)?;
                n.checked_mul(dt.size())
                    .ok_or_else(|| Error::format(op, alloc::format!("tensor byte size overflows (shape {shape:?}, dtype {dt})")))
            }
            TensorType::Ggml(g) => {
                let n = checked_numel(op, shape)?;
                let inner = shape.last().copied().unwrap_or(1);
                if inner % g.block_len() != 0 {
                    return Err(Error::format(
                        op,
                        alloc::format!(
                            "innermost dimension {inner} is not a multiple of the {} block length {}",
                            g.name(),
                            g.block_len()
                        ),
                    ));
                }
                (n / g.block_len())
                    .checked_mul(g.block_bytes())
                    .ok_or_else(|| Error::format(op, alloc::format!("tensor byte size overflows (shape {shape:?}, type {})", g.name())))
            }
        }
    }
}

/// One tensor stored in a file: where its bytes are and how to read them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// The tensor's name in the file.
    pub name: String,
    /// Element encoding.
    pub ty: TensorType,
    /// Row-major shape, outermost dimension first (GGUF's reversed `ne` order is undone).
    pub shape: Vec<usize>,
    /// Byte range of the data inside the parsed buffer.
    pub data: Range<usize>,
}

/// Product of `shape` with overflow reported as a format error.
pub fn checked_numel(op: &'static str, shape: &[usize]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).ok_or_else(|| {
        Error::format(op, alloc::format!("element count of shape {shape:?} overflows"))
    })
}

/// Checks that `tensors`' data ranges lie within `bounds` and do not overlap each other.
/// Empty ranges may sit anywhere inside the bounds.
pub(crate) fn check_disjoint(op: &'static str, tensors: &[TensorInfo], bounds: Range<usize>) -> Result<()> {
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by_key(|&i| (tensors[i].data.start, tensors[i].data.end));
    let mut prev: Option<usize> = None;
    for &i in &order {
        let t = &tensors[i];
        if t.data.start < bounds.start || t.data.end > bounds.end || t.data.start > t.data.end {
            return Err(Error::format(
                op,
                alloc::format!("data of tensor '{}' ({:?}) lies outside the data section {:?}", t.name, t.data, bounds),
            ));
        }
        if t.data.is_empty() {
            continue;
        }
        if let Some(p) = prev {
            let pt = &tensors[p];
            if t.data.start < pt.data.end {
                return Err(Error::format(
                    op,
                    alloc::format!("data of tensors '{}' and '{}' overlap", pt.name, t.name),
                ));
            }
        }
        prev = Some(i);
    }
    Ok(())
}

/// Rejects duplicate tensor names.
pub(crate) fn check_unique_names(op: &'static str, tensors: &[TensorInfo]) -> Result<()> {
    let mut names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    for w in names.windows(2) {
        if w[0] == w[1] {
            return Err(Error::format(op, alloc::format!("duplicate tensor name '{}'", w[0])));
        }
    }
    Ok(())
}

/// Rounds `x` up to a multiple of `align` (a non-zero value), or `None` on overflow.
pub(crate) fn align_up(x: usize, align: usize) -> Option<usize> {
    let rem = x % align;
    if rem == 0 { Some(x) } else { x.checked_add(align - rem) }
}
