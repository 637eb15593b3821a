"""``mlx.core.array``: a Python object owning one C ``mlx_array`` handle.

Conversions follow real MLX (checked against it in tests/python):
- Python ``bool`` → bool, ``int`` → int32 (int64 when it does not fit), ``float`` → float32,
  ``complex`` → complex64; nested lists take the widest kind present.
- numpy arrays keep their dtype, except float64 → float32 and complex128 → complex64.
- A Python scalar next to an array is *weakly typed*: it takes the array's dtype when that
  can hold its kind (``array(f16) + 1.0`` stays float16, ``int8 array + 300`` is an
  overflow error, ``int array + 1.5`` is float32).
"""
import os
import struct
import threading

from . import _api_module, _carray_build
from . import _dtypes as D
from . import _thread_streams
from ._buffer import BufferBase
from ._ffi import API, MODE, check, error, exported, ffi, lib

try:  # cffi's C-level allocator for a ctype object (not a str): skips FFI.new's Python wrapper
    from _cffi_backend import newp as _newp
except ImportError:  # pragma: no cover
    _newp = ffi.new
_ARR_PTR = ffi.typeof("mlx_array*")
_free = lib.mlx_array_free
# (the metadata properties are called often: their C functions bound once)
_ndim, _shape, _dtype, _size, _unpack = (lib.mlx_array_ndim, lib.mlx_array_shape, lib.mlx_array_dtype,
                                         lib.mlx_array_size, ffi.unpack)
_BY_CODE = D.BY_CODE
_transpose, _obj_new = lib.mlx_transpose, object.__new__
_STREAM_OWNERS = _thread_streams._OWNER_THREADS  # (a set changed in place, never rebound)


_IMPORTING_THREAD = threading.get_ident()
_IMPORTING_THREAD_STREAM = lib.mlx_default_cpu_stream_new()


class _ThreadCtx(threading.local):
    """The stream every op records on, one per thread as in MLX 0.32: ``mx.stream`` and
    ``set_default_stream`` change the calling thread's only. The importing thread starts on the C
    default stream (index 0; the C API honours each device's default stream); any other thread
    gets a stream of its own on the default device, made on its first op and bound to it, so
    its pending work cannot be evaluated from another thread (MLX raises there too)."""

    def __init__(self):
        self.current = None  # the Stream object behind ``stream`` when one was set or made
        if threading.get_ident() == _IMPORTING_THREAD:
            self.stream = _IMPORTING_THREAD_STREAM
            return
        from ._device import default_device, new_stream

        self.current = new_stream(default_device())
        self.stream = self.current._stream_handle()


_Ctx = _ThreadCtx()


def stream_handle(s):
    """The C stream for an op's ``stream=`` argument (None → the default stream)."""
    if s is None:
        return _Ctx.stream
    h = getattr(s, "_stream_handle", None)
    if h is None:
        raise TypeError(f"stream must be None, a Stream or a Device, got {type(s).__name__}")
    return h()


def wrap(p):
    """An ``array`` owning the handle in ``p`` (an ``mlx_array*`` the C library filled)."""
    a = object.__new__(array)
    a._p = p
    a._s = a._d = None
    return a


def rebind(a, r):
    """Points ``a``'s own handle at ``r``'s node (in-place operators, assignment: the Python
    object stays, its value changes) and forgets ``a``'s cached shape and dtype (``a += b`` may
    broadcast, ``a += 1.5`` on ints gives floats)."""
    check(lib.mlx_array_set(a._p, r._p[0]))
    a._s = a._d = None


def _owned(h):
    """An ``mlx_array*`` holding the by-value handle ``h`` (empty handle → the last C error)."""
    if h.ctx == ffi.NULL:
        raise error()
    p = _newp(_ARR_PTR)
    p[0] = h
    return p


def wrap_value(h):
    """An ``array`` owning the by-value handle ``h`` (empty handle → the last C error)."""
    return wrap(_owned(h))


def _from_bytes(buf, shape, dtype):
    sh = _newp(_INTS, list(shape)) if shape else ffi.NULL
    return wrap_value(lib.mlx_array_new_data(buf, sh, len(shape), dtype.code))


