"""Array protocols and runtime objects of mlx-arm's mlx.core, checked against numpy (values,
dtypes, memory sharing) and against real MLX's documented behaviour: pickling, numpy
conversion (copy vs zero-copy), DLPack both ways, streams, printoptions, mlx.arm."""
import copy
import gc
import pickle

import numpy as np
import pytest

import mlx.core as mx

DTYPES = [mx.bool_, mx.uint8, mx.uint16, mx.uint32, mx.uint64, mx.int8, mx.int16, mx.int32, mx.int64,
          mx.float16, mx.float32, mx.complex64]


@pytest.mark.parametrize("dt", DTYPES + [mx.bfloat16, mx.float64], ids=str)
def test_pickle_round_trip(dt):
    a = mx.array([[1, 0, 3], [4, 5, 6]], dt)
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == dt and b.shape == (2, 3)
    assert a.astype(mx.float32).tolist() == b.astype(mx.float32).tolist()


def test_pickle_scalar_and_empty():
    for a in (mx.array(3.5), mx.zeros((0, 2), mx.int16)):
        b = pickle.loads(pickle.dumps(a))
        assert (b.shape, b.dtype, b.tolist()) == (a.shape, a.dtype, a.tolist())
    c = copy.deepcopy(mx.array([1, 2]))
    assert c.tolist() == [1, 2]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_numpy_conversion_values(dt):
    ref = np.array([[1, 0, 3], [4, 5, 6]]).astype(dt.name if dt != mx.bool_ else "bool")
    a = mx.array(ref)
    assert a.dtype == dt
    out = np.array(a)
    assert out.dtype == ref.dtype and np.array_equal(out, ref)


def test_numpy_copy_semantics():
    a = mx.ones((2, 2))  # dense memory, as MLX's Full gives
    assert np.array(a).flags.owndata  # np.array copies, as in MLX
    v = np.array(a, copy=False)  # shares the array's memory
    assert not v.flags.owndata and v.flags.writeable
    v[0, 0] = 7.0
    assert a[0, 0].item() == 7.0
    a += 1  # rebinding the handle must not free the memory numpy still views
    gc.collect()
    assert v[0, 0] == 7.0 and a[0, 0].item() == 8.0
    b = mx.broadcast_to(mx.array([1.0, 2.0]), (3, 2))
    assert np.array_equal(np.asarray(b), np.broadcast_to(np.array([1.0, 2.0], np.float32), (3, 2)))
    with pytest.raises(ValueError):
        np.array(mx.array([1.0], mx.bfloat16))


def test_dlpack_export_to_numpy():
    x = mx.arange(16).reshape(4, 4)[::2, ::2]
    y = np.from_dlpack(x)
    assert y.dtype == np.int32 and y.tolist() == [[0, 2], [8, 10]]
    del x
    gc.collect()
    assert y.tolist() == [[0, 2], [8, 10]]  # the capsule keeps the memory alive
    for dt in DTYPES:
        z = np.from_dlpack(mx.ones((3,), dt))
        assert z.dtype == np.dtype(dt.name if dt != mx.bool_ else "bool")
    from mlx.core import _dlpack

    del y, z
    gc.collect()
    cap = mx.array([1.0]).__dlpack__()  # never consumed: released with the capsule
    del cap
    gc.collect()
    assert not _dlpack._LIVE


def test_from_dlpack():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert mx.from_dlpack(x.T).tolist() == x.T.tolist()
    assert mx.from_dlpack(np.arange(20, dtype=np.int32)[2:10:2]).tolist() == [2, 4, 6, 8]
    assert mx.from_dlpack(np.broadcast_to(np.array([7], np.int32), (3,))).tolist() == [7, 7, 7]
    for src, want in ((np.float64, mx.float32), (np.complex128, mx.complex64), (np.bool_, mx.bool_),
                      (np.uint16, mx.uint16), (np.float16, mx.float16)):
        assert mx.from_dlpack(np.ones(3, src)).dtype == want
    y = mx.from_dlpack(x, copy=True)
    x += 10
    assert y[0].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        mx.from_dlpack(np.arange(5.0)[::-1])
    with pytest.raises(ValueError):
        mx.from_dlpack(x, copy=False)


def test_streams():
    s = mx.new_stream(mx.cpu)
    assert s.device == mx.Device(mx.cpu) and s != mx.default_stream(mx.cpu)
    a = mx.array([1, 2])
    with mx.stream(s):
        b = a + 1
    assert b.tolist() == [2, 3]
    assert mx.add(a, 1, stream=s).tolist() == [2, 3]
    mx.synchronize(s)
    mx.synchronize()
    with pytest.raises(ValueError):
        with mx.stream(mx.gpu):
            pass
    assert mx.default_stream(mx.cpu) == mx.Stream(mx.Device(mx.cpu), 0)


# What real MLX 0.32.4 prints at these precisions (taken from it; C++'s std::fixed, ties to even).
_PRINTED = [
    ("mx.array([1.123456789, -0.0, 1e-9, 12345.678], mx.float32)", 3, "array([1.123, -0.000, 0.000, 12345.678], dtype=float32)"),
    ("mx.array([[1.5, 2.25]], mx.float16)", 1, "array([[1.5, 2.2]], dtype=float16)"),
    ("mx.array([1+2j, 3-4.5j], mx.complex64)", 2, "array([1.00+2.00j, 3.00-4.50j], dtype=complex64)"),
    ('mx.array([float("nan"), float("inf")])', 2, "array([nan, inf], dtype=float32)"),
    ("mx.array([1, 2], mx.int32)", 2, "array([1, 2], dtype=int32)"),
    ("mx.array([0.5], mx.float32)", 0, "array([0], dtype=float32)"),
]


