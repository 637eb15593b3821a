//! `mx.hadamard_transform`: multiplies the last axis (length `n = m·2^k`, `m` in 1, 12, 20,
//! 28) by the Hadamard matrix `H_m ⊗ H_{2^k}` (Sylvester's `H_{2^k}`; `H_m` from
//! [`matrices`], the ones MLX uses) and by `scale` (default `1/√n`). Composed lazily:
//! `k` butterfly rounds `(x0 + x1, x0 - x1)` over the bits of the power-of-two part, then a
//! matmul with `H_m`. Integer inputs compute in float32; floating ones keep their dtype
//! (half types go through float32 and round once at the end).

mod matrices;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{add, astype, concatenate, matmul, multiply, reshape, split, subtract, SplitSpec};
use alloc::vec::Vec;

const OP: &str = "hadamard_transform";

/// `(m, k)` with `n = m·2^k`, or MLX's error.
fn decompose(n: usize) -> Result<(usize, u32)> {
    let m = if n.is_power_of_two() {
        1
    } else {
        matrices::MATRICES
            .iter()
            .map(|&(m, _)| m)
            .find(|&m| n % m == 0 && (n / m).is_power_of_two())
            .ok_or_else(|| Error::invalid("hadamard", "Only supports n = m*2^k where m in (1, 12, 20, 28)."))?
    };
    let k = (n / m).trailing_zeros();
    if k > 26 {
        return Err(Error::invalid("hadamard", "Only supports n = m*2^k where k <= 26"));
    }
    Ok((m, k))
}

/// `H_m` as an `m × m` float32 array.
fn matrix(m: usize) -> Result<Array> {
    let rows = matrices::MATRICES
        .iter()
        .find(|&&(order, _)| order == m)
        .map(|&(_, rows)| rows)
        .ok_or_else(|| Error::runtime(OP, "No Hadamard matrix of that order."))?;
    let vals: Vec<f32> = rows.iter().flat_map(|r| r.bytes().map(|c| if c == b'+' { 1.0 } else { -1.0 })).collect();
    Array::from_slice(&vals, &[m, m])
}

/// `mx.hadamard_transform(a, scale=None)`.
pub fn hadamard_transform(a: &Array, scale: Option<f32>) -> Result<Array> {
    if a.size() == 0 {
        return Err(Error::invalid(OP, "Does not support empty arrays."));
    }
    let n = if a.ndim() > 0 { a.shape()[a.ndim() - 1] } else { 1 };
    let scale = scale.unwrap_or_else(|| 1.0 / libm::sqrtf(n as f32));
    let dtype = if a.dtype().is_float() { a.dtype() } else { DType::Float32 };
    if n == 1 {
        let a = crate::ops::shape::pinned(a);
        if scale == 1.0 {
            return Ok(a);
        }
        return multiply(&a, &astype(&Array::scalar(scale)?, dtype)?);
    }
    let (m, k) = decompose(n)?;
    let compute = if dtype == DType::Float64 { dtype } else { DType::Float32 };
    let rows = a.size() / n;
    let p = 1usize << k;
    // [rows, m, 2^k] → rounds over [rows·m, 2^(k-1-j), 2, 2^j].
    let mut x = astype(a, compute)?;
    for j in 0..k {
        let inner = 1isize << j;
        let outer = (p >> (j + 1)) as isize;
        let y = reshape(&x, &[(rows * m) as isize, outer, 2, inner])?;
        let h = split(&y, SplitSpec::Sections(2), 2)?;
        x = concatenate(&[add(&h[0], &h[1])?, subtract(&h[0], &h[1])?], Some(2))?;
    }
    let mut x = reshape(&x, &[rows as isize, m as isize, p as isize])?;
    if m > 1 {
        x = matmul(&astype(&matrix(m)?, compute)?, &x)?;
    }
    let x = multiply(&x, &astype(&Array::scalar(scale)?, compute)?)?;
    let shape: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
    astype(&reshape(&x, &shape)?, dtype)
}
