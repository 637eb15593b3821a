//! Every operation the graph can record, as plain data. One variant per op family; each
//! family's op enum lives in `ops/<family>.rs` beside the functions that build it, and its
//! CPU kernels in `cpu/<family>.rs` (the same family names in every backend and test).
//! `PartialEq + Hash` make primitives comparable, which is what CSE and compile need.

use crate::ops::{
    binary::BinaryOp, cast::CastOp, creation::CreationOp, fast::FastOp, fft::FftOp, index::IndexOp, linalg::LinalgOp,
    quantized::QuantizedOp, random::RandomOp, reduce::ReduceOp, shape::ShapeOp, sort::SortOp, unary::UnaryOp,
};

/// An f64 parameter stored by bit pattern, so primitives can derive `Eq` and `Hash`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F64(pub u64);

impl F64 {
    /// Wraps a value.
    pub fn new(v: f64) -> Self {
        F64(v.to_bits())
    }
    /// The value.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// A recorded operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// arange and other generators.
    Creation(CreationOp),
    /// astype / view.
    Cast(CastOp),
    /// Elementwise with one input.
    Unary(UnaryOp),
    /// Elementwise with two (broadcast) inputs.
    Binary(BinaryOp),
    /// `where(cond, a, b)`.
    Select,
    /// Reductions, arg-reductions and scans.
    Reduce(ReduceOp),
    /// Views and data movement.
    Shape(ShapeOp),
    /// Gather / scatter and friends.
    Index(IndexOp),
    /// Sort and partition.
    Sort(SortOp),
    /// Matmul and convolution.
    Linalg(LinalgOp),
    /// Random bits.
    Random(RandomOp),
    /// Fused LLM ops (each has a fallback of ordinary ops).
    Fast(FastOp),
    /// Quantized matmul and (de)quantization.
    Quantized(QuantizedOp),
    /// Discrete Fourier transform along one axis.
    Fft(FftOp),
    /// A function with user-given transforms (`custom_function`, `checkpoint`): its outputs
    /// are its last inputs, passed on (`transforms/custom.rs`).
    Custom(crate::transforms::custom::CustomOp),
    /// A chain of elementwise ops fused by `compile` (one pass over memory).
    Fused(alloc::sync::Arc<crate::ops::fused::FusedOp>),
    /// A fused elementwise chain reduced over its trailing axes in the same pass (`compile`).
    FusedReduce(alloc::sync::Arc<crate::ops::fused::FusedReduceOp>),
}

impl Primitive {
    /// The op's name, as messages and profiles show it.
    pub fn name(&self) -> &'static str {
        match self {
            Primitive::Creation(op) => op.name(),
            Primitive::Cast(op) => op.name(),
            Primitive::Unary(op) => op.name(),
            Primitive::Binary(op) => op.name(),
            Primitive::Select => "select",
            Primitive::Reduce(op) => op.name(),
            Primitive::Shape(op) => op.name(),
            Primitive::Index(op) => op.name(),
            Primitive::Sort(op) => op.name(),
            Primitive::Linalg(op) => op.name(),
            Primitive::Random(op) => op.name(),
            Primitive::Fast(op) => op.name(),
            Primitive::Quantized(op) => op.name(),
            Primitive::Fft(op) => op.name(),
            Primitive::Custom(op) => op.name(),
            Primitive::Fused(_) | Primitive::FusedReduce(_) => crate::ops::fused::NAME,
        }
    }
}
