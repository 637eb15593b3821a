"""LoRA fine-tuning with mlx-lm, unchanged from the package index, on mlx-arm's ``mlx``:
``mlx_lm.lora``'s training code (``nn.value_and_grad`` inside ``mx.compile`` with the model,
optimizer and random state as state, Adam, LoRA layers over ``nn.Linear`` and, for QLoRA, over
``nn.QuantizedLinear``) on the tiny Llama fixtures and the set in tests/data/lora/, against what
real MLX 0.32.4 + mlx-lm 0.32.2 produced on the same recipe (golden/lora/gen_lora.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mlx.core as mx
from mlx_lm_required import require_mlx_lm

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden", "lora")

require_mlx_lm("the LoRA tests")

sys.path.insert(0, GOLDEN)
import lora_recipe  # noqa: E402

with open(os.path.join(GOLDEN, "goldens.json")) as f:
    GOLD = json.load(f)
ADAPTERS = np.load(os.path.join(GOLDEN, "adapters.npz"))

# Float32 sums in another order, through six Adam steps at lr 1e-3 on losses near 20. Measured
# (dev VM, AVX-512): losses within 1.3e-6 relative, adapters within 5.2e-4 of their largest value
# (Adam moves weights whose gradient is near zero by about lr whatever its sign, so rounding shows
# most there). Both bounds are far inside the >50 % drop being tested.
LOSS_RTOL = 1e-4
ADAPTER_ATOL = 2e-3  # times the golden tensor's largest magnitude


def test_goldens_match_the_recipe():
    assert GOLD["args"][2] == "tests/data/lora"
    assert [a for i, a in enumerate(GOLD["args"]) if i != 2] == [a for i, a in enumerate(lora_recipe.ARGS) if i != 2]


@pytest.mark.parametrize("name", list(lora_recipe.FIXTURES))
def test_loss_curve_matches_real_mlx(name, tmp_path):
    train, val, adapters = lora_recipe.train(name, str(tmp_path))
    gold = GOLD["runs"][name]
    assert len(train) == lora_recipe.ITERS
    np.testing.assert_allclose(train, gold["train_loss"], rtol=LOSS_RTOL, err_msg=f"{name} train loss")
    np.testing.assert_allclose(val, gold["val_loss"], rtol=LOSS_RTOL, err_msg=f"{name} val loss")
    # Training does something: the loss falls by more than half over the run.
    assert train[-1] < 0.5 * train[0] and val[-1] < 0.5 * val[0]
    keys = sorted(k.split("/", 1)[1] for k in ADAPTERS.files if k.startswith(name + "/"))
    assert sorted(adapters) == keys and len(keys) == 2 * 7 * 2  # lora_a/b × 7 projections × 2 layers
    for k in keys:
        ref = ADAPTERS[f"{name}/{k}"]
        scale = float(np.abs(ref).max())
        np.testing.assert_allclose(adapters[k], ref, rtol=0, atol=ADAPTER_ATOL * scale, err_msg=f"{name} {k}")


def test_command_line_saves_the_adapters_real_mlx_saved(tmp_path):
    """``python -m mlx_lm lora`` itself, in a subprocess: the adapters.safetensors it writes
    (through ``mx.save_safetensors``) hold real MLX's weights after the same run."""
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", "mlx_lm", "lora"] + lora_recipe.cli_args("fp32", str(tmp_path)),
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    saved = mx.load(str(tmp_path / "adapters.safetensors"))
    ref = {k[4:]: ADAPTERS[k] for k in ADAPTERS.files if k.startswith("cli/")}
    assert sorted(saved) == sorted(ref)
    for k, v in ref.items():
        np.testing.assert_allclose(np.array(saved[k]), v, rtol=0, atol=ADAPTER_ATOL * float(np.abs(v).max()), err_msg=k)
    with open(tmp_path / "adapter_config.json") as f:
        cfg = json.load(f)
    assert cfg["fine_tune_type"] == "lora" and cfg["num_layers"] == 2
