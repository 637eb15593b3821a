"""Writes export.json: the results of export_cases.py's cases under REAL MLX (the oracle),
for tests/python/test_export.py.

    /work/oracle-venv/bin/python tests/python/golden/export/gen_export.py   # mlx 0.32.4 (CPU)
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "grad"))

import mlx.core as mx  # noqa: E402

from export_cases import CASES  # noqa: E402
from gen_grad import encode  # noqa: E402  (one pytree encoding for every golden file)


def run(name):
    with tempfile.TemporaryDirectory() as d:
        try:
            return encode(CASES[name](mx, d), mx)
        except Exception as e:  # noqa: BLE001 — an error is a result to compare
            return {"error": type(e).__name__, "message": str(e).replace(d, "<dir>")}


def main():
    out = {"mlx_version": mx.__version__, "cases": {name: run(name) for name in CASES}}
    with open(os.path.join(HERE, "export.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
