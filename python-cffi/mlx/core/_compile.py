"""``mx.compile``, ``mx.disable_compile`` and ``mx.enable_compile`` over the C API's
``mlx_compile`` (``compile.h``; docs/COMPILE.md).

As in MLX, the function is traced once per input signature — the structure of its
arguments, their non-array leaves (constants: a new constant traces again), and each array's
dtype and shape (only its number of axes with ``shapeless=True``) — and later calls replay
the recorded graph, simplified and with chains of elementwise ops fused into one kernel.
Python side effects therefore run at trace time only, and arrays captured from an enclosing
scope are frozen at their first-trace values unless listed in ``inputs``.

``inputs`` / ``outputs`` are trees (list, dict, ``mx.random.state`` …) of arrays the function
reads / updates besides its arguments: during the trace their arrays are replaced (in place)
by tracers, and after each call the arrays the function stored into ``outputs`` are written
back with their new values, as MLX does. ``MLX_DISABLE_COMPILE`` in the environment, or
``disable_compile()``, makes compiled functions call the function directly.
"""
import functools
import os

from ._ffi import ffi, lib

_enabled = [not os.environ.get("MLX_DISABLE_COMPILE")]
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _check_args(tree):
    """MLX's argument rule: trees (list, tuple, dict) of arrays or constants."""
    from ._array import array

    stack = [tree]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif not (x is None or isinstance(x, (array, int, float, str))):
            t = type(x)
            # MLX names classes written in Python with their module, built-in types without.
            name = f"{t.__module__}.{t.__name__}" if t.__flags__ & _HEAPTYPE else t.__name__
            raise ValueError(
                "[compile] Function arguments must be trees of arrays or constants (floats, "
                f"ints, strings, or None), but received type {name}."
            )


def _key(tree, shapeless):
    """The hashable signature of an argument tree: its structure, its constants, typed (``1``
    and ``1.0`` differ), and its arrays' dtypes and (unless ``shapeless``) shapes — one trace,
    and one recorded output tree, per signature the C side traces (a function may return other
    trees, or update other state, for another dtype)."""
    from ._array import array

    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, tuple(_key(t, shapeless) for t in tree))
    if isinstance(tree, dict):
        return ("dict", tuple((k, _key(v, shapeless)) for k, v in tree.items()))
    if isinstance(tree, array):
        return ("array", str(tree.dtype), tree.ndim if shapeless else tuple(tree.shape))
    return (type(tree).__name__, tree)


def _replace(tree, leaves, pos, undo):
    """Replaces the arrays of a state tree in place (lists, dicts and ``mx.random.state``;
    tuples are walked), in order, by ``leaves[pos[0]:]``; each ``(container, key, old, new)``
    goes to ``undo``."""
    from ._array import array
    from ._random import _RandomState

    if isinstance(tree, _RandomState):
        old, new = tree[0], leaves[pos[0]]
        pos[0] += 1
        tree._local.key = new
        undo.append((tree, 0, old, new))
        return
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, (list, tuple)) else ()
    for k, v in list(items):
        if isinstance(v, array):
            new = leaves[pos[0]]
            pos[0] += 1
            if isinstance(tree, tuple):
                raise ValueError("[compile] The state arrays of inputs/outputs must sit in lists or dicts.")
            tree[k] = new
            undo.append((tree, k, v, new))
        else:
            _replace(v, leaves, pos, undo)


def _state_arrays(tree, out):
    """Appends the arrays of a state tree (as ``_replace`` visits them) to ``out``."""
    from ._array import array
    from ._random import _RandomState

    if isinstance(tree, _RandomState):
        out.append(tree[0])
    elif isinstance(tree, (list, tuple)):
        for t in tree:
            _state_arrays(t, out)
    elif isinstance(tree, dict):
        for t in tree.values():
            _state_arrays(t, out)
    elif isinstance(tree, array):
        out.append(tree)
    return out


def _undo(undo):
    """Puts back the state arrays ``_replace`` swapped, where the function left its tracer."""
    from ._random import _RandomState

    for tree, k, old, new in reversed(undo):
        if tree[k] is new:
            if isinstance(tree, _RandomState):
                tree._local.key = old
            else:
                tree[k] = old


