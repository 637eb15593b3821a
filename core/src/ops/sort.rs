//! The sort family (its ops are added here, with their kernels in `cpu/sort.rs`).

/// The sort family's primitives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SortOp {}

impl SortOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}
