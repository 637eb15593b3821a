"""mlx-arm's mlx.core against golden outputs of REAL MLX 0.32.4 (golden/gen_golden.py):
reprs, dtypes, shapes, values and exception types of the same expressions."""
import json
import math
import os

import numpy as np
import pytest

import mlx.core as mx

with open(os.path.join(os.path.dirname(__file__), "golden", "golden.json")) as f:
    CASES = json.load(f)["cases"]

_EXC = {c.__name__: c for c in (ValueError, IndexError, TypeError, NotImplementedError, MemoryError, RuntimeError, OverflowError, KeyError, AttributeError)}


def _close(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, str) or isinstance(b, str):  # "nan" / "inf" / "-inf" markers
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b and type(a) is type(b)
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)


def _norm_values(v):
    """As gen_golden.jsonable: complex as [re, im], non-finite floats as strings."""
    if isinstance(v, list):
        return [_norm_values(x) for x in v]
    if isinstance(v, complex):
        return [_norm_values(v.real), _norm_values(v.imag)]
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return str(v)
    return v


def S(a, idx, v):
    """``a[idx] = v``, then ``a`` (as golden/gen_golden.py's helper)."""
    a[idx] = v
    return a


ENV = {"mx": mx, "np": np, "S": S}


@pytest.mark.parametrize("case", CASES, ids=[c["expr"] for c in CASES])
def test_matches_real_mlx(case):
    expr = case["expr"]
    if case.get("group") in ("random", "capi"):
        try:
            eval(expr, dict(ENV))
        except NotImplementedError as e:
            if case["kind"] != "raises" or case["types"][0] != "NotImplementedError":
                pytest.skip(f"this library build lacks a C function: {e}")
        except Exception:  # checked below
            pass
    if case["kind"] == "raises":
        want = _EXC.get(case["types"][0], Exception)
        with pytest.raises(want):
            eval(expr, dict(ENV))
        return
    v = eval(expr, dict(ENV))
    _check(expr, case, v)


def _check(expr, case, v):
    if case["kind"] in ("list", "tuple"):
        assert type(v).__name__ == case["kind"] and len(v) == len(case["items"]), expr
        for x, c in zip(v, case["items"]):
            _check(expr, c, x)
        return
    if case["kind"] == "array":
        assert isinstance(v, mx.array), expr
        assert str(v.dtype) == case["dtype"]
        assert list(v.shape) == case["shape"]
        if "values" in case:
            assert _close(case["values"], _norm_values(v.tolist())), (case["values"], v.tolist())
        assert repr(v) == case["repr"]
    else:
        assert repr(v) == case["repr"]
