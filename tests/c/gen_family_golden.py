"""Writes tests/c/family_golden.inc: the C API's random.h, fast.h, linalg.h, fft.h and the ops.h
families added after the first slice (products, convolution, quantization, joining/splitting,
padding, diagonals, comparisons), each checked against real MLX.

Run: /opt/oracle/bin/python tests/c/gen_family_golden.py

Case format: see golden_emit.py. Random draws pass an explicit key (`k`, uint32 [0, 42]) so
MLX and the C API draw the same bits. Error cases whose Python expression is None are
inputs MLX accepts through another overload but core does not support (status != 0 and a
"not supported" message are what the C test checks).
"""
import os
import sys

import mlx.core as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from golden_emit import *  # noqa: E402,F401,F403 (dtype aliases, emit)

rng = np.random.default_rng(11)
cases = []


def case(name, inputs, c_code, py):
    cases.append((name, inputs, c_code, py))


def oi(v):
    return "(mlx_optional_int){0, false}" if v is None else f"(mlx_optional_int){{{v}, true}}"


def of(v):
    return "(mlx_optional_float){0, false}" if v is None else f"(mlx_optional_float){{{v}f, true}}"


NOD = "(mlx_optional_dtype){MLX_FLOAT32, false}"
KEY = np.array([0, 42], dtype=u32)
lo = np.array(-1.0, dtype=f32)
hi = np.array(3.0, dtype=f32)
x23 = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]], dtype=f32)
r34 = rng.standard_normal((3, 4)).astype(f32)
r45 = rng.standard_normal((4, 5)).astype(f32)
r234 = rng.standard_normal((2, 3, 4)).astype(f32)

# ---- random.h ------------------------------------------------------------------------------
case("random_key", {}, "mlx_random_key(&res, 42)", lambda: mx.random.key(42))
case("random_key_u64", {}, "mlx_random_key(&res, 0x123456789abcdefULL)", lambda: mx.random.key(0x123456789ABCDEF))
case("random_split_num", {"k": KEY}, "mlx_random_split_num(&res, k, 3, s)", lambda k: mx.random.split(k, 3))
case("random_split_first", {"k": KEY}, "mlx_random_split(&res, &t1, k, s)", lambda k: mx.random.split(k)[0])
case("random_split_second", {"k": KEY}, "mlx_random_split(&t1, &res, k, s)", lambda k: mx.random.split(k)[1])
# MLX's Python API has no `bits`; its `split(key, n)` is `bits((n, 2), 4, key)`.
case("random_bits_as_split", {"k": KEY}, "mlx_random_bits(&res, (int[]){3, 2}, 2, 4, k, s)", lambda k: mx.random.split(k, 3))
case("random_bits_width_error", {"k": KEY}, "mlx_random_bits(&res, (int[]){3}, 1, 3, k, s)", None)
case("random_uniform", {"a": lo, "b": hi, "k": KEY}, "mlx_random_uniform(&res, a, b, (int[]){2, 3}, 2, MLX_FLOAT32, k, s)",
     lambda a, b, k: mx.random.uniform(a, b, (2, 3), key=k))
case("random_uniform_f16", {"a": lo, "b": hi, "k": KEY}, "mlx_random_uniform(&res, a, b, (int[]){4}, 1, MLX_FLOAT16, k, s)",
     lambda a, b, k: mx.random.uniform(a, b, (4,), dtype=mx.float16, key=k))
case("random_uniform_array_bounds", {"a": np.array([0.0, 10.0, 20.0], dtype=f32), "b": np.array([[1.0], [2.0]], dtype=f32), "k": KEY},
     "mlx_random_uniform(&res, a, b, (int[]){2, 3}, 2, MLX_FLOAT32, k, s)", lambda a, b, k: mx.random.uniform(a, b, (2, 3), key=k))
case("random_uniform_int_error", {"a": lo, "b": hi, "k": KEY}, "mlx_random_uniform(&res, a, b, (int[]){2}, 1, MLX_INT32, k, s)",
     lambda a, b, k: mx.random.uniform(a, b, (2,), dtype=mx.int32, key=k))
case("random_uniform_bad_key_error", {"a": lo, "b": hi, "k": np.array([1, 2, 3], dtype=u32)},
     "mlx_random_uniform(&res, a, b, (int[]){2}, 1, MLX_FLOAT32, k, s)", lambda a, b, k: mx.random.uniform(a, b, (2,), key=k))
case("random_normal", {"k": KEY}, "mlx_random_normal(&res, (int[]){3, 4}, 2, MLX_FLOAT32, 0.5f, 2.0f, k, s)",
     lambda k: mx.random.normal((3, 4), loc=0.5, scale=2.0, key=k))
case("random_normal_bf16", {"k": KEY}, "mlx_random_normal(&res, (int[]){6}, 1, MLX_BFLOAT16, 0.0f, 1.0f, k, s)",
     lambda k: mx.random.normal((6,), dtype=mx.bfloat16, key=k))
case("random_normal_broadcast", {"a": np.array([0.0, 100.0, -100.0], dtype=f32), "k": KEY},
     "mlx_random_normal_broadcast(&res, (int[]){2, 3}, 2, MLX_FLOAT32, a, t1, k, s)",
     lambda a, k: mx.random.normal((2, 3), loc=a, key=k))
case("random_truncated_normal", {"a": lo, "b": np.array(0.5, dtype=f32), "k": KEY},
     "mlx_random_truncated_normal(&res, a, b, (int[]){2, 4}, 2, MLX_FLOAT32, k, s)",
     lambda a, b, k: mx.random.truncated_normal(a, b, (2, 4), key=k))
case("random_truncated_normal_array_bounds", {"a": np.array([-1.0, 0.0], dtype=f32), "b": hi, "k": KEY},
     "mlx_random_truncated_normal(&res, a, b, (int[]){2}, 1, MLX_FLOAT32, k, s)",
     lambda a, b, k: mx.random.truncated_normal(a, b, (2,), key=k))
case("random_randint", {"a": np.array(-5, dtype=i32), "b": np.array(7, dtype=i32), "k": KEY},
     "mlx_random_randint(&res, a, b, (int[]){2, 5}, 2, MLX_INT32, k, s)", lambda a, b, k: mx.random.randint(a, b, (2, 5), key=k))
case("random_randint_uint8", {"a": np.array(0, dtype=i32), "b": np.array(200, dtype=i32), "k": KEY},
     "mlx_random_randint(&res, a, b, (int[]){6}, 1, MLX_UINT8, k, s)", lambda a, b, k: mx.random.randint(a, b, (6,), dtype=mx.uint8, key=k))
case("random_randint_float_error", {"a": np.array(0, dtype=i32), "b": np.array(9, dtype=i32), "k": KEY},
     "mlx_random_randint(&res, a, b, (int[]){2}, 1, MLX_FLOAT32, k, s)", lambda a, b, k: mx.random.randint(a, b, (2,), dtype=mx.float32, key=k))
