"""The mlx.core names mlx-lm needs beyond layers, against real MLX 0.32.4
(golden/mlx_lm/api_goldens.json, written by gen_mlx_lm.py's ``record_api``): ``mx.compile``
with state, ``mx.random.state``, the one-process ``mx.distributed``, ``mx.device_info`` and the
tensor-parallel layers of ``mlx.nn.layers.distributed``. No mlx-lm needed."""
import json
import os
import threading
from functools import partial

import numpy as np
import pytest

import mlx.core as mx
import mlx.nn as nn
from mlx.nn.layers.distributed import shard_inplace, shard_linear

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "golden", "mlx_lm", "api_goldens.json")) as f:
    G = json.load(f)


def _raises(f, golden):
    cls, msg = golden
    with pytest.raises(Exception) as e:
        f()
    assert type(e.value).__name__ == cls
    assert str(e.value) == msg


def test_random_state_follows_mlx():
    mx.random.seed(0)
    assert mx.random.state[0].tolist() == G["state_after_seed"]
    mx.random.uniform()
    assert mx.random.state[0].tolist() == G["state_after_one_draw"]
    assert len(mx.random.state) == G["state_len"] == len(list(mx.random.state))
    with pytest.raises(TypeError):
        mx.random.state[0] = mx.random.key(1)


def test_random_state_is_not_listed_by_dir():
    # Real MLX resolves mx.random.state in the submodule's __getattr__: dir() does not list it
    # (its public names are docs/mlx_api_names.txt's mx.random.* lines, made by dir() under MLX).
    from mlx.core import _names
    public = {n for n in dir(mx.random) if not n.startswith("_")}
    assert public == {q.split(".")[2] for q in _names.MLX_NAMES if q.startswith("mx.random.")}
    assert "state" not in dir(mx.random) and hasattr(mx.random, "state")
    from mlx.core.random import state
    assert state is mx.random.state


def test_random_state_is_per_thread():
    mx.random.seed(0)
    seen = {}

    def other():
        mx.random.seed(3)
        seen["key"] = mx.random.state[0].tolist()

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen["key"] == mx.random.key(3).tolist()
    assert mx.random.state[0].tolist() == G["state_after_seed"]  # untouched by the thread


def test_compile_with_random_state():
    logits = mx.array([[0.5, 1.5, -0.25, 2.0, 0.0, 1.0]])

    @partial(mx.compile, inputs=mx.random.state, outputs=mx.random.state)
    def sample(x, temp):
        return mx.random.categorical(x * (1.0 / temp))

    mx.random.seed(11)
    assert [sample(logits, 0.7).item() for _ in range(12)] == G["compiled_categorical"]
    mx.random.seed(11)
    assert [mx.random.categorical(logits * (1.0 / 0.7)).item() for _ in range(12)] == G["plain_categorical"]


def test_compile_with_a_state_list():
    counter = [mx.array(1.0)]

    @partial(mx.compile, inputs=counter, outputs=counter)
    def step(x):
        counter[0] = counter[0] * x + 1
        return counter[0] * 2

    assert [step(mx.array(v)).item() for v in (2.0, 3.0, 0.5)] == G["state_list_results"]
    assert counter[0].item() == G["state_list_final"]


def test_compile_trees_shapeless_and_errors():
    out = mx.compile(lambda d, k: {"a": d["x"] * k, "b": [d["y"] + 1]})(
        {"x": mx.array([1, 2]), "y": mx.array(3.5)}, 3)
    assert {"a": out["a"].tolist(), "b": [out["b"][0].item()]} == G["compile_tree"]
    f = mx.compile(lambda x: mx.exp(x) * 2, shapeless=True)
    for v, ref in zip(([0.5, 1.0], [0.5, 1.0, -1.0]), G["compiled_shapeless"]):
        np.testing.assert_allclose(f(mx.array(v)).tolist(), ref, rtol=1e-6)

    class Opaque:
        pass

    Opaque.__module__ = "golden"  # as in the generator
    _raises(lambda: mx.compile(lambda x: x)(Opaque()), G["compile_bad_arg"])
    _raises(lambda: mx.compile(lambda x, y=None: x)(mx.array(1), y=Opaque()), G["compile_bad_arg_kw"])
    with pytest.raises(TypeError):
        mx.compile(3)
    mx.disable_compile()
    try:
        assert mx.compile(lambda x: x + 1)(mx.array(1)).item() == 2
    finally:
        mx.enable_compile()


def test_distributed_one_process_group():
    g = mx.distributed.init()
    assert [g.rank(), g.size()] == G["dist_rank_size"]
    assert mx.distributed.is_available() is False  # no backend compiled in (MLX's CPU wheel has ring)
    x = mx.array([1.0, -2.0, 3.0])
    assert mx.distributed.all_sum(x).tolist() == G["dist_all_sum"]
    assert mx.distributed.all_gather(x).tolist() == G["dist_all_gather"]
    assert mx.distributed.all_max(x, group=g).tolist() == G["dist_all_max"]
    _raises(lambda: mx.distributed.init(strict=True), G["dist_strict"])
    _raises(lambda: mx.distributed.send(x, 0), G["dist_send"])
    _raises(lambda: mx.distributed.recv_like(x, 0), G["dist_recv_like"])
    _raises(lambda: g.split(0), G["dist_split"])


def test_device_info():
    info = mx.device_info()
    assert sorted(info) == G["device_info_keys"]
    assert info == mx.device_info(mx.cpu)
    with pytest.raises(ValueError):
        mx.device_info(mx.gpu)


def test_sharded_linear_layers_equal_the_unsharded_ones():
    """Over one process a sharded layer computes what the layer it was made from computes."""
    mx.random.seed(5)
    x = mx.random.normal((3, 64))
    lin = nn.Linear(64, 32)
    for sharding in ("all-to-sharded", "sharded-to-all"):
        s = shard_linear(lin, sharding)
        assert s.weight.shape == lin.weight.shape
        np.testing.assert_allclose(np.array(s(x)), np.array(lin(x)), rtol=1e-5, atol=1e-5)
    q = nn.QuantizedLinear.from_linear(lin, 32, 4)
    for sharding in ("all-to-sharded", "sharded-to-all"):
        s = shard_linear(q, sharding)
        np.testing.assert_allclose(np.array(s(x)), np.array(q(x)), rtol=1e-5, atol=1e-5)
    before = np.array(lin.weight)
    shard_inplace(lin, "all-to-sharded")
    np.testing.assert_array_equal(np.array(lin.weight), before)
    with pytest.raises(ValueError, match="not supported"):
        shard_linear(lin, "rows")
