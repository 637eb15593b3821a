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


@pytest.fixture
def no_python_window(monkeypatch):
    """Fails the test if the Python resolution of a basic index runs (the one-call C entry
    point, mlx_arm_index_basic, must take it)."""
    from mlx.core import _basic_index

    if _basic_index._index is None:
        pytest.skip("this library build lacks mlx_arm_index_basic")

    def boom(*a, **k):
        raise AssertionError("basic index went through the Python window")
    monkeypatch.setattr(_basic_index, "basic_window", boom)
    monkeypatch.setattr(_basic_index, "getitem_int", boom)


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_one_c_call_matches_python_window(idx, no_python_window):
    """The C entry point's result equals numpy's (and so the Python window's, which the tests
    above check), for reading and for assignment of an array and of a scalar."""
    from mlx.core import _basic_index

    a = mx.array(REF)
    got = _basic_index.getitem(a, idx)
    assert got is not None and got.shape == REF[idx].shape and np.array_equal(np.array(got), REF[idx])
    a, n = mx.array(REF), REF.copy()
    shape = n[idx].shape
    v = (np.arange(int(np.prod(shape)), dtype=np.int32) - 1000).reshape(shape)
    a[idx] = mx.array(v)
    n[idx] = v
    assert np.array_equal(np.array(a), n)
    a[idx] = 3.0  # weak scalar, cast to int32
    n[idx] = 3
    assert a.dtype == mx.int32 and np.array_equal(np.array(a), n)


@pytest.mark.parametrize("idx", [5, -6, (0, 5), (0, 0, 0, 0), (Ellipsis, 0, Ellipsis), 2 ** 31, 2 ** 70,
                                 slice(0, 2 ** 33), slice(None, None, 0), (slice(-(2 ** 63), None),),
                                 True, (0, np.int64(1)), slice(np.int32(1), None)], ids=repr)
def test_one_c_call_refuses_what_it_must(idx):
    """Out of range, not 32-bit, too many entries, a zero step, non-int entries: the C call (or
    the encoder) refuses, leaving no error behind, so the general path gives MLX's result or error."""
    from mlx.core import _basic_index
    from mlx.core._ffi import ffi, lib

    a = mx.array(REF)
    assert _basic_index.getitem(a, idx) is None
    assert _basic_index.setitem(a, idx, 1) is False
    assert ffi.string(lib.mlx_arm_last_error()) == b""
    assert np.array_equal(np.array(a), REF)


def test_update_that_does_not_broadcast_leaves_the_array(no_python_window):
    from mlx.core import _basic_index

    a = mx.array(REF)
    assert _basic_index.setitem(a, (slice(None), slice(0, 2)), mx.zeros((3, 4), dtype=mx.int32)) is False
    assert np.array_equal(np.array(a), REF)


def test_cached_shape_follows_in_place_changes():
    """``a.shape`` is cached on the object; in-place operators that broadcast rebind the handle
    to a bigger node, and assignment keeps it: the shape read after each is the node's."""
    a = mx.array(np.ones((1, 3), np.float32))
    assert a.shape == (1, 3)
    a += mx.ones((2, 3))
    assert a.shape == (2, 3) and np.array(a).shape == (2, 3)
    a @= mx.ones((3, 5))
    assert a.shape == (2, 5)
    a[0] = 7
    assert a.shape == (2, 5) and np.array(a)[0, 0] == 7
    b = a[:, 1:3]
    assert b.shape == (2, 2) and b.shape is b.shape


def test_cached_dtype_follows_in_place_changes():
    """``a.dtype`` is cached too; an in-place operator that promotes rebinds to a node of
    another dtype (int32 += 1.5 gives float32, as MLX), and the dtype read after it is the node's."""
    a = mx.array([1, 2, 3])
    assert a.dtype == mx.int32
    a += 1.5
    assert a.dtype == mx.float32 and np.array(a).dtype == np.float32
    assert np.array_equal(np.array(a), np.array([2.5, 3.5, 4.5], np.float32))
    a[0] = 7  # assignment keeps the dtype
    assert a.dtype == mx.float32 and a.tolist() == [7.0, 3.5, 4.5]
