"""The basic-index fast path (ints, slices, None, ...; one mlx_slice / mlx_slice_update) against
numpy, on systematic and edge-case indices, for reading and assignment; and the proof that it is
taken (the per-element positions code is never called for such indices)."""
import itertools

import numpy as np
import pytest

import mlx.core as mx
from mlx.core import _indexing

REF = np.arange(2 * 5 * 4, dtype=np.int32).reshape(2, 5, 4) * 3 - 50

SLICES = [slice(None), slice(1, 4), slice(None, None, -1), slice(-1, -5, -2), slice(4, 0, -1), slice(-2, None),
          slice(7, 2), slice(-10, -20, -1), slice(None, -9), slice(0, 100, 3), slice(None, None, -3)]
INTS = [0, -1, 2, -4]


def _indices():
    for s in SLICES:
        yield s
        yield (Ellipsis, s)
        yield (s, None, Ellipsis)
        yield (Ellipsis, s, slice(None))
    for i, s in itertools.product(INTS[:3], SLICES[:6]):
        yield (0 if i == 2 else i, s)
        yield (s, i)
        yield (None, i % 2, s, None)
        yield (Ellipsis, i, None)
    yield ()
    yield Ellipsis
    yield None
    yield (None, Ellipsis, None)
    yield (1, 2, 3)
    yield (-2, -5, -4)
    yield (slice(None, None, -1), slice(None, None, -1), slice(None, None, -1))


INDICES = list(_indices())


@pytest.fixture
def no_positions(monkeypatch):
    """Fails the test if the general (per-element) path runs."""
    def boom(*a, **k):
        raise AssertionError("basic index went through positions()")
    monkeypatch.setattr(_indexing, "positions", boom)


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem_basic_matches_numpy(idx, no_positions):
    a = mx.array(REF)
    got = a[idx]
    want = REF[idx]
    assert got.shape == want.shape and got.dtype == mx.int32
    assert np.array_equal(np.array(got), want)
    assert got is not a


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_setitem_basic_matches_numpy(idx, no_positions):
    a, n = mx.array(REF), REF.copy()
    shape = n[idx].shape
    v = (np.arange(int(np.prod(shape)), dtype=np.int32) + 1000).reshape(shape)
    a[idx] = mx.array(v)
    n[idx] = v
    assert np.array_equal(np.array(a), n)
    # a scalar (weakly typed: stays int32)
    a, n = mx.array(REF), REF.copy()
    a[idx] = 7
    n[idx] = 7
    assert a.dtype == mx.int32 and np.array_equal(np.array(a), n)


def test_setitem_broadcasting(no_positions):
    cases = [((Ellipsis, slice(1, 3), slice(None)), np.arange(4, dtype=np.int32)),  # row broadcast
             ((slice(None), slice(0, 5, 2)), np.arange(3, dtype=np.int32).reshape(3, 1)),  # column broadcast
             ((0,), np.ones((1, 1, 5, 4), np.int32)),  # leading 1s dropped (MLX and numpy)
             ((None, 1), np.full((1, 5, 1), 9, np.int32)),  # the None axis of a[idx]
             ((1, None, slice(None, None, -1), 2), np.array([[1, 2, 3, 4, 5]], np.int32))]
    for idx, v in cases:
        a, n = mx.array(REF), REF.copy()
        a[idx] = mx.array(v)
        n[idx] = v
        assert np.array_equal(np.array(a), n), idx


def test_setitem_dtype_casting(no_positions):
    f = np.linspace(-2, 2, 40, dtype=np.float32).reshape(2, 5, 4)
    # float array into an int array: cast (truncation) like numpy's unsafe cast
    a, n = mx.array(REF), REF.copy()
    a[:, 1:3] = mx.array(f[:, :2])
    n[:, 1:3] = f[:, :2].astype(np.int32)
    assert a.dtype == mx.int32 and np.array_equal(np.array(a), n)
    # a Python float into float16 stays float16; an int array into float32 is converted
    h = mx.array(f.astype(np.float16))
    h[0, ::2] = 1.5
    assert h.dtype == mx.float16 and np.all(np.array(h)[0, ::2] == 1.5)
    g = mx.array(f)
    g[..., -1] = mx.array([1, 2, 3, 4, 5])
    want = f.copy()
    want[..., -1] = [1, 2, 3, 4, 5]
    assert g.dtype == mx.float32 and np.array_equal(np.array(g), want)
    # bool into int, and a Python float into an int array (MLX casts: 2.7 → 2)
    b = mx.array(REF)
    b[1] = True
    b[0, 0] = 2.7
    want = REF.copy()
    want[1] = 1
    want[0, 0] = 2
    assert b.dtype == mx.int32 and np.array_equal(np.array(b), want)


