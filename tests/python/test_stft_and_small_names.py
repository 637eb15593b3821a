"""MLX names added for issue 20: ``fft.stft``/``fft.istft`` against real MLX 0.32.4's results
(golden/fft/, made by gen_stft.py with the oracle), and ``empty``, ``positive``, ``minmax``,
``matrix_transpose`` against numpy and the results real MLX gave (quoted in each test)."""
import json
import os
import sys

import numpy as np
import pytest

import mlx.core as mx

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "fft")
sys.path.insert(0, GOLDEN)
import stft_cases as C  # noqa: E402

REF = np.load(os.path.join(GOLDEN, "stft.npz"))
with open(os.path.join(GOLDEN, "stft.json")) as f:
    ERR = json.load(f)


def _close(ours, ref):
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())))


@pytest.mark.parametrize("name", sorted(C.STFT))
def test_stft_equals_real_mlx(name):
    shape, dtype, seed, kw = C.STFT[name]
    got = mx.fft.stft(mx.array(C.signal(shape, dtype, seed)), **C.window_kwargs(kw, mx.array))
    assert got.dtype == mx.complex64
    _close(np.array(got), REF[f"stft_{name}"])


@pytest.mark.parametrize("name", sorted(C.ISTFT))
def test_istft_equals_real_mlx(name):
    _, _, ikw = C.ISTFT[name]
    got = mx.fft.istft(mx.array(REF[f"istft_in_{name}"]), **C.window_kwargs(ikw, mx.array))
    assert got.dtype == mx.float32
    _close(np.array(got), REF[f"istft_{name}"])


def test_istft_inverts_stft():
    x = C.signal((2, 64), "float32", 40)
    w = mx.array(C.hann(16))
    back = mx.fft.istft(mx.fft.stft(mx.array(x), n_fft=16, hop_length=4, window=w), hop_length=4, window=w, length=64)
    np.testing.assert_allclose(np.array(back), x, atol=1e-5)


@pytest.mark.parametrize("name", sorted(ERR["errors"]))
def test_stft_errors_as_real_mlx(name):
    fn, spec, kw = C.ERRORS[name]
    cls, msg = ERR["errors"][name]
    x = mx.array(1.0) if spec is None else mx.array(C.signal(*spec))
    assert cls == "ValueError"  # every case: real MLX raises ValueError
    with pytest.raises(ValueError) as e:
        getattr(mx.fft, fn)(x, **kw)
    if name != "bad_pad_mode":  # that message is mx.pad's own
        assert str(e.value) == msg


def test_empty_is_zeros():
    a = mx.empty((2, 3))
    assert a.dtype == mx.float32 and a.shape == (2, 3)
    assert mx.empty(3, dtype=mx.int32).tolist() == [0, 0, 0]  # real MLX: array([0, 0, 0], dtype=int32)
    assert mx.empty([0, 2], mx.bool_).shape == (0, 2)


def test_positive():
    assert mx.positive(mx.array([1, -2])).tolist() == [1, -2]
    assert mx.positive(mx.array([True])).dtype == mx.bool_
    assert mx.positive(mx.array([1 + 2j])).tolist() == [1 + 2j]
    with pytest.raises(TypeError, match="incompatible function arguments"):  # as MLX: arrays only
        mx.positive(3)


def test_minmax():
    x = np.array([[3.0, 1.0], [5.0, -2.0]], np.float32)
    lo, hi = mx.minmax(mx.array(x))
    assert (lo.item(), hi.item()) == (-2.0, 5.0)
    lo, hi = mx.minmax(mx.array(x), axis=1, keepdims=True)
    np.testing.assert_array_equal(np.array(lo), x.min(axis=1, keepdims=True))
    np.testing.assert_array_equal(np.array(hi), x.max(axis=1, keepdims=True))
    u = mx.array([[1, 2], [3, 0]], mx.uint8)
    assert [v.tolist() for v in mx.minmax(u, 0)] == [[1, 0], [3, 2]] and mx.minmax(u)[0].dtype == mx.uint8
    assert all(np.isnan(v.item()) for v in mx.minmax(mx.array([1.0, float("nan")])))
    with pytest.raises(ValueError):  # real MLX: "[min] Cannot min reduce over axis 0 with size 0."
        mx.minmax(mx.array([], mx.float32))


def test_matrix_transpose():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.array(mx.matrix_transpose(mx.array(x))), np.swapaxes(x, -1, -2))
    with pytest.raises(ValueError, match=r"\[matrix_transpose\] Input array must have at least 2 dimensions."):
        mx.matrix_transpose(mx.array(1))
    with pytest.raises(TypeError):
        mx.matrix_transpose([[1, 2]])


def test_metal_memory_aliases_forward_with_mlx_notice(capfd):
    """MLX 0.32 keeps mx.metal.<memory function> as deprecated aliases on every build: the first
    call of each prints "mx.metal.clear_cache is deprecated ... Use mx.clear_cache instead." to
    stderr (once per process, as real MLX), then forwards to mx.<function>."""
    assert mx.metal.get_peak_memory() == mx.get_peak_memory()
    prev = mx.metal.set_cache_limit(12345)
    assert mx.set_cache_limit(prev) == 12345
    capfd.readouterr()
    mx.metal.clear_cache()
    mx.metal.clear_cache()
    err = capfd.readouterr().err
    notice = "mx.metal.clear_cache is deprecated and will be removed in a future version. Use mx.clear_cache instead."
    assert err.count(notice) == 1