def _astype(a, dtype):
    p = _newp(_ARR_PTR)
    check(lib.mlx_astype(p, a._p[0], dtype.code, _Ctx.stream))
    return wrap(p)


# ``item()`` of the dtypes whose C scalar cffi turns into the right Python scalar (bool, int,
# float): one ``mlx_array_item_<type>`` call (it evaluates) instead of the array's bytes.
_ITEM = {d.code: (getattr(lib, f"mlx_array_item_{d.name}"), ffi.typeof(f"{t}*"))
         for d, t in ((D.bool_, "bool"), (D.uint8, "uint8_t"), (D.uint16, "uint16_t"), (D.uint32, "uint32_t"),
                      (D.uint64, "uint64_t"), (D.int8, "int8_t"), (D.int16, "int16_t"), (D.int32, "int32_t"),
                      (D.int64, "int64_t"), (D.float32, "float"), (D.float64, "double"))}

_NOT_SCALAR = "[convert] Only length-1 arrays can be converted to Python scalars."

_INT_RANGE = {d.code: (D.iinfo(d).min, D.iinfo(d).max) for d in D.DTYPES if D.is_integer(d)}
_I32 = (-(2 ** 31), 2 ** 31 - 1)
_I64 = (-(2 ** 63), 2 ** 63 - 1)


def _bf16_bytes(v):
    """The bfloat16 bits of ``v`` (round to nearest even), little-endian."""
    (bits,) = struct.unpack("<I", D.pack_float("<f", v))
    if (bits & 0x7F800000) == 0x7F800000 and (bits & 0x7FFFFF):
        return struct.pack("<H", 0x7FC0)
    bits += 0x7FFF + ((bits >> 16) & 1)
    return struct.pack("<H", (bits >> 16) & 0xFFFF)


def scalar(v, dtype):
    """A 0-d array of ``dtype`` holding the Python scalar ``v`` (no range check)."""
    code = dtype.code
    if code == 7:
        return wrap_value(lib.mlx_array_new_int(v))
    if code == 10:
        return wrap_value(lib.mlx_array_new_float32(v))
    if code == 0:
        return wrap_value(lib.mlx_array_new_bool(bool(v)))
    if code == 13:
        c = complex(v)
        return wrap_value(lib.mlx_array_new_complex(c.real, c.imag))
    if code == 12:
        return _from_bytes(_bf16_bytes(float(v)), (), dtype)
    if code == 11:
        return wrap_value(lib.mlx_array_new_float64(v))
    if D.is_inexact(dtype):
        return _from_bytes(D.pack_float("<" + dtype._fmt, v), (), dtype)
    return _from_bytes(struct.pack("<" + dtype._fmt, v), (), dtype)


def _py_int(v):
    """The natural array of a Python int: int32, or int64 when it does not fit."""
    if _I32[0] <= v <= _I32[1]:
        return wrap_value(lib.mlx_array_new_int(v))
    if _I64[0] <= v <= _I64[1]:
        return scalar(v, D.int64)
    raise OverflowError(f"Python int {v} is too large to convert to an mlx array")


# Scalar operands are constants: the 0-d array made for (type, value, dtype) is reused by later
# operators (``a + 1`` in a loop builds one constant, not one per call). Arrays are immutable
# graph nodes — in-place operators rebind the Python object's handle, never a shared node — so
# sharing is safe. Floats are keyed by their hex form (keeps -0.0 apart from 0.0; NaN works).
_SCALAR_CACHE = {}
_SCALAR_CACHE_MAX = 512


def weak_scalar(v, dtype):
    """The Python scalar ``v`` as an array next to an array of ``dtype`` (MLX's weak typing)."""
    t = type(v)
    key = (t, v.hex() if t is float else v, dtype.code) if t in _CACHEABLE else None
    if key is not None:
        hit = _SCALAR_CACHE.get(key)
        if hit is not None:
            return hit
    a = _weak_scalar(v, dtype, t)
    if key is not None and a is not None:
        if len(_SCALAR_CACHE) >= _SCALAR_CACHE_MAX:
            _SCALAR_CACHE.clear()
        _SCALAR_CACHE[key] = a
    return a