case("random_bernoulli", {"a": np.array([0.1, 0.5, 0.9], dtype=f32), "k": KEY},
     "mlx_random_bernoulli(&res, a, (int[]){4, 3}, 2, k, s)", lambda a, k: mx.random.bernoulli(a, (4, 3), key=k))
case("random_bernoulli_shape_error", {"a": np.array([0.1, 0.5, 0.9], dtype=f32), "k": KEY},
     "mlx_random_bernoulli(&res, a, (int[]){4, 2}, 2, k, s)", lambda a, k: mx.random.bernoulli(a, (4, 2), key=k))
logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=f32))
case("random_categorical", {"a": logits, "k": KEY}, "mlx_random_categorical(&res, a, -1, k, s)",
     lambda a, k: mx.random.categorical(a, -1, key=k))
case("random_categorical_num_samples", {"a": logits, "k": KEY}, "mlx_random_categorical_num_samples(&res, a, 1, 5, k, s)",
     lambda a, k: mx.random.categorical(a, 1, num_samples=5, key=k))
case("random_categorical_shape", {"a": logits[:1], "k": KEY}, "mlx_random_categorical_shape(&res, a, 1, (int[]){3, 1}, 2, k, s)",
     lambda a, k: mx.random.categorical(a, 1, shape=(3, 1), key=k))
case("random_gumbel", {"k": KEY}, "mlx_random_gumbel(&res, (int[]){2, 2}, 2, MLX_FLOAT32, k, s)",
     lambda k: mx.random.gumbel((2, 2), key=k))
case("random_laplace", {"k": KEY}, "mlx_random_laplace(&res, (int[]){5}, 1, MLX_FLOAT32, 1.0f, 0.5f, k, s)",
     lambda k: mx.random.laplace((5,), loc=1.0, scale=0.5, key=k))
case("random_permutation_arange", {"k": KEY}, "mlx_random_permutation_arange(&res, 8, k, s)",
     lambda k: mx.random.permutation(8, key=k))
case("random_permutation", {"a": r34, "k": KEY}, "mlx_random_permutation(&res, a, 1, k, s)",
     lambda a, k: mx.random.permutation(a, axis=1, key=k))
case("random_permutation_axis_error", {"a": r34, "k": KEY}, "mlx_random_permutation(&res, a, 2, k, s)",
     lambda a, k: mx.random.permutation(a, axis=2, key=k))


def seeded(a, b):
    mx.random.seed(1234)
    return mx.random.uniform(a, b, (2, 2))


# The global key sequence: seed, then draw without a key (the empty handle).
case("random_seed_then_global_key", {"a": lo, "b": hi},
     "mlx_random_seed(1234); mlx_random_uniform(&res, a, b, (int[]){2, 2}, 2, MLX_FLOAT32, t1, s)", seeded)

# ---- fast.h --------------------------------------------------------------------------------
xn = rng.standard_normal((2, 3, 8)).astype(f32)
wn = rng.standard_normal((8,)).astype(f32)
bn = rng.standard_normal((8,)).astype(f32)
case("fast_rms_norm", {"a": xn, "b": wn}, "mlx_fast_rms_norm(&res, a, b, 1e-5f, s)", lambda a, b: mx.fast.rms_norm(a, b, 1e-5))
case("fast_rms_norm_no_weight", {"a": xn}, "mlx_fast_rms_norm(&res, a, t1, 1e-5f, s)", lambda a: mx.fast.rms_norm(a, None, 1e-5))
case("fast_rms_norm_weight_error", {"a": xn, "b": wn[:4]}, "mlx_fast_rms_norm(&res, a, b, 1e-5f, s)", lambda a, b: mx.fast.rms_norm(a, b, 1e-5))
case("fast_layer_norm", {"a": xn, "b": wn, "c": bn}, "mlx_fast_layer_norm(&res, a, b, c, 1e-5f, s)",
     lambda a, b, c: mx.fast.layer_norm(a, b, c, 1e-5))
case("fast_layer_norm_no_affine", {"a": xn}, "mlx_fast_layer_norm(&res, a, t1, t2, 1e-5f, s)",
     lambda a: mx.fast.layer_norm(a, None, None, 1e-5))
xr = rng.standard_normal((1, 2, 4, 8)).astype(f32)
case("fast_rope", {"a": xr}, f"mlx_fast_rope(&res, a, 8, false, {of(10000.0)}, 1.0f, 3, t1, s)",
     lambda a: mx.fast.rope(a, 8, traditional=False, base=10000.0, scale=1.0, offset=3))
case("fast_rope_traditional_partial", {"a": xr}, f"mlx_fast_rope(&res, a, 4, true, {of(500.0)}, 0.5f, 0, t1, s)",
     lambda a: mx.fast.rope(a, 4, traditional=True, base=500.0, scale=0.5, offset=0))
case("fast_rope_freqs", {"a": xr, "b": np.array([1.0, 0.5, 0.25, 0.125], dtype=f32)},
     f"mlx_fast_rope(&res, a, 8, false, {of(None)}, 1.0f, 2, b, s)",
     lambda a, b: mx.fast.rope(a, 8, traditional=False, base=None, scale=1.0, offset=2, freqs=b))
case("fast_rope_dynamic", {"a": xr, "b": np.array(5, dtype=i32)},
     f"mlx_fast_rope_dynamic(&res, a, 8, false, {of(10000.0)}, 1.0f, b, t1, s)",
     lambda a, b: mx.fast.rope(a, 8, traditional=False, base=10000.0, scale=1.0, offset=b))
case("fast_rope_odd_dims_error", {"a": xr}, f"mlx_fast_rope(&res, a, 3, false, {of(10000.0)}, 1.0f, 0, t1, s)",
     lambda a: mx.fast.rope(a, 3, traditional=False, base=10000.0, scale=1.0, offset=0))
q = rng.standard_normal((1, 2, 3, 4)).astype(f32)
kk = rng.standard_normal((1, 1, 5, 4)).astype(f32)
vv = rng.standard_normal((1, 1, 5, 4)).astype(f32)
SDPA = mx.fast.scaled_dot_product_attention
case("fast_sdpa", {"a": q, "b": kk, "c": vv}, 'mlx_fast_scaled_dot_product_attention(&res, a, b, c, 0.5f, "", t1, t2, s)',
     lambda a, b, c: SDPA(a, b, c, scale=0.5))
case("fast_sdpa_causal", {"a": q, "b": kk, "c": vv}, 'mlx_fast_scaled_dot_product_attention(&res, a, b, c, 0.5f, "causal", t1, t2, s)',
     lambda a, b, c: SDPA(a, b, c, scale=0.5, mask="causal"))