class _Trace:
    """One argument signature of a compiled function: the C compiled closure and the trees
    recorded by its trace."""

    def __init__(self, fun, args, kwargs, inputs, outputs, shapeless):
        from . import _transforms as tr

        from ._array import array

        self.n_args = n_args = len(tr._flatten((args, kwargs), [], False))
        # The trace fills the arguments' arrays with tracers: array arguments given directly
        # are kept as placeholders, so the compiled function does not keep this call's arrays
        # alive (nor stop their buffers from being donated to its result). Arrays inside lists
        # and modules stay: those are filled in place, the function sees the caller's object.
        args = tuple(tr.LEAF if isinstance(a, array) else a for a in args)
        kwargs = {k: (tr.LEAF if isinstance(v, array) else v) for k, v in kwargs.items()}
        # What the trace records, in a holder the traced function shares: closing over
        # ``self`` would make a cycle that the garbage collector frees at arbitrary points.
        self.rec = rec = {"tree": None, "n": 0}

        def traced(xs):
            from ._basic_index import SHAPELESS_TRACES

            placed = []  # an nn.Module argument (a dict subclass) is filled in place
            a, kw = tr._fill((args, kwargs), xs[:n_args], [0], placed)
            undo = []
            if inputs is not None:
                _replace(inputs, xs[n_args:], [0], undo)
            SHAPELESS_TRACES[0] += shapeless
            try:
                out = fun(*a, **kw)
                flat = tr._flatten(out, [], False)
                state = _state_arrays(outputs, []) if outputs is not None else []
            finally:
                SHAPELESS_TRACES[0] -= shapeless
                _undo(undo)
                tr._restore(placed)
            # The output's structure only: its arrays are tracers over this call's arguments,
            # which the compiled function must not keep alive (nor their buffers from being
            # donated to a later result).
            rec["tree"], rec["n"] = tr._fill(out, [tr.LEAF] * len(flat), [0]), len(flat)
            return flat + state

        self.closure = tr._Closure(traced)
        res = ffi.new("mlx_closure*", lib.mlx_closure_new())
        if lib.mlx_compile(res, self.closure.c, shapeless):
            lib.mlx_closure_free(res[0])
            from ._ffi import error

            raise error()
        self.compiled = res[0]
        self._free = lib.mlx_closure_free  # bound now: a finalizer must not look names up on lib

    def call(self, arrays, outputs):
        from . import _transforms as tr

        xs, r = tr._Vec(arrays), tr._Vec()
        if lib.mlx_closure_apply(r.p, self.compiled, xs.p[0]):
            self.closure.failed()
        outs = r.list()
        n = self.rec["n"]
        if outputs is not None:
            _replace(outputs, outs[n:], [0], [])
        return tr._fill(self.rec["tree"], outs[:n], [0])

    def __del__(self):
        self._free(self.compiled)


def compile(fun, inputs=None, outputs=None, shapeless=False):  # noqa: A001 (MLX's name)
    """``fun`` compiled: traced once per argument signature and replayed fused (see the
    module note). ``inputs`` / ``outputs``: trees of arrays ``fun`` reads / updates besides
    its arguments. ``shapeless``: one trace serves every shape of the same rank.
    """
    if not callable(fun):
        raise TypeError(
            "compile(): incompatible function arguments. The first argument must be callable, "
            f"got {type(fun).__name__}"
        )
    if not isinstance(shapeless, bool):
        raise TypeError(f"compile(): shapeless must be a bool, got {type(shapeless).__name__}")
    traces = {}

    @functools.wraps(fun)
    def compiled(*args, **kwargs):
        from . import _transforms as tr

        _check_args(args)  # MLX checks them even when compilation is disabled
        _check_args(kwargs)
        if not _enabled[0]:
            return fun(*args, **kwargs)
        arrays = tr._flatten((args, kwargs), [], False)
        state = _state_arrays(inputs, []) if inputs is not None else []
        key = (_key((args, kwargs), shapeless), _key(state, shapeless))
        trace = traces.get(key)
        if trace is None:
            trace = traces[key] = _Trace(fun, args, kwargs, inputs, outputs, shapeless)
        arrays += state
        return trace.call(arrays, outputs)

    compiled.__wrapped__ = fun
    return compiled


def disable_compile():
    """Turns compilation off globally: compiled functions call the function directly."""
    _enabled[0] = False
    lib.mlx_disable_compile()


def enable_compile():
    """Turns compilation back on after ``disable_compile`` (or ``MLX_DISABLE_COMPILE``)."""
    _enabled[0] = True
    lib.mlx_enable_compile()
