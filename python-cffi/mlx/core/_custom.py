"""``mx.custom_function`` (with ``.vjp``, ``.jvp``, ``.vmap``) and ``mx.checkpoint`` over the C
API's ``mlx_custom_function`` / ``mlx_checkpoint`` (``transforms.h``).

Each call builds C closures for the function and its rules. Unlike the closures of
``mx.grad`` (used within one call), these stay in the array graph — a later ``mx.grad`` may
call a rule long after the call returned — so each keeps its Python state alive in
``_LIVE`` until the library runs the payload destructor (``_release``).

An exception raised in a rule while a C transform runs cannot cross C; it is kept
(``_pending``) and the transform's Python caller re-raises it (``take_pending``), so the
user sees their own exception, as in MLX.
"""
import functools
import threading

from ._array import array
from ._ffi import error, ffi, lib
from ._transforms import _Vec, _arrays_of, _fill, _flatten

_LIVE = {}
_pending = threading.local()
# C types parsed once, at import: in cffi's ABI mode a first parse holds a lock that a
# garbage-collected handle's ``__del__`` (which frees through ``lib``) may need — a deadlock.
_UINTPTR, _CLOSURE_PTR, _INTS, _ARRAYS = (ffi.typeof(t) for t in ("uintptr_t", "mlx_closure*", "int[]", "mlx_array[]"))


def take_pending():
    """The exception a rule raised during the failed C call, if any (cleared)."""
    exc = getattr(_pending, "exc", None)
    _pending.exc = None
    return exc


def _failed():
    exc = take_pending()
    if exc is not None:
        lib.mlx_arm_clear_last_error()
        raise exc
    raise error()


@ffi.callback("void(*)(void*)")
def _release(payload):
    _LIVE.pop(int(ffi.cast(_UINTPTR, payload)), None)


def _payload(fn):
    """A C payload for ``fn``, alive until the library releases it."""
    h = ffi.new_handle(fn)
    _LIVE[int(ffi.cast(_UINTPTR, h))] = h
    return h


def _run(payload, res, call):
    """Runs the Python rule behind ``payload`` and stores its arrays in ``res``."""
    try:
        outs = call(ffi.from_handle(payload))
        hs = ffi.new(_ARRAYS, [o._p[0] for o in outs])
        if lib.mlx_vector_array_set_data(res, hs, len(outs)):
            raise error()
        return 0
    except BaseException as e:  # noqa: BLE001 — re-raised by the caller (take_pending)
        if getattr(_pending, "exc", None) is None:
            _pending.exc = e
        return 1


@ffi.callback("int(*)(mlx_vector_array*, const mlx_vector_array, void*)")
def _fun_cb(res, xs, payload):
    return _run(payload, res, lambda f: f(_arrays_of(xs)))


@ffi.callback("int(*)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const mlx_vector_array, void*)")
def _vjp_cb(res, p, c, o, payload):
    return _run(payload, res, lambda f: f(_arrays_of(p), _arrays_of(c), _arrays_of(o)))


@ffi.callback("int(*)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const int*, size_t, void*)")
def _jvp_cb(res, p, t, nums, n, payload):
    return _run(payload, res, lambda f: f(_arrays_of(p), _arrays_of(t), [nums[i] for i in range(n)]))


@ffi.callback("int(*)(mlx_vector_array*, mlx_vector_int*, const mlx_vector_array, const int*, size_t, void*)")
def _vmap_cb(res, res_axes, xs, axes, n, payload):
    def call(f):
        outs, out_axes = f(_arrays_of(xs), [axes[i] for i in range(n)])
        if lib.mlx_vector_int_set_data(res_axes, ffi.new(_INTS, out_axes), len(out_axes)):
            raise error()
        return outs

    return _run(payload, res, call)


def _closure(new, cb, fn):
    c = new(cb, _payload(fn), _release)
    if c.ctx == ffi.NULL:
        raise error()
    return c


def _apply(make, inputs):
    """Builds the transformed closure with ``make(res)`` and calls it on ``inputs``."""
    res = ffi.new(_CLOSURE_PTR, lib.mlx_closure_new())
    try:
        if make(res):
            _failed()
        vin, out = _Vec(inputs), _Vec()
        if lib.mlx_closure_apply(out.p, res[0], vin.p[0]):
            _failed()
        return out.list()
    finally:
        lib.mlx_closure_free(res[0])


def _arrays(tree):
    return _flatten(tree, [], False)


def _pairs(outs, axes, flat_outs, flat_axes):
    """The arrays of ``outs`` with their axis from the matching place of ``axes`` (None: -1)."""
    if isinstance(outs, array):
        if axes is not None and (isinstance(axes, bool) or not isinstance(axes, int)):
            raise ValueError("[custom vmap] The output axes should be ints or None.")
        flat_outs.append(outs)
        flat_axes.append(-1 if axes is None else axes)
    elif isinstance(outs, (list, tuple)):
        parts = axes if isinstance(axes, (list, tuple)) else [axes] * len(outs)
        if len(parts) != len(outs):
            raise ValueError("[custom vmap] The output axes should have the structure of the outputs.")
        for o, a in zip(outs, parts):
            _pairs(o, a, flat_outs, flat_axes)
    elif isinstance(outs, dict):
        for k, o in outs.items():
            _pairs(o, axes[k] if isinstance(axes, dict) else axes, flat_outs, flat_axes)