mask = np.array([[True, False, True, True, False]] * 3)
case("fast_sdpa_bool_mask", {"a": q, "b": kk, "c": vv, "m": mask},
     'mlx_fast_scaled_dot_product_attention(&res, a, b, c, 0.5f, "array", m, t2, s)',
     lambda a, b, c, m: SDPA(a, b, c, scale=0.5, mask=m))
addm = rng.standard_normal((3, 5)).astype(f32)
case("fast_sdpa_additive_mask", {"a": q, "b": kk, "c": vv, "m": addm},
     'mlx_fast_scaled_dot_product_attention(&res, a, b, c, 0.5f, "", m, t2, s)',
     lambda a, b, c, m: SDPA(a, b, c, scale=0.5, mask=m))
case("fast_sdpa_mode_error", {"a": q, "b": kk, "c": vv},
     'mlx_fast_scaled_dot_product_attention(&res, a, b, c, 0.5f, "bogus", t1, t2, s)',
     lambda a, b, c: SDPA(a, b, c, scale=0.5, mask="bogus"))
case("fast_sdpa_rank_error", {"a": q[0], "b": kk, "c": vv},
     'mlx_fast_scaled_dot_product_attention(&res, a, b, c, 0.5f, "", t1, t2, s)',
     lambda a, b, c: SDPA(a, b, c, scale=0.5))
case("fast_sdpa_sinks", {"a": q, "b": kk, "c": vv, "m": np.array([0.5, -1.0], dtype=f32)},
     'mlx_fast_scaled_dot_product_attention(&res, a, b, c, 0.5f, "", t1, m, s)',
     lambda a, b, c, m: SDPA(a, b, c, scale=0.5, sinks=m))

# ---- linalg.h ------------------------------------------------------------------------------
LN = mx.linalg.norm
v5 = np.array([3.0, -4.0, 1.0, 0.5, -2.0], dtype=f32)
case("linalg_norm_vector_ord3", {"a": v5}, "mlx_linalg_norm(&res, a, 3.0, NULL, 0, false, s)", lambda a: LN(a, 3.0))
case("linalg_norm_matrix_ord1", {"a": r34}, "mlx_linalg_norm(&res, a, 1.0, NULL, 0, false, s)", lambda a: LN(a, 1.0))
case("linalg_norm_matrix_ord2", {"a": r34}, "mlx_linalg_norm(&res, a, 2.0, NULL, 0, false, s)", lambda a: LN(a, 2.0, stream=mx.cpu))
case("linalg_norm_inf_axis", {"a": r34}, "mlx_linalg_norm(&res, a, INFINITY, (int[]){1}, 1, true, s)", lambda a: LN(a, float("inf"), axis=1, keepdims=True))
case("linalg_norm_fro", {"a": r234}, 'mlx_linalg_norm_matrix(&res, a, "fro", (int[]){0, 2}, 2, false, s)', lambda a: LN(a, "fro", axis=(0, 2)))
case("linalg_norm_nuc", {"a": r34}, 'mlx_linalg_norm_matrix(&res, a, "nuc", NULL, 0, false, s)', lambda a: LN(a, "nuc", stream=mx.cpu))
case("linalg_norm_matrix_bad_ord_error", {"a": r34}, 'mlx_linalg_norm_matrix(&res, a, "xyz", NULL, 0, false, s)', lambda a: LN(a, "xyz"))
case("linalg_norm_l2", {"a": r234}, "mlx_linalg_norm_l2(&res, a, NULL, 0, false, s)", lambda a: LN(a))
case("linalg_norm_l2_axis", {"a": r234}, "mlx_linalg_norm_l2(&res, a, (int[]){-1}, 1, false, s)", lambda a: LN(a, axis=-1))
case("linalg_norm_bad_axis_error", {"a": r34}, "mlx_linalg_norm_l2(&res, a, (int[]){0, 1, 0}, 3, false, s)", lambda a: LN(a, axis=(0, 1, 0)))
case("linalg_svd_values", {"a": r45}, "mlx_linalg_svd(&vec, a, false, s); mlx_vector_array_get(&res, vec, 0)",
     lambda a: mx.linalg.svd(a, compute_uv=False, stream=mx.cpu))
# decompositions (area: linalg). Unique results only: U/V and eigenvectors are checked by
# identities in tests/python and core/tests/decomp.rs.
sq3 = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(f32)
spd3 = (sq3 @ sq3.T + 3 * np.eye(3)).astype(f32)
low3 = np.tril(sq3).astype(f32)
b3 = rng.standard_normal((3, 2)).astype(f32)
tri2 = np.array([[2.0, 1.0], [0.0, 2.0]], dtype=f32)  # one repeated eigenvalue: order-free
sing2 = np.array([[1.0, 2.0], [2.0, 4.0]], dtype=f32)
i22 = np.array([[1, 2], [3, 4]], dtype=i32)
case("linalg_svd_uv_s", {"a": r45}, "mlx_linalg_svd(&vec, a, true, s); mlx_vector_array_get(&res, vec, 1)",
     lambda a: mx.linalg.svd(a, stream=mx.cpu)[1])
case("linalg_inv", {"a": sq3}, "mlx_linalg_inv(&res, a, s)", lambda a: mx.linalg.inv(a, stream=mx.cpu))
case("linalg_inv_int_error", {"a": i22}, "mlx_linalg_inv(&res, a, s)", lambda a: mx.linalg.inv(a, stream=mx.cpu))
case("linalg_tri_inv_upper", {"a": sq3}, "mlx_linalg_tri_inv(&res, a, true, s)", lambda a: mx.linalg.tri_inv(a, upper=True, stream=mx.cpu))
case("linalg_cholesky", {"a": spd3}, "mlx_linalg_cholesky(&res, a, false, s)", lambda a: mx.linalg.cholesky(a, stream=mx.cpu))
case("linalg_cholesky_upper", {"a": spd3}, "mlx_linalg_cholesky(&res, a, true, s)", lambda a: mx.linalg.cholesky(a, upper=True, stream=mx.cpu))
case("linalg_cholesky_inv", {"a": low3}, "mlx_linalg_cholesky_inv(&res, a, false, s)", lambda a: mx.linalg.cholesky_inv(a, stream=mx.cpu))
case("linalg_qr_q", {"a": r45}, "mlx_linalg_qr(&res, &t1, a, s)", lambda a: mx.linalg.qr(a, stream=mx.cpu)[0])
case("linalg_qr_r", {"a": r45}, "mlx_linalg_qr(&t1, &res, a, s)", lambda a: mx.linalg.qr(a, stream=mx.cpu)[1])
case("linalg_lu_p", {"a": r34}, "mlx_linalg_lu(&vec, a, s); mlx_vector_array_get(&res, vec, 0)", lambda a: mx.linalg.lu(a, stream=mx.cpu)[0])
case("linalg_lu_l", {"a": r34}, "mlx_linalg_lu(&vec, a, s); mlx_vector_array_get(&res, vec, 1)", lambda a: mx.linalg.lu(a, stream=mx.cpu)[1])
case("linalg_lu_factor_lu", {"a": sq3}, "mlx_linalg_lu_factor(&res, &t1, a, s)", lambda a: mx.linalg.lu_factor(a, stream=mx.cpu)[0])
case("linalg_lu_factor_pivots", {"a": sq3}, "mlx_linalg_lu_factor(&t1, &res, a, s)", lambda a: mx.linalg.lu_factor(a, stream=mx.cpu)[1])
case("linalg_solve", {"a": sq3, "b": b3}, "mlx_linalg_solve(&res, a, b, s)", lambda a, b: mx.linalg.solve(a, b, stream=mx.cpu))
case("linalg_solve_shape_error", {"a": sq3, "b": r45}, "mlx_linalg_solve(&res, a, b, s)", lambda a, b: mx.linalg.solve(a, b, stream=mx.cpu))
case("linalg_solve_triangular", {"a": low3, "b": b3}, "mlx_linalg_solve_triangular(&res, a, b, false, s)",
     lambda a, b: mx.linalg.solve_triangular(a, b, upper=False, stream=mx.cpu))
