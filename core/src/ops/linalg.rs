//! The linalg family (its ops are added here, with their kernels in `cpu/linalg.rs`).

/// The linalg family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LinalgOp {}

impl LinalgOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}
