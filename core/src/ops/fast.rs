//! The fast family (its ops are added here, with their kernels in `cpu/fast.rs`).

/// The fast family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FastOp {}

impl FastOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}
