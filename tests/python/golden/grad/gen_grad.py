"""Writes grad.json: the results of grad_cases.py's transform cases under REAL MLX (the
oracle), for tests/python/test_grad.py.

    /work/oracle-venv/bin/python tests/python/golden/grad/gen_grad.py   # mlx 0.32.4 (CPU)
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mlx.core as mx  # noqa: E402

from grad_cases import CASES  # noqa: E402


def encode(v, mx):
    """A pytree of arrays and plain values as JSON (types kept, so structure is compared)."""
    if isinstance(v, mx.array):
        return {"array": v.astype(mx.float32).tolist() if v.dtype != mx.bool_ else v.tolist(),
                "dtype": str(v.dtype), "shape": list(v.shape)}
    if isinstance(v, tuple):
        return {"tuple": [encode(x, mx) for x in v]}
    if isinstance(v, list):
        return {"list": [encode(x, mx) for x in v]}
    if isinstance(v, dict):
        return {"dict": {k: encode(x, mx) for k, x in v.items()}}
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"value": v}
    if isinstance(v, mx.Dtype):
        return {"value": str(v)}
    if callable(v):
        return {"callable": True}
    raise TypeError(f"cannot encode {type(v)}")


def run(name, mx):
    try:
        return encode(CASES[name](mx), mx)
    except Exception as e:  # noqa: BLE001 — an error is a result to compare
        return {"error": type(e).__name__, "message": str(e)}


def main():
    out = {"mlx_version": mx.__version__, "cases": {name: run(name, mx) for name in CASES}}
    with open(os.path.join(HERE, "grad.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
