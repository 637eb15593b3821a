"""``mlx.core`` of mlx-arm: real MLX's Python API over the mlx-arm C library (cffi).

Functions come from three places:
- hand-written here, where MLX's Python semantics differ from the C signature (``arange``,
  ``linspace``, ``full`` …);
- bound automatically (``_binder``) for every MLX function whose C op exists, so ops added
  to the C API appear with no change here;
- anything else that real MLX has raises ``NotProvidedError`` naming it (module
  ``__getattr__``), never a silently wrong result: both an AttributeError (``hasattr`` is
  False) and a NotImplementedError.
"""
import builtins as _builtins
import math as _math
import sys as _sys
import types as _types

from . import _binder, _composite, _dtypes, _extra, _names, _operators, _random  # noqa: F401  (_operators installs array operators)
from ._array import _ARR_PTR, _C as _CARRAY, _Ctx, _newp, ArrayIterator, ArrayLike, array, hinted_scalar as _hinted_scalar, to_array as _to_array, wrap as _wrap
from ._device import (Device, DeviceType, Stream, StreamContext, async_eval, clear_cache,
                      clear_streams, cpu, default_device, default_stream, device_count, eval,
                      get_active_memory, get_cache_memory, get_memory_limit, get_peak_memory, gpu,
                      is_available, new_stream, new_thread_local_stream, new_thread_unsafe_stream,
                      ThreadLocalStream, reset_peak_memory, set_cache_limit,
                      set_default_device, set_default_stream, set_memory_limit, set_wired_limit,
                      stream, synchronize)
from ._indexing import ArrayAt
from ._printing import PrintOptions, get_printoptions, printoptions, set_printoptions
from ._dtypes import (Dtype, DtypeCategory, bfloat16, bool_, complex64, finfo, float16, float32,
                      float64, iinfo, int8, int16, int32, int64, isdtype, issubdtype, uint8,
                      uint16, uint32, uint64)
from ._ffi import check as _check, error as _ffi_error, ffi as _cffi, lib as _lib
from ._missing import NotProvidedError as _NotProvidedError



def _mlx_version():
    s = _cffi.new("mlx_string*", _lib.mlx_string_new())
    try:
        _check(_lib.mlx_version(s))
        return _cffi.string(_lib.mlx_string_data(s[0])).decode()
    finally:
        _lib.mlx_string_free(s[0])


# As real MLX: the MLX version whose API this is (mlx-c's `mlx_version`; programs compare
# `mx.__version__` against MLX releases). mlx-arm's own version is `__mlx_arm_version__` (and
# `mlx.arm.platform_info()["version"]`).
__version__ = _mlx_version()
__mlx_arm_version__ = _cffi.string(_lib.mlx_arm_version_string()).decode()

complexfloating = DtypeCategory.complexfloating
floating = DtypeCategory.floating
inexact = DtypeCategory.inexact
signedinteger = DtypeCategory.signedinteger
unsignedinteger = DtypeCategory.unsignedinteger
integer = DtypeCategory.integer
number = DtypeCategory.number
generic = DtypeCategory.generic

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
euler_gamma = 0.5772156649015329
newaxis = None

# MLX's alternative names: (alias, C-backed name).
_ALIASES = {
    "acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh", "asinh": "arcsinh",
    "atanh": "arctanh", "atan2": "arctan2", "conj": "conjugate", "pow": "power",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "concat": "concatenate", "permute_dims": "transpose", "empty_like": "zeros_like", "empty": "zeros",
}

_SUBMODULES = ("random", "linalg", "fast", "fft")


def _bind_all():
    g = globals()
    bound = {}
    for name in list(_binder.SIGNATURES) + [a for a in _ALIASES if a not in _binder.SIGNATURES]:
        top = name.split(".")[0]
        if "." in name and top not in _SUBMODULES:
            continue
        target = _ALIASES.get(name, name)
        f = _binder.make_op(name) if target == name else None
        if f is None and target != name:
            spec = _binder.SIGNATURES.get(name) or _binder.SIGNATURES.get(target)
            vs = _binder.variants_for(target)
            if spec and vs:
                op = _binder.Op(name, _binder.Signature(name, spec), vs)
                f = _binder.compile_op(op) or (lambda op: lambda *a, **k: op(*a, **k))(op)
                f.__name__ = name
        if f is not None:
            bound[name] = f
    for name, f in bound.items():
        if "." in name:
            mod, attr = name.split(".", 1)
            setattr(g[mod], attr, f)
        elif name not in g:
            g[name] = f


def _make_submodule(name):
    m = _types.ModuleType(f"{__name__}.{name}")

    def __getattr__(attr, _name=name):
        if f"{_name}.{attr}" in _binder.SIGNATURES or _names.is_mlx_name(f"mx.{_name}.{attr}"):
            raise _NotProvidedError(f"mlx.core.{_name}.{attr} is not implemented yet in mlx-arm")
        raise AttributeError(f"module 'mlx.core.{_name}' has no attribute '{attr}'")

    m.__getattr__ = __getattr__
    _sys.modules[m.__name__] = m
    return m


