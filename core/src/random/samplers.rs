//! MLX's samplers (`mlx/random.cpp`) as flat kernels: each draws from one key and returns the
//! `n` output elements in row-major order, reproducing MLX's op order and the dtype of every
//! intermediate so the Linux CPU results are bit-identical.
//!
//! Scalar bounds/parameters come in as `f32` because that is what MLX makes of a Python float
//! (a float32 array) before casting it to the sample dtype; an `f16`/`bf16` parameter is exact
//! in f32, so it loses nothing.

use alloc::vec::Vec;

use super::float::RandFloat;
use super::fmath::{erf_abs, erfinv, exp, floorf, log1pf, logf};
use super::int::RandInt;
use super::threefry::{bits_words, try_vec, Key};
use crate::error::{Error, Result};

/// `nextafter(-1.0f, 0.0f)`: the lower bound of the `(-1, 1)` draws behind normal and laplace.
const NEG_BELOW_ONE: f32 = -0.999_999_94;

/// `uniform(low, high)` in f32 before the dtype cast: `min(bits / 4294967295f, below_one)`.
fn unit(bits: u32, below_one: f32) -> f32 {
    let u = bits as f32 / 4_294_967_295u32 as f32;
    if u < below_one {
        u
    } else {
        below_one
    }
}

/// `uniform` with bounds already in the sample dtype (MLX's `lo`, `hi` after `astype`).
fn uniform_t<T: RandFloat>(key: Key, lo: T, hi: T, n: usize) -> Result<Vec<T>> {
    let range = hi.sub(lo);
    let words = bits_words(key, n)?;
    let mut out = try_vec::<T>("uniform", n)?;
    out.extend(words.into_iter().map(|b| range.mul(T::from_f32(unit(b, T::BELOW_ONE))).add(lo)));
    Ok(out)
}

/// `mx.random.uniform(low, high, shape=(n,), dtype=T, key=key)`.
///
/// `low` and `high` are cast to `T` first; samples are `(high - low) * u + low` with each op
/// rounded in `T`, where `u` is the 32-bit draw scaled to `[0, 1)` and clamped one ulp (of `T`)
/// below 1.
pub fn uniform<T: RandFloat>(key: Key, low: f32, high: f32, n: usize) -> Result<Vec<T>> {
    uniform_t(key, T::from_f32(low), T::from_f32(high), n)
}

/// f32 draws in `[nextafter(-1, 0), 1)`: the shared first step of normal and laplace.
fn signed_unit(key: Key, n: usize) -> Result<Vec<f32>> {
    uniform_t::<f32>(key, NEG_BELOW_ONE, 1.0, n)
}

/// `mx.random.normal(shape=(n,), dtype=T, loc, scale, key=key)`.
///
/// `sqrt(2) * erfinv(u)` with `u` uniform on `(-1, 1)`; erfinv runs in f32 (Giles, fused
/// Horner, `logf`) and is rounded to `T`; the scale factor is `T(sqrt 2) * T(scale)` and `loc`
/// is added last, each op rounded in `T`. Bit-identical to MLX on Linux with the `std` feature;
/// without it `logf` comes from the `libm` crate and a few samples in a million differ by an
/// ulp (see `docs/RANDOM.md`).
pub fn normal<T: RandFloat>(key: Key, n: usize, loc: Option<f32>, scale: Option<f32>) -> Result<Vec<T>> {
    let mut factor = T::sqrt2();
    if let Some(s) = scale {
        factor = factor.mul(T::from_f32(s));
    }
    let loc = loc.map(T::from_f32);
    let u = signed_unit(key, n)?;
    let mut out = try_vec::<T>("normal", n)?;
    out.extend(u.into_iter().map(|a| {
        let x = factor.mul(T::from_f32(erfinv(a)));
        match loc {
            Some(l) => l.add(x),
            None => x,
        }
    }));
    Ok(out)
}

/// MLX's `erf` on a `T` value: computed in f32, rounded to `T`, then the sign select.
fn erf_t<T: RandFloat>(x: T) -> T {
    let r = T::from_f32(erf_abs(x.to_f32()));
    if x.to_f32() > 0.0 {
        r
    } else {
        r.neg()
    }
}

