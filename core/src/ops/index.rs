//! The index family (its ops are added here, with their kernels in `cpu/index.rs`).

/// The index family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexOp {}

impl IndexOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}
