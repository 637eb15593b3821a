//! Generators.

use crate::array::Data;
use crate::backend::OutMeta;
use crate::element::{Element, Value};
use crate::error::Result;
use crate::ops::creation::CreationOp;
use super::math::Real;

/// Evaluates a generator (no inputs).
pub fn eval(op: &CreationOp, outputs: &[OutMeta]) -> Result<Data> {
    let (shape, dtype) = super::out0(outputs, op.name())?.clone();
    match *op {
        CreationOp::Arange { start, step } => {
            let out = Data::alloc(&shape, dtype, "arange")?;
            let n = shape.iter().product();
            let (start, step) = (start.get(), step.get());
            if dtype.is_float() {
                crate::dispatch_float!(dtype, T => arange_float::<T>(unsafe { out.slice_mut::<T>(n) }, start, step), else ());
            } else {
                crate::dispatch_all!(dtype, T => {
                    // Integers: T(start) + i * (T(start + step) - T(start)), exact.
                    let s = T::from_value(Value::F(start)).to_value().as_f64() as i128;
                    let next = T::from_value(Value::F(start + step)).to_value().as_f64() as i128;
                    for (i, o) in unsafe { out.slice_mut::<T>(n) }.iter_mut().enumerate() {
                        let v = s + (i as i128) * (next - s);
                        *o = T::from_value(Value::I(v as i64));
                    }
                });
            }
            Ok(out)
        }
    }
}

/// MLX accumulates `v += T(start + step) - T(start)` in the output type, rounding each step.
fn arange_float<T: Real>(out: &mut [T], start: f64, step: f64) {
    let s = T::from_value(Value::F(start));
    let next = T::from_value(Value::F(start + step));
    let delta = T::from_acc(next.acc() - s.acc());
    let mut v = s;
    for o in out {
        *o = v;
        v = T::from_acc(v.acc() + delta.acc());
    }
}
