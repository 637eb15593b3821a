"""``mx.random`` over the C API's random.h (mlx-c's names), with real MLX's Python signatures.

Hand-written because MLX's Python functions pick among several C functions by argument
(``normal`` with array ``loc``/``scale`` → ``mlx_random_normal_broadcast``, ``categorical`` with
``shape`` / ``num_samples``, ``permutation`` of an int …). ``install`` adds a function only when
the library exports every C function it uses; the others keep raising NotImplementedError.
"""
import threading
import time

from . import _dtypes as D
from ._array import _ARR_PTR, array, stream_handle, to_array, wrap
from ._ffi import check, exported, ffi, lib


def _res(cname, *args):
    p = ffi.new(_ARR_PTR)
    check(getattr(lib, cname)(p, *args))
    return wrap(p)


def _shape(shape):
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    try:
        vals = [int(s.__index__()) for s in shape]
    except (TypeError, AttributeError):
        raise TypeError(f"shape must be a sequence of ints, got {type(shape).__name__}") from None
    return ffi.new("int[]", vals), len(vals)


class _RandomState:
    """``mx.random.state``: the global key, one per thread, as MLX 0.32 keeps it.

    A read-only sequence of one key array (``state[0]``, ``list(state)``), so it can be named
    in ``mx.compile(inputs=..., outputs=...)``. A random function called without ``key``
    splits the current key in two, keeps the first half and draws with the second (MLX's
    key sequence); ``seed(s)`` sets it to ``key(s)``. A thread's first key comes from the
    clock, as in MLX.
    """

    def __init__(self):
        self._local = threading.local()

    def _current(self):
        k = getattr(self._local, "key", None)
        if k is None:
            k = self._local.key = key(time.time_ns() // 1_000_000)
        return k

    def _seed(self, s):
        self._local.key = key(s)

    def _next(self):
        pair = split(self._current())
        self._local.key = pair[0]
        return pair[1]

    def __getitem__(self, i):
        return [self._current()][i]

    def __iter__(self):
        return iter([self._current()])

    def __len__(self):
        return 1


state = _RandomState()


def _key(key, keep):
    if key is None:
        key = state._next()
    if not isinstance(key, array):
        raise TypeError(f"key must be an mlx.core.array, got {type(key).__name__}")
    keep.append(key)
    return key._p[0]


def _arr(v, keep):
    a = to_array(v)
    keep.append(a)
    return a._p[0]


def _dtype(d, default=D.float32):
    if d is None:  # as MLX: None means the function's default dtype
        d = default
    if not isinstance(d, D.Dtype):
        raise TypeError(f"dtype must be an mlx.core.Dtype, got {type(d).__name__}")
    return d.code


def key(seed):
    """A PRNG key from ``seed``."""
    return _res("mlx_random_key", int(seed))


def seed(seed):
    """Seeds the global PRNG (this thread's ``mx.random.state``)."""
    state._seed(int(seed))


def split(key, num=2, stream=None):
    """``num`` new keys from ``key`` (an array of shape ``(num, 2)``)."""
    keep = []
    return _res("mlx_random_split_num", _arr(key, keep), int(num), stream_handle(stream))


def uniform(low=0, high=1, shape=[], dtype=D.float32, key=None, stream=None):
    keep = []
    sh, n = _shape(shape)
    return _res("mlx_random_uniform", _arr(low, keep), _arr(high, keep), sh, n, _dtype(dtype), _key(key, keep),
                stream_handle(stream))


def normal(shape=[], dtype=D.float32, loc=None, scale=None, key=None, stream=None):
    keep = []
    sh, n = _shape(shape)
    # MLX's binding turns Python scalars into arrays of ``dtype``; complex64 needs that form
    # (a complex loc cannot travel as the C float of ``mlx_random_normal``).
    if dtype == D.complex64 and not (loc is None and scale is None):
        loc = None if loc is None else to_array(loc, D.complex64)
        scale = None if scale is None else to_array(scale, D.complex64)
    if isinstance(loc, array) or isinstance(scale, array):
        lo = lib.mlx_array_new() if loc is None else _arr(loc, keep)
        sc = lib.mlx_array_new() if scale is None else _arr(scale, keep)
        return _res("mlx_random_normal_broadcast", sh, n, _dtype(dtype), lo, sc, _key(key, keep), stream_handle(stream))
    return _res("mlx_random_normal", sh, n, _dtype(dtype), 0.0 if loc is None else float(loc),
                1.0 if scale is None else float(scale), _key(key, keep), stream_handle(stream))


def randint(low, high, shape=[], dtype=D.int32, key=None, stream=None):
    keep = []
    sh, n = _shape(shape)
    return _res("mlx_random_randint", _arr(low, keep), _arr(high, keep), sh, n, _dtype(dtype, D.int32), _key(key, keep),
                stream_handle(stream))


def bernoulli(p=0.5, shape=None, key=None, stream=None):
    keep = []
    pa = to_array(p)
    keep.append(pa)
    sh, n = _shape(pa.shape if shape is None else shape)
    return _res("mlx_random_bernoulli", pa._p[0], sh, n, _key(key, keep), stream_handle(stream))


def truncated_normal(lower, upper, shape=None, dtype=D.float32, key=None, stream=None):
    keep = []
    lo, hi = to_array(lower), to_array(upper)
    keep += [lo, hi]
    if shape is None:
        from . import broadcast_shapes

        shape = broadcast_shapes(lo.shape, hi.shape)
    sh, n = _shape(shape)
    return _res("mlx_random_truncated_normal", lo._p[0], hi._p[0], sh, n, _dtype(dtype), _key(key, keep),
                stream_handle(stream))


def gumbel(shape=[], dtype=D.float32, key=None, stream=None):
    keep = []
    sh, n = _shape(shape)
    return _res("mlx_random_gumbel", sh, n, _dtype(dtype), _key(key, keep), stream_handle(stream))


def laplace(shape=[], dtype=D.float32, loc=0.0, scale=1.0, key=None, stream=None):
    keep = []
    sh, n = _shape(shape)
    return _res("mlx_random_laplace", sh, n, _dtype(dtype), float(loc), float(scale), _key(key, keep),
                stream_handle(stream))


def categorical(logits, axis=-1, shape=None, num_samples=None, key=None, stream=None):
    keep = []
    lg = _arr(logits, keep)
    if shape is not None and num_samples is not None:
        raise ValueError("[categorical] At most one of shape or num_samples can be specified.")
    if shape is not None:
        sh, n = _shape(shape)
        return _res("mlx_random_categorical_shape", lg, int(axis), sh, n, _key(key, keep), stream_handle(stream))
    if num_samples is not None:
        return _res("mlx_random_categorical_num_samples", lg, int(axis), int(num_samples), _key(key, keep),
                    stream_handle(stream))
    return _res("mlx_random_categorical", lg, int(axis), _key(key, keep), stream_handle(stream))


def permutation(x, axis=0, key=None, stream=None):
    keep = []
    if isinstance(x, int) and not isinstance(x, bool):
        return _res("mlx_random_permutation_arange", x, _key(key, keep), stream_handle(stream))
    return _res("mlx_random_permutation", _arr(x, keep), int(axis), _key(key, keep), stream_handle(stream))


# Python name -> the C functions it needs.
_NEEDS = {
    "key": ["mlx_random_key"], "seed": ["mlx_random_seed"], "split": ["mlx_random_split_num"],
    "uniform": ["mlx_random_uniform"], "normal": ["mlx_random_normal", "mlx_random_normal_broadcast"],
    "randint": ["mlx_random_randint"], "bernoulli": ["mlx_random_bernoulli"],
    "truncated_normal": ["mlx_random_truncated_normal"], "gumbel": ["mlx_random_gumbel"],
    "laplace": ["mlx_random_laplace"],
    "categorical": ["mlx_random_categorical", "mlx_random_categorical_shape", "mlx_random_categorical_num_samples"],
    "permutation": ["mlx_random_permutation", "mlx_random_permutation_arange"],
}



def install(module):
    """Sets each function on ``module`` (mx.random) whose C functions the library exports."""
    g = globals()
    for name, needs in _NEEDS.items():
        if all(exported(c) for c in needs):
            f = g[name]
            f.__module__ = "mlx.core.random"
            setattr(module, name, f)
    if all(exported(c) for c in _NEEDS["key"] + _NEEDS["split"]):
        _RandomState.__module__ = "mlx.core.random"
        module._RandomState = _RandomState
        # Served by the module's __getattr__ as in MLX (whose submodule resolves it lazily), so
        # ``dir(mx.random)`` lists the same names as MLX's: no ``state``.
        fallback = module.__getattr__

        def __getattr__(attr):
            return state if attr == "state" else fallback(attr)

        module.__getattr__ = __getattr__
