"""mx.conv3d, mx.conv_transpose1d/2d/3d and mx.convolve through their Python signatures against
REAL MLX 0.32 goldens (golden/conv_family/gen_conv_family.py): each golden case is an expression run here and
in real MLX; values (dtype, shape, elements) or the exception type (and, for MLX's own
``[conv]``/``[convolve]`` errors, the message) must match.
Tolerance: float32 1e-5, half types 1e-2 (sums run in float32 here, rounded once)."""
import json
import os

import numpy as np
import pytest

import mlx.core as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "conv_family")
with open(os.path.join(HERE, "conv_family.json")) as _f:
    CASES = json.load(_f)["cases"]
TOL = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 2e-2}
EXC = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError}


@pytest.mark.parametrize("case", CASES, ids=[c["expr"][:70] for c in CASES])
def test_matches_real_mlx(case):
    if "error" in case:
        with pytest.raises(EXC[case["error"]]) as e:
            mx.eval(eval(case["expr"]))
        if case["error"] == "ValueError":
            assert str(e.value) == case["message"] or str(e.value) == "[conv] " + case["message"]
        return
    out = eval(case["expr"])
    assert str(out.dtype).replace("mlx.core.", "") == case["dtype"]
    assert list(out.shape) == case["shape"]
    got = np.array(out.astype(mx.float32)).reshape(-1)
    tol = TOL[case["dtype"]]
    np.testing.assert_allclose(got, np.array(case["values"], dtype=np.float32), rtol=tol, atol=tol)


def test_convolve_matches_numpy():
    """numpy.convolve is a second oracle for the 1-D convolution (full/same/valid)."""
    rng = np.random.default_rng(0)
    for la, lv in ((9, 4), (4, 9), (6, 5), (1, 3), (50, 17), (17, 50)):
        a, v = rng.standard_normal(la).astype(np.float32), rng.standard_normal(lv).astype(np.float32)
        for mode in ("full", "valid"):
            np.testing.assert_allclose(np.array(mx.convolve(mx.array(a), mx.array(v), mode=mode)),
                                       np.convolve(a, v, mode=mode), rtol=1e-5, atol=1e-5)
        if la >= lv and lv % 2:  # numpy centres 'same' on the first argument; MLX on the longer one
            np.testing.assert_allclose(np.array(mx.convolve(mx.array(a), mx.array(v), mode="same")),
                                       np.convolve(a, v, mode="same"), rtol=1e-5, atol=1e-5)
