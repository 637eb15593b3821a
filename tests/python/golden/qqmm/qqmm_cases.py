"""The mx.qqmm / mx.gather_qqmm cases, shared by gen_qqmm.py (real MLX) and test_qqmm.py (ours).
Real MLX 0.32.4 computes qqmm on its CPU only for one row of x times an already quantized w,
so the oracle is built from that: every row of every product is a separate MLX call."""
import numpy as np

# name: (x shape, x dtype, w shape (N, K) or (E, N, K) for gather, mode, w given quantized)
QQMM = {
    "nvfp4_rows": ((4, 64), "float32", (8, 64), "nvfp4", True),
    "mxfp8_rows": ((3, 64), "float32", (5, 64), "mxfp8", True),
    "nvfp4_bf16": ((2, 32), "bfloat16", (6, 32), "nvfp4", True),
    "nvfp4_batched_x": ((2, 3, 64), "float32", (4, 64), "nvfp4", True),
    "nvfp4_vector_x": ((64,), "float16", (4, 64), "nvfp4", True),
    "nvfp4_float_w": ((3, 64), "float32", (7, 64), "nvfp4", False),
    "mxfp8_float_w": ((2, 64), "float32", (3, 64), "mxfp8", False),
}

# name: (x shape (B, M, K), w shape (E, N, K), lhs indices, rhs indices, mode)
GATHER = {
    "experts_nvfp4": ((2, 1, 64), (3, 8, 64), [0, 1, 1], [2, 0, 1], "nvfp4"),
    "experts_mxfp8_rows": ((1, 2, 32), (4, 5, 32), [0, 0], [3, 1], "mxfp8"),
    "rhs_only": ((1, 3, 64), (2, 4, 64), None, [1, 0], "nvfp4"),
}


def data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
