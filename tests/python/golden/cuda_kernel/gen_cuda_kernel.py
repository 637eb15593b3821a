"""Writes cuda_kernel.json: the outcome of each cuda_cases.py case under REAL MLX (the oracle),
for tests/python/test_cuda_kernel.py.

    /work/oracle-venv/bin/python tests/python/golden/cuda_kernel/gen_cuda_kernel.py   # mlx 0.32.4 (CPU)
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mlx.core as mx  # noqa: E402
import numpy as np  # noqa: E402

from cuda_cases import CASES  # noqa: E402


def outcome(f):
    """``{"error": class, "message": its text}`` or ``{"value": repr}`` (one rule for the
    generator and the test)."""
    with tempfile.TemporaryDirectory() as d:
        try:
            return {"value": repr(f(mx, np, d))}
        except Exception as e:  # noqa: BLE001 — an error is a result to compare
            return {"error": type(e).__name__, "message": str(e)}


def main():
    out = {"mlx_version": mx.__version__, "cases": {name: outcome(f) for name, f in CASES.items()}}
    with open(os.path.join(HERE, "cuda_kernel.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
