"""Devices, streams, evaluation and memory statistics (``mx.cpu``, ``mx.eval`` …)."""
import enum
import itertools
import threading

from . import _thread_streams
from ._array import _IMPORTING_THREAD, _Ctx, array, sync_stream
from ._ffi import check, ffi, lib


class DeviceType(enum.Enum):
    cpu = 0
    gpu = 1

    def __repr__(self):
        return f"DeviceType.{self.name}"

    __str__ = __repr__


cpu = DeviceType.cpu
gpu = DeviceType.gpu


class Device:
    """A device to run operations on: ``Device(mx.cpu, 0)``."""

    def __init__(self, type, index=0):
        if not isinstance(type, DeviceType):
            raise TypeError(f"Device type must be mlx.core.DeviceType, got {type!r}")
        self.type, self.index = type, index

    def __repr__(self):
        return f"Device({self.type.name}, {self.index})"

    def __eq__(self, other):
        if isinstance(other, DeviceType):
            other = Device(other)
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def _c(self):
        d = lib.mlx_device_new_type(self.type.value, self.index)
        if d.ctx == ffi.NULL:
            from ._ffi import error

            raise error()
        return ffi.gc(ffi.new("mlx_device*", d), lambda p: lib.mlx_device_free(p[0]))

    def _stream_handle(self):
        return default_stream(self)._stream_handle()


class Stream:
    """A stream of a device (``mx.new_stream(mx.cpu)``, ``mx.default_stream(mx.cpu)``).

    Holds a C stream handle; ops given ``stream=`` record on it."""

    def __init__(self, device, index=0, _handle=None):
        self.device, self.index = _as_device(device), index
        self._h = _handle
        self._owner = None  # the thread of an mx.new_stream stream (None: any thread)

    def __repr__(self):
        return f"Stream({self.device!r}, {self.index})"

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device, self.index) == (other.device, other.index)

    def __hash__(self):
        return hash((self.device, self.index))

    def _stream_handle(self):
        if self._owner is not None and self._owner != threading.get_ident():
            # As MLX 0.32.4: mx.new_stream's streams are thread-local (new_thread_unsafe_stream's are not).
            raise RuntimeError(f"There is no {self!r} in current thread.")
        if self._h is None:
            if self.device.type != DeviceType.cpu:
                raise ValueError("[stream] No GPU backend is available in this build of mlx-arm.")
            if self.index != 0:
                raise ValueError(f"[stream] Unknown stream {self!r}.")
            return _Ctx.stream
        return self._h[0]


def _wrap_stream(h):
    """A Stream owning the C handle ``h``."""
    if h.ctx == ffi.NULL:
        from ._ffi import error

        raise error()
    t, i, idx = ffi.new("mlx_device_type*"), ffi.new("int*"), ffi.new("int*")
    d = ffi.new("mlx_device*")
    check(lib.mlx_stream_get_device(d, h))
    try:
        check(lib.mlx_device_get_type(t, d[0]))
        check(lib.mlx_device_get_index(i, d[0]))
    finally:
        lib.mlx_device_free(d[0])
    check(lib.mlx_stream_get_index(idx, h))
    owner = ffi.gc(ffi.new("mlx_stream*", h), lambda p: lib.mlx_stream_free(p[0]))
    return Stream(Device(DeviceType(int(t[0])), int(i[0])), int(idx[0]), owner)


def new_stream(device):
    """A new stream on ``device``."""
    s = _new_any_thread_stream(device)
    s._owner = threading.get_ident()
    _thread_streams.bind(s.index, s.device.type.name)
    return s


def _new_any_thread_stream(device):
    d = _as_device(device)._c()
    return _wrap_stream(lib.mlx_stream_new_device(d[0]))


def new_thread_unsafe_stream(device):
    """A new stream on ``device`` that any thread may use (work is recorded per call and
    evaluated in order); ``new_stream``'s belong to the thread that made them, as in MLX."""
    return _new_any_thread_stream(device)


class ThreadLocalStream:
    """``mx.new_thread_local_stream(device)``: one name for a stream per thread — each thread
    that records work on it gets a stream of its own on ``device``, made on first use."""

    _made = itertools.count()

    def __init__(self, device):
        self._device = _as_device(device)
        self._index = next(ThreadLocalStream._made)
        self._local = threading.local()

    @property
    def device(self):
        """The device every thread's stream is on."""
        return self._device

    def __repr__(self):
        return f"ThreadLocalStream({self.device!r}, {self._index})"

    def _stream(self):
        s = getattr(self._local, "stream", None)
        if s is None:
            s = self._local.stream = new_stream(self.device)
        return s

    def _stream_handle(self):
        return self._stream()._stream_handle()


def new_thread_local_stream(device):
    """A ThreadLocalStream on ``device``."""
    return ThreadLocalStream(device)


def _current():
    """The Stream ops use when given none."""
    return _Ctx.current


def set_default_stream(stream):
    """Makes ``stream`` the stream ops use by default (and its device the default device)."""
    if not isinstance(stream, Stream):
        raise TypeError(f"set_default_stream(): expected a Stream, got {type(stream).__name__}")
    h = stream._stream_handle()
    if threading.get_ident() == _IMPORTING_THREAD:
        # The C library's default stream is process-wide: only the thread that imported mlx
        # (whose ops record on the C default) may move it; other threads keep their own.
        check(lib.mlx_set_default_stream(h))
    _Ctx.stream, _Ctx.current = h, stream
    sync_stream()


