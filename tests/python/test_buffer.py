"""The buffer protocol of mx.array (``memoryview``, ``struct``, numpy through PEP 3118), checked
against numpy's buffers of the same data and real MLX 0.32's choices (format characters ``q``/``Q``,
``Zf`` and ``bfloat16``; strides in bytes with 0 on broadcast axes; writable)."""
import gc
import platform
import struct
import weakref

import numpy as np
import pytest

import mlx.core as mx

pytestmark = pytest.mark.skipif(platform.python_implementation() != "CPython",
                                reason="the buffer protocol needs CPython (see mlx/core/_buffer.py)")

CASES = [(mx.bool_, np.bool_), (mx.uint8, np.uint8), (mx.uint16, np.uint16), (mx.uint32, np.uint32),
         (mx.uint64, np.uint64), (mx.int8, np.int8), (mx.int16, np.int16), (mx.int32, np.int32),
         (mx.int64, np.int64), (mx.float16, np.float16), (mx.float32, np.float32),
         (mx.float64, np.float64), (mx.complex64, np.complex64)]
VIEWS = {"dense": lambda x: x, "T": lambda x: x.T, "step": lambda x: x[::2, 1:],
         "broadcast": lambda x: x[None] if isinstance(x, np.ndarray) else mx.expand_dims(x, 0)}


@pytest.mark.parametrize("view", VIEWS, ids=str)
@pytest.mark.parametrize("dt,npdt", CASES, ids=[str(c[0]) for c in CASES])
def test_memoryview_matches_numpy(dt, npdt, view):
    ref = (np.arange(12).reshape(3, 4) * 7 % 11).astype(npdt)
    if view == "broadcast":
        ref_v = np.broadcast_to(ref, (2, 3, 4))
        a_v = mx.broadcast_to(mx.array(ref, dt), (2, 3, 4))
    else:
        ref_v, a_v = VIEWS[view](ref), VIEWS[view](mx.array(ref, dt))
    m, want = memoryview(a_v), memoryview(ref_v)
    assert (m.shape, m.strides, m.itemsize, m.nbytes) == (want.shape, want.strides, want.itemsize, want.nbytes)
    expect_fmt = {np.int64: "q", np.uint64: "Q"}.get(npdt, want.format)  # numpy says l/L
    assert m.format == expect_fmt and not m.readonly
    assert m.c_contiguous == want.c_contiguous
    assert np.array_equal(np.array(m, copy=False), ref_v)
    assert m.tobytes() == want.tobytes()


def test_memoryview_bfloat16_and_struct():
    b = mx.array([[1.0, 2.0], [3.0, -4.0]], mx.bfloat16)
    m = memoryview(b)
    assert (m.format, m.strides, m.shape) == ("bfloat16", (4, 2), (2, 2))
    # bfloat16 is the high half of float32: 1.0 = 0x3f80
    assert m.tobytes()[:2] == b"\x80\x3f"
    with pytest.raises(ValueError, match="bfloat16"):
        np.array(b)
    assert struct.unpack_from("<3f", mx.array([1.5, 2.0, -3.25])) == (1.5, 2.0, -3.25)
    assert bytes(memoryview(mx.arange(4, dtype=mx.uint8).reshape(2, 2).T)) == b"\x00\x02\x01\x03"


def test_memoryview_writes_reach_the_array_and_keep_it_alive():
    a = mx.zeros((2, 3), mx.int32)  # dense memory, as MLX's Full gives
    m = memoryview(a)
    assert m.strides == (12, 4)
    m[1, 2] = 9
    assert a.tolist() == [[0, 0, 0], [0, 0, 9]]
    wr = weakref.ref(a)
    a = None
    gc.collect()
    assert wr() is not None and m.obj.array is wr()  # the buffer holds the array
    m.release()
    gc.collect()
    assert wr() is None


def test_buffer_survives_in_place_update():
    a = mx.array([1.0, 2.0, 3.0])
    m = memoryview(a)
    a += 1  # rebinds a's handle; the exported memory must stay valid
    gc.collect()
    assert m.tolist() == [1.0, 2.0, 3.0] and a.tolist() == [2.0, 3.0, 4.0]


def test_numpy_view_of_full_is_dense_and_writable():
    v = np.array(mx.ones((2, 2)), copy=False)
    assert v.strides == (8, 4) and v.flags.writeable and not v.flags.owndata
    b = np.array(mx.broadcast_to(mx.ones((2, 2)), (5, 2, 2)), copy=False)
    assert b.strides == (0, 8, 4) and np.array_equal(b, np.ones((5, 2, 2), np.float32))


def test_from_dlpack_keeps_strides():
    x = np.arange(12, dtype=np.float32).reshape(3, 4).T
    y = mx.from_dlpack(x)
    assert y.tolist() == x.tolist()
    assert memoryview(y).strides == x.strides and not memoryview(y).c_contiguous
    z = mx.from_dlpack(np.broadcast_to(np.array([7], np.int32), (3,)))
    assert z.tolist() == [7, 7, 7] and memoryview(z).strides == (0,)


def test_simple_buffer_consumers_get_dense_bytes():
    import hashlib

    t = mx.arange(6, dtype=mx.int32).reshape(2, 3).T  # not row-contiguous
    want = np.arange(6, dtype=np.int32).reshape(2, 3).T.copy().tobytes()
    assert hashlib.sha256(t).hexdigest() == hashlib.sha256(want).hexdigest()
