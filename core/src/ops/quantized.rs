//! The quantized family (its ops are added here, with their kernels in `cpu/quantized.rs`).

/// The quantized family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QuantizedOp {}

impl QuantizedOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}