_CACHEABLE = (bool, int, float)


def _weak_scalar(v, dtype, t):
    if t is bool:
        return wrap_value(lib.mlx_array_new_bool(v))
    if t is int:
        return _int_scalar(v, dtype)
    if t is float:
        return scalar(v, dtype if D.is_inexact(dtype) else D.float32)
    if t is complex:
        return scalar(v, D.complex64)
    return None


def _int_scalar(v, dtype):
    """A Python int next to an array of ``dtype``. Like MLX, the int is first read as an int64
    (RuntimeError beyond that); a type narrower than 64 bits must hold it (ValueError), while the
    64-bit types take its int64 bits as they are: ``uint64 array | -1`` has every bit set."""
    if not _I64[0] <= v <= _I64[1]:
        raise RuntimeError(f"Python int {v} does not fit in int64")
    if dtype.code in _INT_RANGE:
        if dtype.size == 8:
            return scalar(v % (1 << 64) if dtype.code == D.uint64.code else v, dtype)
        lo, hi = _INT_RANGE[dtype.code]
        if not lo <= v <= hi:
            raise ValueError(f"Converting {v} to {dtype.name} would result in overflow.")
        return scalar(v, dtype)
    if dtype.code == 0:
        return _py_int(v)
    return scalar(v, dtype)


def hinted_scalar(v, dtype):
    """MLX's conversion of a Python scalar given a dtype *hint* (``mx.full``'s ``vals``): a bool
    takes the hint; an int takes it unless it is bool (then int32); a float takes it only when it
    is a real floating type (else float32); a complex is always complex64. None for non-scalars."""
    t = type(v)
    if t is bool:
        return scalar(v, dtype)
    if t is int:
        return _int_scalar(v, D.int32 if dtype.code == 0 else dtype)
    if t is float:
        return scalar(v, dtype if D.is_inexact(dtype) and dtype.code != D.complex64.code else D.float32)
    if t is complex:
        return scalar(v, D.complex64)
    return None


def _np():
    import numpy

    return numpy


def _is_numpy_obj(v):
    m = type(v).__module__
    return m == "numpy" or m.startswith("numpy.")


def _np_generic_to_py(v):
    """A numpy scalar as the matching Python scalar (numpy scalars are weakly typed too)."""
    return v.item()


_NP_TO_MLX = {
    "bool": D.bool_, "uint8": D.uint8, "uint16": D.uint16, "uint32": D.uint32, "uint64": D.uint64,
    "int8": D.int8, "int16": D.int16, "int32": D.int32, "int64": D.int64, "float16": D.float16,
    "float32": D.float32, "float64": D.float64, "complex64": D.complex64,
}


def _check_dims(shape):
    for n in shape:
        if n > 2 ** 31 - 1:
            raise OverflowError(f"Shape dimension {n} is outside the supported range [-2147483648, 2147483647]. "
                                "MLX currently uses 32-bit integers for shape dimensions.")


def _from_numpy(x, dtype):
    np = _np()
    x = np.asarray(x)
    name = x.dtype.name
    if name == "complex128":
        x = x.astype(np.complex64)
        name = "complex64"
    if name not in _NP_TO_MLX:
        raise ValueError(f"Invalid type numpy.ndarray with dtype {name} received in array initialization.")
    carrier = _NP_TO_MLX[name]
    if not x.flags.c_contiguous:
        x = x.copy(order="C")  # (np.ascontiguousarray would turn 0-d into 1-d)
    _check_dims(x.shape)
    a = _from_bytes(ffi.from_buffer(x), x.shape, carrier)
    target = dtype if dtype is not None else (D.float32 if carrier == D.float64 else carrier)
    return a if target == carrier else _astype(a, target)


_KIND_BOOL, _KIND_INT, _KIND_FLOAT, _KIND_COMPLEX = 1, 2, 3, 4


_INTS = ffi.typeof("int[]")
_FLOATS = ffi.typeof("float[]")


