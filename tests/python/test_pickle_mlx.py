"""Pickles written by REAL MLX 0.32 (golden/pickles.json, gen_pickles.py) load with mlx-arm's
mx.array (its __setstate__ takes MLX's state), and mlx-arm's __getstate__ gives MLX's state."""
import json
import os
import pickle

import numpy as np
import pytest

import mlx.core as mx

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "pickles.json")) as _f:
    PICKLES = json.load(_f)


def _values(a):
    if a.dtype == mx.bfloat16:
        a = a.astype(mx.float32)
    v = a.tolist()
    if a.dtype == mx.complex64:
        v = [[z.real, z.imag] for z in v]
    return v


@pytest.mark.parametrize("name", sorted(PICKLES))
def test_load_pickle_written_by_real_mlx(name):
    want = PICKLES[name]
    a = pickle.loads(bytes.fromhex(want["pickle_hex"]))
    assert isinstance(a, mx.array)
    assert (str(a.dtype), list(a.shape)) == (want["dtype"], want["shape"])
    assert _values(a) == want["values"]


@pytest.mark.parametrize("name", sorted(n for n in PICKLES if n.endswith("_p2")))
def test_getstate_is_mlx_state(name):
    want = PICKLES[name]
    a = pickle.loads(bytes.fromhex(want["pickle_hex"]))
    nd, code = a.__getstate__()
    assert code == want["state_code"] and isinstance(nd, np.ndarray) and list(nd.shape) == want["shape"]
    b = mx.array.__new__(mx.array)
    b.__setstate__((nd, code))
    assert str(b.dtype) == want["dtype"] and _values(b) == want["values"]


def test_setstate_rejects_bad_state():
    b = mx.array.__new__(mx.array)
    with pytest.raises(ValueError, match="expected"):
        b.__setstate__((1, 2, 3))
    with pytest.raises(ValueError, match="dtype code"):
        b.__setstate__((np.zeros(2), 99))
