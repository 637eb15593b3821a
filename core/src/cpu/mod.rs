//! The always-present CPU backend: scalar reference kernels for every primitive, one file
//! per family (the same names as `ops/`). SIMD kernels plug in beneath these per ISA.

use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::error::{Error, Result};
use crate::primitive::Primitive;
use alloc::vec::Vec;

pub mod affine;
pub mod arch;
pub mod binary;
pub mod complex;
pub mod cast;
pub mod creation;
pub mod elementwise;
pub mod fast;
pub mod fft;
pub mod fused;
pub mod fused_reduce;
pub mod gemm;
pub mod gemm_provider;
pub mod isa;
pub mod index;
pub mod linalg;
pub mod math;
pub mod mlx_fp;
mod qmm_panels;
pub mod quantized;
pub mod random;
pub mod reduce;
mod rope_table;
pub mod shape;
pub mod sort;
pub mod decomp;
pub mod svd;
pub mod unary;
pub mod vecmath;

/// Evaluates one primitive on the CPU.
pub fn eval(prim: &Primitive, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let one = |r: Result<Data>| r.map(|d| alloc::vec![d]);
    match prim {
        Primitive::Creation(op) => one(creation::eval(op, outputs)),
        Primitive::Cast(op) => one(cast::eval(op, inputs, outputs)),
        Primitive::Unary(op) => one(unary::eval(*op, inputs, outputs)),
        Primitive::Binary(op) => one(binary::eval(*op, inputs, outputs)),
        Primitive::Select => one(binary::select(inputs, outputs)),
        Primitive::Reduce(op) => reduce::eval(op, inputs, outputs),
        Primitive::Shape(op) => shape::eval(op, inputs, outputs),
        Primitive::Index(op) => index::eval(op, inputs, outputs),
        Primitive::Sort(op) => sort::eval(op, inputs, outputs),
        Primitive::Linalg(op) => linalg::eval(op, inputs, outputs),
        Primitive::Random(op) => random::eval(op, inputs, outputs),
        Primitive::Fast(op) => fast::eval(op, inputs, outputs),
        Primitive::Quantized(op) => quantized::eval(op, inputs, outputs),
        Primitive::Fft(op) => fft::eval(op, inputs, outputs),
        Primitive::Custom(op) => op.passthrough(inputs.len()).map(|i| input(&inputs, i, op.name())?.data()).collect(),
        Primitive::Fused(op) => one(fused::eval(op, inputs, outputs)),
        Primitive::FusedReduce(op) => one(fused_reduce::eval(op, inputs, outputs)),
    }
}

/// The first output's meta, or an internal error (a kernel called with no outputs).
pub(crate) fn out0<'a>(outputs: &'a [OutMeta], op: &'static str) -> Result<&'a OutMeta> {
    outputs.first().ok_or_else(|| Error::runtime(op, "No output requested."))
}

/// The `i`-th input, or an internal error.
pub(crate) fn input<'a>(inputs: &'a [Array], i: usize, op: &'static str) -> Result<&'a Array> {
    inputs.get(i).ok_or_else(|| Error::runtime(op, "Missing input."))
}
