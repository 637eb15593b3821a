"""Golden results for tests/python/test_nn.py, test_optimizers.py and test_utils_tree.py from
REAL MLX 0.32 (mlx.nn, mlx.optimizers, mlx.utils): every case of nn_cases.py is executed here and
its output recorded — arrays into <group>.npz (dtype kept in the JSON; bfloat16 stored as
float32), other values by repr, exceptions by type and message — in nn_goldens.json.
Also writes mlx_model.safetensors / mlx_model.npz: a seeded model's weights saved by real MLX.
Run: /path/to/venv-with-mlx/bin/python tests/python/golden/nn/gen_nn_goldens.py"""
import json
import os
import sys

import numpy as np
import mlx.core as mx
import mlx.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nn_cases  # noqa: E402


def record(group, name, code, rtol, arrays):
    res = nn_cases.run(code, mx)
    entry = {"name": name, "code": code, "rtol": rtol}
    if res[0] == "error":
        entry["error"], entry["message"] = res[1], res[2]
        return entry
    leaves = []
    for i, (path, leaf) in enumerate(nn_cases.flatten(res[1], mx)):
        if isinstance(leaf, mx.array):
            key = f"{name}#{i}"
            arrays[key] = np.array(leaf.astype(mx.float32) if leaf.dtype == mx.bfloat16 else leaf)
            leaves.append({"path": path, "array": key, "dtype": str(leaf.dtype), "shape": list(leaf.shape)})
        elif isinstance(leaf, float):
            leaves.append({"path": path, "float": leaf})
        else:
            leaves.append({"path": path, "repr": repr(leaf)})
    entry["leaves"] = leaves
    return entry


def main():
    out = {"mlx_version": mx.__version__, "groups": {}}
    for group, cases in nn_cases.CASES.items():
        arrays = {}
        out["groups"][group] = [record(group, n, c, r, arrays) for n, c, r in cases]
        np.savez(os.path.join(HERE, f"{group}.npz"), **arrays)
    with open(os.path.join(HERE, "nn_goldens.json"), "w") as f:
        json.dump(out, f, indent=0)
    # Weights written by real MLX, loaded by the tests with Module.load_weights.
    exec(nn_cases.MODEL.replace("model = ", "mx.random.seed(42)\nmodel = "), nn_cases.environment(mx), env := {})
    model = env["model"]
    model.save_weights(os.path.join(HERE, "mlx_model.safetensors"))
    model.save_weights(os.path.join(HERE, "mlx_model.npz"))
    x = mx.random.normal((2, 3), key=mx.random.key(7))
    np.save(os.path.join(HERE, "mlx_model_out.npy"), np.array(model(x)))
    n = sum(len(v) for v in out["groups"].values())
    print(f"{n} cases, MLX {mx.__version__}")


if __name__ == "__main__":
    main()