def _flat_list_handle(v):
    """``mx.array(v)`` for a non-empty 1-D list of only floats (float32) or only ints that fit
    int32 (int32), packed straight into its dtype: an ``mlx_array*``, or None for any other
    list (mixed, nested, wider ints, floats beyond float32's range: the general path)."""
    t0 = type(v[0]) if v else None
    if t0 is float:
        ctype, code = _FLOATS, 10
    elif t0 is int:
        ctype, code = _INTS, 7
    else:
        return None
    for x in v:
        if type(x) is not t0:
            return None
    try:  # (cffi converts as C does: a float beyond float32's range is inf, as in MLX)
        data = _newp(ctype, v)
    except OverflowError:  # an int beyond int32
        return None
    # (set_data fills the handle in place: no by-value handle to copy into a new pointer)
    p = _newp(_ARR_PTR)
    if lib.mlx_array_set_data(p, data, _newp(_INTS, (len(v),)), 1, code):
        raise error()
    return p


def _flatten(v, flat, arrays):
    """Appends the leaves of nested list ``v`` to ``flat``; returns (shape, widest kind)."""
    if isinstance(v, (list, tuple)):
        if not v:
            return (0,), 0
        shapes, kind = None, 0
        for e in v:
            s, k = _flatten(e, flat, arrays)
            if shapes is None:
                shapes = s
            elif s != shapes:
                raise ValueError("Initialization encountered non-uniform length.")
            kind = max(kind, k)
        return (len(v),) + shapes, kind
    if isinstance(v, array):
        arrays.append(v.dtype)
        s = v.shape
        sub = v.tolist() if v.dtype not in (D.bfloat16, D.float16) else _astype(v, D.float32).tolist()
        if s:
            _flatten_list(sub, flat)
        else:
            flat.append(sub)
        return s, 0
    t = type(v)
    if t is bool:
        flat.append(v)
        return (), _KIND_BOOL
    if t is int:
        flat.append(v)
        return (), _KIND_INT
    if t is float:
        flat.append(v)
        return (), _KIND_FLOAT
    if t is complex:
        flat.append(v)
        return (), _KIND_COMPLEX
    if _is_numpy_obj(v):
        return _flatten(_np().asarray(v).tolist(), flat, arrays)
    raise ValueError(f"Invalid type {t.__name__} received in array initialization.")


def _flatten_list(sub, flat):
    for e in sub:
        if isinstance(e, list):
            _flatten_list(e, flat)
        else:
            flat.append(e)


def _from_list(v, dtype):
    flat, arrays = [], []
    shape, kind = _flatten(v, flat, arrays)
    if arrays:
        inferred = arrays[0]
        for d in arrays[1:]:
            inferred = D.promote_types(inferred, d)
        if kind == _KIND_COMPLEX:
            inferred = D.complex64
        elif kind == _KIND_FLOAT and not D.is_inexact(inferred):
            inferred = D.float32
        elif kind == _KIND_INT and inferred == D.bool_:
            inferred = D.int32
    elif kind == _KIND_COMPLEX:
        inferred = D.complex64
    elif kind == _KIND_FLOAT or kind == 0:
        inferred = D.float32
    elif kind == _KIND_INT:
        ints = [int(x) for x in flat]
        inferred = D.int32 if all(_I32[0] <= x <= _I32[1] for x in ints) else D.int64
    else:
        inferred = D.bool_
    target = dtype if dtype is not None else inferred
    if arrays:
        return _stacked(v, target)
    # Pack in a carrier wide enough to hold every value exactly, then cast once in C.
    if any(type(x) is complex for x in flat) or target == D.complex64:
        carrier = D.complex64
        data = struct.pack(f"<{2 * len(flat)}f", *[p for x in flat for p in (complex(x).real, complex(x).imag)])
    elif kind == _KIND_FLOAT or any(type(x) is float for x in flat):
        carrier = D.float64
        data = struct.pack(f"<{len(flat)}d", *flat)
    elif kind == _KIND_INT or any(type(x) is int and type(x) is not bool for x in flat):
        ints = [int(x) for x in flat]
        if all(_I64[0] <= x <= _I64[1] for x in ints):
            carrier, fmt = D.int64, "q"
        elif all(0 <= x < 2 ** 64 for x in ints):
            carrier, fmt = D.uint64, "Q"
        else:
            raise OverflowError("Python int too large to convert to an mlx array")
        data = struct.pack(f"<{len(ints)}{fmt}", *ints)
    else:
        carrier = D.bool_
        data = struct.pack(f"<{len(flat)}?", *[bool(x) for x in flat])
    _check_dims(shape)
    a = _from_bytes(data, shape, carrier)
    return a if target == carrier else _astype(a, target)


