"""Records real MLX's results for qqmm_cases.py into qqmm.npz, one MLX qqmm call per row (the
case MLX 0.32.4 computes on its CPU). Run with real MLX (the oracle venv), from this directory:

    /work/oracle-venv/bin/python gen_qqmm.py
"""
import os

import mlx.core as mx
import numpy as np

import qqmm_cases as C

HERE = os.path.dirname(os.path.abspath(__file__))


def row_product(x_row, wq, s, mode):
    """MLX's qqmm of one row (1, K) with a quantized (N, K) matrix, as float32 (N,)."""
    return np.array(mx.qqmm(x_row, wq, s, mode=mode).astype(mx.float32))[0]


def main():
    out = {}
    for name, (xs, xdt, ws, mode, _) in C.QQMM.items():
        x = mx.array(C.data(xs, 1)).astype(getattr(mx, xdt))
        wq, s = mx.quantize(mx.array(C.data(ws, 2)), mode=mode)
        rows = x.reshape(-1, xs[-1])
        ys = [row_product(rows[i : i + 1], wq, s, mode) for i in range(rows.shape[0])]
        out[name] = np.stack(ys).reshape(*xs[:-1], ws[0])
    for name, (xs, ws, lhs, rhs, mode) in C.GATHER.items():
        x = mx.array(C.data(xs, 3))
        wq, s = mx.quantize(mx.array(C.data(ws, 4)), mode=mode)
        # MLX's default indices: every matrix of the batch, broadcast against the other side.
        lhs, rhs = np.broadcast_arrays(np.array(lhs if lhs is not None else range(xs[0])), np.array(rhs))
        res = []
        for li, ri in zip(lhs.tolist(), rhs.tolist()):
            res.append(np.stack([row_product(x[li, m : m + 1], wq[ri], s[ri], mode) for m in range(xs[1])]))
        out[name] = np.stack(res)
    np.savez_compressed(os.path.join(HERE, "qqmm.npz"), mlx_version=np.array(mx.__version__), **out)


if __name__ == "__main__":
    main()
