//! The op tables of mlx-c's `random.h`, `fast.h` and `linalg.h`: mlx-c's names and parameter
//! order, one line per C function over what core implements. Functions core lacks
//! (`multivariate_normal`, Metal/CUDA kernels, `cholesky`, `inv`, `qr`, ...) are left out,
//! so a program that uses them fails to compile rather than failing at run time.
//! `random_key` and `random_seed` take no stream, as in mlx-c.

use super::spec::op;
use super::{Op, Out};

/// Every generated random/fast/linalg function.
pub fn table() -> Vec<Op> {
    use Out::{Array as A, Nothing as N, Pair as P, Vector as V};
    let lines: &[(&str, &'static str, &str, Out, &str)] = &[
        // random.h: `key` may be the empty handle (the global key sequence is used then).
        ("random_bernoulli", "random", "p: array, shape: shape, key: array?", A, "ops::random::bernoulli(&p, Some(&shape), key.as_ref())"),
        ("random_bits", "random", "shape: shape, width: count, key: array?", A, "ops::random::bits(&shape, width, key.as_ref())"),
        ("random_categorical_shape", "random", "logits: array, axis: int, shape: shape, key: array?", A, "ops::random::categorical(&logits, axis as isize, Some(&shape), None, key.as_ref())"),
        ("random_categorical_num_samples", "random", "logits_: array, axis: int, num_samples: count, key: array?", A, "ops::random::categorical(&logits_, axis as isize, None, Some(num_samples), key.as_ref())"),
        ("random_categorical", "random", "logits: array, axis: int, key: array?", A, "ops::random::categorical(&logits, axis as isize, None, None, key.as_ref())"),
        ("random_gumbel", "random", "shape: shape, dtype: dtype, key: array?", A, "ops::random::gumbel(&shape, dtype, key.as_ref())"),
        ("random_key", "random", "seed: u64", A, "ops::random::key(seed)"),
        ("random_laplace", "random", "shape: shape, dtype: dtype, loc: float, scale: float, key: array?", A, "ops::random::laplace(&shape, dtype, loc, scale, key.as_ref())"),
        ("random_normal_broadcast", "random", "shape: shape, dtype: dtype, loc: array?, scale: array?, key: array?", A, "ops::random::normal(&shape, dtype, loc.map(Param::Array), scale.map(Param::Array), key.as_ref())"),
        ("random_normal", "random", "shape: shape, dtype: dtype, loc: float, scale: float, key: array?", A, "ops::random::normal(&shape, dtype, Some(Param::from(loc)), Some(Param::from(scale)), key.as_ref())"),
        ("random_permutation", "random", "x: array, axis: int, key: array?", A, "ops::random::permutation(&x, axis as isize, key.as_ref())"),
        ("random_permutation_arange", "random", "x: count, key: array?", A, "ops::random::permutation_n(x, key.as_ref())"),
        ("random_randint", "random", "low: array, high: array, shape: shape, dtype: dtype, key: array?", A, "ops::random::randint_bounds(&low, &high, &shape, dtype, key.as_ref())"),
        ("random_seed", "random", "seed: u64", N, "{ ops::random::seed(seed); Ok(()) }"),
        ("random_split_num", "random", "key: array, num: count", A, "ops::random::split(&key, num)"),
        ("random_split", "random", "key: array", P, "compose::split_key(&key)"),
        ("random_truncated_normal", "random", "lower: array, upper: array, shape: shape, dtype: dtype, key: array?", A, "ops::random::truncated_normal_bounds(&lower, &upper, Some(&shape), dtype, key.as_ref())"),
        ("random_uniform", "random", "low: array, high: array, shape: shape, dtype: dtype, key: array?", A, "ops::random::uniform(&low, &high, &shape, dtype, key.as_ref())"),
        // fast.h
        ("fast_layer_norm", "fast", "x: array, weight: array?, bias: array?, eps: float", A, "ops::layer_norm(&x, weight.as_ref(), bias.as_ref(), eps)"),
        ("fast_rms_norm", "fast", "x: array, weight: array?, eps: float", A, "ops::rms_norm(&x, weight.as_ref(), eps)"),
        ("fast_rope", "fast", "x: array, dims: int, traditional: bool, base: opt_float, scale: float, offset: int, freqs: array?", A, "ops::rope(&x, dims as isize, traditional, base, scale, ops::RopeOffset::Int(offset), freqs.as_ref())"),
        ("fast_rope_dynamic", "fast", "x: array, dims: int, traditional: bool, base: opt_float, scale: float, offset: array, freqs: array?", A, "ops::rope(&x, dims as isize, traditional, base, scale, ops::RopeOffset::Array(&offset), freqs.as_ref())"),
        ("fast_scaled_dot_product_attention", "fast", "queries: array, keys: array, values: array, scale: float, mask_mode: str, mask_arr: array?, sinks: array?", A, "compose::sdpa(&queries, &keys, &values, scale, mask_mode, mask_arr.as_ref(), sinks.as_ref())"),
        // linalg.h
        ("linalg_norm", "linalg", "a: array, ord: double, axis: ints?, keepdims: bool", A, "ops::norm(&a, Some(ops::NormOrd::Num(ord)), axis.as_deref(), keepdims)"),
        ("linalg_norm_matrix", "linalg", "a: array, ord: str, axis: ints?, keepdims: bool", A, "ops::norm(&a, Some(compose::matrix_ord(ord)?), axis.as_deref(), keepdims)"),
        ("linalg_norm_l2", "linalg", "a: array, axis: ints?, keepdims: bool", A, "ops::norm(&a, None, axis.as_deref(), keepdims)"),
        ("linalg_svd", "linalg", "a: array, compute_uv: bool", V, "compose::svd(&a, compute_uv)"),
    ];
    lines
        .iter()
        .map(|(name, header, params, out, call)| {
            let mut o = op(name, header, params, *out, call);
            o.stream = !matches!(*name, "random_key" | "random_seed");
            o
        })
        .collect()
}