case("linalg_pinv", {"a": r34}, "mlx_linalg_pinv(&res, a, s)", lambda a: mx.linalg.pinv(a, stream=mx.cpu))
case("linalg_eigh_values", {"a": spd3}, 'mlx_linalg_eigh(&res, &t1, a, "L", s)', lambda a: mx.linalg.eigh(a, stream=mx.cpu)[0])
case("linalg_eigvalsh_upper", {"a": sq3}, 'mlx_linalg_eigvalsh(&res, a, "U", s)', lambda a: mx.linalg.eigvalsh(a, UPLO="U", stream=mx.cpu))
case("linalg_eigvals_triangular", {"a": tri2}, "mlx_linalg_eigvals(&res, a, s)", lambda a: mx.linalg.eigvals(a, stream=mx.cpu))
case("linalg_eig_values_triangular", {"a": tri2}, "mlx_linalg_eig(&res, &t1, a, s)", lambda a: mx.linalg.eig(a, stream=mx.cpu)[0])
case("linalg_eig_rect_error", {"a": r34}, "mlx_linalg_eig(&res, &t1, a, s)", lambda a: mx.linalg.eig(a, stream=mx.cpu))
case("linalg_det", {"a": sq3}, "mlx_linalg_det(&res, a, s)", lambda a: mx.linalg.det(a, stream=mx.cpu))
case("linalg_slogdet_logabs", {"a": sq3}, "mlx_linalg_slogdet(&t1, &res, a, s)", lambda a: mx.linalg.slogdet(a, stream=mx.cpu)[1])
case("random_multivariate_normal_dtype_error", {"m": np.zeros(2, f32), "c": np.eye(2, dtype=f32), "k": KEY},
     "mlx_random_multivariate_normal(&res, m, c, NULL, 0, MLX_FLOAT64, k, s)",
     lambda m, c, k: mx.random.multivariate_normal(m, c, dtype=mx.float64, key=k))
case("random_multivariate_normal_shape_error", {"m": np.zeros(3, f32), "c": np.eye(2, dtype=f32), "k": KEY},
     "mlx_random_multivariate_normal(&res, m, c, NULL, 0, MLX_FLOAT32, k, s)",
     lambda m, c, k: mx.random.multivariate_normal(m, c, key=k))

# ---- ops.h: products -----------------------------------------------------------------------
case("matmul", {"a": r34, "b": r45}, "mlx_matmul(&res, a, b, s)", lambda a, b: a @ b)
case("matmul_batched_broadcast", {"a": r234, "b": r45}, "mlx_matmul(&res, a, b, s)", lambda a, b: a @ b)
case("matmul_shape_error", {"a": r34, "b": r34}, "mlx_matmul(&res, a, b, s)", lambda a, b: a @ b)
case("addmm", {"c": np.ones((3, 5), dtype=f32), "a": r34, "b": r45}, "mlx_addmm(&res, c, a, b, 0.5f, 2.0f, s)",
     lambda c, a, b: mx.addmm(c, a, b, alpha=0.5, beta=2.0))
case("inner", {"a": r34, "b": r234}, "mlx_inner(&res, a, b, s)", lambda a, b: mx.inner(a, b))
case("outer", {"a": v5, "b": v5[:3]}, "mlx_outer(&res, a, b, s)", lambda a, b: mx.outer(a, b))
case("kron", {"a": x23, "b": np.array([[1.0, -1.0], [2.0, 0.5]], dtype=f32)}, "mlx_kron(&res, a, b, s)", lambda a, b: mx.kron(a, b))
case("tensordot_axes", {"a": r234, "b": r34}, "mlx_tensordot(&res, a, b, (int[]){1, 2}, 2, (int[]){0, 1}, 2, s)",
     lambda a, b: mx.tensordot(a, b, axes=([1, 2], [0, 1])))
case("tensordot_axis", {"a": r234, "b": r45}, "mlx_tensordot_axis(&res, a, b, 1, s)", lambda a, b: mx.tensordot(a, b, axes=1))
case("einsum", {"a": r34, "b": r45}, 'mlx_vector_array_append_value(vec, a); mlx_vector_array_append_value(vec, b); mlx_einsum(&res, "ij,jk->ki", vec, s)',
     lambda a, b: mx.einsum("ij,jk->ki", a, b))
case("einsum_bad_error", {"a": r34}, 'mlx_einsum(&res, "ij,jk->ik", vec, s)', lambda a: mx.einsum("ij,jk->ik", a))

# ---- convolution ---------------------------------------------------------------------------
x1 = rng.standard_normal((2, 9, 4)).astype(f32)
w1 = rng.standard_normal((6, 3, 2)).astype(f32)
x2 = rng.standard_normal((1, 6, 5, 2)).astype(f32)
w2 = rng.standard_normal((3, 3, 2, 2)).astype(f32)
x3 = rng.standard_normal((1, 4, 4, 3, 2)).astype(f32)
w3 = rng.standard_normal((2, 2, 2, 2, 2)).astype(f32)
case("conv1d_groups", {"a": x1, "b": w1}, "mlx_conv1d(&res, a, b, 2, 1, 1, 2, s)", lambda a, b: mx.conv1d(a, b, 2, 1, 1, 2))
case("conv2d", {"a": x2, "b": w2}, "mlx_conv2d(&res, a, b, 1, 2, 1, 0, 1, 2, 1, s)",
     lambda a, b: mx.conv2d(a, b, (1, 2), (1, 0), (1, 2), 1))
