"""mlx.nn (Module tree operations, every layer's forward, activations, losses, initializers,
quantized layers and nn.quantize) against REAL MLX 0.32 goldens: the cases of
golden/nn/nn_cases.py run here and must give what real MLX gave (golden/nn/gen_nn_goldens.py).
Layers are built after mx.random.seed, so their random initial weights are compared too
(mlx-arm's generator is bit-exact with MLX's). Plus save/load of weights, including files
written by real MLX."""
import os
import sys

import numpy as np
import pytest

import mlx.core as mx
import mlx.nn as nn

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "nn")
sys.path.insert(0, HERE)
import nn_cases  # noqa: E402

GROUPS = {g: nn_cases.load_group(g) for g in ("act", "layer", "quant", "loss", "init", "module", "shard")}
PARAMS = [(g, e) for g, (entries, _) in GROUPS.items() for e in entries]


@pytest.mark.parametrize("group,entry", PARAMS, ids=[f"{g}-{e['name']}" for g, e in PARAMS])
def test_nn_matches_real_mlx(group, entry):
    nn_cases.check(entry, GROUPS[group][1], mx)


def _model(seed):
    env = nn_cases.environment(mx)
    exec(nn_cases.MODEL.replace("model = ", f"mx.random.seed({seed})\nmodel = "), env)
    return env["model"]


@pytest.mark.parametrize("ext", ["safetensors", "npz"])
def test_load_weights_written_by_real_mlx(ext):
    model = _model(0)  # different weights from the file's (seed 42)
    model.load_weights(os.path.join(HERE, f"mlx_model.{ext}"))
    x = mx.random.normal((2, 3), key=mx.random.key(7))
    np.testing.assert_allclose(np.array(model(x)), np.load(os.path.join(HERE, "mlx_model_out.npy")),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ext", ["safetensors", "npz"])
def test_save_load_round_trip(tmp_path, ext):
    a, b = _model(1), _model(2)
    path = str(tmp_path / f"w.{ext}")
    a.save_weights(path)
    b.load_weights(path)
    from mlx.utils import tree_flatten
    for (ka, va), (kb, vb) in zip(tree_flatten(a.parameters()), tree_flatten(b.parameters())):
        assert ka == kb
        assert va.dtype == vb.dtype
        np.testing.assert_array_equal(np.array(va), np.array(vb))
    # The file holds exactly the flattened parameter names.
    assert sorted(mx.load(path).keys()) == sorted(k for k, _ in tree_flatten(a.parameters()))


def test_value_and_grad_without_autograd_is_clear():
    """nn.value_and_grad is built on mx.value_and_grad; while mlx.core lacks it the call
    raises NotImplementedError naming it (it is looked up at call time, not import time)."""
    model = nn.Linear(2, 1)
    fn = nn.value_and_grad(model, lambda x: model(x).sum())
    try:
        mx.value_and_grad
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match="value_and_grad"):
            fn(mx.ones((3, 2)))
    else:
        loss, grads = fn(mx.ones((3, 2)))
        assert set(grads) == {"weight", "bias"}


def test_unknown_nn_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        nn.NoSuchLayer


def test_value_and_grad_plumbing(monkeypatch):
    """nn.value_and_grad hands model.trainable_parameters() to mx.value_and_grad and the
    transformed function puts them into the model before calling the loss (checked with a
    stand-in for mx.value_and_grad that records what it gets; frozen parameters stay out)."""
    from mlx.utils import tree_flatten, tree_map
    seen = {}

    def fake_value_and_grad(fn):
        def run(params, *args, **kwargs):
            seen["params"] = [k for k, _ in tree_flatten(params)]
            shifted = tree_map(lambda p: p + 1, params)
            return fn(shifted, *args, **kwargs), tree_map(mx.zeros_like, params)
        return run

    monkeypatch.setitem(mx.__dict__, "value_and_grad", fake_value_and_grad)
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))
    model.layers[1].freeze()
    before = np.array(model.layers[0].weight)
    loss, grads = nn.value_and_grad(model, lambda x: model(x).sum())(mx.ones((1, 2)))
    assert seen["params"] == ["layers.0.weight", "layers.0.bias"]
    np.testing.assert_allclose(np.array(model.layers[0].weight), before + 1)
    assert [k for k, _ in tree_flatten(grads)] == seen["params"]
    assert loss.shape == ()
