"""Records real MLX's mx.fast.gated_delta_update on gated_delta_cases.py's cases into
gated_delta.npz (outputs, final states, gradients) and gated_delta.json (output dtypes). Run
with real MLX (the oracle venv), from this directory:

    /work/oracle-venv/bin/python gen_gated_delta.py
"""
import json
import os

import mlx.core as mx
import numpy as np

import gated_delta_cases as C

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out, meta = {}, {}
    for name, case in C.CASES.items():
        xs, st, m = C.mx_inputs(case, mx)
        y, s = mx.fast.gated_delta_update(*xs, st, m)
        out[f"{name}_y"] = np.array(y.astype(mx.float32))
        out[f"{name}_state"] = np.array(s)
        meta[name] = [str(y.dtype), str(s.dtype)]
    for name in C.GRAD_CASES:
        for i, gr in enumerate(C.gradients(C.CASES[name], mx)):
            out[f"{name}_grad{i}"] = np.array(gr)
    np.savez_compressed(os.path.join(HERE, "gated_delta.npz"), **out)
    with open(os.path.join(HERE, "gated_delta.json"), "w", encoding="utf-8") as f:
        json.dump({"mlx": mx.__version__, "dtypes": meta}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
