"""DLPack exchange (``array.__dlpack__``, ``mx.from_dlpack``), with ctypes only.

Export hands the consumer a legacy ``"dltensor"`` capsule over the array's evaluated host
memory (zero-copy when row-contiguous, else a dense copy made once by the library). What keeps
that memory alive is a private handle (``_array._HostView``) registered here until the
consumer calls the tensor's deleter — or, for a capsule never consumed, until the capsule dies.

Import reads the producer's capsule and *copies* the elements (strides honoured through
``as_strided``): mlx-arm arrays own their buffers, so ``copy=False`` raises ValueError, which
is what MLX documents for an import it cannot share. Negative strides raise ValueError, as in
MLX.
"""
import ctypes

from . import _dtypes as D


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedV(ctypes.Structure):
    """DLManagedTensorVersioned (DLPack >= 1.0, capsule name "dltensor_versioned")."""


_DELETER_V = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ManagedV))
_ManagedV._fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER_V),
                      ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]

_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_is_valid_obj = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# The same C function with a raw-pointer argument, for the capsule destructor (which must not
# touch reference counts of the dying capsule).
_get_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))

_NAME = b"dltensor"
_USED = b"used_dltensor"
_NAME_V = b"dltensor_versioned"
_USED_V = b"used_dltensor_versioned"

# DLPack type codes.
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
_TO_DL = {
    "bool": (_BOOL, 8), "uint8": (_UINT, 8), "uint16": (_UINT, 16), "uint32": (_UINT, 32),
    "uint64": (_UINT, 64), "int8": (_INT, 8), "int16": (_INT, 16), "int32": (_INT, 32),
    "int64": (_INT, 64), "float16": (_FLOAT, 16), "float32": (_FLOAT, 32), "float64": (_FLOAT, 64),
    "bfloat16": (_BFLOAT, 16), "complex64": (_COMPLEX, 64),
}
_FROM_DL = {v: k for k, v in _TO_DL.items()}
_FROM_DL[(_COMPLEX, 128)] = "complex128"
_FROM_DL[(_UINT, 8, "bool")] = "bool"

# Exported tensors alive in a consumer: address of the _Managed -> (struct, shape, owner).
_LIVE = {}


@_DELETER
def _delete(mt):
    _LIVE.pop(ctypes.addressof(mt.contents), None)


@_CAPSULE_DESTRUCTOR
def _capsule_gone(cap):
    """A capsule dropped before any consumer took it: release the tensor ourselves."""
    if _api.PyCapsule_IsValid(cap, _NAME):
        _LIVE.pop(_get_pointer_raw(cap, _NAME), None)


def export(a, stream=None, max_version=None, dl_device=None, copy=None):
    """``a.__dlpack__(...)``: a legacy DLPack capsule over ``a``'s host memory."""
    from ._array import _HostView

    if dl_device is not None and tuple(dl_device) != (1, 0):
        raise ValueError(f"__dlpack__: only the CPU device (1, 0) is available, not {tuple(dl_device)}")
    if copy:
        from ._array import array as _arr

        a = _arr(a)
    view = _HostView(a, allow_bfloat16=True)
    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    mt = _Managed()
    code, bits = _TO_DL[a.dtype.name]
    mt.dl_tensor.data = view.__array_interface__["data"][0]
    mt.dl_tensor.device = _Device(1, 0)
    mt.dl_tensor.ndim = a.ndim
    mt.dl_tensor.dtype = _DType(code, bits, 1)
    mt.dl_tensor.shape = shape
    mt.dl_tensor.strides = None  # row-major
    mt.dl_tensor.byte_offset = 0
    mt.manager_ctx = None
    mt.deleter = _delete
    addr = ctypes.addressof(mt)
    _LIVE[addr] = (mt, shape, view)
    return _api.PyCapsule_New(addr, _NAME, _capsule_gone)


def from_dlpack(x, copy=None):
    """``mx.from_dlpack(x)``: a new array with the elements of DLPack producer ``x``."""
    from ._array import _ARR_PTR, _Ctx, _astype, _from_bytes, _newp, wrap
    from ._ffi import check, ffi, lib

    if copy is False:
        raise ValueError("from_dlpack: mlx-arm cannot share a producer's memory (copy=False); use copy=None or True")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    if hasattr(x, "__dlpack_device__"):
        dev = tuple(x.__dlpack_device__())
        if dev[0] != 1:
            raise ValueError(f"from_dlpack: only CPU tensors can be imported, got device {dev}")
    try:
        cap = x.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer predating DLPack 1.0
        cap = x.__dlpack__()
    versioned = bool(_is_valid_obj(cap, _NAME_V))
    if versioned:
        mt = _ManagedV.from_address(_api.PyCapsule_GetPointer(cap, _NAME_V))
    else:
        mt = _Managed.from_address(_api.PyCapsule_GetPointer(cap, _NAME))
    try:
        t = mt.dl_tensor
        key = (t.dtype.code, t.dtype.bits)
        if t.dtype.lanes != 1 or key not in _FROM_DL:
            raise ValueError(f"from_dlpack: unsupported DLPack dtype (code {t.dtype.code}, bits {t.dtype.bits}, lanes {t.dtype.lanes})")
        name = _FROM_DL[key]
        shape = [int(t.shape[i]) for i in range(t.ndim)]
        item = t.dtype.bits // 8
        n = 1
        for s in shape:
            n *= s
        if t.strides:
            strides = [int(t.strides[i]) for i in range(t.ndim)]
        else:
            strides, acc = [], 1
            for s in reversed(shape):
                strides.insert(0, acc)
                acc *= s
        if any(st < 0 for st in strides):
            raise ValueError("from_dlpack: negative strides are not supported")
        span = 0 if n == 0 else 1 + sum((s - 1) * st for s, st in zip(shape, strides))
        base = (t.data or 0) + t.byte_offset
        raw = ctypes.string_at(base, span * item) if span else b""
        carrier = {"complex128": D.complex64, "float64": D.float64}.get(name) or D.NAMES["bool_" if name == "bool" else name]
        if name == "complex128":
            import struct

            vals = struct.unpack(f"<{2 * span}d", raw)
            raw = struct.pack(f"<{2 * span}f", *vals)
        flat = _from_bytes(raw, (span,), carrier)
        p = _newp(_ARR_PTR)
        check(lib.mlx_as_strided(p, flat._p[0], ffi.new("int[]", shape), len(shape),
                                 ffi.new("int64_t[]", strides), len(strides), 0, _Ctx.stream))
        # The producer's strides are kept (a view of the copied span), as MLX keeps them.
        res = wrap(p)
        res = _astype(res, D.float32) if carrier == D.float64 else res
        from ._device import eval as _eval

        _eval(res)  # the producer's memory is released below
        return res
    finally:
        _api.PyCapsule_SetName(cap, _USED_V if versioned else _USED)
        if mt.deleter:
            mt.deleter(ctypes.byref(mt))