def _backend_module(name, extra=()):
    """``mx.metal`` / ``mx.cuda``: those backends are absent from mlx-arm, so
    ``is_available()`` is False and anything else raises."""
    m = _make_submodule(name)
    m.is_available = lambda: False
    for attr in extra:
        def f(*a, _n=attr, **k):
            raise RuntimeError(f"mlx.core.{name}.{_n}: mlx-arm has no {name} backend")

        f.__name__ = attr
        setattr(m, attr, f)
    return m


metal = _backend_module("metal", ("device_info", "start_capture", "stop_capture"))

# MLX 0.32 keeps these memory functions under mx.metal as deprecated aliases of the mx.* ones,
# on every build: the first call of each prints MLX's notice to stderr, then it forwards.
_METAL_DEPRECATED = ("get_active_memory", "get_peak_memory", "get_cache_memory", "reset_peak_memory",
                     "clear_cache", "set_cache_limit", "set_memory_limit", "set_wired_limit")


def _metal_alias(name):
    told = []

    def f(*args, **kwargs):
        if not told:
            told.append(True)
            print(f"mx.metal.{name} is deprecated and will be removed in a future version. Use mx.{name} instead.",
                  file=_sys.stderr)
        return globals()[name](*args, **kwargs)

    f.__name__ = name
    return f


for _n in _METAL_DEPRECATED:
    setattr(metal, _n, _metal_alias(_n))
cuda = _backend_module("cuda")
random = _make_submodule("random")
linalg = _make_submodule("linalg")
fast = _make_submodule("fast")
fft = _make_submodule("fft")


# --- hand-written functions (Python semantics that a C signature cannot express) ----------


def _op(cname, *args):
    p = _cffi.new(_ARR_PTR)
    _check(getattr(_lib, cname)(p, *args))
    return _wrap(p)


def _stream(stream):
    from ._array import stream_handle

    return stream_handle(stream)


def _shape_arg(shape):
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    shape = [int(s) for s in shape]
    return _cffi.new("int[]", shape), len(shape)


def arange(*args, dtype=None, stream=None, **kwargs):
    """``arange(stop)`` / ``arange(start, stop[, step])``; int32 unless a value is a float."""
    names = ("start", "stop", "step", "dtype")
    vals = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names[:3] or k in vals:
            raise TypeError(f"arange() got an unexpected keyword argument '{k}'")
        vals[k] = v
    if "dtype" in vals:
        dtype = vals.pop("dtype")
    start, stop, step = vals.get("start"), vals.get("stop"), vals.get("step")
    if stop is None and "start" in kwargs:
        raise TypeError("arange(): 'stop' is required when 'start' is given by keyword")
    if stop is None:
        start, stop = 0, start
    if start is None:
        start = 0
    if stop is None:
        raise TypeError("arange() missing required argument 'stop'")
    if step is None:
        step = 1
    for v in (start, stop, step):
        if not isinstance(v, (int, float)):
            raise TypeError(f"arange(): expected int or float, got {type(v).__name__}")
    if dtype is None:
        if _builtins.any(isinstance(v, float) for v in (start, stop, step)):
            dtype = float32
        else:  # ints beyond int32 widen to int64, as mx.array(int) does
            dtype = int32 if _builtins.all(-2 ** 31 <= v < 2 ** 31 for v in (start, stop, step)) else int64
    if _builtins.any(isinstance(v, float) and not _math.isfinite(v) for v in (start, stop)) or \
            (isinstance(step, float) and _math.isnan(step)):
        raise ValueError("[arange] Cannot compute length.")
    if isinstance(step, float) and _math.isinf(step):  # one element or none, as numpy
        n = 1 if (stop - start) * step > 0 else 0
        return _op("mlx_arange", float(start), float(start) + n, 1.0, dtype.code, _stream(stream))
    return _op("mlx_arange", float(start), float(stop), float(step), dtype.code, _stream(stream))


