"""The Python buffer protocol (PEP 3118) for ``mx.array``: ``memoryview(a)``, ``bytes(memoryview(a))``,
``struct.unpack_from(fmt, a)`` and every C consumer of buffers see the array's memory, as in MLX.

A class written in Python cannot export a buffer before Python 3.12 (PEP 688), and this package has
no compiled extension (cffi's ABI mode). So, on CPython, ``BufferBase`` is a small type made at import
time with ``PyType_FromSpec`` whose ``bf_getbuffer`` slot is a ctypes callback;
``mx.array`` derives from it and inherits the slots on every CPython from 3.9 on. Elsewhere (PyPy)
``BufferBase`` is ``object`` and ``memoryview(a)`` is not available (``np.asarray`` still is).

The buffer follows MLX's: format characters as ``struct`` names them (``q``/``Q`` for 64-bit,
``Zf`` for complex64, ``bfloat16`` for bfloat16), the array's own strides in bytes (0 on broadcast
axes), writable. A consumer that does not ask for strides gets a row-major copy made once inside
the library. The memory stays valid until the consumer releases the buffer, even if the Python array
is updated in place meanwhile (the view holds its own handle, see ``_HostView``).

A C callback cannot raise a Python exception through ctypes: when the array cannot be evaluated,
the error is printed (as an unraisable exception) and the consumer raises ``SystemError``.
"""
import ctypes
import platform
import sys

_PyBUF_FORMAT = 0x0004
_PyBUF_ND = 0x0008
_PyBUF_STRIDES = 0x0010 | _PyBUF_ND

# The dtypes `struct` has no letter for, as MLX's buffer names them; the rest use the dtype
# table's struct format (`Dtype._fmt`).
_OWN_FORMATS = {"complex64": b"Zf", "bfloat16": b"bfloat16"}


def buffer_format(dtype):
    """The PEP 3118 format of ``dtype``'s buffer (MLX's: ``q``/``Q`` for 64-bit integers)."""
    return dtype._fmt.encode() if dtype._fmt else _OWN_FORMATS[dtype.name]


class _PyBuffer(ctypes.Structure):
    """CPython's ``Py_buffer`` (Include/pybuffer.h), stable since 3.0."""

    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_void_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


class _TypeSlot(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int), ("pfunc", ctypes.c_void_p)]


class _TypeSpec(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("basicsize", ctypes.c_int), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_uint), ("slots", ctypes.POINTER(_TypeSlot))]


_Py_bf_getbuffer = 1  # Include/typeslots.h
_Py_TPFLAGS_DEFAULT = 1 << 18  # Py_TPFLAGS_HAVE_VERSION_TAG
_Py_TPFLAGS_BASETYPE = 1 << 10
_GETBUFFER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int)


class ExportedBuffer:
    """``memoryview(a).obj``: what keeps one exported buffer's memory and its shape, strides and
    format arrays alive, and the array itself (``array``). The consumer's ``PyBuffer_Release`` drops
    the last reference to it, so there is no release callback: that one could run while the
    consumer has an exception pending, where a ctypes callback cannot run Python code."""

    __slots__ = ("array", "_host", "_shape", "_strides", "_format")

    def __repr__(self):
        return f"<buffer of {self.array.dtype} array {self.array.shape}>"


def _fill(obj, view, flags):
    from ._array import _HostView

    strided = (flags & _PyBUF_STRIDES) == _PyBUF_STRIDES
    host = _HostView(obj, allow_bfloat16=True, strided=strided)
    iface = host.__array_interface__
    ndim = len(iface["shape"])
    owner = ExportedBuffer()
    owner.array, owner._host = obj, host
    owner._shape = (ctypes.c_ssize_t * max(ndim, 1))(*iface["shape"])
    strides = iface["strides"]
    owner._strides = (ctypes.c_ssize_t * max(ndim, 1))(*strides) if strides is not None else None
    owner._format = ctypes.create_string_buffer(buffer_format(obj.dtype))

    v = view.contents
    v.buf = iface["data"][0]
    v.len = obj.nbytes
    v.itemsize = obj.itemsize
    v.readonly = 0  # as MLX's
    v.ndim = ndim if flags & _PyBUF_ND else 1  # a plain byte run without shape (PyBuffer_FillInfo's convention)
    v.format = ctypes.addressof(owner._format) if flags & _PyBUF_FORMAT else None
    v.shape = ctypes.addressof(owner._shape) if flags & _PyBUF_ND else None
    v.strides = ctypes.addressof(owner._strides) if owner._strides is not None else None
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(owner))  # the reference PyBuffer_Release drops
    v.obj = id(owner)


def _getbuffer(obj, view, flags):
    ctypes.memset(view, 0, ctypes.sizeof(_PyBuffer))
    try:
        _fill(obj, view, flags)
        return 0
    except Exception:  # noqa: BLE001 (reported below; a C caller gets -1)
        sys.unraisablehook(_Unraisable(sys.exc_info(), "memoryview of an mlx.core.array"))
        return -1


class _Unraisable:
    """The argument ``sys.unraisablehook`` takes."""

    def __init__(self, info, what):
        self.exc_type, self.exc_value, self.exc_traceback = info
        self.err_msg = f"Exception while exporting the buffer ({what})"
        self.object = None


def _make_base():
    if platform.python_implementation() != "CPython":
        return object, None
    callback = _GETBUFFER(_getbuffer)
    slots = (_TypeSlot * 2)((_Py_bf_getbuffer, ctypes.cast(callback, ctypes.c_void_p)), (0, None))
    # Before 3.11 the type keeps pointing at the spec's name: the spec lives as long as the module.
    spec = _TypeSpec(b"mlx.core.BufferBase", ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p),
                     0, _Py_TPFLAGS_DEFAULT | _Py_TPFLAGS_BASETYPE, slots)
    make = ctypes.pythonapi.PyType_FromSpec
    make.argtypes = [ctypes.POINTER(_TypeSpec)]
    make.restype = ctypes.py_object
    base = make(ctypes.byref(spec))
    base.__doc__ = "Exports the buffer protocol for mlx.core.array (see mlx/core/_buffer.py)."
    return base, (callback, slots, spec)


BufferBase, _KEEP_ALIVE = _make_base()
