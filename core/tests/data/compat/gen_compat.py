"""Golden cases for core/tests/compat.rs: behaviours where mlx-arm differed from real MLX 0.32
in MLX's own Python tests (docs/COMPAT.md). Every expected value comes from real MLX.

Run with the oracle venv: /opt/oracle/bin/python core/tests/data/compat/gen_compat.py
"""
import json
import os
import sys

import mlx.core as mx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden import encode  # noqa: E402

C = mx.array([3 + 4j, -5 + 12j, -8 + 0j, 0 + 9j, 9 + 1j, 0 + 0j, -2 - 0.5j], mx.complex64)
R = mx.array([-1.5, 0.25, 2.0], mx.float32)


def err(f):
    try:
        mx.eval(f())
        return None
    except Exception as e:  # the exception type MLX raises
        return type(e).__name__


out = {}

# Which unary/binary ops MLX refuses on complex64 (and which it accepts).
UNARY = ["abs", "negative", "sign", "square", "floor", "ceil", "round", "trunc", "sqrt", "rsqrt", "exp",
         "expm1", "log", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
         "arcsinh", "arccosh", "arctanh", "erf", "erfinv", "sigmoid", "isnan", "isinf", "isposinf", "isneginf"]
BINARY = ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "arctan2",
          "logaddexp", "equal", "less"]
out["complex_refusals"] = {
    "unary": {op: err(lambda op=op: getattr(mx, op)(C)) for op in UNARY},
    "binary": {op: err(lambda op=op: getattr(mx, op)(C, C)) for op in BINARY},
}

# Complex elementwise values.
out["complex_unary"] = {"input": encode(C), "ops": {op: encode(getattr(mx, op)(C)) for op in ["arctan", "arctanh"]}}
inf_c = mx.array([0.0, float("-inf"), float("inf"), complex(float("-inf"), 1.0), complex(1.0, float("-inf"))],
                 mx.complex64)
out["complex_inf"] = {"input": encode(inf_c), "isposinf": encode(mx.isposinf(inf_c)),
                      "isneginf": encode(mx.isneginf(inf_c))}

# NaN propagation of complex max/min.
nan = float("nan")
cases = []
# The inputs of MLX's test_nan_propagation_complex64 (`3 + mx.nan * 1j` is nan+nanj). MLX
# itself misses a NaN that sits only in the imaginary part on its last-axis path (max of the
# row [3+nan·1j as complex(3, nan), 4+4j] gives 4+4j), so such inputs are left out: ours
# propagates that NaN as numpy does.
for vals in ([1 + 1j, 2 + 2j, 3 + 3j, complex(nan, 4)], [1 + 1j, 2 + 2j, complex(nan, nan), 4 + 4j],
             [1 + 1j, complex(nan, nan), 3 + 3j, 4 + 4j], [complex(nan, 1), 2 + 2j, 3 + 3j, 4 + 4j]):
    a = mx.array(vals, mx.complex64).reshape(2, 2)
    for axis in (0, 1):
        cases.append({"input": encode(a), "axis": axis, "max": encode(mx.max(a, axis=axis)),
                      "min": encode(mx.min(a, axis=axis))})
out["complex_minmax"] = cases

# Bool views keep the bytes.
v = mx.array([[256, -2, 7], [3, 0, -100]], mx.int32)
out["bool_view"] = {"input": encode(v), "roundtrip_T": encode(v.T.view(mx.bool_).view(mx.int32)),
                    "roundtrip": encode(v.view(mx.bool_).view(mx.int16))}

# roll with MLX's shift/axis rules.
x = mx.arange(10).reshape(2, 5)
out["roll"] = [{"shift": list(s) if isinstance(s, tuple) else [s], "axis": a, "axis_kind": k,
                "output": encode(mx.roll(x, s, a) if a is not None else mx.roll(x, s))}
               for s, a, k in [((1, 1, 1), None, "none"), ((1, 2), 0, "int"), ((2, 1, 7), (1, 0), "list"),
                               (3, (0, 1), "list"), ((-1, 2), (0, 1), "list")]]
out["roll_input"] = encode(x)

