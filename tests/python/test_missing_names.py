"""A name real MLX has and mlx-arm does not provide yet: the error is both an AttributeError
(so ``hasattr`` is False and ``getattr`` with a default returns it) and a
NotImplementedError naming the missing function (issue 20).

Every name of real MLX 0.32.4's ``mlx.core`` and its submodules is provided now (py29 added
``mx.fast.cuda_kernel`` / ``precompiled_cuda_kernel``; ``test_every_core_name_is_provided``), and
``mlx.nn``'s last two (``fully_shard`` / ``FullyShardedModule``, py30), so the mechanism is checked
on names added to the known MLX names for the test."""
import mlx.core as mx
import mlx.nn as nn
import pytest

from mlx.core import _names


@pytest.fixture
def fake_names(monkeypatch):
    """Pretends real MLX has ``mx.zz_not_here`` and ``mx.fast.zz_not_here`` (absent here)."""
    monkeypatch.setattr(_names, "MLX_NAMES", _names.MLX_NAMES | {"mx.zz_not_here", "mx.fast.zz_not_here"})


def _absent(module, name, full):
    assert not hasattr(module, name)
    sentinel = object()
    assert getattr(module, name, sentinel) is sentinel
    with pytest.raises(NotImplementedError, match=full):
        getattr(module, name)
    with pytest.raises(AttributeError):
        getattr(module, name)


def test_nn_names_of_fully_sharded_data_parallelism_are_provided():
    # Their behaviour: test_nn.py::test_fully_shard_* against real MLX's goldens.
    assert callable(nn.fully_shard) and issubclass(nn.FullyShardedModule, nn.Module)
    assert nn.layers.fully_shard is nn.fully_shard


def test_missing_core_name_is_absent_and_not_implemented(fake_names):
    _absent(mx, "zz_not_here", "mlx.core.zz_not_here")


def test_missing_submodule_name(fake_names):
    """A submodule's (mx.random, mx.linalg, mx.fast …) missing MLX name behaves the same."""
    _absent(mx.fast, "zz_not_here", "mlx.core.fast.zz_not_here")


def test_every_core_name_is_provided():
    """docs/mlx_api_names.txt (real MLX 0.32.4's names): every function and submodule of
    ``mlx.core`` and of its submodules resolves here (members of classes aside)."""
    subs = {"random", "linalg", "fast", "fft", "distributed", "metal", "cuda"}
    missing = []
    for q in sorted(_names.MLX_NAMES):
        parts = q.split(".")[1:]
        if len(parts) == 2 and parts[0] not in subs:
            continue  # a class member (mx.array.T …): test_registry_names' business
        obj = mx
        for p in parts:
            if not hasattr(obj, p):
                missing.append(q)
                break
            obj = getattr(obj, p)
    assert not missing


def test_unknown_name_is_a_plain_attribute_error():
    with pytest.raises(AttributeError) as info:
        mx.no_such_function_anywhere
    assert not isinstance(info.value, NotImplementedError)


def test_one_class_for_both_modules(fake_names):
    errors = []
    for module, name in ((mx, "zz_not_here"), (mx.fast, "zz_not_here")):
        try:
            getattr(module, name)
        except AttributeError as e:
            errors.append(type(e))
    assert len(set(errors)) == 1 and issubclass(errors[0], NotImplementedError)
