"""Golden outputs of real MLX 0.32 (CPU) for the more-ops area: complex64 linalg.svd (and the
norm / pinv paths that use it), unique, fast.cross_entropy, segmented_mm, block_masked_mm.
Run: /opt/oracle/bin/python gen_more_ops.py  (writes more_ops.json)

A case: {"name", "op", "inputs": [array], "args": {...}, "check": "values"|"recon",
"outputs"|"output"|"error"}. "values": outputs compared element-wise. "numpy": compared with "numpy_output" (where
MLX's own CPU result is wrong, see seg_f16). "recon": an SVD whose
U / Vt are unique only up to a phase per singular vector: the test compares S element-wise
(also against numpy.linalg.svd, stored as "numpy_s") and checks A = U·diag(S)·Vt and the
unitarity of U and Vt."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx
import numpy as np
from golden import encode, run, write

mx.set_default_device(mx.cpu)
rng = np.random.default_rng(4)
cases = []


def cmat(shape, rank=None):
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if rank is not None:
        l = rng.standard_normal(shape[:-1] + (rank,)) + 1j * rng.standard_normal(shape[:-1] + (rank,))
        r = rng.standard_normal(shape[:-2] + (rank, shape[-1])) + 1j * rng.standard_normal(shape[:-2] + (rank, shape[-1]))
        a = l @ r
    return a.astype(np.complex64)


def case(name, op, inputs, fn, args=None, check="values", **extra):
    xs = [mx.array(a) if not isinstance(a, mx.array) else a for a in inputs]
    c = {"name": name, "op": op, "inputs": [encode(x) for x in xs], "args": args or {}, "check": check}
    c.update(run(lambda: fn(*xs)))
    c.update(extra)
    cases.append(c)


# --- complex64 svd -------------------------------------------------------------------------
upstream = np.array([[1 + 1j, 2 + 2j], [3 + 3j, 4 + 4j]], dtype=np.complex64)
for name, a in [
    ("upstream_2x2", upstream),
    ("tall_4x3", cmat((4, 3))),
    ("wide_3x5", cmat((3, 5))),
    ("square_batch_2x3x3", cmat((2, 3, 3))),
    ("rank2_5x4", cmat((5, 4), rank=2)),
    ("wide_rank1_2x4", cmat((2, 4), rank=1)),
    ("real_valued_3x3", (rng.standard_normal((3, 3))).astype(np.complex64)),
]:
    ns = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    case("svd_" + name, "svd", [a], lambda x: mx.linalg.svd(x), check="recon", numpy_s=encode(ns.astype(np.float32)))
    case("svdvals_" + name, "svd_values", [a], lambda x: mx.linalg.svd(x, compute_uv=False))
a = cmat((3, 4))
case("norm_2_complex", "norm", [a], lambda x: mx.linalg.norm(x, ord=2), {"ord": 2})
case("norm_m2_complex", "norm", [a], lambda x: mx.linalg.norm(x, ord=-2), {"ord": -2})
case("norm_nuc_complex", "norm", [a], lambda x: mx.linalg.norm(x, ord="nuc"), {"ord": "nuc"})
case("norm_2_complex_axes_keep", "norm", [cmat((2, 3, 4))],
     lambda x: mx.linalg.norm(x, ord=2, axis=(2, 0), keepdims=True), {"ord": 2, "axis": [2, 0], "keepdims": True})
case("pinv_complex_error", "pinv", [a], lambda x: mx.linalg.pinv(x))
case("svd_int_error", "svd", [np.ones((2, 2), np.int32)], lambda x: mx.linalg.svd(x))
case("svd_1d_error", "svd", [cmat((3,))], lambda x: mx.linalg.svd(x))

# --- unique --------------------------------------------------------------------------------
U = lambda size, ri=False, rv=False, rc=False, fill=None: (lambda x: mx.unique(x, size, ri, rv, rc, fill))
ints = np.array([[3, 1, 2], [3, 5, 1]], np.int32)
uargs = lambda size, ri=False, rv=False, rc=False, fill=None: {"size": size, "return_index": ri, "return_inverse": rv, "return_counts": rc, "fill_value": fill}
for name, a, size, ri, rv, rc, fill in [
    ("exact", ints, 4, True, True, True, None),
    ("pad_default", ints, 6, True, True, True, None),
    ("pad_fill", ints, 7, False, False, True, -1),
    ("pad_fill_float_to_int", ints, 5, False, False, False, 9.5),
    ("truncate", ints, 2, True, True, True, None),
    ("size0", ints, 0, True, True, True, None),
    ("values_only", ints, 4, False, False, False, None),
    ("float_nan_negzero", np.array([1.0, np.nan, np.nan, 2.0, -0.0, 0.0], np.float32), 6, True, True, True, None),
    ("float16_fill", np.array([1.5, 2.5, 1.5], np.float16), 4, False, False, False, -1),
    ("bool", np.array([True, False, True]), 3, True, True, True, None),
    ("complex", np.array([1 + 2j, 1 + 1j, 0j, 1 + 1j], np.complex64), 4, True, True, True, None),
    ("scalar", np.array(5, np.int32), 2, True, True, True, None),
    ("uint8_3d", rng.integers(0, 5, (2, 3, 4)).astype(np.uint8), 6, True, True, True, None),
    ("int64_big", rng.integers(-3, 3, 40).astype(np.int64), 8, True, True, True, 100),
    ("empty_fill", np.zeros((0, 2), np.float32), 3, True, True, True, 7),
    ("empty_size0", np.zeros((0, 2), np.float32), 0, True, True, True, None),
    ("empty_no_fill_error", np.zeros((0,), np.int32), 2, False, False, False, None),
    ("negative_size_error", ints, -1, False, False, False, None),
]:
    case("unique_" + name, "unique", [a], U(size, ri, rv, rc, fill), uargs(size, ri, rv, rc, fill))
case("unique_fill_array", "unique", [ints, np.array([[7]], np.int32)], lambda x, f: mx.unique(x, 4, True, True, True, f),
     uargs(4, True, True, True, "input1"))
case("unique_fill_shape_error", "unique", [ints, np.array([1, 2], np.int32)], lambda x, f: mx.unique(x, 4, fill_value=f),
     uargs(4, False, False, False, "input1"))

# --- fast.cross_entropy --------------------------------------------------------------------
CE = lambda l, t: mx.fast.cross_entropy(l, t)
logits = rng.standard_normal((4, 7)).astype(np.float32) * 3
tgt = rng.integers(0, 7, (4,)).astype(np.int32)
case("ce_f32", "cross_entropy", [logits, tgt], CE)
case("ce_f32_3d_uint8", "cross_entropy", [rng.standard_normal((2, 3, 5)).astype(np.float32), rng.integers(0, 5, (2, 3)).astype(np.uint8)], CE)
case("ce_1d", "cross_entropy", [logits[0], np.array(3, np.int32)], CE)
case("ce_f16", "cross_entropy", [logits.astype(np.float16), tgt], CE)
case("ce_f64", "cross_entropy", [logits.astype(np.float64), tgt.astype(np.int64)], CE)
case("ce_large_logits", "cross_entropy", [np.array([[1000.0, 0.0, -1000.0]], np.float32), np.array([1], np.int32)], CE)
case("ce_ndim_error", "cross_entropy", [np.array(1.0, np.float32), np.array(0, np.int32)], CE)
case("ce_shape_error", "cross_entropy", [logits, tgt[:2]], CE)
case("ce_shape_error_first", "cross_entropy", [logits.astype(np.int32), tgt[:2].astype(np.float32)], CE)
case("ce_logits_type_error", "cross_entropy", [logits.astype(np.int32), tgt], CE)
case("ce_logits_vs_target_type", "cross_entropy", [logits.astype(np.int32), tgt.astype(np.float32)], CE)
case("ce_complex_error", "cross_entropy", [logits.astype(np.complex64), tgt], CE)
case("ce_target_type_error", "cross_entropy", [logits, tgt.astype(np.float32)], CE)
case("ce_bool_target_error", "cross_entropy", [logits, tgt > 2], CE)

# --- segmented_mm --------------------------------------------------------------------------
SM = lambda a, b, s: mx.segmented_mm(a, b, s)
A = rng.standard_normal((3, 8)).astype(np.float32)
B = rng.standard_normal((8, 5)).astype(np.float32)
case("seg_basic", "segmented_mm", [A, B, np.array([[0, 3], [3, 8], [2, 6]], np.int32)], SM)
case("seg_empty_reversed_negative", "segmented_mm", [A, B, np.array([[5, 2], [4, 4], [-1, 3], [0, 8]], np.int32)], SM)
case("seg_batched_segments", "segmented_mm", [A, B, np.array([[[0, 2], [2, 8]], [[1, 7], [0, 0]]], np.int64)], SM)
case("seg_uint8_segments", "segmented_mm", [A, B, np.array([[0, 4]], np.uint8)], SM)
case("seg_1d_segments", "segmented_mm", [A, B, np.array([1, 5], np.int32)], SM)
# MLX 0.32.4's CPU segmented_mm is wrong for float16 (rows of the result come out mixed up:
# compare its output with the numpy line below); this case is checked against numpy instead.
A16, B16 = A.astype(np.float16), B.astype(np.float16)
ref16 = np.stack([A16[:, :4].astype(np.float64) @ B16[:4].astype(np.float64), A16[:, 4:].astype(np.float64) @ B16[4:].astype(np.float64)])
case("seg_f16", "segmented_mm", [A16, B16, np.array([[0, 4], [4, 8]], np.int32)], SM, check="numpy",
     numpy_output=encode(ref16.astype(np.float16)))
case("seg_mixed_f16_f32", "segmented_mm", [A.astype(np.float16), B, np.array([[0, 4]], np.int32)], SM)
case("seg_nan_outside", "segmented_mm", [np.where(np.arange(8) >= 6, np.nan, A).astype(np.float32), B, np.array([[0, 6]], np.int32)], SM)
case("seg_batched_error", "segmented_mm", [A[None], B, np.array([[0, 2]], np.int32)], SM)
case("seg_shape_error", "segmented_mm", [A, B, np.array([0, 2, 3], np.int32)], SM)
case("seg_int_error", "segmented_mm", [A.astype(np.int32), B.astype(np.int32), np.array([[0, 2]], np.int32)], SM)
case("seg_float_segments_error", "segmented_mm", [A, B, np.array([[0.0, 2.0]], np.float32)], SM)
case("seg_bool_segments_error", "segmented_mm", [A, B, np.array([[False, True]])], SM)

# --- block_masked_mm -----------------------------------------------------------------------
def BM(bs, *which):
    def f(a, b, *masks):
        kw = dict(zip(which, masks))
        return mx.block_masked_mm(a, b, bs, **kw)
    return f

def q(shape):
    """Multiples of 1/4 in [-1, 1]: exact in float32 and short in JSON (products and sums
    stay exact, so MLX's and our summation orders agree bit for bit)."""
    return (rng.integers(-4, 5, shape) / 4).astype(np.float32)


# M = 40, K = 33, N = 66: partial last tiles in every dimension at block size 32.
A2 = q((40, 33))
B2 = q((33, 66))
mo = rng.random((2, 3)) > 0.4
ml = rng.random((2, 2)) > 0.4
mr = rng.random((2, 3)) > 0.4
case("bmm_out_bool", "block_masked_mm", [A2, B2, mo], BM(32, "mask_out"), {"block_size": 32, "masks": ["mask_out"]})
case("bmm_operands_bool", "block_masked_mm", [A2, B2, ml, mr], BM(32, "mask_lhs", "mask_rhs"), {"block_size": 32, "masks": ["mask_lhs", "mask_rhs"]})
case("bmm_all_bool", "block_masked_mm", [A2, B2, mo, ml, mr], BM(32, "mask_out", "mask_lhs", "mask_rhs"), {"block_size": 32, "masks": ["mask_out", "mask_lhs", "mask_rhs"]})
case("bmm_float_masks", "block_masked_mm", [A2, B2, q((2, 3)), q((2, 2))],
     BM(32, "mask_out", "mask_lhs"), {"block_size": 32, "masks": ["mask_out", "mask_lhs"]})
case("bmm_lhs_float_rhs_default", "block_masked_mm", [A2, B2, q((1, 1))], BM(64, "mask_lhs"), {"block_size": 64, "masks": ["mask_lhs"]})
case("bmm_batched_broadcast", "block_masked_mm", [q((2, 1, 33, 8)), q((3, 8, 20)), rng.random((2, 3, 2, 1)) > 0.3],
     BM(32, "mask_out"), {"block_size": 32, "masks": ["mask_out"]})
case("bmm_vec_lhs", "block_masked_mm", [A2[0], B2, rng.random((3,)) > 0.4], BM(32, "mask_out"), {"block_size": 32, "masks": ["mask_out"]})
case("bmm_vec_rhs_operand", "block_masked_mm", [A2, B2[:, 0], ml, np.array([True, False])], BM(32, "mask_lhs", "mask_rhs"), {"block_size": 32, "masks": ["mask_lhs", "mask_rhs"]})
case("bmm_no_mask", "block_masked_mm", [A2[:3, :4], B2[:4, :2]], BM(16), {"block_size": 16, "masks": []})
case("bmm_block_size_error", "block_masked_mm", [A2, B2, mo], BM(16, "mask_out"), {"block_size": 16, "masks": ["mask_out"]})
case("bmm_shape_error", "block_masked_mm", [A2, B2[:30], mo], BM(32, "mask_out"), {"block_size": 32, "masks": ["mask_out"]})
case("bmm_int_error", "block_masked_mm", [A2.astype(np.int32), B2.astype(np.int32), mo], BM(32, "mask_out"), {"block_size": 32, "masks": ["mask_out"]})
case("bmm_f16_runtime_error", "block_masked_mm", [A2.astype(np.float16), B2.astype(np.float16), mo], BM(32, "mask_out"), {"block_size": 32, "masks": ["mask_out"]})

write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "more_ops.json"), cases)