def _stacked(v, dtype):
    """A nested list holding arrays, built from them with ``stack`` as MLX builds it, so the
    arrays stay in the graph (``mx.grad`` of ``mx.array([x, ...])`` reaches ``x``). The
    shapes were checked by ``_flatten``."""
    from . import stack

    parts = [_stacked(e, dtype) if type(e) is list or type(e) is tuple else to_array(e, dtype) for e in v]
    return stack(parts)


def to_array(v, dtype=None):
    """Anything ``mx.array`` accepts, as an ``array`` (shared, not copied, when already one)."""
    if isinstance(v, array):
        return v if dtype is None or v.dtype == dtype else _astype(v, dtype)
    return array(v, dtype)


def _nest(flat, shape):
    if len(shape) <= 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _empty_nested(shape):
    if not shape:
        return []
    if shape[0] == 0:
        return []
    return [_empty_nested(shape[1:]) for _ in range(shape[0])] if len(shape) > 1 else []


class array(BufferBase):
    """An N-dimensional array (lazy: computed on ``mx.eval``, printing, or reading values)."""

    # _s, _d: the shape tuple and the Dtype, cached on first use (None until then); a node's
    # never change, and ``rebind`` (the only in-place change of the handle) resets them.
    __slots__ = ("_p", "_s", "_d", "__weakref__")

    def __init__(self, val, dtype=None):
        self._s = self._d = None
        if dtype is not None and not isinstance(dtype, D.Dtype):
            raise TypeError(f"dtype must be an mlx.core.Dtype, got {type(dtype).__name__}")
        t = type(val)
        if t is list and dtype is None:
            p = _flat_list_handle(val)
            if p is not None:
                self._p = p
                return
        if isinstance(val, array):
            src = val if dtype is None or val.dtype == dtype else _astype(val, dtype)
            p = _newp(_ARR_PTR)
            check(lib.mlx_array_set(p, src._p[0]))
            self._p = p
            return
        if t is bool or t is int or t is float or t is complex:
            if dtype is None:
                a = {bool: lambda: scalar(val, D.bool_), int: lambda: _py_int(val),
                     float: lambda: scalar(val, D.float32), complex: lambda: scalar(val, D.complex64)}[t]()
            elif t is float and dtype == D.float64:
                a = scalar(val, D.float64)
            elif t is int and D.is_integer(dtype):
                lo, hi = _INT_RANGE[dtype.code]
                a = scalar(val, dtype) if lo <= val <= hi else _astype(_py_int(val), dtype)
            else:
                a = _astype(to_array(val), dtype)
        elif t is list or t is tuple:
            a = _from_list(val, dtype)
        elif _is_numpy_obj(val) or hasattr(val, "__array__") or hasattr(val, "__array_interface__"):
            a = _from_numpy(val, dtype)
        elif hasattr(val, "__mlx_array__"):
            a = to_array(val.__mlx_array__(), dtype)
        elif isinstance(val, (bytes, bytearray, memoryview)):
            a = _from_numpy(_np().asarray(memoryview(val)), dtype)
        else:
            raise ValueError(f"Invalid type {t.__name__} received in array initialization.")
        self._p = a._p
        a._p = None

    def __del__(self):
        try:
            _free(self._p[0])
        except Exception:  # no handle (a failed __init__, or moved out: None), or interpreter shutdown
            pass

    # --- metadata ---------------------------------------------------------------------------
    @property
    def shape(self):
        try:
            s = self._s
        except AttributeError:  # an object made without wrap() or __init__
            s = None
        if s is None:
            h = self._p[0]
            n = _ndim(h)
            s = self._s = tuple(_unpack(_shape(h), n)) if n else ()
        return s

    @property
    def dtype(self):
        try:
            d = self._d
        except AttributeError:  # an object made without wrap() or __init__
            d = None
        if d is None:
            d = self._d = _BY_CODE[_dtype(self._p[0])]
        return d

    @property
    def ndim(self):
        return _ndim(self._p[0])

    @property
    def size(self):
        return _size(self._p[0])

    @property
    def itemsize(self):
        return int(lib.mlx_array_itemsize(self._p[0]))

    @property
    def nbytes(self):
        return int(lib.mlx_array_nbytes(self._p[0]))

    @property
    def T(self):
        p = _newp(_ARR_PTR)
        if _transpose(p, self._p[0], _Ctx.stream):
            raise error()
        if _C is not None:  # (the C array type: one call)
            return wrap(p)
        a = _obj_new(array)
        a._p = p
        a._s = a._d = None
        return a

    # --- values -----------------------------------------------------------------------------
    def _bytes(self):
        h = self._p[0]
        _thread_streams.check_evaluable([h])
        ptr = lib.mlx_arm_array_data(h)
        if ptr == ffi.NULL:
            raise error()
        return ffi.buffer(ptr, lib.mlx_array_nbytes(h))[:]

    def _flat(self):
        d = self.dtype
        if d == D.bfloat16:
            return _astype(self, D.float32)._flat()
        n = self.size
        raw = self._bytes()
        if d == D.complex64:
            f = struct.unpack(f"<{2 * n}f", raw)
            return [complex(f[2 * i], f[2 * i + 1]) for i in range(n)]
        return list(struct.unpack(f"<{n}{d._fmt}", raw))

    def tolist(self):
        """The values as nested Python lists (a Python scalar for a 0-d array)."""
        shape = self.shape
        if self.size == 0:
            return _empty_nested(shape)
        flat = self._flat()
        if not shape:
            return flat[0]
        return _nest(flat, shape)

    def item(self):
        """The value of a one-element array as a Python scalar."""
        h = self._p[0]
        direct = _ITEM.get(_dtype(h))
        if direct is None:  # half, bfloat16 and complex go through the bytes
            if lib.mlx_array_size(h) != 1:
                raise ValueError(_NOT_SCALAR)
            return self._flat()[0]
        fn, ptr_type = direct
        if _STREAM_OWNERS:  # (empty until a thread owns a stream: then the check is needed)
            _thread_streams.check_evaluable([h])
        out = _newp(ptr_type)
        if fn(out, h):  # (the C function refuses a size other than 1 too: MLX's message then)
            e = error()
            if lib.mlx_array_size(h) != 1:
                raise ValueError(_NOT_SCALAR) from None
            raise e
        return out[0]

    def __array__(self, dtype=None, copy=None):
        """numpy conversion: ``np.array(a)`` copies; ``np.asarray(a)`` / ``copy=False`` share
        the memory when the array is row-contiguous (see ``_HostView``)."""
        np = _np()
        if self.dtype == D.bfloat16:
            raise ValueError("'bfloat16' is not a valid PEP 3118 buffer format string")
        view = np.asarray(_HostView(self, strided=True))
        if dtype is not None and np.dtype(dtype) != view.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return view.astype(dtype)
        return view.copy() if copy else view

    def __array_namespace__(self, api_version=None):
        import mlx.core

        return mlx.core

    def __bytes__(self):
        """The raw little-endian element bytes (row-major), as MLX's buffer gives them."""
        return self._bytes()

    def __pos__(self):
        return self

    @property
    def mT(self):
        """The last two axes swapped."""
        if self.ndim < 2:
            raise ValueError("[matrix_transpose] Input array must have at least 2 dimensions.")
        p = _newp(_ARR_PTR)
        check(lib.mlx_swapaxes(p, self._p[0], -1, -2, _Ctx.stream))
        return wrap(p)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from ._dlpack import export

        return export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(kDLCPU, 0): mlx-arm's arrays live in host memory."""
        return (1, 0)

    def __reduce__(self):
        """Pickles as (raw little-endian bytes, shape, dtype name): no numpy needed."""
        return (_unpickle, (self._bytes(), self.shape, self.dtype.name))

    def __repr__(self):
        s = ffi.new("mlx_string*")
        check(lib.mlx_array_tostring(s, self._p[0]))
        try:
            text = ffi.string(lib.mlx_string_data(s[0])).decode("utf-8")
            if lib.mlx_array_dtype(self._p[0]) == 0:  # the C API prints C++-style true/false
                text = text.replace("true", "True").replace("false", "False")
            return text
        finally:
            lib.mlx_string_free(s[0])

    __str__ = __repr__

    def __format__(self, spec):
        if not spec:
            return repr(self)
        if self.size != 1:
            raise TypeError("unsupported format string passed to mx.array.__format__")
        return format(self.item(), spec)

    def __bool__(self):
        return bool(self.item())

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if not D.is_integer(self.dtype) and self.dtype != D.bool_:
            raise TypeError("only integer arrays can be used as an index")
        return int(self.item())

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("len() 0-dimensional array.")
        return s[0]

    def __iter__(self):
        return ArrayIterator._over(self)

    def __hash__(self):
        return id(self)

    def __copy__(self):
        return array(self)

    def __getstate__(self):
        """MLX's pickle state, ``(numpy array, dtype code)`` with bfloat16 as its uint16 bits.
        Pickling itself goes through ``__reduce__`` (no numpy needed); this pair exists so
        that pickles written by real MLX load here (``__setstate__``) and vice versa."""
        bits = _view(self, D.uint16) if self.dtype == D.bfloat16 else self
        return (_np().array(bits), self.dtype.code)

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) != 2:
            raise ValueError("Invalid pickle state: expected (ndarray, Dtype::Val)")
        nd, code = state
        dtype = D.BY_CODE.get(int(code))
        if dtype is None:
            raise ValueError(f"Invalid pickle state: unknown dtype code {code}")
        a = _view(array(nd, D.uint16), D.bfloat16) if dtype == D.bfloat16 else array(nd, dtype)
        if _C is not None:  # (the C type's ._p setter frees the handle it replaces)
            self._p, a._p = a._p, None
            return
        old = getattr(self, "_p", None)
        self._p, a._p = a._p, None
        self._s = self._d = None
        if old is not None:
            lib.mlx_array_free(old[0])

    def __deepcopy__(self, memo):
        return array(self)



