//! vjp rules of the linalg family: matmul and addmm (the products' batch axes are already
//! broadcast to one shape when recorded, so the rules are plain transposed products).

use super::LinalgOp;
use crate::array::Array;
use crate::error::Result;
use crate::ops::*;
use crate::transforms::rules::{scalar, through, unsupported, Grads};
use alloc::vec;

/// The rules there are, for docs/GRAD.md.
pub(crate) const STATUS: &[(&str, &str)] = &[
    ("matmul (inner, outer, tensordot, einsum …)", "yes"),
    ("addmm", "yes"),
    ("conv", "yes (through the convolution composed of slices and a matmul)"),
    ("decompositions (inv, cholesky, qr, svd, eigh, eig, lu, singular values)", "no: as MLX (`[Primitive::vjp] Not implemented for SVD.` …)"),
];

fn mt(a: &Array) -> Result<Array> {
    swapaxes(a, -1, -2)
}

pub(crate) fn vjp(op: &LinalgOp, inputs: &[Array], g: &Array, needs: &[bool]) -> Result<Grads> {
    match op {
        LinalgOp::Matmul => {
            let (a, b) = (&inputs[0], &inputs[1]);
            let da = if needs[0] { Some(matmul(g, &mt(b)?)?) } else { None };
            let db = if needs[1] { Some(matmul(&mt(a)?, g)?) } else { None };
            Ok(vec![da, db])
        }
        LinalgOp::AddMM { alpha, beta } => {
            let (a, b, c) = (&inputs[0], &inputs[1], &inputs[2]);
            let al = scalar(alpha.get(), g)?;
            let da = if needs[0] { Some(multiply(&al, &matmul(g, &mt(b)?)?)?) } else { None };
            let db = if needs[1] { Some(multiply(&al, &matmul(&mt(a)?, g)?)?) } else { None };
            let dc = if needs[2] { Some(multiply(&scalar(beta.get(), g)?, g)?) } else { None };
            let _ = c;
            Ok(vec![da, db, dc])
        }
        LinalgOp::Conv(p) => through(&|xs: &[Array]| Ok(vec![super::conv_rules::composed(&xs[0], &xs[1], p)?]), inputs, needs, g),
        _ => Err(unsupported(op.name())),
    }
}
