//! The op tables of mlx-c's `random.h`, `fast.h`, `linalg.h` and `fft.h`: mlx-c's names and parameter
//! order, one line per C function over what core implements. Functions core lacks
//! (Metal/CUDA kernels, `linalg_cross` for now, ...) are left out, so a program that uses them
//! fails to compile rather than failing at run time. `linalg_det`/`linalg_slogdet` (MLX 0.32
//! Python functions that mlx-c 0.31's header predates) follow mlx-c's naming pattern.
//! `random_key` and `random_seed` take no stream, as in mlx-c.

use super::spec::op;
use super::{Op, Out};

/// Every generated random/fast/linalg/fft function.
pub fn table() -> Vec<Op> {
    let mut lines = base_lines();
    lines.extend_from_slice(LINALG);
    lines
        .iter()
        .map(|(name, header, params, out, call)| {
            let mut o = op(name, header, params, *out, call);
            o.stream = !matches!(*name, "random_key" | "random_seed");
            o
        })
        .collect()
}

type Line = (&'static str, &'static str, &'static str, Out, &'static str);

/// linalg.h's decompositions and random.h's multivariate_normal (area: linalg).
const LINALG: &[Line] = {
    use Out::{Array as A, Pair as P, Vector as V};
    &[
        ("linalg_cholesky", "linalg", "a: array, upper: bool", A, "ops::linalg::cholesky(&a, upper)"),
        ("linalg_cholesky_inv", "linalg", "a: array, upper: bool", A, "ops::linalg::cholesky_inv(&a, upper)"),
        ("linalg_det", "linalg", "a: array", A, "ops::linalg::det(&a)"),
        ("linalg_eig", "linalg", "a: array", P, "ops::linalg::eig(&a)"),
        ("linalg_eigh", "linalg", "a: array, UPLO: str", P, "ops::linalg::eigh(&a, UPLO)"),
        ("linalg_eigvals", "linalg", "a: array", A, "ops::linalg::eigvals(&a)"),
        ("linalg_eigvalsh", "linalg", "a: array, UPLO: str", A, "ops::linalg::eigvalsh(&a, UPLO)"),
        ("linalg_inv", "linalg", "a: array", A, "ops::linalg::inv(&a)"),
        ("linalg_lu", "linalg", "a: array", V, "ops::linalg::lu(&a)"),
        ("linalg_lu_factor", "linalg", "a: array", P, "ops::linalg::lu_factor(&a)"),
        ("linalg_pinv", "linalg", "a: array", A, "ops::linalg::pinv(&a)"),
        ("linalg_qr", "linalg", "a: array", P, "ops::linalg::qr(&a)"),
        ("linalg_slogdet", "linalg", "a: array", P, "ops::linalg::slogdet(&a)"),
        ("linalg_solve", "linalg", "a: array, b: array", A, "ops::linalg::solve(&a, &b)"),
        ("linalg_solve_triangular", "linalg", "a: array, b: array, upper: bool", A, "ops::linalg::solve_triangular(&a, &b, upper)"),
        ("linalg_tri_inv", "linalg", "a: array, upper: bool", A, "ops::linalg::tri_inv(&a, upper)"),
        ("random_multivariate_normal", "random", "mean: array, cov: array, shape: shape, dtype: dtype, key: array?", A, "ops::random::multivariate_normal(&mean, &cov, &shape, dtype, key.as_ref())"),
    ]
};

/// The tables of the other areas.
fn base_lines() -> Vec<Line> {
    use Out::{Array as A, Nothing as N, Pair as P, Vector as V};
    vec![
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
        // More ops: MLX 0.32's fast.cross_entropy (not in mlx-c 0.31: extension, MLX's parameter names).
        ("arm_fast_cross_entropy", "fast", "logits: array, targets: array", A, "ops::cross_entropy::cross_entropy(&logits, &targets)"),
        // MLX 0.32.4's fast.gated_delta_update (not in mlx-c 0.31: extension, MLX's parameter names).
        ("arm_fast_gated_delta_update", "fast", "q: array, k: array, v: array, gamma: array, beta: array, initial_state: array?, mask: array?", V, "ops::gated_delta::gated_delta_update(&q, &k, &v, &gamma, &beta, initial_state.as_ref(), mask.as_ref())"),
        // linalg.h
        ("linalg_norm", "linalg", "a: array, ord: double, axis: ints?, keepdims: bool", A, "ops::norm(&a, Some(ops::NormOrd::Num(ord)), axis.as_deref(), keepdims)"),
        ("linalg_norm_matrix", "linalg", "a: array, ord: str, axis: ints?, keepdims: bool", A, "ops::norm(&a, Some(compose::matrix_ord(ord)?), axis.as_deref(), keepdims)"),
        ("linalg_norm_l2", "linalg", "a: array, axis: ints?, keepdims: bool", A, "ops::norm(&a, None, axis.as_deref(), keepdims)"),
        ("linalg_svd", "linalg", "a: array, compute_uv: bool", V, "ops::linalg::svd(&a, compute_uv)"),
        // ops3
        ("linalg_cross", "linalg", "a: array, b: array, axis: int", A, "ops::cross(&a, &b, axis as isize)"),
        // fft.h (area: fft): mlx-c passes sizes always (`n`, or `n` and `axes` together).
        ("fft_fft", "fft", "a: array, n: int, axis: int, norm: fft_norm", A, "ops::fft::fft(&a, Some(n as isize), axis as isize, norm)"),
        ("fft_fft2", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::fft2(&a, Some(&n), Some(&axes), norm)"),
        ("fft_fftfreq", "fft", "n: int, d: double", A, "ops::fft::fftfreq(n as isize, d)"),
        ("fft_fftn", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::fftn(&a, Some(&n), Some(&axes), norm)"),
        ("fft_fftshift", "fft", "a: array, axes: ints", A, "ops::fft::fftshift(&a, Some(&axes))"),
        ("fft_ifft", "fft", "a: array, n: int, axis: int, norm: fft_norm", A, "ops::fft::ifft(&a, Some(n as isize), axis as isize, norm)"),
        ("fft_ifft2", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::ifft2(&a, Some(&n), Some(&axes), norm)"),
        ("fft_ifftn", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::ifftn(&a, Some(&n), Some(&axes), norm)"),
        ("fft_ifftshift", "fft", "a: array, axes: ints", A, "ops::fft::ifftshift(&a, Some(&axes))"),
        ("fft_irfft", "fft", "a: array, n: int, axis: int, norm: fft_norm", A, "ops::fft::irfft(&a, Some(n as isize), axis as isize, norm)"),
        ("fft_irfft2", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::irfft2(&a, Some(&n), Some(&axes), norm)"),
        ("fft_irfftn", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::irfftn(&a, Some(&n), Some(&axes), norm)"),
        ("fft_rfft", "fft", "a: array, n: int, axis: int, norm: fft_norm", A, "ops::fft::rfft(&a, Some(n as isize), axis as isize, norm)"),
        ("fft_rfft2", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::rfft2(&a, Some(&n), Some(&axes), norm)"),
        ("fft_rfftfreq", "fft", "n: int, d: double", A, "ops::fft::rfftfreq(n as isize, d)"),
        ("fft_rfftn", "fft", "a: array, n: ints, axes: ints, norm: fft_norm", A, "ops::fft::rfftn(&a, Some(&n), Some(&axes), norm)"),
    ]
}
