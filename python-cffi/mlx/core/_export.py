"""``mx.export_function``, ``mx.import_function`` and ``mx.exporter`` over the C API's
``export.h`` (docs/EXPORT.md).

A function is traced once per call signature and written with the constants it captured;
the imported function picks the trace that fits its call (positional count, keyword names,
each input's dtype and shape — only the number of axes for ``shapeless`` exports) and returns
a tuple of arrays. Inputs are arrays given as ``*args`` / ``**kwargs``, or one list/tuple of
arrays and/or one dict of arrays, as in MLX. Files use mlx-arm's own format: ``.mlxfn``
files written by Apple's MLX are refused with an error.
"""
import os

from ._ffi import error, ffi, lib

_BAD_INPUTS = ("Inputs can either be a variable number of positional and keyword arrays or a single tuple "
               "and/or dictionary of arrays.")


def _split(args, kwargs, tag):
    """The positional arrays and the keyword arrays of a call, in MLX's two spellings."""
    from ._array import array

    if args and isinstance(args[0], (list, tuple)) and not kwargs and (
            len(args) == 1 or (len(args) == 2 and isinstance(args[1], dict))):
        pos, kw = list(args[0]), dict(args[1]) if len(args) == 2 else {}
    elif len(args) == 1 and isinstance(args[0], dict) and not kwargs:
        pos, kw = [], dict(args[0])
    else:
        pos, kw = list(args), dict(kwargs)
    if not all(isinstance(a, array) for a in pos) or not all(isinstance(a, array) for a in kw.values()):
        raise ValueError(f"[{tag}] {_BAD_INPUTS}")
    return pos, kw


def _outputs(out):
    """The function's result as a list of arrays (an array, or a list/tuple of arrays)."""
    from ._array import array

    if isinstance(out, array):
        return [out]
    if isinstance(out, (list, tuple)) and all(isinstance(o, array) for o in out):
        return list(out)
    raise ValueError("[export_function] Outputs can be either a single array, a tuple, or a list of arrays.")


class _Map:
    """An owned C ``mlx_map_string_to_array`` of ``kw`` (freed with this object)."""

    def __init__(self, kw):
        self.c = lib.mlx_map_string_to_array_new()
        self.kw = kw  # the arrays live as long as the map
        for k, v in kw.items():
            if lib.mlx_map_string_to_array_insert(self.c, str(k).encode("utf-8"), v._p[0]):
                lib.mlx_map_string_to_array_free(self.c)
                raise error()

    def __del__(self):
        lib.mlx_map_string_to_array_free(self.c)


class FunctionExporter:
    """What ``mx.exporter(file, fun, *, shapeless=False)`` returns: a context manager; each
    call ``exporter(*args, **kwargs)`` traces ``fun`` for that signature and rewrites ``file``
    with every trace so far. Calling it after the ``with`` block is an error."""

    def __init__(self, file, fun, *, shapeless=False):
        from . import _transforms as tr

        # The call being traced: how many positional arrays, then which keyword names (the C
        # side passes the keyword arrays after the positional ones, sorted by name). A holder
        # rather than ``self``, so the closure makes no reference cycle.
        self._call = call = {"n": 0, "names": []}

        shapeless = bool(shapeless)

        def traced(xs):
            from ._basic_index import SHAPELESS_TRACES

            n = call["n"]
            SHAPELESS_TRACES[0] += shapeless  # (see _basic_index: keep shape-dependent no-ops)
            try:
                return _outputs(fun(*xs[:n], **dict(zip(call["names"], xs[n:]))))
            finally:
                SHAPELESS_TRACES[0] -= shapeless

        self._closure = tr._Closure(traced)
        self._x = lib.mlx_function_exporter_new(os.fspath(file).encode("utf-8"), self._closure.c, bool(shapeless))
        if self._x.ctx == ffi.NULL:
            self._x = None
            raise error()

    def __call__(self, *args, **kwargs):
        from . import _transforms as tr

        if self._x is None:
            raise RuntimeError("[export_function] Attempting to write after exporting is closed.")
        pos, kw = _split(args, kwargs, "export_function")
        self._call["n"], self._call["names"] = len(pos), sorted(kw)
        vec, m = tr._Vec(pos), _Map(kw)
        if lib.mlx_function_exporter_apply_kwargs(self._x, vec.p[0], m.c):
            self._closure.failed()

    def close(self):
        """Ends the export (the file already holds every trace)."""
        if self._x is not None:
            lib.mlx_function_exporter_free(self._x)
            self._x = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        self.close()


def exporter(file, fun, *, shapeless=False):
    """A ``FunctionExporter`` writing traces of ``fun`` to ``file``."""
    return FunctionExporter(file, fun, shapeless=shapeless)


def export_function(file, fun, *args, shapeless=False, **kwargs):
    """Traces ``fun`` on the example arrays and writes it to ``file``."""
    with exporter(file, fun, shapeless=shapeless) as ex:
        ex(*args, **kwargs)


class _Imported:
    """A function read from a file: call it with arrays; it returns a tuple of arrays."""

    def __init__(self, file):
        self._x = lib.mlx_imported_function_new(os.fspath(file).encode("utf-8"))
        if self._x.ctx == ffi.NULL:
            self._x = None
            raise error()

    def __call__(self, *args, **kwargs):
        from . import _transforms as tr

        pos, kw = _split(args, kwargs, "import_function::call")
        vec, m, res = tr._Vec(pos), _Map(kw), tr._Vec()
        if lib.mlx_imported_function_apply_kwargs(res.p, self._x, vec.p[0], m.c):
            raise error()
        return tuple(res.list())

    def __del__(self):
        if getattr(self, "_x", None) is not None:
            lib.mlx_imported_function_free(self._x)


def import_function(file):
    """The function exported to ``file`` by ``export_function`` / ``exporter``."""
    return _Imported(file)


def install(g):
    """Adds the functions to ``mlx.core`` when the library exports ``export.h``."""
    from ._transforms import _has

    if _has("mlx_function_exporter_apply_kwargs") and _has("mlx_imported_function_apply_kwargs"):
        g.update(export_function=export_function, import_function=import_function, exporter=exporter,
                 FunctionExporter=FunctionExporter)