class custom_function:  # noqa: N801 — MLX's name
    """A function with custom vjp, jvp and vmap transforms (MLX's ``mx.custom_function``):
    it behaves as the wrapped function, but ``mx.grad``/``mx.vjp`` use the ``.vjp`` rule,
    ``mx.jvp`` the ``.jvp`` rule and ``mx.vmap`` the ``.vmap`` rule; an undefined rule falls
    back to transforming the function. Arrays it captures are constants."""

    def __init__(self, f):
        self._fun = f
        self._vjp = self._jvp = self._vmap = None
        functools.update_wrapper(self, f)

    def vjp(self, f):
        """Sets the vjp rule ``f(primals, cotangents, outputs, **kwargs)`` → cotangents shaped
        like the primals (the positional arguments; a single one is passed alone)."""
        self._vjp = f
        return self

    def jvp(self, f):
        """Sets the jvp rule ``f(primals, tangents)`` → tangents shaped like the outputs
        (a tangent is None where the input has none)."""
        self._jvp = f
        return self

    def vmap(self, f):
        """Sets the vmap rule ``f(inputs, axes)`` → ``(outputs, output axes)`` (axis None: not
        vectorized)."""
        self._vmap = f
        return self

    def __call__(self, *args, **kwargs):
        if self._vjp is None and self._jvp is None and self._vmap is None:
            return self._fun(*args, **kwargs)
        structure = (args, kwargs)
        inputs = _arrays(structure)
        out_tree = []

        def fun(xs):
            a, k = _fill(structure, xs, [0])
            out = self._fun(*a, **k)
            out_tree[:] = [out]
            return _arrays(out)

        def one(a):
            return a[0] if len(a) == 1 else a

        def vjp(primals, cotangents, outputs):
            a, k = _fill(structure, primals, [0])
            c, o = _fill(out_tree[0], cotangents, [0]), _fill(out_tree[0], outputs, [0])
            return _arrays(self._vjp(one(a), c, o, **k))

        def positional(xs, what):
            a, k = _fill(structure, xs, [0])
            if k:
                raise ValueError(f"[custom {what}] Function should only accept positional arguments")
            return a

        def jvp(primals, tangents, argnums):
            a = positional(primals, "jvp")
            given = dict(zip(argnums, tangents))
            t = _fill(a, [given.get(i) for i in range(len(primals))], [0])
            return _arrays(self._jvp(one(a), one(t)))

        def vmap(xs, axes):
            a = positional(xs, "vmap")
            ax = _fill(a, [None if x < 0 else x for x in axes], [0])
            result = self._vmap(one(a), one(ax))
            if not isinstance(result, tuple) or len(result) != 2:
                raise ValueError("[custom vmap] Vmap function should return a tuple with 2 items.")
            outs, out_axes = [], []
            _pairs(result[0], result[1], outs, out_axes)
            return outs, out_axes

        closures = [_closure(lib.mlx_closure_new_func_payload, _fun_cb, fun)]
        try:
            rules = []
            for rule, new, cb, f, empty in (
                (self._vjp, lib.mlx_closure_custom_new_func_payload, _vjp_cb, vjp, lib.mlx_closure_custom_new),
                (self._jvp, lib.mlx_closure_custom_jvp_new_func_payload, _jvp_cb, jvp, lib.mlx_closure_custom_jvp_new),
                (self._vmap, lib.mlx_closure_custom_vmap_new_func_payload, _vmap_cb, vmap, lib.mlx_closure_custom_vmap_new),
            ):
                rules.append(_closure(new, cb, f) if rule is not None else empty())
            closures += rules
            outs = _apply(lambda res: lib.mlx_custom_function(res, closures[0], *rules), inputs)
        finally:
            for c, free in zip(closures, (lib.mlx_closure_free, lib.mlx_closure_custom_free,
                                          lib.mlx_closure_custom_jvp_free, lib.mlx_closure_custom_vmap_free)):
                free(c)
        return _fill(out_tree[0], outs, [0])


def checkpoint(fun):
    """``fun`` with gradient checkpointing: its vjp runs ``fun`` again on the inputs instead
    of keeping the intermediates of the forward pass (less memory, more compute)."""

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        structure = (args, kwargs)
        out_tree = []

        def inner(xs):
            a, k = _fill(structure, xs, [0])
            out = fun(*a, **k)
            out_tree[:] = [out]
            return _arrays(out)

        c = _closure(lib.mlx_closure_new_func_payload, _fun_cb, inner)
        try:
            outs = _apply(lambda res: lib.mlx_checkpoint(res, c), _arrays(structure))
        finally:
            lib.mlx_closure_free(c)
        return _fill(out_tree[0], outs, [0])

    return wrapped


def install(g):
    """Adds ``custom_function`` and ``checkpoint`` to ``mlx.core`` when the library has them."""
    try:
        lib.mlx_custom_function, lib.mlx_checkpoint, lib.mlx_closure_custom_vmap_new_func_payload  # noqa: B018
    except AttributeError:
        return
    g.update(custom_function=custom_function, checkpoint=checkpoint)