def test_setitem_empty_window_and_aliasing(no_positions):
    a = mx.array(REF)
    a[5:2] = mx.array(np.zeros((5, 4), np.int32))  # empty window: no-op
    assert np.array_equal(np.array(a), REF)
    with pytest.raises(ValueError, match="cannot be broadcast"):  # but the shapes are checked (MLX)
        a[5:2] = mx.array(np.zeros((7, 7), np.int32))
    view = a[:, 1:3]
    a[:, 1:3] = 0  # results read earlier are unaffected (arrays are values)
    assert np.array_equal(np.array(view), REF[:, 1:3])
    a[:, 1:] = a[:, :-1]  # reads the old contents
    n = REF.copy()
    n[:, 1:3] = 0
    n[:, 1:] = n[:, :-1].copy()
    assert np.array_equal(np.array(a), n)


def test_zero_d():
    z = mx.array(5.0)
    assert z[()].item() == 5.0 and z[...].item() == 5.0 and z[None].shape == (1,)
    z[...] = 2
    assert z.item() == 2.0 and z.dtype == mx.float32
    with pytest.raises(ValueError):
        z[0]


@pytest.mark.parametrize("idx", [5, -6, (0, 5), (Ellipsis, 4), (1, 1, -5)], ids=repr)
def test_out_of_range_int_raises_index_error(idx):
    a = mx.array(REF)
    with pytest.raises(IndexError, match="out of bounds"):
        a[idx]
    with pytest.raises(IndexError, match="out of bounds"):
        a[idx] = 1


@pytest.mark.parametrize("idx", [(0, 0, 0, 0), (Ellipsis, 0, Ellipsis), 2 ** 31, slice(0, 2 ** 33), slice(None, None, 0)],
                         ids=repr)
def test_bad_basic_index_raises_value_error(idx):
    a = mx.array(REF)
    with pytest.raises(ValueError):
        a[idx]
    with pytest.raises(ValueError):
        a[idx] = 1


def test_setitem_broadcast_failure_raises():
    a = mx.array(REF)
    with pytest.raises(ValueError, match=r"Shapes \(3,4\) and \(2,2,4\) cannot be broadcast"):  # real MLX's text
        a[:, 0:2] = mx.zeros((3, 4), dtype=mx.int32)
    with pytest.raises(ValueError, match=r"Cannot broadcast array of shape \(2,5,4\) into shape \(1,5,4\)"):
        a[0] = mx.zeros((2, 5, 4), dtype=mx.int32)  # extra non-1 leading dim
    with pytest.raises(ValueError):
        a[None, 1] = mx.zeros((7, 7), dtype=mx.int32)
    assert np.array_equal(np.array(a), REF)


def test_numpy_scalar_indices_still_work():
    a, n = mx.array(REF), REF.copy()
    assert np.array_equal(np.array(a[np.int64(1), np.int32(-1)]), REF[1, -1])
    a[np.int64(1), 2:] = 4
    n[1, 2:] = 4
    assert np.array_equal(np.array(a), n)


def test_kv_cache_pattern(no_positions):
    """mlx-lm's KVCache: grow a (B, H, T, D) buffer by slice assignment, read the prefix back."""
    keys = mx.zeros((1, 2, 8, 3))
    ref = np.zeros((1, 2, 8, 3), np.float32)
    off = 0
    for step in range(5):
        t = 2 if step == 0 else 1
        k = np.random.default_rng(step).normal(size=(1, 2, t, 3)).astype(np.float32)
        keys[..., off:off + t, :] = mx.array(k)
        ref[..., off:off + t, :] = k
        off += t
        assert np.array_equal(np.array(keys[..., :off, :]), ref[..., :off, :])
