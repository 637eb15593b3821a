"""``mx.compile``, ``mx.disable_compile`` and ``mx.enable_compile``.

MLX's ``compile`` traces the function once per input signature and replays a fused graph.
mlx-arm has no kernel fusion yet, so the compiled function *runs the function itself* on every
call: it computes the same values as real MLX's compiled function for every pure function
(MLX's contract for ``compile``), and its state arguments are honoured by construction —
arrays named in ``inputs`` are read where they are when the call runs, and whatever the
function stores into the ``outputs`` containers (``mx.random.state`` included: the random
functions advance it themselves) is there after the call, as MLX writes it back.

Where MLX's result depends on tracing happening only once, this differs, and docs/COMPAT.md
says so: Python side effects run on every call, and an array captured from an enclosing scope
is read afresh (MLX keeps the value it saw at the first trace unless it is listed in
``inputs``). ``shapeless`` is accepted and checked; it changes nothing here, since every call
runs at its own shapes.
"""
import functools

_enabled = [True]
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


def compile(fun, inputs=None, outputs=None, shapeless=False):  # noqa: A001 (MLX's name)
    """A function that computes what ``fun`` computes (see the module note: no fusion yet).

    ``inputs`` / ``outputs``: trees (list, dict, ``mx.random.state`` …) of arrays that ``fun``
    reads / updates besides its arguments. ``shapeless``: reuse one graph across shapes in
    MLX; accepted here.
    """
    if not callable(fun):
        raise TypeError(
            "compile(): incompatible function arguments. The first argument must be callable, "
            f"got {type(fun).__name__}"
        )
    if not isinstance(shapeless, bool):
        raise TypeError(f"compile(): shapeless must be a bool, got {type(shapeless).__name__}")

    @functools.wraps(fun)
    def compiled(*args, **kwargs):
        _check_args(args)  # MLX checks them even when compilation is disabled
        _check_args(kwargs)
        return fun(*args, **kwargs)

    compiled.__wrapped__ = fun
    return compiled


def disable_compile():
    """Turns compilation off globally (compiled functions then run uncompiled in MLX, which
    is what they always do here)."""
    _enabled[0] = False


def enable_compile():
    """Turns compilation back on after ``disable_compile``."""
    _enabled[0] = True
