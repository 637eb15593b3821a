"""Generates tests/python/golden/pickles.json from REAL MLX: pickles of mx.array written by
MLX 0.32 (its __getstate__ state: numpy array + dtype code), with the values they hold.
tests/python/test_pickle_mlx.py loads each with mlx-arm's `mlx.core`.

Run: /opt/oracle/bin/python tests/python/golden/gen_pickles.py
"""
import json
import os
import pickle

import mlx.core as mx

CASES = {
    "float32_2x3": "mx.array([[1.5, -2.0, 3.25], [0.0, 7.0, -0.5]])",
    "float64": "mx.array([0.1, 1e300, -2.5], mx.float64)",
    "bfloat16": "mx.array([[1.5, 2.0], [-3.0, 1e30]], mx.bfloat16)",
    "float16": "mx.array([65504.0, -0.25], mx.float16)",
    "complex64": "mx.array([1 + 2j, -3.5j])",
    "bool": "mx.array([True, False, True])",
    "int64": "mx.array([-2**62, 5], mx.int64)",
    "uint8_T": "mx.array([[1, 2, 3], [4, 5, 6]], mx.uint8).T",
    "scalar": "mx.array(7, mx.int16)",
    "empty": "mx.zeros((0, 3))",
}


def main():
    out = {}
    for name, expr in CASES.items():
        a = eval(expr)
        vals = a.astype(mx.float32).tolist() if a.dtype == mx.bfloat16 else a.tolist()
        if a.dtype == mx.complex64:
            vals = [[v.real, v.imag] for v in vals]
        for proto in (2, 5):
            out[f"{name}_p{proto}"] = {"expr": expr, "pickle_hex": pickle.dumps(a, protocol=proto).hex(),
                                       "dtype": str(a.dtype), "shape": list(a.shape), "values": vals,
                                       "state_code": a.__getstate__()[1]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pickles.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
