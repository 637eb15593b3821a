//! The fused elementwise primitive that `compile` makes (see `transforms/compile`): a chain of
//! unary/binary/select/astype steps over inputs that broadcast to one shape, evaluated by
//! the CPU in one pass over memory (`cpu/fused.rs`). It is plain data like every primitive,
//! so equal programs compare equal (CSE) and hash alike.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::cast::CastOp;
use crate::primitive::Primitive;
use crate::shape::broadcast_shapes;
use alloc::vec::Vec;

/// The op name messages use.
pub const NAME: &str = "compiled";

/// One step: `prim` applied to registers `args`, giving a `dtype` register. Registers
/// `0..n_inputs` are the inputs; step `k` writes register `n_inputs + k`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// An elementwise primitive (see [`is_elementwise`]).
    pub prim: Primitive,
    /// Registers read, in the primitive's input order.
    pub args: Vec<usize>,
    /// The result's dtype.
    pub dtype: DType,
}

/// A fused chain; its result is the last step's register.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FusedOp {
    /// Number of input arrays (registers `0..n_inputs`).
    pub n_inputs: usize,
    /// The steps, in order (each reads only earlier registers).
    pub steps: Vec<Step>,
}

/// Whether `prim` is elementwise over inputs broadcast to its output shape (what fusion
/// may put in a [`FusedOp`]).
pub fn is_elementwise(prim: &Primitive) -> bool {
    matches!(prim, Primitive::Unary(_) | Primitive::Binary(_) | Primitive::Select | Primitive::Cast(CastOp::AsType))
}

/// The numpy broadcast of `shapes` (the shape an elementwise node has over them).
pub fn broadcast_all<'a>(shapes: impl IntoIterator<Item = &'a [usize]>, op: &'static str) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::new();
    for s in shapes {
        out = broadcast_shapes(&out, s, op)?;
    }
    Ok(out)
}

impl FusedOp {
    /// The result dtype.
    pub fn dtype(&self) -> Result<DType> {
        self.steps.last().map(|s| s.dtype).ok_or_else(|| Error::runtime(NAME, "A fused program has no steps."))
    }

    /// Checks the program is well formed: every step elementwise, reading earlier registers.
    pub fn validate(&self) -> Result<()> {
        for (k, s) in self.steps.iter().enumerate() {
            if !is_elementwise(&s.prim) || s.args.iter().any(|&r| r >= self.n_inputs + k) {
                return Err(Error::runtime(NAME, "Malformed fused program."));
            }
        }
        self.dtype().map(|_| ())
    }

    /// Records the fused node over `inputs` (shapes broadcast together).
    pub fn record(op: &alloc::sync::Arc<FusedOp>, inputs: Vec<Array>) -> Result<Array> {
        if inputs.len() != op.n_inputs {
            return Err(Error::runtime(NAME, "Wrong number of inputs for a fused program."));
        }
        let shape = broadcast_all(inputs.iter().map(|a| a.shape()), NAME)?;
        Ok(Array::from_op(Primitive::Fused(op.clone()), inputs, shape, op.dtype()?))
    }

    /// The same computation as ordinary (unfused) nodes: the reference the fused kernel is
    /// tested against, and what transforms differentiate.
    pub fn expand(&self, inputs: &[Array]) -> Result<Array> {
        self.validate()?;
        let mut regs: Vec<Array> = inputs.to_vec();
        for s in &self.steps {
            let args: Vec<Array> = s.args.iter().map(|&r| regs[r].clone()).collect();
            regs.push(record_elementwise(&s.prim, args, s.dtype)?);
        }
        regs.pop().ok_or_else(|| Error::runtime(NAME, "A fused program has no steps."))
    }
}

/// Records an elementwise node over `args` broadcast to their common shape, as the op
/// constructors do (same kernels, same values).
pub fn record_elementwise(prim: &Primitive, args: Vec<Array>, dtype: DType) -> Result<Array> {
    let shape = broadcast_all(args.iter().map(|a| a.shape()), prim.name())?;
    let args = args.iter().map(|a| crate::ops::broadcast_to(a, &shape)).collect::<Result<Vec<_>>>()?;
    Ok(Array::from_op(prim.clone(), args, shape, dtype))
}

/// A fused chain whose result is reduced over its trailing axes in the same pass (what
/// `compile` makes of `sum(x * y, -1)`, `max(exp(x), …)`, `mean(square(a - b))`): the
/// chain's values never exist as an array, each block of them is folded as it is made
/// (`cpu/fused_reduce.rs`). The output keeps the reduced axes as size-1 axes, as the
/// `Reduce` node it replaces does.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FusedReduceOp {
    /// The elementwise chain; its result is the reduction's input.
    pub program: FusedOp,
    /// The reduction: sum, prod, max or min (of a float chain).
    pub kind: crate::ops::reduce::ReduceKind,
    /// How many trailing axes of the chain's shape are reduced (at least one).
    pub axes: usize,
}

impl FusedReduceOp {
    /// Checks the op is one the fused kernel runs: a valid chain of a float dtype, a
    /// sum/prod/max/min over at least one trailing axis.
    pub fn validate(&self) -> Result<DType> {
        use crate::ops::reduce::ReduceKind;
        self.program.validate()?;
        let dt = self.program.dtype()?;
        if !dt.is_float() || self.axes == 0 || !matches!(self.kind, ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Max | ReduceKind::Min) {
            return Err(Error::runtime(NAME, "Malformed fused reduction."));
        }
        Ok(dt)
    }

    /// The reduced axes of a chain of `ndim` axes.
    pub fn reduced_axes(&self, ndim: usize) -> Result<Vec<usize>> {
        let first = ndim.checked_sub(self.axes).ok_or_else(|| Error::runtime(NAME, "A fused reduction over more axes than its input has."))?;
        Ok((first..ndim).collect())
    }

    /// Records the fused node over `inputs` (shapes broadcast together; the trailing
    /// [`FusedReduceOp::axes`] of that shape become size 1).
    pub fn record(op: &alloc::sync::Arc<FusedReduceOp>, inputs: Vec<Array>) -> Result<Array> {
        let dt = op.validate()?;
        if inputs.len() != op.program.n_inputs {
            return Err(Error::runtime(NAME, "Wrong number of inputs for a fused program."));
        }
        let mut shape = broadcast_all(inputs.iter().map(|a| a.shape()), NAME)?;
        for i in op.reduced_axes(shape.len())? {
            // As `ops::reduce` (a shapeless replay may meet an empty axis the trace had not).
            if shape[i] == 0 && matches!(op.kind, crate::ops::reduce::ReduceKind::Max | crate::ops::reduce::ReduceKind::Min) {
                return Err(Error::invalid(NAME, alloc::format!("Cannot reduce over axis {i} with size 0.")));
            }
            shape[i] = 1;
        }
        Ok(Array::from_op(Primitive::FusedReduce(op.clone()), inputs, shape, dt))
    }

    /// The same computation as ordinary nodes (the chain, then the `Reduce` node).
    pub fn expand(&self, inputs: &[Array]) -> Result<Array> {
        use crate::ops::reduce::ReduceOp;
        let dt = self.validate()?;
        let x = self.program.expand(inputs)?;
        let axes = self.reduced_axes(x.ndim())?;
        let mut shape = x.shape().to_vec();
        for &i in &axes {
            shape[i] = 1;
        }
        Ok(Array::from_op(Primitive::Reduce(ReduceOp::Reduce { kind: self.kind, axes }), alloc::vec![x], shape, dt))
    }
}
