"""Functions of real MLX that are exact compositions of other ops (as MLX itself defines them),
used (except the variadic ``atleast_*``) only while the C API has no function of that name: ``_bind_all`` binds C functions first
and ``install`` fills in just the names still missing, so a C op added later takes over."""


def _defs(mx):
    def isclose(a, b, /, rtol=1e-05, atol=1e-08, *, equal_nan=False, stream=None):
        a, b = mx.asarray(a), mx.asarray(b)
        rhs = mx.add(mx.multiply(mx.abs(b, stream=stream), rtol, stream=stream), atol, stream=stream)
        out = mx.less_equal(mx.abs(mx.subtract(a, b, stream=stream), stream=stream), rhs, stream=stream)
        any_inf = mx.logical_or(mx.isinf(a, stream=stream), mx.isinf(b, stream=stream), stream=stream)
        both_inf = mx.logical_and(any_inf, mx.equal(a, b, stream=stream), stream=stream)
        out = mx.logical_or(mx.logical_and(out, mx.logical_not(any_inf, stream=stream), stream=stream), both_inf,
                            stream=stream)
        if equal_nan:
            nans = mx.logical_and(mx.isnan(a, stream=stream), mx.isnan(b, stream=stream), stream=stream)
            out = mx.logical_or(out, nans, stream=stream)
        return out

    def allclose(a, b, /, rtol=1e-05, atol=1e-08, *, equal_nan=False, stream=None):
        return mx.all(isclose(a, b, rtol, atol, equal_nan=equal_nan, stream=stream), stream=stream)

    def array_equal(a, b, equal_nan=False, stream=None):
        a, b = mx.asarray(a), mx.asarray(b)
        if a.shape != b.shape:
            return mx.array(False)
        dt = mx.result_type(a, b)
        a, b = a.astype(dt, stream=stream), b.astype(dt, stream=stream)
        eq = mx.equal(a, b, stream=stream)
        if equal_nan and mx.issubdtype(dt, mx.inexact):
            eq = mx.logical_or(eq, mx.logical_and(mx.isnan(a, stream=stream), mx.isnan(b, stream=stream),
                                                  stream=stream), stream=stream)
        return mx.all(eq, stream=stream)

    def divmod(a, b, stream=None):
        """A list [quotient, remainder], as real MLX returns."""
        return [mx.floor_divide(a, b, stream=stream), mx.remainder(a, b, stream=stream)]

    def _atleast(shape_of):
        def f(*arys, stream=None):
            outs = []
            for a in arys:
                if not isinstance(a, mx.array):  # as MLX: only arrays are accepted
                    raise TypeError(f"atleast: expected mlx.core.array, got {type(a).__name__}")
                sh = shape_of(a.shape)
                outs.append(a if sh == a.shape else mx.reshape(a, sh, stream=stream))
            return outs[0] if len(outs) == 1 else outs
        return f

    atleast_1d = _atleast(lambda s: s if len(s) >= 1 else (1,))
    atleast_2d = _atleast(lambda s: s if len(s) >= 2 else ((1, 1) if not s else (1,) + s))
    atleast_3d = _atleast(lambda s: s if len(s) >= 3 else {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)])

    def _need_array(fname, a, spelled):
        # As MLX's nanobind signatures: only an mx.array is accepted for ``a``.
        if not isinstance(a, mx.array):
            raise TypeError(f"{fname}(): incompatible function arguments. The following argument types are "
                            f"supported:\n    1. {spelled}\n\nInvoked with types: {type(a).__name__}")

    def positive(a, /, *, stream=None):
        """Element-wise unary plus: a copy of ``a`` (same dtype)."""
        _need_array("positive", a, "positive(a: array, /, *, stream: StreamOrDevice = None) -> array")
        return mx.astype(a, a.dtype, stream=stream)

    def minmax(a, /, axis=None, keepdims=False, *, stream=None):
        """``(mx.min(a, axis, keepdims), mx.max(a, axis, keepdims))``, as MLX defines it."""
        _need_array("minmax", a, "minmax(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = "
                                 "False, *, stream: StreamOrDevice = None) -> tuple[array, array]")
        return (mx.min(a, axis, keepdims, stream=stream), mx.max(a, axis, keepdims, stream=stream))

    def matrix_transpose(a, /, *, stream=None):
        """Swaps the last two axes."""
        _need_array("matrix_transpose", a, "matrix_transpose(a: array, /, *, stream: StreamOrDevice = None) -> array")
        if a.ndim < 2:
            raise ValueError("[matrix_transpose] Input array must have at least 2 dimensions.")
        return mx.swapaxes(a, -1, -2, stream=stream)

    return {"positive": positive, "minmax": minmax, "matrix_transpose": matrix_transpose,
            "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d, "isclose": isclose, "allclose": allclose, "array_equal": array_equal, "divmod": divmod}


# Python-level signatures that a C function cannot carry (variadic, list result): these
# wrappers stay even when the C API exports a function of the same name.
_ALWAYS = {"atleast_1d", "atleast_2d", "atleast_3d"}


def install(namespace, mx):
    """Adds each composite to ``namespace`` unless the name is already bound there (the
    variadic ``atleast_*`` always)."""
    for name, f in _defs(mx).items():
        if name in _ALWAYS or name not in namespace:
            f.__module__ = "mlx.core"
            namespace[name] = f
