"""Golden outputs of real MLX 0.32 (CPU) for the misc4 area: complex64 linalg.svd (and the
norm / pinv paths that use it), unique, fast.cross_entropy, segmented_mm, block_masked_mm.
Run: /opt/oracle/bin/python gen_misc4.py  (writes misc4.json)

A case: {"name", "op", "inputs": [array], "args": {...}, "check": "values"|"recon",
"outputs"|"output"|"error"}. "values": outputs compared element-wise. "recon": an SVD whose
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

write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "misc4.json"), cases)