case("conv3d", {"a": x3, "b": w3}, "mlx_conv3d(&res, a, b, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, s)",
     lambda a, b: mx.conv3d(a, b, 1, (0, 1, 0), 1, 1))
case("conv_general_dilated_flip", {"a": x2, "b": w2},
     "mlx_conv_general(&res, a, b, (int[]){1, 1}, 2, (int[]){1, 0}, 2, (int[]){0, 2}, 2, (int[]){1, 1}, 2, (int[]){2, 1}, 2, 1, true, s)",
     lambda a, b: mx.conv_general(a, b, 1, ([1, 0], [0, 2]), 1, (2, 1), 1, True))
case("conv1d_channels_error", {"a": x1, "b": w1}, "mlx_conv1d(&res, a, b, 1, 0, 1, 1, s)", lambda a, b: mx.conv1d(a, b))
# Convolution family: transposed convolutions and mlx_arm_convolve (own generator, so the draws above and
# below stay as they were).
rc = np.random.default_rng(44)
xt1, wt1 = rc.standard_normal((2, 5, 4)).astype(f32), rc.standard_normal((6, 3, 2)).astype(f32)
xt2, wt2 = rc.standard_normal((1, 4, 3, 2)).astype(f32), rc.standard_normal((3, 2, 3, 2)).astype(f32)
xt3, wt3 = rc.standard_normal((1, 3, 2, 3, 2)).astype(f32), rc.standard_normal((2, 2, 2, 2, 2)).astype(f32)
case("conv_transpose1d_groups", {"a": xt1, "b": wt1}, "mlx_conv_transpose1d(&res, a, b, 2, 1, 1, 1, 2, s)",
     lambda a, b: mx.conv_transpose1d(a, b, 2, 1, 1, 1, 2))
case("conv_transpose2d", {"a": xt2, "b": wt2}, "mlx_conv_transpose2d(&res, a, b, 2, 1, 1, 0, 1, 2, 1, 0, 1, s)",
     lambda a, b: mx.conv_transpose2d(a, b, (2, 1), (1, 0), (1, 2), (1, 0), 1))
case("conv_transpose3d", {"a": xt3, "b": wt3}, "mlx_conv_transpose3d(&res, a, b, 1, 2, 1, 0, 1, 0, 1, 1, 2, 0, 1, 0, 1, s)",
     lambda a, b: mx.conv_transpose3d(a, b, (1, 2, 1), (0, 1, 0), (1, 1, 2), (0, 1, 0), 1))
case("conv_transpose1d_stride_error", {"a": xt1, "b": wt1}, "mlx_conv_transpose1d(&res, a, b, 0, 0, 1, 0, 2, s)",
     lambda a, b: mx.conv_transpose1d(a, b, 0, 0, 1, 0, 2))
case("conv_transpose3d_groups_error", {"a": xt3, "b": wt3}, "mlx_conv_transpose3d(&res, a, b, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 2, s)",
     lambda a, b: mx.conv_transpose3d(a, b, groups=2))
cv_a, cv_v = rc.standard_normal(7).astype(f32), rc.standard_normal(4).astype(f32)
for mode in ("full", "same", "valid"):
    case(f"arm_convolve_{mode}", {"a": cv_a, "b": cv_v}, f'mlx_arm_convolve(&res, b, a, "{mode}", s)',
         lambda a, b, mode=mode: mx.convolve(b, a, mode))
case("arm_convolve_mode_error", {"a": cv_a, "b": cv_v}, 'mlx_arm_convolve(&res, a, b, "middle", s)',
     lambda a, b: mx.convolve(a, b, "middle"))

# ---- quantization --------------------------------------------------------------------------
wq_src = rng.standard_normal((4, 64)).astype(f32)
wq, sc, bi = mx.quantize(mx.array(wq_src), 32, 4)
wq, sc, bi = np.array(wq), np.array(sc), np.array(bi)
for i in range(3):
    case(f"quantize_affine_part{i}", {"a": wq_src},
         f'mlx_quantize(&vec, a, {oi(32)}, {oi(4)}, "affine", t1, s); mlx_vector_array_get(&res, vec, {i})',
         lambda a, i=i: mx.quantize(a, 32, 4)[i])
case("quantize_default_8bit_part1", {"a": wq_src},
     f'mlx_quantize(&vec, a, {oi(None)}, {oi(8)}, "affine", t1, s); mlx_vector_array_get(&res, vec, 1)',
     lambda a: mx.quantize(a, bits=8)[1])
case("quantize_mxfp4_part1", {"a": wq_src},
     f'mlx_quantize(&vec, a, {oi(32)}, {oi(4)}, "mxfp4", t1, s); mlx_vector_array_get(&res, vec, 1)',
     lambda a: mx.quantize(a, 32, 4, mode="mxfp4")[1])
case("quantize_bad_group_error", {"a": wq_src}, f'mlx_quantize(&vec, a, {oi(48)}, {oi(4)}, "affine", t1, s)',
     lambda a: mx.quantize(a, 48, 4))
case("quantize_bad_mode_error", {"a": wq_src}, f'mlx_quantize(&vec, a, {oi(32)}, {oi(4)}, "nope", t1, s)',
     lambda a: mx.quantize(a, 32, 4, mode="nope"))
case("dequantize", {"w": wq, "sc": sc, "bi": bi}, f'mlx_dequantize(&res, w, sc, bi, {oi(32)}, {oi(4)}, "affine", t1, {NOD}, s)',
     lambda w, sc, bi: mx.dequantize(w, sc, bi, 32, 4))
case("dequantize_to_f16", {"w": wq, "sc": sc, "bi": bi},
     f'mlx_dequantize(&res, w, sc, bi, {oi(32)}, {oi(4)}, "affine", t1, (mlx_optional_dtype){{MLX_FLOAT16, true}}, s)',
     lambda w, sc, bi: mx.dequantize(w, sc, bi, 32, 4, dtype=mx.float16))
xq = rng.standard_normal((3, 64)).astype(f32)
case("quantized_matmul", {"x": xq, "w": wq, "sc": sc, "bi": bi},
     f'mlx_quantized_matmul(&res, x, w, sc, bi, true, {oi(32)}, {oi(4)}, "affine", s)',
     lambda x, w, sc, bi: mx.quantized_matmul(x, w, sc, bi, True, 32, 4))
case("quantized_matmul_shape_error", {"x": xq[:, :32], "w": wq, "sc": sc, "bi": bi},
     f'mlx_quantized_matmul(&res, x, w, sc, bi, true, {oi(32)}, {oi(4)}, "affine", s)',
     lambda x, w, sc, bi: mx.quantized_matmul(x, w, sc, bi, True, 32, 4))