def _load_carray():
    """``mlx.core._mlx_carray`` (the C array type, ``_carray.c``) when it was built for these
    declarations and this package version and the calls go through the API-mode module; else
    None (``MLX_ARM_CARRAY=0`` forces None: the pure-Python class, for comparisons)."""
    if MODE != "api" or os.environ.get("MLX_ARM_CARRAY", "") == "0":
        return None
    try:  # (its symbols resolve against _ffi's global load of the library, as the API module's)
        from . import _mlx_carray as c
    except ImportError:
        return None
    if c.VERSION != _carray_build.VERSION or c.MLX_ARM_CDEF_STAMP != _api_module.stamp(API):
        return None
    return c


# What the C type defines itself (the handle, its caches, the metadata getters) or Python
# class machinery: not copied from the class body.
_NOT_COPIED = frozenset({"_p", "_s", "_d", "shape", "dtype", "ndim", "size", "__del__", "__slots__",
                         "__dict__", "__weakref__", "__module__", "__qualname__"})


def _c_array_type(py_class):
    """``mlx.core.array`` as the C type, with the methods of the Python class body."""
    t = _C.make_type(py_class.__bases__)
    for name, value in py_class.__dict__.items():
        if name not in _NOT_COPIED:
            setattr(t, name, value)
    codes = max(D.BY_CODE) + 1
    _C.setup(_ARR_PTR, ffi.typeof("mlx_stream"), tuple(D.BY_CODE.get(i) for i in range(codes)), error,
             _IMPORTING_THREAD_STREAM)
    return t


