"""A name real MLX has and mlx-arm does not provide yet: the error is both an AttributeError
(so ``hasattr`` is False and ``getattr`` with a default returns it) and a
NotImplementedError naming the missing function (issue 20)."""
import mlx.core as mx
import mlx.nn as nn
import pytest

# Names of real MLX 0.32 that mlx-arm does not provide (each checked below to be missing).
MISSING = [(mx.fast, "cuda_kernel", "mlx.core.fast.cuda_kernel"), (nn, "fully_shard", "mlx.nn.fully_shard")]


@pytest.mark.parametrize("module,name,full", MISSING)
def test_missing_name_is_absent_and_not_implemented(module, name, full):
    assert not hasattr(module, name)
    sentinel = object()
    assert getattr(module, name, sentinel) is sentinel
    with pytest.raises(NotImplementedError, match=full):
        getattr(module, name)
    with pytest.raises(AttributeError):
        getattr(module, name)


def test_missing_submodule_name():
    """A submodule's (mx.random, mx.linalg …) missing MLX name behaves the same."""
    from mlx.core._names import MLX_NAMES

    subs = {"random": mx.random, "linalg": mx.linalg, "fast": mx.fast, "fft": mx.fft}
    missing = sorted(q for q in MLX_NAMES if q.count(".") == 2 and q.split(".")[1] in subs
                     and q.split(".")[2] not in vars(subs[q.split(".")[1]]))
    if not missing:
        pytest.skip("every MLX name of the submodules is provided")
    _, sub, attr = missing[0].split(".")
    assert not hasattr(subs[sub], attr)
    with pytest.raises(NotImplementedError, match=f"mlx.core.{sub}.{attr}"):
        getattr(subs[sub], attr)


def test_unknown_name_is_a_plain_attribute_error():
    with pytest.raises(AttributeError) as info:
        mx.no_such_function_anywhere
    assert not isinstance(info.value, NotImplementedError)


def test_one_class_for_both_modules():
    errors = []
    for module, name, _ in MISSING:
        try:
            getattr(module, name)
        except AttributeError as e:
            errors.append(type(e))
    assert len(set(errors)) == 1 and issubclass(errors[0], NotImplementedError)