wqb, scb, bib = (np.array(t) for t in mx.quantize(mx.array(rng.standard_normal((3, 4, 64)).astype(f32)), 32, 4))
case("gather_qmm", {"x": xq[:1], "w": wqb, "sc": scb, "bi": bib, "r": np.array([2, 0], dtype=u32)},
     f'mlx_gather_qmm(&res, x, w, sc, bi, t1, r, true, {oi(32)}, {oi(4)}, "affine", false, s)',
     lambda x, w, sc, bi, r: mx.gather_qmm(x, w, sc, bi, rhs_indices=r, transpose=True, group_size=32, bits=4))
fp = np.array([0.0, 1.0, -2.5, 448.0, 1000.0, 0.013], dtype=f32)
case("to_fp8", {"a": fp}, "mlx_to_fp8(&res, a, s)", lambda a: mx.to_fp8(a))
case("from_fp8", {"a": np.array([0, 56, 192, 126, 1, 255 - 128], dtype=u8)}, "mlx_from_fp8(&res, a, MLX_FLOAT32, s)",
     lambda a: mx.from_fp8(a, mx.float32))
case("to_fp8_int_error", {"a": np.array([1, 2], dtype=i32)}, "mlx_to_fp8(&res, a, s)", lambda a: mx.to_fp8(a))

# ---- joining, splitting, tiling, padding ---------------------------------------------------
V2 = "mlx_vector_array_append_value(vec, a); mlx_vector_array_append_value(vec, b); "
case("concatenate_flat", {"a": x23, "b": r34}, V2 + "mlx_concatenate(&res, vec, s)", lambda a, b: mx.concatenate([a.flatten(), b.flatten()]))
case("concatenate_axis", {"a": x23, "b": x23 * 2}, V2 + "mlx_concatenate_axis(&res, vec, 1, s)", lambda a, b: mx.concatenate([a, b], 1))
case("concatenate_empty_error", {}, "mlx_concatenate_axis(&res, vec, 0, s)", lambda: mx.concatenate([], 0))
case("stack", {"a": x23, "b": x23 * 2}, V2 + "mlx_stack(&res, vec, s)", lambda a, b: mx.stack([a, b]))
case("stack_axis", {"a": x23, "b": x23 * 2}, V2 + "mlx_stack_axis(&res, vec, -1, s)", lambda a, b: mx.stack([a, b], -1))
case("split_second", {"a": r34}, "mlx_split(&vec, a, 2, 1, s); mlx_vector_array_get(&res, vec, 1)", lambda a: mx.split(a, 2, 1)[1])
case("split_uneven_error", {"a": r34}, "mlx_split(&vec, a, 3, 1, s)", lambda a: mx.split(a, 3, 1))
case("split_sections_last", {"a": r34}, "mlx_split_sections(&vec, a, (int[]){1, 3}, 2, 1, s); mlx_vector_array_get(&res, vec, 2)",
     lambda a: mx.split(a, [1, 3], 1)[2])
case("tile", {"a": x23}, "mlx_tile(&res, a, (int[]){2, 1, 2}, 3, s)", lambda a: mx.tile(a, (2, 1, 2)))
case("repeat_flat", {"a": x23}, "mlx_repeat(&res, a, 2, s)", lambda a: mx.repeat(a, 2))
case("repeat_axis", {"a": x23}, "mlx_repeat_axis(&res, a, 3, 0, s)", lambda a: mx.repeat(a, 3, 0))
case("roll_flat", {"a": x23}, "mlx_roll(&res, a, (int[]){2}, 1, s)", lambda a: mx.roll(a, 2))
case("roll_axis", {"a": r34}, "mlx_roll_axis(&res, a, (int[]){-1}, 1, 1, s)", lambda a: mx.roll(a, -1, 1))
case("roll_axes", {"a": r34}, "mlx_roll_axes(&res, a, (int[]){1, 2}, 2, (int[]){0, 1}, 2, s)", lambda a: mx.roll(a, (1, 2), (0, 1)))
case("pad_axes_constant", {"a": x23, "b": np.array(9.0, dtype=f32)},
     'mlx_pad(&res, a, (int[]){1}, 1, (int[]){2}, 1, (int[]){1}, 1, b, "constant", s)', lambda a, b: mx.pad(a, ((0, 0), (2, 1)), constant_values=b))
case("pad_symmetric_edge", {"a": x23, "b": np.array(0.0, dtype=f32)},
     'mlx_pad_symmetric(&res, a, 2, b, "edge", s)', lambda a, b: mx.pad(a, 2, mode="edge"))
case("pad_bad_mode_error", {"a": x23, "b": np.array(0.0, dtype=f32)},
     'mlx_pad_symmetric(&res, a, 1, b, "wrap", s)', lambda a, b: mx.pad(a, 1, mode="wrap"))
case("unflatten", {"a": r34}, "mlx_unflatten(&res, a, 1, (int[]){2, -1}, 2, s)", lambda a: mx.unflatten(a, 1, (2, -1)))
case("atleast_1d", {"a": np.array(3.0, dtype=f32)}, "mlx_atleast_1d(&res, a, s)", lambda a: mx.atleast_1d(a))
case("atleast_2d", {"a": v5}, "mlx_atleast_2d(&res, a, s)", lambda a: mx.atleast_2d(a))
case("atleast_3d", {"a": x23}, "mlx_atleast_3d(&res, a, s)", lambda a: mx.atleast_3d(a))

# ---- diagonals, triangles, slices ----------------------------------------------------------
case("diag_of_vector", {"a": v5[:3]}, "mlx_diag(&res, a, 1, s)", lambda a: mx.diag(a, 1))
case("diag_of_matrix", {"a": r34}, "mlx_diag(&res, a, -1, s)", lambda a: mx.diag(a, -1))
case("diagonal", {"a": r234}, "mlx_diagonal(&res, a, 1, 2, 1, s)", lambda a: mx.diagonal(a, 1, 2, 1))
case("trace", {"a": r34}, "mlx_trace(&res, a, 1, 0, 1, MLX_FLOAT64, s)", lambda a: mx.trace(a, 1, 0, 1, dtype=mx.float64))
case("tril", {"a": r34}, "mlx_tril(&res, a, 1, s)", lambda a: mx.tril(a, 1))
case("triu", {"a": r34}, "mlx_triu(&res, a, -1, s)", lambda a: mx.triu(a, -1))
case("slice_update", {"a": r34, "b": np.full((2, 2), 7.0, dtype=f32)},
     "mlx_slice_update(&res, a, b, (int[]){1, 0}, 2, (int[]){3, 4}, 2, (int[]){1, 2}, 2, s)",
     lambda a, b: _slice_update(a, b))
case("slice_dynamic", {"a": r34, "b": np.array([1, 2], dtype=i32)},
     "mlx_slice_dynamic(&res, a, b, (int[]){0, 1}, 2, (int[]){2, 2}, 2, s)", lambda a, b: mx.slice(a, b, (0, 1), (2, 2)))