def test_printoptions():
    assert mx.get_printoptions().precision == -1
    with mx.printoptions():
        assert repr(mx.array([1.5])) == "array([1.5], dtype=float32)"
    for expr, p, want in _PRINTED:
        with mx.printoptions(precision=p):
            assert mx.get_printoptions().precision == p
            assert repr(eval(expr)) == want
    assert mx.get_printoptions().precision == -1
    assert repr(mx.array([1.123456789])) == "array([1.12346], dtype=float32)"
    mx.set_printoptions(precision=2)
    try:
        assert str(mx.array([0.9016])) == "array([0.90], dtype=float32)"
    finally:
        mx.set_printoptions()
    with pytest.raises(ValueError):
        mx.set_printoptions(precision=-2)


def test_mlx_arm_platform_info():
    import platform

    import mlx.arm

    info = mlx.arm.platform_info()
    assert info["version"] == mx.__mlx_arm_version__
    assert info["arch"] in (platform.machine(), {"arm64": "aarch64", "AMD64": "x86_64"}.get(platform.machine()))
    assert "cpu" in info["backends"] and info["cpu_cores"] >= 1
    assert isinstance(info["cpu_features"], list) and info["gpu_name"] is None
    for f, args in ((mlx.arm.set_opencl_platform, (0,)), (mlx.arm.enable_kernel_cache, ("/tmp/k",)),
                    (mlx.arm.set_shared_memory_mode, ("host",))):
        with pytest.raises(RuntimeError, match="no GPU backend"):
            f(*args)
    with pytest.raises(ValueError):
        mlx.arm.set_shared_memory_mode("nope")


def test_version_is_mlx_s():
    """``mx.__version__`` is the MLX version the API matches (real MLX's own ``__version__``,
    recorded from the oracle in _signatures.json), as mlx-c's ``mlx_version`` (issue 20)."""
    import json
    import os

    import mlx.core as core

    with open(os.path.join(os.path.dirname(core.__file__), "_signatures.json"), encoding="utf-8") as f:
        assert mx.__version__ == json.load(f)["mlx_version"]
    assert mx.__mlx_arm_version__ != mx.__version__


def test_setitem_matches_numpy():
    rng = np.random.default_rng(0)
    ref = rng.integers(0, 100, (4, 5, 3)).astype(np.int32)
    cases = [(1, 0), ((slice(None), 2), -1), ((np.array([0, 3]), slice(1, 4), 0), 9),
             ((Ellipsis, np.array([2, 0])), 5), ((np.array([1, 2]), np.array([0, 4])), 8),
             ((slice(None, None, -2), None, 1), 3), (ref > 50, 0)]
    for idx, v in cases:
        a = mx.array(ref)
        n = ref.copy()
        a[idx] = v
        n[idx] = v
        assert np.array_equal(np.array(a), n), idx


def test_getitem_matches_numpy():
    ref = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    a = mx.array(ref)
    for idx in [(np.array([0, 2]), np.array([1, 3])), (slice(None), np.array([0, 3]), np.array([[1], [4]])),
                (np.array([2, 0]), slice(1, 3), np.array([4, 0])), (np.array([1]), None, np.array([2, 3]), 0)]:
        assert np.array_equal(np.array(a[idx]), ref[idx]), idx


def test_array_api_aliases_are_mlx_functions():
    # Real MLX 0.32: the aliases are the same function objects.
    assert mx.cumulative_sum is mx.cumsum and mx.cumulative_prod is mx.cumprod
    assert mx.matrix_norm is mx.linalg.norm
    a = mx.array([6.0, 3.0])
    assert a.__div__(2).tolist() == [3.0, 1.5] and a.__rdiv__(3).tolist() == [0.5, 1.0]


def test_array_iterator_and_array_like():
    it = iter(mx.array([[1, 2], [3, 4]]))
    assert isinstance(it, mx.ArrayIterator) and iter(it) is it
    assert [r.tolist() for r in it] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError):
        mx.ArrayIterator(mx.array([1]))

    class HasMlxArray:
        def __mlx_array__(self):
            return mx.array([5, 6])

    wrapped = mx.ArrayLike(HasMlxArray())
    assert mx.array(wrapped).tolist() == [5, 6] and mx.add(wrapped, 1).tolist() == [6, 7]


def test_thread_local_stream_is_one_stream_per_thread():
    import threading

    a, b = mx.new_thread_local_stream(mx.cpu), mx.new_thread_local_stream(mx.cpu)
    # MLX's repr: ThreadLocalStream(Device(cpu, 0), <n>), numbered in creation order
    assert repr(a).startswith("ThreadLocalStream(Device(cpu, 0), ") and a != b
    assert int(repr(b)[:-1].rsplit(" ", 1)[1]) == int(repr(a)[:-1].rsplit(" ", 1)[1]) + 1
    assert mx.add(mx.array(1), 2, stream=a).item() == 3
    seen = {}

    def work(k):
        with mx.stream(a):
            seen[k] = (a._stream(), mx.add(mx.array(k), 1).item())

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [seen[k][1] for k in range(3)] == [1, 2, 3]
    streams = {id(seen[k][0]) for k in range(3)} | {id(a._stream())}
    assert len(streams) == 4  # each thread had a stream of its own
    assert isinstance(mx.new_thread_unsafe_stream(mx.cpu), mx.Stream)