/// `mx.random.truncated_normal(lower, upper, shape=(n,), dtype=T, key=key)`.
///
/// JAX's scheme as MLX writes it: `u ~ uniform(erf(lower/√2), erf(upper/√2))` in `T`, then
/// `√2 · erfinv(u)` clipped to `[lower, upper]`. MLX's `erf` is its own polynomial (with its own
/// fast `exp`), reproduced here.
pub fn truncated_normal<T: RandFloat>(key: Key, lower: f32, upper: f32, n: usize) -> Result<Vec<T>> {
    let sqrt2 = T::sqrt2();
    let lo = T::from_f32(lower);
    let hi = T::from_f32(upper);
    let a = erf_t(lo.div(sqrt2));
    let b = erf_t(hi.div(sqrt2));
    let u = uniform_t(key, a, b, n)?;
    Ok(u
        .into_iter()
        .map(|v| hi.minimum(sqrt2.mul(T::from_f32(erfinv(v.to_f32())))).maximum(lo))
        .collect())
}

/// `mx.random.gumbel(shape=(n,), dtype=T, key=key)`: `-log(-log(u))`, each op in `T`.
pub fn gumbel<T: RandFloat>(key: Key, n: usize) -> Result<Vec<T>> {
    let u = uniform_t(key, T::from_f32(0.0), T::from_f32(1.0), n)?;
    let log_t = |x: T| T::from_f32(logf(x.to_f32()));
    Ok(u.into_iter().map(|v| log_t(log_t(v).neg()).neg()).collect())
}

/// `mx.random.laplace(shape=(n,), dtype=T, loc, scale, key=key)`.
///
/// Inverse CDF in f32: `sign(u) * log1p(-|u|)` with `u` uniform on `(-1, 1)`, rounded to `T`;
/// then `T(scale) * x` when `scale != 1` and `T(loc) + x` when `loc != 0`, as MLX skips them.
pub fn laplace<T: RandFloat>(key: Key, n: usize, loc: f32, scale: f32) -> Result<Vec<T>> {
    let u = signed_unit(key, n)?;
    let (tl, ts) = (T::from_f32(loc), T::from_f32(scale));
    Ok(u
        .into_iter()
        .map(|s| {
            let sign = if s < 0.0 {
                -1.0
            } else if s > 0.0 {
                1.0
            } else {
                0.0
            };
            let mut x = T::from_f32(sign * log1pf(-s.abs()));
            if scale != 1.0 {
                x = ts.mul(x);
            }
            if loc != 0.0 {
                x = tl.add(x);
            }
            x
        })
        .collect())
}

/// `mx.random.bernoulli(p, shape=(n,), key=key)`: `f32(bits) < p * nextup(2^32)` per element.
///
/// `p` holds one probability (broadcast) or `n` of them; a `float16`/`bfloat16` `p` is exact
/// in f32. Any other length is an error.
pub fn bernoulli(key: Key, p: &[f32], n: usize) -> Result<Vec<bool>> {
    if p.len() != 1 && p.len() != n {
        return Err(Error::invalid(
            "bernoulli",
            alloc::format!("shape of `p` ({} elements) is incompatible with argument `shape` ({n} elements).", p.len()),
        ));
    }
    // nextafter(float(UINT32_MAX), FLT_MAX) = 2^32 + 2^9.
    let upper = f32::from_bits(0x4F80_0001);
    let words = bits_words(key, n)?;
    let mut out = try_vec::<bool>("bernoulli", n)?;
    out.extend(words.into_iter().enumerate().map(|(i, b)| {
        let pi = if p.len() == 1 { p[0] } else { p[i] };
        (b as f32) < pi * upper
    }));
    Ok(out)
}

/// `mx.random.randint(low, high, shape=(n,), dtype=I, key=key)` with int32 bounds (what MLX
/// makes of Python ints).
///
/// MLX 0.32 draws a float32 `uniform(low, high)`, floors it, casts to `I` (a C cast, as x86-64
/// executes it), and clamps to `[I(low), I(high - 1)]`. So `low >= high` gives `low`
/// everywhere (not an error), and bounds beyond 2^24 lose precision exactly as MLX does.
pub fn randint<I: RandInt>(key: Key, low: i32, high: i32, n: usize) -> Result<Vec<I>> {
    let u = uniform_t::<f32>(key, low as f32, high as f32, n)?;
    let hi = I::from_i32(high.wrapping_sub(1));
    let lo = I::from_i32(low);
    Ok(u.into_iter().map(|v| I::from_f32(floorf(v)).min(hi).max(lo)).collect())
}

/// `mx.random.permutation(n, key=key)`: the stable argsort of `n` 32-bit draws, as uint32.
pub fn permutation(key: Key, n: usize) -> Result<Vec<u32>> {
    if n > u32::MAX as usize {
        return Err(Error::invalid("permutation", "length does not fit uint32 indices"));
    }
    let words = bits_words(key, n)?;
    let mut idx = try_vec::<u32>("permutation", n)?;
    idx.extend(0..n as u32);
    // Stable, like MLX's std::stable_sort: equal draws keep index order.
    idx.sort_by_key(|&i| words[i as usize]);
    Ok(idx)
}

