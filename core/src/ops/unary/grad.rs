//! vjp rules of the unary family. `x` is the input, `y` the output, `g` the output's
//! cotangent; each rule returns `g · dy/dx` built from ordinary ops (so it is differentiable
//! again: second derivatives and `jvp` come from these same rules).

use super::UnaryOp;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::*;
use crate::transforms::rules::{scalar, unsupported, Grads};
use alloc::vec;

/// Whether `op` has a rule, for docs/GRAD.md.
pub(crate) fn status(op: UnaryOp) -> &'static str {
    use UnaryOp::*;
    match op {
        Real | Imag => "yes (complex inputs)",
        IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | LogicalNot | BitwiseInvert => "zero (boolean/integer output)",
        Sign | Floor | Ceil | Round | Trunc => "yes (zero almost everywhere)",
        _ => "yes",
    }
}

/// `g · dy/dx` for `y = op(x)`.
pub(crate) fn vjp(op: UnaryOp, inputs: &[Array], y: &Array, g: &Array) -> Result<Grads> {
    if inputs[0].dtype() == DType::Complex64 {
        return complex_vjp(op, &inputs[0], y, g).map(|d| vec![Some(d)]);
    }
    real_vjp(op, inputs, y, g)
}

/// MLX's conventions for complex inputs: a holomorphic `f` sends back `g · conj(f'(z))`
/// (= conj of the real rule applied to conj(g)); `abs`, `real` and `imag` send back the
/// gradients with respect to Re z and Im z as one complex number.
fn complex_vjp(op: UnaryOp, x: &Array, y: &Array, g: &Array) -> Result<Array> {
    use UnaryOp::*;
    match op {
        Negative => negative(g),
        Conjugate => conjugate(g),
        // d|z| = Re(conj(z/|z|) dz): a real cotangent comes back as g · z/|z|.
        Abs => multiply(g, &divide(x, y)?),
        Real => astype(g, DType::Complex64),
        Imag => multiply(&astype(g, DType::Complex64)?, &Array::from_value(crate::element::Value::C(0.0, 1.0), DType::Complex64)?),
        Square | Sqrt | Rsqrt | Reciprocal | Exp | Expm1 | Log | Log1p | Log2 | Log10 | Sin | Cos | Tan | Arcsin | Arccos
        | Arctan | Sinh | Cosh | Tanh | Arcsinh | Arccosh | Arctanh | Sigmoid => {
            let d = real_vjp(op, core::slice::from_ref(x), y, &conjugate(g)?)?;
            match d.into_iter().next().flatten() {
                Some(d) => conjugate(&d),
                None => Err(unsupported(op.name())),
            }
        }
        _ => Err(unsupported(op.name())),
    }
}

fn real_vjp(op: UnaryOp, inputs: &[Array], y: &Array, g: &Array) -> Result<Grads> {
    use UnaryOp::*;
    let x = &inputs[0];
    if x.dtype().is_integer() && op == Negative {
        return Ok(vec![Some(negative(g)?)]); // exact in integers, as MLX
    }
    if !x.dtype().is_inexact() {
        // Integer and boolean inputs receive no gradient (MLX's behaviour for integer primals).
        return Ok(vec![None]);
    }
    let c = |v: f64| scalar(v, x);
    let d = match op {
        Abs => multiply(g, &sign(x)?)?,
        Negative => negative(g)?,
        Sign | Floor | Ceil | Round | Trunc => zeros_like(x)?,
        Square => multiply(g, &multiply(&c(2.0)?, x)?)?,
        Conjugate => conjugate(g)?,
        Real | Imag => return Err(unsupported(op.name())),
        // d sqrt(x) = 1 / (2 sqrt(x))
        Sqrt => divide(g, &multiply(&c(2.0)?, y)?)?,
        // d x^(-1/2) = -1/2 · x^(-3/2) = -1/2 · y / x
        Rsqrt => multiply(g, &multiply(&c(-0.5)?, &divide(y, x)?)?)?,
        Reciprocal => negative(&multiply(g, &square(y)?)?)?,
        Exp => multiply(g, y)?,
        Expm1 => multiply(g, &add(y, &c(1.0)?)?)?,
        Log => divide(g, x)?,
        Log1p => divide(g, &add(x, &c(1.0)?)?)?,
        Log2 => divide(g, &multiply(x, &c(core::f64::consts::LN_2)?)?)?,
        Log10 => divide(g, &multiply(x, &c(core::f64::consts::LN_10)?)?)?,
        Sin => multiply(g, &cos(x)?)?,
        Cos => negative(&multiply(g, &sin(x)?)?)?,
        Tan => divide(g, &square(&cos(x)?)?)?,
        // 1 / sqrt(1 - x²)
        Arcsin => multiply(g, &rsqrt(&subtract(&c(1.0)?, &square(x)?)?)?)?,
        Arccos => negative(&multiply(g, &rsqrt(&subtract(&c(1.0)?, &square(x)?)?)?)?)?,
        Arctan => divide(g, &add(&c(1.0)?, &square(x)?)?)?,
        Sinh => multiply(g, &cosh(x)?)?,
        Cosh => multiply(g, &sinh(x)?)?,
        Tanh => multiply(g, &subtract(&c(1.0)?, &square(y)?)?)?,
        Arcsinh => multiply(g, &rsqrt(&add(&square(x)?, &c(1.0)?)?)?)?,
        Arccosh => multiply(g, &rsqrt(&subtract(&square(x)?, &c(1.0)?)?)?)?,
        Arctanh => divide(g, &subtract(&c(1.0)?, &square(x)?)?)?,
        // 2/√π · exp(-x²)
        Erf => multiply(g, &multiply(&c(core::f64::consts::FRAC_2_SQRT_PI)?, &exp(&negative(&square(x)?)?)?)?)?,
        // √π/2 · exp(y²)
        Erfinv => multiply(g, &multiply(&c(0.5 * libm::sqrt(core::f64::consts::PI))?, &exp(&square(y)?)?)?)?,
        Sigmoid => multiply(g, &multiply(y, &subtract(&c(1.0)?, y)?)?)?,
        Degrees => multiply(g, &c(180.0 / core::f64::consts::PI)?)?,
        Radians => multiply(g, &c(core::f64::consts::PI / 180.0)?)?,
        IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | LogicalNot | BitwiseInvert => return Ok(vec![None]),
    };
    Ok(vec![Some(d)])
}