class StreamContext:
    """``with mx.stream(s):`` — ops inside use ``s`` (a Stream, Device or DeviceType)."""

    def __init__(self, s):
        if isinstance(s, ThreadLocalStream):
            s = s._stream()
        self._s = s if isinstance(s, Stream) else default_stream(s)
        self._saved = None

    def __enter__(self):
        h = self._s._stream_handle()  # raises for a device without a backend
        self._saved = (_Ctx.stream, _Ctx.current)
        _Ctx.stream, _Ctx.current = h, self._s
        sync_stream()
        return self

    def __exit__(self, *exc):
        _Ctx.stream, _Ctx.current = self._saved
        sync_stream()
        return False


def stream(s):
    """A context manager making ``s`` the default stream inside its block."""
    return StreamContext(s)


def clear_streams():
    """Forgets streams made by new_stream (they are freed with their last Python reference)."""


def _as_device(d):
    if isinstance(d, DeviceType):
        return Device(d, 0)
    if isinstance(d, Device):
        return d
    raise TypeError(f"expected a Device or DeviceType, got {type(d).__name__}")


def _as_stream(s):
    return s if isinstance(s, Stream) else default_stream(s)


DeviceType._stream_handle = lambda self: Device(self)._stream_handle()


def default_device():
    p = ffi.new("mlx_device*")
    check(lib.mlx_get_default_device(p))
    try:
        t = ffi.new("mlx_device_type*")
        i = ffi.new("int*")
        check(lib.mlx_device_get_type(t, p[0]))
        check(lib.mlx_device_get_index(i, p[0]))
        return Device(DeviceType(int(t[0])), int(i[0]))
    finally:
        lib.mlx_device_free(p[0])


def set_default_device(device):
    h = _as_device(device)._c()  # keep the owner alive across the call
    check(lib.mlx_set_default_device(h[0]))


def is_available(device):
    d = _as_device(device)
    h = lib.mlx_device_new_type(d.type.value, d.index)
    try:
        r = ffi.new("bool*")
        check(lib.mlx_device_is_available(r, h))
        return bool(r[0])
    finally:
        lib.mlx_device_free(h)


def device_count(device_type):
    r = ffi.new("int*")
    check(lib.mlx_device_count(r, _as_device(device_type).type.value))
    return int(r[0])


def default_stream(device):
    d = _as_device(device)
    if d.type != DeviceType.cpu and not is_available(d):
        raise ValueError(f"[default_stream] No GPU backend is available in this build of mlx-arm ({d!r}).")
    if d.type == DeviceType.cpu and _Ctx.current is not None and _Ctx.current.device == d:
        return _Ctx.current
    return Stream(d, 0)


def synchronize(stream=None):
    """Waits for the work on ``stream``; raises the first error an ``async_eval`` met."""
    h = _Ctx.stream if stream is None else _as_stream(stream)._stream_handle()
    check(lib.mlx_synchronize(h))
    if _PENDING_ERRORS:
        first = _PENDING_ERRORS[0]
        _PENDING_ERRORS.clear()
        raise first


def array_leaves(tree, out):
    """Appends the arrays of a tree of lists / tuples / dicts to ``out`` (other leaves are
    ignored, as MLX does) and returns ``out``."""
    if isinstance(tree, array):
        out.append(tree)
    elif isinstance(tree, (list, tuple)):
        for t in tree:
            array_leaves(t, out)
    elif isinstance(tree, dict):
        for t in tree.values():
            array_leaves(t, out)
    return out


def _eval_with(cfn, args, failed=None):
    """Evaluates the arrays in ``args``; a failure raises, or goes to ``failed(exc)`` if given."""
    arrs = array_leaves(args, [])
    if not arrs:
        return
    handles = [a._p[0] for a in arrs]
    _thread_streams.check_evaluable(handles)
    hs = ffi.new("mlx_array[]", handles)
    vec = lib.mlx_vector_array_new_data(hs, len(arrs))
    try:
        rc = cfn(vec)
    finally:
        lib.mlx_vector_array_free(vec)
    if rc:
        from ._ffi import error

        if failed is None:
            raise error()
        failed(error())


# Evaluation errors met by async_eval, raised by the next synchronize() (where MLX raises them).
_PENDING_ERRORS = []


def eval(*args):
    """Computes every array in ``args`` (arrays, or lists/tuples/dicts of them)."""
    _eval_with(lib.mlx_eval, args)


def async_eval(*args):
    """Starts computing ``args``; with the CPU backend this completes before returning. As in
    MLX, an evaluation error is not raised here but by the next ``synchronize()`` (and by any
    later use of the failed arrays)."""
    _eval_with(lib.mlx_async_eval, args, failed=_defer_async_error)


def _defer_async_error(exc):
    # Refusing a tracer (async_eval inside a transform) is an argument error raised at once,
    # as in MLX; evaluation failures wait for the next synchronize().
    if isinstance(exc, ValueError) and str(exc).startswith("[async_eval]"):
        raise exc
    _PENDING_ERRORS.append(exc)


def _size_query(fn):
    def f():
        r = ffi.new("size_t*")
        check(fn(r))
        return int(r[0])

    return f


get_active_memory = _size_query(lib.mlx_get_active_memory)
get_peak_memory = _size_query(lib.mlx_get_peak_memory)
get_cache_memory = _size_query(lib.mlx_get_cache_memory)
get_memory_limit = _size_query(lib.mlx_get_memory_limit)


def _limit_setter(fn):
    def f(limit):
        r = ffi.new("size_t*")
        check(fn(r, int(limit)))
        return int(r[0])

    return f


set_memory_limit = _limit_setter(lib.mlx_set_memory_limit)
set_cache_limit = _limit_setter(lib.mlx_set_cache_limit)
set_wired_limit = _limit_setter(lib.mlx_set_wired_limit)


def reset_peak_memory():
    check(lib.mlx_reset_peak_memory())


def clear_cache():
    check(lib.mlx_clear_cache())
