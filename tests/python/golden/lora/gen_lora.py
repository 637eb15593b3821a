"""Records what real MLX 0.32.4 + mlx-lm 0.32.2 produce on the LoRA recipe of lora_recipe.py
(the goldens of tests/python/test_lora.py). Run with the oracle's Python, from anywhere:

    python3 -m venv /work/oracle-venv
    /work/oracle-venv/bin/pip install mlx==0.32.4 mlx-lm==0.32.2 numpy
    /work/oracle-venv/bin/python tests/python/golden/lora/gen_lora.py

Writes goldens.json (versions, recipe, per-iteration training losses and validation losses of
LoRA on the float32 fixture and QLoRA on the 4-bit one) and adapters.npz (the adapter weights
after the run, ``<fixture>/<name>``), plus the adapters ``python -m mlx_lm lora`` itself saves
for the float32 fixture (``cli/<name>``)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lora_recipe  # noqa: E402


def main():
    import mlx.core as mx
    import mlx_lm
    out = {"mlx_version": mx.__version__, "mlx_lm_version": mlx_lm.__version__, "args": [os.path.relpath(a, lora_recipe.ROOT) if a == lora_recipe.DATA else a
                    for a in lora_recipe.ARGS],
           "runs": {}}
    arrays = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in lora_recipe.FIXTURES:
            train, val, adapters = lora_recipe.train(name, os.path.join(tmp, name))
            out["runs"][name] = {"train_loss": train, "val_loss": val}
            arrays.update({f"{name}/{k}": v for k, v in adapters.items()})
            print(name, "train", [round(x, 4) for x in train], "val", val)
        cli = os.path.join(tmp, "cli")
        subprocess.run([sys.executable, "-m", "mlx_lm", "lora"] + lora_recipe.cli_args("fp32", cli), check=True,
                       stdout=subprocess.DEVNULL)
        saved = mx.load(os.path.join(cli, "adapters.safetensors"))
        arrays.update({f"cli/{k}": np.array(v) for k, v in saved.items()})
    with open(os.path.join(HERE, "goldens.json"), "w") as f:
        json.dump(out, f, indent=1)
    np.savez(os.path.join(HERE, "adapters.npz"), **arrays)


if __name__ == "__main__":
    main()
