//! The random family (its ops are added here, with their kernels in `cpu/random.rs`).

/// The random family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RandomOp {}

impl RandomOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}