case("slice_update_dynamic", {"a": r34, "b": np.full((1, 2), -3.0, dtype=f32), "c": np.array([2, 1], dtype=i32)},
     "mlx_slice_update_dynamic(&res, a, b, c, (int[]){0, 1}, 2, s)", lambda a, b, c: mx.slice_update(a, b, c, (0, 1)))

# ---- comparisons and elementwise composites ------------------------------------------------
near = x23 + np.array([[1e-7, 0, 1e-3], [0, -1e-9, 0]], dtype=f32)
case("isclose", {"a": x23, "b": near}, "mlx_isclose(&res, a, b, 1e-5, 1e-8, false, s)", lambda a, b: mx.isclose(a, b))
case("allclose_false", {"a": x23, "b": near}, "mlx_allclose(&res, a, b, 1e-5, 1e-8, false, s)", lambda a, b: mx.allclose(a, b))
case("allclose_loose", {"a": x23, "b": near}, "mlx_allclose(&res, a, b, 1e-2, 1e-8, false, s)", lambda a, b: mx.allclose(a, b, rtol=1e-2))
nan2 = np.array([1.0, np.nan], dtype=f32)
case("array_equal_nan", {"a": nan2, "b": nan2}, "mlx_array_equal(&res, a, b, true, s)", lambda a, b: mx.array_equal(a, b, equal_nan=True))
case("array_equal_shapes", {"a": x23, "b": r34}, "mlx_array_equal(&res, a, b, false, s)", lambda a, b: mx.array_equal(a, b))
case("clip_max_only", {"a": x23, "b": np.array(1.0, dtype=f32)}, "mlx_clip(&res, a, t1, b, s)", lambda a, b: mx.clip(a, None, b))
case("clip_both", {"a": x23, "b": np.array(-1.0, dtype=f32), "c": np.array([0.0, 1.0, 2.0], dtype=f32)},
     "mlx_clip(&res, a, b, c, s)", lambda a, b, c: mx.clip(a, b, c))
case("clip_none_error", {"a": x23}, "mlx_clip(&res, a, t1, t2, s)", lambda a: mx.clip(a, None, None))
special = np.array([np.nan, np.inf, -np.inf, 1.5], dtype=f32)
case("nan_to_num_default", {"a": special}, f"mlx_nan_to_num(&res, a, 0.0f, {of(None)}, {of(None)}, s)", lambda a: mx.nan_to_num(a))
case("nan_to_num_values", {"a": special}, f"mlx_nan_to_num(&res, a, -1.0f, {of(100.0)}, {of(-100.0)}, s)",
     lambda a: mx.nan_to_num(a, -1.0, 100.0, -100.0))
case("divmod_remainder", {"a": np.array([7, -7, 9], dtype=i32), "b": np.array([2, 2, -4], dtype=i32)},
     "mlx_divmod(&vec, a, b, s); mlx_vector_array_get(&res, vec, 1)", lambda a, b: mx.divmod(a, b)[1])

# ops3: windows, diff, flip, unstack, count_nonzero, searchsorted, logical_xor, vecdot,
# linalg.cross, hadamard_transform, depends
for w in ("hanning", "hamming", "blackman", "bartlett"):
    case(f"{w}_7", {}, f"mlx_{w}(&res, 7, s)", lambda w=w: getattr(mx, w)(7))
case("hanning_0", {}, "mlx_hanning(&res, 0, s)", lambda: mx.hanning(0))
m23 = np.array([[1, 3, 6], [0, 5, -2]], dtype=i32)
case("arm_diff_n2", {"a": np.array([1, 2, 4, 7, 0], dtype=i32)}, "mlx_arm_diff(&res, a, 2, -1, s)", lambda a: mx.diff(a, n=2))
case("arm_diff_axis0", {"a": m23}, "mlx_arm_diff(&res, a, 1, 0, s)", lambda a: mx.diff(a, axis=0))
case("arm_diff_bad_axis_error", {"a": m23}, "mlx_arm_diff(&res, a, 1, 2, s)", lambda a: mx.diff(a, axis=2))
case("arm_flip", {"a": m23}, "mlx_arm_flip(&res, a, s)", lambda a: mx.flip(a))
case("arm_flip_axes", {"a": m23}, "mlx_arm_flip_axes(&res, a, (int[]){-1}, 1, s)", lambda a: mx.flip(a, axis=-1))
case("arm_unstack_1", {"a": m23}, "mlx_arm_unstack(&vec, a, 1, s); mlx_vector_array_get(&res, vec, 2)", lambda a: mx.unstack(a, axis=1)[2])
case("arm_count_nonzero", {"a": m23}, "mlx_arm_count_nonzero(&res, a, false, s)", lambda a: mx.count_nonzero(a))
case("arm_count_nonzero_axes", {"a": m23}, "mlx_arm_count_nonzero_axes(&res, a, (int[]){1}, 1, true, s)", lambda a: mx.count_nonzero(a, axis=1, keepdims=True))
srt = np.array([1.0, 2.0, 2.0, 4.0], dtype=f32)
vals = np.array([0.0, 2.0, 3.0, 5.0], dtype=f32)
case("arm_searchsorted_right", {"a": srt, "b": vals}, 'mlx_arm_searchsorted(&res, a, b, "right", s)', lambda a, b: mx.searchsorted(a, b, side="right"))
case("arm_searchsorted_bad_side_error", {"a": srt, "b": vals}, 'mlx_arm_searchsorted(&res, a, b, "up", s)', lambda a, b: mx.searchsorted(a, b, side="up"))
case("arm_logical_xor", {"a": np.array([True, True, False]), "b": np.array([1.0, 0.0, 2.0], dtype=f32)},
     "mlx_arm_logical_xor(&res, a, b, s)", lambda a, b: mx.logical_xor(a, b))
r33 = rng.standard_normal((2, 3)).astype(f32)
case("arm_vecdot", {"a": r33, "b": r33[:1]}, "mlx_arm_vecdot(&res, a, b, -1, s)", lambda a, b: mx.vecdot(a, b))
case("linalg_cross", {"a": r33, "b": r33[::-1].copy()}, "mlx_linalg_cross(&res, a, b, -1, s)", lambda a, b: mx.linalg.cross(a, b))
case("linalg_cross_bad_size_error", {"a": m23[:, :1].copy(), "b": m23[:, :1].copy()}, "mlx_linalg_cross(&res, a, b, -1, s)",
     lambda a, b: mx.linalg.cross(a, b))
