"""``mx.fast.gated_delta_update`` against real MLX 0.32.4 (golden/gated_delta/, made by
gen_gated_delta.py with the oracle): outputs, final states, output dtypes and gradients; a
sequence run in one call equals the same sequence fed one step at a time through the state;
bad shapes raise ValueError (as MLX does for them)."""
import json
import os
import sys

import numpy as np
import pytest

import mlx.core as mx

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "gated_delta")
sys.path.insert(0, GOLDEN)
import gated_delta_cases as C  # noqa: E402

REF = np.load(os.path.join(GOLDEN, "gated_delta.npz"))
with open(os.path.join(GOLDEN, "gated_delta.json")) as f:
    DTYPES = json.load(f)["dtypes"]


def _close(ours, ref, low_precision):
    tol = 2e-2 if low_precision else 2e-5
    np.testing.assert_allclose(np.array(ours.astype(mx.float32)), ref, rtol=tol, atol=tol * max(1.0, float(np.abs(ref).max())))


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_equals_real_mlx(name):
    xs, st, m = C.mx_inputs(C.CASES[name], mx)
    out = mx.fast.gated_delta_update(*xs, st, m)
    assert isinstance(out, list) and len(out) == 2
    y, s = out
    assert [str(y.dtype), str(s.dtype)] == DTYPES[name]
    low = any(d != "float32" for d in C.CASES[name][6][:2])
    _close(y, REF[f"{name}_y"], low)
    _close(s, REF[f"{name}_state"], low)


@pytest.mark.parametrize("name", C.GRAD_CASES)
def test_gradients_equal_real_mlx(name):
    for i, gr in enumerate(C.gradients(C.CASES[name], mx)):
        _close(gr, REF[f"{name}_grad{i}"], False)


def test_steps_through_the_state_equal_one_call():
    xs, st, m = C.mx_inputs(C.CASES["vector_gate_state"], mx)
    y_all, s_all = mx.fast.gated_delta_update(*xs, st)
    s = st
    for t in range(xs[0].shape[1]):
        y_t, s = mx.fast.gated_delta_update(*[x[:, t : t + 1] for x in xs], s)
        np.testing.assert_allclose(np.array(y_t[:, 0]), np.array(y_all[:, t]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(s), np.array(s_all), rtol=1e-5, atol=1e-6)


def test_bad_shapes_raise_value_error():
    xs, _, _ = C.mx_inputs(C.CASES["gqa_f32"], mx)
    q, k, v, g, beta = xs
    bad = [
        (q[0], k, v, g, beta),                               # q not 4-D
        (q, mx.zeros((2, 5, 1, 5)), v, g, beta),             # k's shape differs from q's
        (q, k, mx.zeros((3, 5, 2, 3)), g, beta),             # v's batch
        (mx.zeros((2, 5, 2, 4)), mx.zeros((2, 5, 2, 4)), mx.zeros((2, 5, 3, 3)), mx.zeros((2, 5, 3)), mx.zeros((2, 5, 3))),
        (q, k, v, mx.zeros((2, 5)), beta),                   # gate shape
        (q, k, v, mx.zeros((2, 5, 2, 5)), beta),             # per-channel gate of the wrong width
    ]
    for args in bad:
        with pytest.raises(ValueError):
            mx.fast.gated_delta_update(*args)
    with pytest.raises(ValueError):
        mx.fast.gated_delta_update(q, k, v, g, beta, mx.zeros((2, 2, 4, 3)))  # state (B, Hv, Dk, Dv)
