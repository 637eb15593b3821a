"""mx.grad, mx.value_and_grad, mx.vjp, mx.jvp, mx.stop_gradient and nn.value_and_grad against
REAL MLX 0.32.4: the cases of golden/grad/grad_cases.py, whose results under real MLX are in
golden/grad/grad.json (written by golden/grad/gen_grad.py). Values, dtypes, shapes, pytree
structure, and exception types and messages are compared."""
import json
import math
import os
import sys

import pytest

import mlx.core as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "golden", "grad"))

from grad_cases import CASES  # noqa: E402

with open(os.path.join(HERE, "golden", "grad", "grad.json")) as f:
    GOLDEN = json.load(f)["cases"]

# Errors raised by the C layer whose wording is our own: compare the type only.
TYPE_ONLY = {"error_vmap_in_axes_none", "error_vmap_all_none", "error_gather_qmm_vjp_fp_scales"}  # nanobind's signature listing; MLX's untagged message (ours has "[vmap] "); gather_qmm's vjp refuses fp scales through quantized_matmul's rule (its tag)


def _close(got, want, path):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got} vs {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{path}[{i}]")
    elif isinstance(want, float) or isinstance(got, float):
        assert math.isclose(got, want, rel_tol=2e-4, abs_tol=2e-5), f"{path}: {got} vs {want}"
    else:
        assert got == want, f"{path}: {got} vs {want}"


def _compare(got, want, path="result"):
    (kind,) = [k for k in want if k in ("array", "tuple", "list", "dict", "value", "callable")]
    if kind == "array":
        assert isinstance(got, mx.array), f"{path}: expected an array, got {type(got).__name__}"
        assert str(got.dtype) == want["dtype"], f"{path}: dtype {got.dtype} vs {want['dtype']}"
        assert list(got.shape) == want["shape"], f"{path}: shape {got.shape} vs {want['shape']}"
        vals = got.astype(mx.float32).tolist() if got.dtype != mx.bool_ else got.tolist()
        _close(vals, want["array"], path)
    elif kind in ("tuple", "list"):
        typ = tuple if kind == "tuple" else list
        assert type(got) is typ, f"{path}: expected a {kind}, got {type(got).__name__}"
        assert len(got) == len(want[kind]), f"{path}: length {len(got)} vs {len(want[kind])}"
        for i, (g, w) in enumerate(zip(got, want[kind])):
            _compare(g, w, f"{path}[{i}]")
    elif kind == "dict":
        assert isinstance(got, dict) and sorted(got) == sorted(want["dict"]), f"{path}: keys {list(got)} vs {list(want['dict'])}"
        for k, w in want["dict"].items():
            _compare(got[k], w, f"{path}[{k!r}]")
    elif kind == "callable":
        assert callable(got), path
    else:
        w = want["value"]
        if isinstance(got, mx.Dtype):
            got = str(got)
        if isinstance(w, float):
            _close(got, w, path)
        else:
            assert got == w and type(got) is type(w), f"{path}: {got!r} vs {w!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_real_mlx(name):
    want = GOLDEN[name]
    if "error" in want:
        with pytest.raises(Exception) as info:
            CASES[name](mx)
        assert type(info.value).__name__ == want["error"], f"raised {info.value!r}"
        if name not in TYPE_ONLY:
            assert str(info.value) == want["message"]
        return
    _compare(CASES[name](mx), want)


def test_every_golden_case_exists():
    assert sorted(GOLDEN) == sorted(CASES)


def test_loss_falls_in_training():
    """The MLP training case really trains (not only matches): the loss falls."""
    losses = [v["value"] for v in GOLDEN["nn_value_and_grad_mlp_training"]["dict"]["losses"]["list"]]
    assert losses[-1] < 0.5 * losses[0]


def test_nested_exception_propagates_from_inner_transform():
    def inner(x):
        raise ZeroDivisionError("inner")

    with pytest.raises(ZeroDivisionError, match="inner"):
        mx.grad(lambda x: mx.grad(inner)(x).sum())(mx.array([1.0, 2.0]))


def test_arguments_left_unchanged():
    params = {"w": mx.array([1.0, 2.0])}
    before = params["w"]
    g = mx.grad(lambda p: (p["w"] ** 2).sum())(params)
    assert params["w"] is before
    assert g["w"].tolist() == [2.0, 4.0]


def test_async_eval_in_another_thread_during_a_trace():
    """async_eval refuses the arrays of a running transform only: while one thread is inside
    grad, another thread's async_eval of its own arrays runs (the trace counter is global)."""
    import threading

    inside, done = threading.Event(), threading.Event()
    seen = {}

    def traced(x):
        inside.set()
        done.wait(10)
        return (x * x).sum()

    # Each thread reads its own arrays (streams are thread-bound, as in MLX).
    t = threading.Thread(target=lambda: seen.setdefault("g", mx.grad(traced)(mx.array([1.0, 2.0])).tolist()))
    t.start()
    assert inside.wait(10)
    try:
        y = mx.array([1.0, 2.0]) * 3
        mx.async_eval(y)
        assert y.tolist() == [3.0, 6.0]
    finally:
        done.set()
        t.join(10)
    assert seen["g"] == [2.0, 4.0]


def test_vmap_pad_refuses_a_mapped_pad_value():
    """As MLX's Pad::vmap: a pad value mapped by an enclosing vmap is a ValueError (here pad is
    composed of ops that could batch it); an unmapped value (or one captured) pads each example,
    checked against per-example pads."""
    x = mx.arange(24, dtype=mx.float32).reshape(2, 3, 4)
    with pytest.raises(ValueError, match="Vmap over padding value is not supported"):
        mx.vmap(lambda a, v: mx.pad(a, ((1, 1), (1, 1)), constant_values=v))(x, mx.array([3.0, 4.0]))
    # mapped by the outer vmap only, derived from it inside (still refused, as MLX)
    with pytest.raises(ValueError, match="Vmap over padding value is not supported"):
        mx.vmap(lambda a, v: mx.vmap(lambda r: mx.pad(r, (1, 1), constant_values=v * 2))(a))(x, mx.array([3.0, 4.0]))
    out = mx.vmap(lambda a, v: mx.pad(a, ((1, 1), (1, 1)), constant_values=v), in_axes=(0, None))(x, mx.array(5.0))
    expected = mx.stack([mx.pad(xi, ((1, 1), (1, 1)), constant_values=5.0) for xi in x])
    assert mx.array_equal(out, expected).item()
    c = mx.array(7.0)
    out = mx.vmap(lambda a: mx.pad(a, (1, 1), constant_values=c))(x)
    assert mx.array_equal(out, mx.stack([mx.pad(xi, (1, 1), constant_values=7.0) for xi in x])).item()
