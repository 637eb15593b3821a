"""Shared helpers for golden files: every generator under core/tests/data/<family>/ imports
this to encode real-MLX arrays as JSON that core/tests/common/mod.rs decodes.

Encoding of one array: {"dtype": "float32", "shape": [2, 3], "data": [...]} with data
flattened row-major; floats as numbers or "nan"/"inf"/"-inf"; complex as [re, im];
bool as true/false; integers exact. An expected failure is {"error": "ValueError"}.
Run generators with the oracle venv (real MLX): /opt/oracle/bin/python gen_<family>.py
"""
import json
import math
import os

import mlx.core as mx
import numpy as np


def _num(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def encode(a):
    """Encodes an mx.array (or numpy array) exactly."""
    if isinstance(a, mx.array):
        dtype = str(a.dtype).replace("mlx.core.", "")
        if a.dtype == mx.bfloat16:
            flat = np.array(a.astype(mx.float32)).reshape(-1)
        else:
            flat = np.array(a).reshape(-1)
        shape = list(a.shape)
    else:
        a = np.asarray(a)
        dtype = str(a.dtype)
        flat = a.reshape(-1)
        shape = list(a.shape)
    if dtype == "bool":
        data = [bool(x) for x in flat]
    elif dtype.startswith("complex"):
        data = [[_num(x.real), _num(x.imag)] for x in flat]
    elif dtype.startswith("float") or dtype == "bfloat16":
        data = [_num(x) for x in flat]
    else:
        data = [int(x) for x in flat]
    return {"dtype": dtype, "shape": shape, "data": data}


def run(fn):
    """Calls fn(); returns the encoded result, a list of them, or the exception type name."""
    try:
        out = fn()
        if isinstance(out, (list, tuple)):
            outs = list(out)
            mx.eval(*outs)
            return {"outputs": [encode(o) for o in outs]}
        mx.eval(out)
        return {"output": encode(out)}
    except Exception as e:  # the oracle's failure is part of the expected behaviour
        return {"error": type(e).__name__, "message": str(e)}


def view(a, v):
    """The input view a case names (`tests/common::view` builds the same one in Rust)."""
    if v == "transpose":
        return a.T
    if v == "slice_step2":
        return a[..., ::2]
    return a


def write(path, cases):
    """Writes {"mlx_version": ..., "cases": [...]} next to the generator."""
    with open(path, "w") as f:
        json.dump({"mlx_version": mx.__version__, "cases": cases}, f, separators=(",", ":"))
    print(f"wrote {len(cases)} cases to {os.path.relpath(path)}")
