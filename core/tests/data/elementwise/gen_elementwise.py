"""Golden outputs of real MLX for the elementwise, cast and creation families.
Run: /opt/oracle/bin/python gen_elementwise.py  (writes elementwise.json)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx
import numpy as np
from golden import encode, run, write

DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "float32", "float64", "bfloat16", "complex64"]
D = {n: getattr(mx, n if n != "bool" else "bool_") for n in DTYPES}

FLOATS = [0.0, -0.0, 0.5, -1.5, 2.5, 3.0, -7.25, 1e-3, 100.0, float("nan"), float("inf"), float("-inf")]
INTS = [0, 1, -1, 2, -3, 7, 100, -128, 127]
UNSIGNED = [0, 1, 2, 3, 7, 100, 200, 255]


def values_for(dtype):
    if dtype == "bool":
        return mx.array([True, False, True, False])
    if dtype.startswith("uint"):
        return mx.array(UNSIGNED, dtype=D[dtype])
    if dtype.startswith("int"):
        return mx.array(INTS, dtype=D[dtype])
    if dtype == "complex64":
        return mx.array([1 + 2j, -0.5 + 0j, 0 - 3j, 2.5 + 1.5j])
    return mx.array(FLOATS, dtype=D[dtype])


UNARY = ["abs", "negative", "sign", "square", "floor", "ceil", "round", "trunc", "conjugate", "real", "imag",
         "sqrt", "rsqrt", "reciprocal", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "erf",
         "sigmoid", "degrees", "radians", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "logical_not",
         "bitwise_invert"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "maximum", "minimum",
          "arctan2", "logaddexp", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]

cases = []

# Type promotion: the dtype of add() for every pair.
for a in DTYPES:
    for b in DTYPES:
        r = mx.add(mx.zeros((1,), dtype=D[a]), mx.zeros((1,), dtype=D[b]))
        cases.append({"kind": "promote", "a": a, "b": b, "result": str(r.dtype).replace("mlx.core.", "")})

# Unary ops over every dtype.
for op in UNARY:
    for dt in DTYPES:
        x = values_for(dt)
        cases.append({"kind": "unary", "op": op, "inputs": [encode(x)], **run(lambda: getattr(mx, op)(x))})

# Non-contiguous input: transposed and sliced views.
base = mx.arange(12, dtype=mx.float32).reshape(3, 4) - 5.5
cases.append({"kind": "unary_view", "op": "exp", "view": "transpose", "inputs": [encode(base)],
              **run(lambda: mx.exp(base.T))})
cases.append({"kind": "unary_view", "op": "abs", "view": "slice_step2", "inputs": [encode(base)],
              **run(lambda: mx.abs(base[:, ::2]))})

# Binary ops over a selection of dtype pairs, with broadcasting (3,1) x (4,).
PAIRS = [("float32", "float32"), ("int32", "int32"), ("uint8", "int8"), ("float16", "float32"),
         ("bfloat16", "float16"), ("int32", "float32"), ("bool", "bool"), ("uint32", "int64"),
         ("uint64", "int8"), ("float16", "float16"), ("bfloat16", "bfloat16"), ("int64", "int64"),
         ("complex64", "float32"), ("bool", "int32"), ("uint16", "uint16")]
A_VALS = {"f": [[-2.5], [0.0], [7.0]], "i": [[-7], [0], [9]], "u": [[3], [0], [200]], "b": [[True], [False], [True]],
          "c": [[1 + 1j], [0j], [-2 + 0.5j]]}
B_VALS = {"f": [2.0, -3.0, 0.0, float("nan")], "i": [2, -3, 0, 5], "u": [2, 3, 0, 5], "b": [True, False, True, False],
          "c": [1 + 0j, 2 - 1j, 0j, -1j]}


def vals(dt, table):
    k = "b" if dt == "bool" else "c" if dt.startswith("complex") else "u" if dt.startswith("uint") else "i" if dt.startswith("int") else "f"
    return mx.array(table[k], dtype=D[dt])


for op in BINARY:
    for a_dt, b_dt in PAIRS:
        a, b = vals(a_dt, A_VALS), vals(b_dt, B_VALS)
        cases.append({"kind": "binary", "op": op, "inputs": [encode(a), encode(b)],
                      **run(lambda: getattr(mx, op)(a, b))})

# where / select
c = mx.array([[True], [False]])
cases.append({"kind": "where", "inputs": [encode(c), encode(mx.array([1, 2, 3], dtype=mx.int32)),
                                          encode(mx.array(0.5, dtype=mx.float16))],
              **run(lambda: mx.where(c, mx.array([1, 2, 3], dtype=mx.int32), mx.array(0.5, dtype=mx.float16)))})

# astype between every pair.
for a in DTYPES:
    x = values_for(a)
    for b in DTYPES:
        if a == "complex64" and b != "complex64":
            continue  # MLX's complex -> real cast is not part of the contract we test here
        if a.startswith("float") or a == "bfloat16":
            if b not in ("bool",) and not b.startswith("float") and b != "bfloat16" and b != "complex64":
                x2 = mx.array([0.0, -0.0, 0.5, -1.5, 2.5, 3.0, -7.25, 100.0], dtype=D[a])  # no NaN/Inf into ints (UB in C++)
                if b.startswith("uint"):
                    x2 = mx.abs(x2)
                cases.append({"kind": "astype", "to": b, "inputs": [encode(x2)], **run(lambda: x2.astype(D[b]))})
                continue
        cases.append({"kind": "astype", "to": b, "inputs": [encode(x)], **run(lambda: x.astype(D[b]))})

# Creation.
for args in [(0, 10, 1, "int32"), (0.5, 3.2, 0.7, "float32"), (10, 0, -3, "int64"), (0, 1, 0.1, "float16"),
             (0, 5, 1, "bfloat16"), (3, 3, 1, "float32"), (-2, 2, 0.5, "float64")]:
    s, e, st, dt = args
    cases.append({"kind": "arange", "args": [s, e, st], "dtype": dt, **run(lambda: mx.arange(s, e, st, dtype=D[dt]))})
for args in [(0.0, 1.0, 5, "float32"), (-3.0, 7.0, 11, "float32"), (1.0, 2.0, 1, "float32"), (0.0, 10.0, 7, "int32"),
             (0.0, 1.0, 0, "float32"), (2.0, -2.0, 9, "float16")]:
    s, e, n, dt = args
    cases.append({"kind": "linspace", "args": [s, e, n], "dtype": dt, **run(lambda: mx.linspace(s, e, n, dtype=D[dt]))})
for n, m, k in [(3, None, 0), (3, 5, 1), (4, 2, -1), (0, 3, 0), (2, 2, 5)]:
    cases.append({"kind": "eye", "args": [n, m, k], **run(lambda: mx.eye(n, m, k))})
    cases.append({"kind": "tri", "args": [n, m, k], **run(lambda: mx.tri(n, m, k))})
x1, y1 = mx.array([1, 2, 3]), mx.array([4.0, 5.0])
for idx in ["xy", "ij"]:
    for sparse in [False, True]:
        cases.append({"kind": "meshgrid", "indexing": idx, "sparse": sparse, "inputs": [encode(x1), encode(y1)],
                      **run(lambda: mx.meshgrid(x1, y1, sparse=sparse, indexing=idx))})
cases.append({"kind": "full", "shape": [2, 3], "value": 2.5, "dtype": "float16",
              **run(lambda: mx.full((2, 3), 2.5, dtype=mx.float16))})

# mx.empty / mx.empty_like (in MLX 0.32 the same functions as zeros / zeros_like).
for shp, dt in [((2, 3), "float32"), ((0, 4), "complex64"), ((), "bool"), ((3,), "int8")]:
    cases.append({"kind": "empty", "shape": list(shp), "dtype": dt, **run(lambda: mx.empty(shp, dtype=D[dt]))})
like_src = mx.array([[1.5, -2.0]], dtype=mx.float16)
for dt in [None, "int32"]:
    cases.append({"kind": "empty_like", "inputs": [encode(like_src)], "dtype": dt,
                  **run(lambda: mx.empty_like(like_src, dtype=D[dt] if dt else None))})
# Composites.
xf = mx.array([-2.5, 0.5, float("nan"), float("inf"), float("-inf"), 1e-9, 3.0], dtype=mx.float32)
yf = mx.array([-2.5, 0.5000001, float("nan"), float("inf"), float("inf"), 0.0, 3.1], dtype=mx.float32)
xh = xf.astype(mx.float16)
cases.append({"kind": "clip", "inputs": [encode(xf)], "lo": -1.0, "hi": 2.0, **run(lambda: mx.clip(xf, -1.0, 2.0))})
cases.append({"kind": "clip", "inputs": [encode(xf)], "lo": None, "hi": 2.0, **run(lambda: mx.clip(xf, None, 2.0))})
cases.append({"kind": "clip", "inputs": [encode(xf)], "lo": None, "hi": None, **run(lambda: mx.clip(xf, None, None))})
for eq_nan in [False, True]:
    cases.append({"kind": "isclose", "equal_nan": eq_nan, "inputs": [encode(xf), encode(yf)], **run(lambda: mx.isclose(xf, yf, equal_nan=eq_nan))})
    cases.append({"kind": "allclose", "equal_nan": eq_nan, "inputs": [encode(xf), encode(xf)], **run(lambda: mx.allclose(xf, xf, equal_nan=eq_nan))})
    cases.append({"kind": "array_equal", "equal_nan": eq_nan, "inputs": [encode(xf), encode(xf)], **run(lambda: mx.array_equal(xf, xf, equal_nan=eq_nan))})
cases.append({"kind": "array_equal", "equal_nan": False, "inputs": [encode(xf), encode(xf[:3])], **run(lambda: mx.array_equal(xf, xf[:3]))})
ia, ib = mx.array([7, -7, 5, 0], dtype=mx.int32), mx.array([2, 2, -3, 4], dtype=mx.int32)
cases.append({"kind": "divmod", "inputs": [encode(ia), encode(ib)], **run(lambda: mx.divmod(ia, ib))})
cases.append({"kind": "logical_xor", "inputs": [encode(ia), encode(ib)], **run(lambda: mx.logical_xor(ia, ib))})
for x in [xf, xh]:
    cases.append({"kind": "nan_to_num", "inputs": [encode(x)], **run(lambda: mx.nan_to_num(x))})
    cases.append({"kind": "nan_to_num_args", "inputs": [encode(x)], **run(lambda: mx.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0))})
rv = mx.array([1.2345, -2.5551, 0.125, 1234.5678], dtype=mx.float32)
for d in [0, 1, 2, -2]:
    cases.append({"kind": "round_decimals", "decimals": d, "inputs": [encode(rv)], **run(lambda: mx.round(rv, d))})

write(os.path.join(os.path.dirname(__file__), "elementwise.json"), cases)
