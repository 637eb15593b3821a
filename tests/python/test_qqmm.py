"""``mx.qqmm`` and ``mx.gather_qqmm`` in every case, against real MLX 0.32.4 row by row
(golden/qqmm/, made by gen_qqmm.py: MLX's CPU computes one row times a quantized matrix, so
each row of each product is its own MLX call there), plus the argument errors MLX raises."""
import os
import sys

import numpy as np
import pytest

import mlx.core as mx

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "qqmm")
sys.path.insert(0, GOLDEN)
import qqmm_cases as C  # noqa: E402

REF = np.load(os.path.join(GOLDEN, "qqmm.npz"))


def _close(ours, ref, dtype):
    tol = 1e-2 if dtype in ("bfloat16", "float16") else 1e-5
    got = np.array(ours.astype(mx.float32))
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * max(1.0, float(np.abs(ref).max())))


@pytest.mark.parametrize("name", sorted(C.QQMM))
def test_qqmm_equals_real_mlx_row_by_row(name):
    xs, xdt, ws, mode, quantized = C.QQMM[name]
    x = mx.array(C.data(xs, 1)).astype(getattr(mx, xdt))
    w = mx.array(C.data(ws, 2))
    y = mx.qqmm(x, *mx.quantize(w, mode=mode), mode=mode) if quantized else mx.qqmm(x, w, mode=mode)
    assert y.dtype == x.dtype
    _close(y, REF[name], xdt)


@pytest.mark.parametrize("name", sorted(C.GATHER))
def test_gather_qqmm_equals_real_mlx_row_by_row(name):
    xs, ws, lhs, rhs, mode = C.GATHER[name]
    x = mx.array(C.data(xs, 3))
    wq, s = mx.quantize(mx.array(C.data(ws, 4)), mode=mode)
    kw = {"rhs_indices": mx.array(rhs)}
    if lhs is not None:
        kw["lhs_indices"] = mx.array(lhs)
    y = mx.gather_qqmm(x, wq, s, mode=mode, sorted_indices=False, **kw)
    _close(y, REF[name], "float32")


def test_gather_qqmm_without_indices_is_qqmm():
    x = mx.array(C.data((3, 64), 5))
    wq, s = mx.quantize(mx.array(C.data((4, 64), 6)), mode="nvfp4")
    assert mx.array_equal(mx.gather_qqmm(x, wq, s), mx.qqmm(x, wq, s)).item()


def test_errors_are_mlx_s():
    x = mx.array(C.data((1, 64), 7))
    w = mx.array(C.data((8, 64), 8))
    wq, s = mx.quantize(w, mode="nvfp4")
    w3q, s3 = mx.quantize(mx.array(C.data((3, 8, 64), 9)), mode="nvfp4")
    cases = [  # (call, MLX's exception class, MLX's message start) — quoted from real MLX 0.32.4
        (lambda: mx.qqmm(x, wq), ValueError, "[qqmm] Scales must be provided if second argument is quantized."),
        (lambda: mx.qqmm(x.astype(mx.int32), wq, s), ValueError, "[qqmm] Only real floating types except float64"),
        (lambda: mx.qqmm(x, wq, s, mode="affine"), ValueError, "[qqmm] Only 'nvfp4' and 'mxfp8'"),
        (lambda: mx.qqmm(mx.zeros((3, 1, 64)), w3q, s3), ValueError, "[qqmm] Only 2D inputs are supported"),
        (lambda: mx.gather_qqmm(x, w3q, s3, rhs_indices=mx.array([0.5])), ValueError,
         "[gather_qqmm] Got indices with invalid dtype. Indices must be integral."),
    ]
    for call, cls, msg in cases:
        with pytest.raises(cls) as e:
            call()
        assert str(e.value).startswith(msg), str(e.value)
    # Here, not in MLX (which accepts the call and fails when evaluating): scales for a float w.
    with pytest.raises(ValueError, match="not quantized"):
        mx.qqmm(x, w, s)