h = rng.standard_normal((2, 24)).astype(f32)
case("hadamard_transform_24", {"a": h}, f"mlx_hadamard_transform(&res, a, {of(None)}, s)", lambda a: mx.hadamard_transform(a))
case("hadamard_transform_scale", {"a": h[:, :8].copy()}, f"mlx_hadamard_transform(&res, a, {of(0.5)}, s)", lambda a: mx.hadamard_transform(a, scale=0.5))
case("hadamard_transform_bad_n_error", {"a": h[:, :6].copy()}, f"mlx_hadamard_transform(&res, a, {of(None)}, s)", lambda a: mx.hadamard_transform(a))
case("depends", {"a": srt, "b": vals},
     "{ mlx_vector_array ins = mlx_vector_array_new_value(a), deps = mlx_vector_array_new_value(b);"
     " mlx_depends(&vec, ins, deps); mlx_vector_array_free(ins); mlx_vector_array_free(deps);"
     " mlx_vector_array_get(&res, vec, 0); }", lambda a, b: mx.depends([a], [b])[0])
# ---- fft.h (area: fft) ---------------------------------------------------------------------
c8 = (rng.standard_normal((2, 8)) + 1j * rng.standard_normal((2, 8))).astype(np.complex64)
r9 = rng.standard_normal((3, 9)).astype(f32)
c7 = (rng.standard_normal((7,)) + 1j * rng.standard_normal((7,))).astype(np.complex64)
NB, NO, NF = "MLX_FFT_NORM_BACKWARD", "MLX_FFT_NORM_ORTHO", "MLX_FFT_NORM_FORWARD"
case("fft_fft", {"a": c8}, f"mlx_fft_fft(&res, a, 8, -1, {NB}, s)", lambda a: mx.fft.fft(a))
case("fft_fft_imag", {"a": c8}, f"mlx_fft_fft(&t1, a, 8, -1, {NB}, s); mlx_imag(&res, t1, s)", lambda a: mx.imag(mx.fft.fft(a)))
case("fft_fft_pad_prime_imag", {"a": c7}, f"mlx_fft_fft(&t1, a, 11, 0, {NB}, s); mlx_imag(&res, t1, s)", lambda a: mx.imag(mx.fft.fft(a, 11, 0)))
case("fft_rfft2_imag", {"a": r9}, f"mlx_fft_rfft2(&t1, a, (int[]){{3, 9}}, 2, (int[]){{0, 1}}, 2, {NB}, s); mlx_imag(&res, t1, s)", lambda a: mx.imag(mx.fft.rfft2(a)))
case("fft_fft_pad_prime", {"a": c7}, f"mlx_fft_fft(&res, a, 11, 0, {NB}, s)", lambda a: mx.fft.fft(a, 11, 0))
case("fft_ifft_ortho", {"a": c8}, f"mlx_fft_ifft(&res, a, 6, 1, {NO}, s)", lambda a: mx.fft.ifft(a, 6, 1, norm="ortho"))
case("fft_rfft_forward", {"a": r9}, f"mlx_fft_rfft(&res, a, 9, -1, {NF}, s)", lambda a: mx.fft.rfft(a, norm="forward"))
case("fft_irfft", {"a": c8}, f"mlx_fft_irfft(&res, a, 14, -1, {NB}, s)", lambda a: mx.fft.irfft(a))
case("fft_fft2", {"a": c8}, f"mlx_fft_fft2(&res, a, (int[]){{2, 8}}, 2, (int[]){{-2, -1}}, 2, {NB}, s)", lambda a: mx.fft.fft2(a))
case("fft_ifft2_s", {"a": c8}, f"mlx_fft_ifft2(&res, a, (int[]){{3, 5}}, 2, (int[]){{0, 1}}, 2, {NB}, s)", lambda a: mx.fft.ifft2(a, (3, 5), (0, 1)))
case("fft_fftn", {"a": c8}, f"mlx_fft_fftn(&res, a, (int[]){{8}}, 1, (int[]){{1}}, 1, {NO}, s)", lambda a: mx.fft.fftn(a, (8,), (1,), norm="ortho"))
case("fft_ifftn", {"a": c8}, f"mlx_fft_ifftn(&res, a, (int[]){{8, 2}}, 2, (int[]){{1, 0}}, 2, {NB}, s)", lambda a: mx.fft.ifftn(a, (8, 2), (1, 0)))
case("fft_rfft2", {"a": r9}, f"mlx_fft_rfft2(&res, a, (int[]){{3, 9}}, 2, (int[]){{0, 1}}, 2, {NB}, s)", lambda a: mx.fft.rfft2(a))
case("fft_irfft2", {"a": c8}, f"mlx_fft_irfft2(&res, a, (int[]){{2, 6}}, 2, (int[]){{0, 1}}, 2, {NB}, s)", lambda a: mx.fft.irfft2(a, (2, 6), (0, 1)))
case("fft_rfftn", {"a": r9}, f"mlx_fft_rfftn(&res, a, (int[]){{9, 3}}, 2, (int[]){{1, 0}}, 2, {NB}, s)", lambda a: mx.fft.rfftn(a, (9, 3), (1, 0)))
case("fft_irfftn", {"a": c8}, f"mlx_fft_irfftn(&res, a, (int[]){{2, 15}}, 2, (int[]){{0, 1}}, 2, {NF}, s)", lambda a: mx.fft.irfftn(a, (2, 15), (0, 1), norm="forward"))
case("fft_fftshift", {"a": r9}, "mlx_fft_fftshift(&res, a, (int[]){0, 1}, 2, s)", lambda a: mx.fft.fftshift(a))
case("fft_ifftshift", {"a": r9}, "mlx_fft_ifftshift(&res, a, (int[]){1}, 1, s)", lambda a: mx.fft.ifftshift(a, [1]))
case("fft_fftfreq", {}, "mlx_fft_fftfreq(&res, 7, 0.5, s)", lambda: mx.fft.fftfreq(7, 0.5))
case("fft_rfftfreq", {}, "mlx_fft_rfftfreq(&res, 10, 2.0, s)", lambda: mx.fft.rfftfreq(10, 2.0))
case("fft_bad_n_error", {"a": c8}, f"mlx_fft_fft(&res, a, 0, -1, {NB}, s)", lambda a: mx.fft.fft(a, 0))
case("fft_dup_axes_error", {"a": c8}, f"mlx_fft_fftn(&res, a, (int[]){{2, 2}}, 2, (int[]){{0, 0}}, 2, {NB}, s)", lambda a: mx.fft.fftn(a, (2, 2), (0, 0)))
case("fft_bad_norm_error", {"a": c8}, "mlx_fft_fft(&res, a, 8, -1, (mlx_fft_norm)7, s)", None)
case("fft_fftfreq_error", {}, "mlx_fft_fftfreq(&res, 0, 1.0, s)", lambda: mx.fft.fftfreq(0))


def _slice_update(a, b):
    out = mx.array(a)
    out[1:3, 0:4:2] = b
    return out


emit(cases, os.path.join(HERE, "family_golden.inc"), "gen_family_golden.py")