_C = _load_carray()
if _C is not None:
    array = _c_array_type(array)
    wrap = _C.wrap  # noqa: F811 (the C type's: takes over the handle, no Python object setup)


def sync_stream():
    """Tells the C type the importing thread's stream after ``_Ctx.stream`` changed (its fast
    calls use it; other threads always take the Python path)."""
    if _C is not None and threading.get_ident() == _IMPORTING_THREAD:
        _C.set_stream(_Ctx.stream)


def _view(a, dtype):
    p = _newp(_ARR_PTR)
    check(lib.mlx_view(p, a._p[0], dtype.code, _Ctx.stream))
    return wrap(p)


class ArrayIterator:
    """``iter(a)``: yields ``a[0], a[1], …`` along the first axis (MLX's helper object; like
    MLX's it has no public constructor)."""

    __slots__ = ("_a", "_i", "_n")

    def __init__(self, *args, **kwargs):
        raise TypeError("mlx.core.ArrayIterator: no constructor defined!")

    @classmethod
    def _over(cls, a):
        it = object.__new__(cls)
        it._a, it._i, it._n = a, 0, len(a)
        return it

    def __iter__(self):
        return self

    def __next__(self):
        if self._i >= self._n:
            raise StopIteration
        self._i += 1
        return self._a[self._i - 1]