# Random: array bounds (randint, truncated_normal) and complex normal, bit-exact.
key = mx.random.key(7)
lo = mx.reshape(mx.array([0, -5, 2]), [3, 1])
hi = mx.reshape(mx.array([12, 13, 14, 15]), [1, 4])
out["randint"] = [
    {"key": [int(k) for k in key.tolist()], "low": encode(lo), "high": encode(hi), "shape": [3, 4], "dtype": "int32",
     "output": encode(mx.random.randint(lo, hi, [3, 4], key=key))},
    {"key": [int(k) for k in key.tolist()], "low": encode(mx.array(2**40, mx.int64)),
     "high": encode(mx.array(2**40 + 1024, mx.int64)), "shape": [6], "dtype": "int64",
     "output": encode(mx.random.randint(2**40, 2**40 + 1024, [6], dtype=mx.int64, key=key))},
    {"key": [int(k) for k in key.tolist()], "low": encode(mx.array(-3.5)), "high": encode(mx.array(4.25)),
     "shape": [2, 3], "dtype": "int16",
     "output": encode(mx.random.randint(mx.array(-3.5), mx.array(4.25), [2, 3], dtype=mx.int16, key=key))},
]
lower = mx.reshape(mx.array([-2.0, 0.0]), [1, 2])
upper = mx.reshape(mx.array([0.0, 1.0, 2.0]), [3, 1])
out["truncated_normal"] = [
    {"key": [int(k) for k in key.tolist()], "lower": encode(lower), "upper": encode(upper), "shape": None,
     "dtype": "float32", "output": encode(mx.random.truncated_normal(lower, upper, key=key))},
    {"key": [int(k) for k in key.tolist()], "lower": encode(mx.array([], mx.float32)),
     "upper": encode(mx.array([], mx.float32)), "shape": None, "dtype": "float32",
     "output": encode(mx.random.truncated_normal(mx.array([]), mx.array([]), key=key))},
    {"key": [int(k) for k in key.tolist()], "lower": encode(mx.array([-1.0, 0.5])), "upper": encode(mx.array(1.5)),
     "shape": [3, 2], "dtype": "float16",
     "output": encode(mx.random.truncated_normal(mx.array([-1.0, 0.5]), mx.array(1.5), [3, 2], dtype=mx.float16,
                                                 key=key))},
]
out["complex_normal"] = [
    {"key": [int(k) for k in key.tolist()], "shape": [2, 3], "loc": None, "scale": None,
     "output": encode(mx.random.normal((2, 3), dtype=mx.complex64, key=key))},
    {"key": [int(k) for k in key.tolist()], "shape": [4], "loc": encode(mx.array(3.0 + 1j, mx.complex64)),
     "scale": encode(mx.array(2.0, mx.complex64)),
     "output": encode(mx.random.normal((4,), dtype=mx.complex64, loc=3.0 + 1j, scale=2.0, key=key))},
]

# gather_mm against matmul of the selected matrices; qqmm's CPU (matrix-vector) case.
ka, kb, kx, kw = mx.random.split(mx.random.key(11), 4)
A = mx.random.normal((3, 2, 4), key=ka)
B = mx.random.normal((4, 4, 5), key=kb)
out["gather_mm"] = [
    {"a": encode(A), "b": encode(B), "lhs": encode(mx.array([2, 0], mx.uint32)), "rhs": encode(mx.array([1, 3], mx.uint32)),
     "output": encode(mx.gather_mm(A, B, mx.array([2, 0], mx.uint32), mx.array([1, 3], mx.uint32)))},
    {"a": encode(A[:1]), "b": encode(B), "lhs": None, "rhs": encode(mx.array([[1], [3]], mx.uint32)),
     "output": encode(mx.gather_mm(A[:1], B, None, mx.array([[1], [3]], mx.uint32)))},
    {"a": encode(A[0, 0]), "b": encode(B), "lhs": None, "rhs": encode(mx.array([2, 0], mx.uint32)),
     "output": encode(mx.gather_mm(A[0, 0], B, None, mx.array([2, 0], mx.uint32)))},
]
X = mx.random.normal((1, 64), key=kx)
W = mx.random.normal((67, 64), key=kw)
qq = []
for mode in ("nvfp4", "mxfp8"):
    wq, s = mx.quantize(W, mode=mode)
    qq.append({"mode": mode, "x": encode(X), "w": encode(W), "output": encode(mx.qqmm(X, wq, s, mode=mode)),
               "general_error": err(lambda: mx.qqmm(mx.ones((3, 64)), wq, s, mode=mode))})
out["qqmm"] = qq

# Shape dimensions beyond int32 and the clip/rsqrt-type checks.
big = mx.zeros(2**30)
out["overflow"] = {"concatenate3": err(lambda: mx.concatenate([big] * 3)), "repeat2": err(lambda: mx.repeat(big, 2)),
                   "kron": err(lambda: mx.kron(mx.zeros(2**16), mx.zeros(2**16)))}

path = os.path.join(os.path.dirname(__file__), "compat.json")
with open(path, "w") as f:
    json.dump(out, f, indent=0)
print("wrote", path)
