//! `mx.random.multivariate_normal`, composed as MLX 0.32 does (`mlx/random.cpp`): the
//! covariance's square root from its SVD (`U·diag(√S)·Vt`), applied to standard normal draws.
//! Our SVD is the Jacobi kernel, not LAPACK's, so samples are not bit-identical to MLX's
//! (the square root agrees to rounding for a symmetric positive definite covariance).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::shape::broadcast_shapes;

/// Samples of shape `broadcast(cov batch, mean batch, shape) + [n]` with the given mean and
/// covariance (float32 only, as MLX).
pub fn multivariate_normal(mean: &Array, cov: &Array, shape: &[usize], dtype: DType, key: Option<&Array>) -> Result<Array> {
    const OP: &str = "multivariate_normal";
    if dtype != DType::Float32 {
        return Err(Error::invalid(OP, "dtype must be float32."));
    }
    if mean.ndim() < 1 {
        return Err(Error::invalid(OP, "mean must have at least one dimension."));
    }
    if cov.ndim() < 2 {
        return Err(Error::invalid(OP, "cov must have at least two dimensions."));
    }
    let n = mean.shape()[mean.ndim() - 1];
    let cn = cov.ndim();
    if cov.shape()[cn - 1] != cov.shape()[cn - 2] {
        return Err(Error::invalid(OP, "last two dimensions of cov must be equal."));
    }
    if n != cov.shape()[cn - 1] {
        return Err(Error::invalid(OP, "mean and cov must have compatible shapes."));
    }
    let batch = broadcast_shapes(&cov.shape()[..cn - 2], &mean.shape()[..mean.ndim() - 1], "broadcast_shapes")?;
    let mut out_shape = broadcast_shapes(&batch, shape, "broadcast_shapes")?;
    out_shape.push(n);
    let svd = ops::linalg::svd(&ops::astype(cov, DType::Float32)?, true)?;
    let root = ops::multiply(&svd[0], &ops::expand_dims(&ops::sqrt(&svd[1])?, &[-2])?)?;
    let std = ops::astype(&ops::matmul(&root, &svd[2])?, dtype)?;
    let z = ops::random::normal(&out_shape, dtype, None, None, key)?;
    let scaled = ops::squeeze(&ops::matmul(&ops::expand_dims(&z, &[-2])?, &std)?, Some(&[-2]))?;
    ops::add(mean, &scaled)
}