def linspace(start, stop, num=50, endpoint=True, dtype=float32, stream=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (``endpoint=False`` leaves it out)."""
    num = int(num)
    if num < 0:
        raise ValueError(f"[linspace] number of samples, {num}, must be non-negative.")
    start, stop = float(start), float(stop)
    if not endpoint:
        stop = start + (stop - start) * (num - 1) / num if num > 0 else start
    return _op("mlx_linspace", start, stop, num, dtype.code, _stream(stream))


def full(shape, vals, dtype=None, *, stream=None):
    # As MLX 0.32.4, `dtype` is only a hint for a Python scalar (see hinted_scalar): an array
    # keeps its own dtype and `full([2], 1.5, dtype=mx.int32)` is float32.
    v = None if dtype is None else _hinted_scalar(vals, dtype)
    v = _to_array(vals) if v is None else v
    sh, n = _shape_arg(shape)
    return _op("mlx_full", sh, n, v._p[0], v.dtype.code, _stream(stream))


def full_like(a, vals, dtype=None, *, stream=None):
    a = _to_array(a)
    target = dtype or a.dtype
    v = _to_array(vals, target) if type(vals) is float else _to_array(vals)
    return _op("mlx_full_like", a._p[0], v._p[0], target.code, _stream(stream))


def eye(n, m=None, k=0, dtype=float32, *, stream=None):
    return _op("mlx_eye", int(n), int(n if m is None else m), int(k), dtype.code, _stream(stream))


def tri(n, m=None, k=0, dtype=float32, *, stream=None):
    return _op("mlx_tri", int(n), int(n if m is None else m), int(k), dtype.code, _stream(stream))


def meshgrid(*arrays, sparse=False, indexing="xy", stream=None):
    """A tuple of coordinate arrays (a tuple, as real MLX returns)."""
    return tuple(_binder.Op("meshgrid", _binder.Signature("meshgrid", {"params": [
        {"name": "arrays", "kind": "pos", "default": None, "type": "list"},
        {"name": "sparse", "kind": "pos", "default": "False", "type": "bool"},
        {"name": "indexing", "kind": "pos", "default": "'xy'", "type": "str"},
        {"name": "stream", "kind": "kwonly", "default": "None", "type": ""}]}),
        _binder.variants_for("meshgrid"))(list(arrays), sparse, indexing, stream=stream))


def broadcast_arrays(*arrays, stream=None):
    return _binder.Op("broadcast_arrays", _binder.Signature("broadcast_arrays", {"params": [
        {"name": "inputs", "kind": "pos", "default": None, "type": "list"},
        {"name": "stream", "kind": "kwonly", "default": "None", "type": ""}]}),
        _binder.variants_for("broadcast_arrays"))(list(arrays), stream=stream)


def result_type(*arrays_and_dtypes):
    """The dtype the inputs promote to (arrays and dtypes; MLX's promotion table)."""
    if not arrays_and_dtypes:
        raise ValueError("[result_type] At least one array or dtype is required.")
    out = None
    for x in arrays_and_dtypes:
        d = x if isinstance(x, Dtype) else (x.dtype if isinstance(x, array) else None)
        if d is None:
            raise TypeError(f"result_type(): expected arrays or dtypes, got {type(x).__name__}")
        out = d if out is None else _dtypes.promote_types(out, d)
    return out


def can_cast(from_, to):
    """Whether promoting ``from_`` (array or dtype) with ``to`` gives ``to``."""
    return result_type(from_, to) == to


def broadcast_shapes(*shapes):
    """The shape that ``shapes`` broadcast to (numpy's rule), or ValueError."""
    if not shapes:
        raise ValueError("[broadcast_shapes] Must provide at least one shape.")
    out = tuple(shapes[0])
    for sh in shapes[1:]:
        sh = tuple(sh)
        n = _builtins.max(len(out), len(sh))
        a, b = (1,) * (n - len(out)) + out, (1,) * (n - len(sh)) + sh
        res = []
        for x, y in zip(a, b):
            if x != y and 1 not in (x, y):
                fa = ",".join(str(v) for v in out)
                fb = ",".join(str(v) for v in sh)
                raise ValueError(f"[broadcast_shapes] Shapes ({fa}) and ({fb}) cannot be broadcast.")
            res.append(y if x == 1 else x)
        out = tuple(res)
    return out


def asarray(a, dtype=None, *, copy=None):
    """``a`` as an array: shared when it already is one of ``dtype`` (unless ``copy=True``)."""
    if copy is False:  # as real MLX: an mlx array is never handed out uncopied on request
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    if copy and isinstance(a, array):
        return array(a, dtype)
    return _to_array(a, dtype)


def from_dlpack(x, /, *, copy=None):
    """A new array with the elements of DLPack producer ``x`` (see ``_dlpack``)."""
    from ._dlpack import from_dlpack as _f

    return _f(x, copy)


_bind_all()
_composite.install(globals(), _sys.modules[__name__])
_random.install(random)  # hand-written over random.h, where the library exports it
_extra.install(globals())  # einsum, fast.rope …: signatures that need a hand-written mapping
from . import _stft  # noqa: E402

_stft.install(fft, _sys.modules[__name__])  # fft.stft / fft.istft over the one-dimensional FFTs
from . import _transforms  # noqa: E402

_transforms.install(globals())  # grad, value_and_grad, vjp, jvp, stop_gradient (closure.h)
from . import _custom  # noqa: E402

_custom.install(globals())  # custom_function, checkpoint (transforms.h)
from . import _export  # noqa: E402

_export.install(globals())  # export_function, import_function, exporter (export.h)

# mlx-lm's needs (docs/COMPAT.md, "mlx-lm"): compile without fusion, the one-process
# distributed group, device_info.
from ._compile import compile, disable_compile, enable_compile  # noqa: E402,A001
from ._info import device_info  # noqa: E402
from . import _distributed  # noqa: E402

distributed = _make_submodule("distributed")
_distributed.install(distributed)


def _like_with_dtype(name, base, make):
    """``zeros_like(a, dtype=None)``: the C op has no dtype, so a dtype goes to ``zeros``."""
    def f(a, /, dtype=None, *, stream=None):
        if dtype is None:
            return base(a, stream=stream)
        return make(_to_array(a).shape, dtype, stream=stream)

    f.__name__ = name
    return f


for _n, _make in (("zeros_like", "zeros"), ("ones_like", "ones"), ("empty_like", "zeros")):
    if _n in globals() and _make in globals():
        globals()[_n] = _like_with_dtype(_n, globals()[_n], globals()[_make])


# --- array methods: MLX's ``a.sum(...)`` etc. call the module functions with ``a`` first ----

_METHODS = ("abs all any argmax argmin conj cos cummax cummin cumprod cumsum diag diagonal "
            "exp flatten log log10 log1p log2 logcumsumexp logsumexp max mean min moveaxis "
            "prod reciprocal round rsqrt sin split sqrt square squeeze std sum swapaxes var view").split()


def _method(name):
    def m(self, *args, **kwargs):
        return getattr(_sys.modules[__name__], name)(self, *args, **kwargs)

    m.__name__ = name
    return m


for _n in _METHODS:
    setattr(array, _n, _method(_n))


def _varargs_method(name, kw):
    def m(self, *args, **kwargs):
        if len(args) == 1 and (isinstance(args[0], (list, tuple)) or args[0] is None):
            args = args[0]
        if args == () and kw in kwargs:
            args = kwargs.pop(kw)
        elif args == () and name == "transpose":
            args = None
        return getattr(_sys.modules[__name__], name)(self, args, **kwargs)

    m.__name__ = name
    return m


def _astype_method(self, dtype, stream=None):
    """``a.astype(dtype, stream=None)``: unlike ``mx.astype``, MLX's method takes the stream
    positionally too."""
    return astype(self, dtype, stream=stream)


array.astype = _astype_method

# MLX 0.32's second names for the same functions (the array API standard's spellings).
cumulative_sum, cumulative_prod, matrix_norm = cumsum, cumprod, linalg.norm
array.__div__, array.__rdiv__ = array.__truediv__, array.__rtruediv__

array.real = property(lambda self: real(self), doc="The real part (a property, as in MLX).")
array.imag = property(lambda self: imag(self), doc="The imaginary part (a property, as in MLX).")
_reshape_generic = _varargs_method("reshape", "shape")
_INT_BUF = _cffi.typeof("int[]")
_obj_new = object.__new__


def _reshape_method(self, *args, **kwargs):
    """``a.reshape(2, 3)`` / ``a.reshape((2, 3))``: plain Python ints go straight to the C op
    (the commonest call); anything else (keywords, other types) through ``mx.reshape``."""
    if args and not kwargs:
        shape = args[0] if len(args) == 1 and type(args[0]) in (tuple, list) else args
        for d in shape:
            if type(d) is not int:
                break
        else:
            try:
                buf = _newp(_INT_BUF, shape)
            except OverflowError:  # beyond int32: the generic path raises MLX's error
                buf = None
            if buf is not None:
                p = _newp(_ARR_PTR)
                if _lib.mlx_reshape(p, self._p[0], buf, len(shape), _Ctx.stream):
                    raise _ffi_error()
                if _CARRAY is not None:  # (the C array type: one call)
                    return _wrap(p)
                a = _obj_new(array)
                a._p = p
                a._s = a._d = None
                return a
    return _reshape_generic(self, *args, **kwargs)


array.reshape = _reshape_method
array.transpose = _varargs_method("transpose", "axes")


def __getattr__(name):
    if name in _binder.SIGNATURES or _names.is_mlx_name(f"mx.{name}"):
        raise _NotProvidedError(f"mlx.core.{name} is not implemented yet in mlx-arm")
    raise AttributeError(f"module 'mlx.core' has no attribute '{name}'")


# Last: the C array type's operator slots (setting an operator method later would reset them).
from . import _fastpath as _fastpath  # noqa: E402

_fastpath.install_operators(array, _operators._BIN, _operators._BITWISE, globals().get("matmul"))
_fastpath.install_methods(array, globals(), _METHODS, {"reshape": True, "transpose": True, "astype": False})