/// The shape of the logits for [`categorical`]: `classes` along the last axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logits {
    /// A 1-D `(classes,)` array.
    Vector {
        /// Number of categories.
        classes: usize,
    },
    /// A 2-D `(rows, classes)` array, one distribution per row.
    Matrix {
        /// Number of distributions.
        rows: usize,
        /// Number of categories.
        classes: usize,
    },
}

/// `mx.random.categorical(logits, axis=-1, num_samples=num_samples, key=key)` for 1-D or 2-D
/// f32 logits (float16/bfloat16 logits widen exactly, and MLX promotes them to f32 too).
///
/// Output (uint32 category indices), row-major:
/// * 1-D, `None`: one index (Gumbel-max over the classes);
/// * 1-D, `Some(s)`: `s` indices (inverse-CDF path);
/// * 2-D, `None`: `rows` indices; 2-D, `Some(s)`: `rows * s` indices.
///
/// When the logits hold exactly one distribution and the output is not a scalar, MLX 0.32 uses
/// the inverse CDF (`searchsorted` into the exclusive cumsum of `exp(x - max)`, with its fast
/// `exp`); otherwise Gumbel-max (`argmax(logits + gumbel)`, first index on ties).
pub fn categorical(key: Key, logits: &[f32], shape: Logits, num_samples: Option<usize>) -> Result<Vec<u32>> {
    let (rows, classes, out_empty_shape) = match shape {
        Logits::Vector { classes } => (1usize, classes, num_samples.is_none()),
        Logits::Matrix { rows, classes } => (rows, classes, false),
    };
    let total = rows
        .checked_mul(classes)
        .ok_or_else(|| Error::invalid("categorical", "logits size overflows"))?;
    if logits.len() != total {
        return Err(Error::invalid(
            "categorical",
            alloc::format!("expected {total} logits, got {}", logits.len()),
        ));
    }
    if classes == 0 {
        return Err(Error::invalid("categorical", "Cannot sample from zero categories."));
    }
    if classes > u32::MAX as usize {
        return Err(Error::invalid("categorical", "too many categories for uint32 indices"));
    }
    let samples = num_samples.unwrap_or(1);
    let n_out = rows
        .checked_mul(samples)
        .ok_or_else(|| Error::invalid("categorical", "output size overflows"))?;
    if rows == 1 && !out_empty_shape {
        return categorical_inverse_cdf(key, logits, n_out);
    }
    // Gumbel-max: noise of shape (rows, classes, samples); argmax over classes.
    let n_noise = n_out
        .checked_mul(classes)
        .ok_or_else(|| Error::invalid("categorical", "noise size overflows"))?;
    let g = gumbel::<f32>(key, n_noise)?;
    let mut out = try_vec::<u32>("categorical", n_out)?;
    for r in 0..rows {
        for s in 0..samples {
            let at = |c: usize| g[(r * classes + c) * samples + s] + logits[r * classes + c];
            let mut best = at(0);
            let mut best_i = 0u32;
            for c in 1..classes {
                let v = at(c);
                if v > best {
                    best = v;
                    best_i = c as u32;
                }
            }
            out.push(best_i);
        }
    }
    Ok(out)
}

/// MLX 0.32's `categorical_inverse_cdf` for a single distribution, `n` draws.
fn categorical_inverse_cdf(key: Key, x: &[f32], n: usize) -> Result<Vec<u32>> {
    // max reduce: NaN if any logit is NaN.
    let m = if x.iter().any(|v| v.is_nan()) {
        f32::NAN
    } else {
        x.iter().fold(f32::NEG_INFINITY, |a, &v| if v > a { v } else { a })
    };
    let mut w = try_vec::<f32>("categorical", x.len())?;
    if m.is_infinite() {
        w.extend(x.iter().map(|&v| if v == m { 1.0 } else { 0.0 }));
    } else {
        w.extend(x.iter().map(|&v| exp(v - m)));
    }
    // Exclusive cumsum and the sum, both accumulated in order in f32.
    let mut cdf = try_vec::<f32>("categorical", w.len())?;
    let mut acc = 0.0f32;
    for &v in &w {
        cdf.push(acc);
        acc += v;
    }
    let sum = w.iter().fold(0.0f32, |a, &v| a + v);
    let u = uniform_t::<f32>(key, 0.0, 1.0, n)?;
    Ok(u
        .into_iter()
        .map(|v| {
            let t = v * sum;
            // searchsorted(side="right") - 1 in uint32 arithmetic.
            (cdf.partition_point(|&c| c <= t) as u32).wrapping_sub(1)
        })
        .collect())
}