class ArrayLike:
    """Any Python object with an ``__mlx_array__`` method, wrapped (MLX's conversion helper):
    ``mx.array(mx.ArrayLike(obj))`` and every op accept it as that array."""

    def __init__(self, obj):
        self.obj = obj

    def __mlx_array__(self):
        return self.obj.__mlx_array__()


def _unpickle(data, shape, dtype_name):
    return _from_bytes(data, tuple(shape), D.NAMES["bool_" if dtype_name == "bool" else dtype_name])


_TYPESTR = {"bool": "|b1", "uint8": "|u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
            "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8", "float16": "<f2",
            "float32": "<f4", "float64": "<f8", "complex64": "<c8", "bfloat16": "<V2"}


class _HostView:
    """Exposes an array's evaluated memory to numpy (``__array_interface__``) without a copy.

    It holds its *own* C handle to the array, so an in-place update of the Python array
    (which rebinds that array's handle) cannot free memory a numpy view still uses; numpy
    keeps this object alive as the view's base. A non-contiguous array is made dense once,
    inside the library, and the dense buffer is owned by the same handle — unless ``strided``
    (numpy's ``__array__``): then the view has the array's own strides, as MLX's buffer
    protocol gives them (0 on broadcast axes), and nothing is copied."""

    __slots__ = ("_p", "_owner", "__array_interface__")

    def __init__(self, a, allow_bfloat16=False, strided=False):
        self._owner = a  # as in MLX, a numpy view keeps the mx.array object itself alive
        if a.dtype == D.bfloat16 and not allow_bfloat16:
            raise ValueError("'bfloat16' is not a valid PEP 3118 buffer format string")
        _thread_streams.check_evaluable([a._p[0]])
        p = _newp(_ARR_PTR)
        p[0] = lib.mlx_array_new()
        check(lib.mlx_array_set(p, a._p[0]))
        self._p = p
        strides = None
        if strided and exported("mlx_arm_array_data_strided"):
            # The array's own strides (0 on broadcast axes), as MLX's buffer exposes them.
            st = ffi.new("int64_t[]", max(a.ndim, 1))
            ptr = lib.mlx_arm_array_data_strided(p[0], st)
            strides = tuple(int(st[i]) * a.dtype.size for i in range(a.ndim))
        else:
            ptr = lib.mlx_arm_array_data(p[0])
        if ptr == ffi.NULL:
            raise error()
        # Writable, as MLX's buffers are (also a broadcast view's, whose zero strides alias).
        self.__array_interface__ = {
            "version": 3, "shape": a.shape, "typestr": _TYPESTR[a.dtype.name],
            "data": (int(ffi.cast("uintptr_t", ptr)), False), "strides": strides,
        }

    def __del__(self):
        try:
            lib.mlx_array_free(self._p[0])
        except Exception:  # interpreter shutdown
            pass
