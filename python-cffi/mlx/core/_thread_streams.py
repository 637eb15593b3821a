"""Streams bound to threads, as in MLX 0.32.4: a stream from ``mx.new_stream`` belongs to the
thread that made it. Recording an op on it from another thread raises (``Stream._stream_handle``),
and so does evaluating, on another thread, an array whose pending work is recorded on it:
``check_evaluable`` asks the C library which streams the pending graph uses
(``mlx_arm_pending_streams``) and raises MLX's RuntimeError for one that belongs elsewhere.

The check costs nothing until some thread other than the caller owns a stream.
"""
import threading

from ._ffi import check, ffi, lib

_OWNER = {}  # stream index -> (owning thread id, device name)
_OWNER_THREADS = set()


def bind(stream_index, device_name):
    """Binds the stream ``stream_index`` to the calling thread."""
    me = threading.get_ident()
    _OWNER[stream_index] = (me, device_name)
    _OWNER_THREADS.add(me)


def check_evaluable(handles):
    """Raises RuntimeError when evaluating the arrays ``handles`` (``mlx_array`` values) would
    run work recorded on another thread's stream."""
    if not _OWNER_THREADS:
        return
    me = threading.get_ident()
    if len(_OWNER_THREADS) == 1 and me in _OWNER_THREADS:
        return
    arr = ffi.new("mlx_array[]", list(handles))
    vec = lib.mlx_vector_array_new_data(arr, len(handles))
    res = ffi.new("mlx_vector_int*", lib.mlx_vector_int_new())
    try:
        check(lib.mlx_arm_pending_streams(res, vec))
        out = ffi.new("int*")
        for i in range(lib.mlx_vector_int_size(res[0])):
            check(lib.mlx_vector_int_get(out, res[0], i))
            owner = _OWNER.get(int(out[0]))
            if owner is not None and owner[0] != me:
                raise RuntimeError(f"There is no Stream({owner[1]}, {int(out[0])}) in current thread.")
    finally:
        lib.mlx_vector_array_free(vec)
        lib.mlx_vector_int_free(res[0])
