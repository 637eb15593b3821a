"""``mx.export_function``, ``mx.import_function`` and ``mx.exporter`` over the C API's
``export.h`` (docs/EXPORT.md).

A function is traced once per call signature and written with the constants it captured;
the imported function picks the trace that fits its call (positional count, keyword names,
each input's dtype and shape — only the number of axes for ``shapeless`` exports) and returns
a tuple of arrays. Inputs are arrays given as ``*args`` / ``**kwargs``, or one list/tuple of
arrays and/or one dict of arrays, as in MLX. Files use mlx-arm's own format: ``.mlxfn``
files written by Apple's MLX are refused with an error.
"""
import json
import os

from ._nbargs import incompatible
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


def _traced(fun, call, shapeless):
    """The flat function the C side traces: ``call`` holds how many positional arrays come
    first and the keyword names of the rest (the C side passes the keyword arrays after the
    positional ones, sorted by name). A holder rather than an object with ``fun``, so the
    closure makes no reference cycle."""

    def traced(xs):
        from ._basic_index import SHAPELESS_TRACES

        n = call["n"]
        SHAPELESS_TRACES[0] += shapeless  # (see _basic_index: keep shape-dependent no-ops)
        try:
            return _outputs(fun(*xs[:n], **dict(zip(call["names"], xs[n:]))))
        finally:
            SHAPELESS_TRACES[0] -= shapeless

    return traced


_SIGNATURES = {
    "export_function": "export_function(file_or_callback: str | Callable, fun: Callable, *args, shapeless: bool = "
                       "False, metadata: str | None = None, **kwargs) -> None",
    "exporter": "exporter(file: str, fun: collections.abc.Callable, *, shapeless: bool = False, metadata: str | "
                "None = None) -> mlx.core.FunctionExporter",
}


def _bad_call(tag, args, kwargs):
    """MLX's (nanobind's) TypeError for arguments of the wrong types."""
    return incompatible(tag, _SIGNATURES[tag], args, kwargs)


class FunctionExporter:
    """What ``mx.exporter(file, fun, *, shapeless=False, metadata=None)`` returns: a context
    manager; each call ``exporter(*args, **kwargs)`` traces ``fun`` for that signature and
    rewrites ``file`` with every trace so far (and ``metadata``, a string kept with the
    function). Calling it after the ``with`` block is an error."""

    def __init__(self, file, fun, *, shapeless=False, metadata=None):
        from . import _transforms as tr

        self._x = None  # (so that __del__ of a half-made exporter frees nothing)
        if not isinstance(file, (str, os.PathLike)) or not (metadata is None or isinstance(metadata, str)):
            kw = {"shapeless": shapeless} if shapeless else {}
            raise _bad_call("exporter", (file, fun), dict(kw, **({} if metadata is None else {"metadata": metadata})))
        self._call = call = {"n": 0, "names": []}
        shapeless = bool(shapeless)
        self._closure = tr._Closure(_traced(fun, call, shapeless))
        path = os.fspath(file).encode("utf-8")
        if metadata is None:
            self._x = lib.mlx_function_exporter_new(path, self._closure.c, shapeless)
        else:
            self._x = lib.mlx_arm_function_exporter_new_metadata(path, self._closure.c, shapeless, metadata.encode("utf-8"))
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


def exporter(file, fun, *, shapeless=False, metadata=None):
    """A ``FunctionExporter`` writing traces of ``fun`` (and the string ``metadata``) to ``file``."""
    return FunctionExporter(file, fun, shapeless=shapeless, metadata=metadata)


def _arguments(v):
    """A primitive's argument from the listing's JSON: shapes are tuples, dtypes Dtype objects."""
    from ._dtypes import _by_name

    if isinstance(v, dict) and "shape" in v:
        return tuple(v["shape"])
    if isinstance(v, dict) and "dtype" in v:
        return _by_name(v["dtype"])
    if isinstance(v, dict) and "tuples" in v:  # CustomKernel's shape infos
        return [tuple(t) for t in v["tuples"]]
    return v


def _export_to_callback(callback, fun, args, kwargs, shapeless):
    """Calls ``callback`` with MLX's export events for ``fun`` traced on the arrays: one dict
    per event, ``"type"`` being ``inputs``, ``keyword_inputs``, ``outputs``, ``constants`` or
    ``primitive`` (docs/EXPORT.md)."""
    from . import _transforms as tr
    from ._dtypes import _by_name

    pos, kw = _split(args, kwargs, "export_function")
    call = {"n": len(pos), "names": sorted(kw)}
    closure = tr._Closure(_traced(fun, call, bool(shapeless)))
    vec, m, consts = tr._Vec(pos), _Map(kw), tr._Vec()
    st = ffi.new("mlx_string*")
    st[0] = lib.mlx_string_new()
    try:
        if lib.mlx_arm_export_listing(st, consts.p, closure.c, vec.p[0], m.c, bool(shapeless)):
            closure.failed()
        events = json.loads(ffi.string(lib.mlx_string_data(st[0])).decode("utf-8"))
    finally:
        lib.mlx_string_free(st[0])
    constants = consts.list()
    values = lambda vs: [(n, tuple(s), _by_name(d)) for n, s, d in vs]  # noqa: E731
    for e in events:
        t = e["type"]
        if t in ("inputs", "outputs"):
            e[t] = values(e[t])
        elif t == "keyword_inputs":
            e["keywords"] = [tuple(k) for k in e["keywords"]]
        elif t == "constants":
            e["constants"] = [(n, constants[i]) for n, i in e["constants"]]
        else:
            e["inputs"], e["outputs"] = values(e["inputs"]), values(e["outputs"])
            e["arguments"] = [_arguments(a) for a in e["arguments"]]
        callback(e)


def export_function(file_or_callback, fun, *args, shapeless=False, metadata=None, **kwargs):
    """Traces ``fun`` on the example arrays and writes it to a file (with the string
    ``metadata``), or hands its graph to a callback, event by event."""
    if not (metadata is None or isinstance(metadata, str)):
        kw = dict(kwargs, metadata=metadata, **({"shapeless": shapeless} if shapeless else {}))
        raise _bad_call("export_function", (file_or_callback, fun) + args, kw)
    if callable(file_or_callback) and not isinstance(file_or_callback, (str, os.PathLike)):
        if metadata is not None:
            raise ValueError(
                "[export_function] The metadata argument is only supported when exporting to a file, "
                "not when using a callback.")
        _export_to_callback(file_or_callback, fun, args, kwargs, shapeless)
        return
    with exporter(file_or_callback, fun, shapeless=shapeless, metadata=metadata) as ex:
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


def import_function(file, return_metadata=False):
    """The function exported to ``file`` by ``export_function`` / ``exporter``; with
    ``return_metadata``, the pair of it and the metadata string it was exported with."""
    f = _Imported(file)
    if not return_metadata:
        return f
    st = ffi.new("mlx_string*")
    st[0] = lib.mlx_string_new()
    try:
        if lib.mlx_arm_imported_function_metadata(st, f._x):
            raise error()
        return f, ffi.string(lib.mlx_string_data(st[0])).decode("utf-8")
    finally:
        lib.mlx_string_free(st[0])


def install(g):
    """Adds the functions to ``mlx.core`` when the library exports ``export.h``."""
    from ._transforms import _has

    needed = ("mlx_function_exporter_apply_kwargs", "mlx_imported_function_apply_kwargs", "mlx_arm_export_listing",
              "mlx_arm_function_exporter_new_metadata", "mlx_arm_imported_function_metadata")
    if all(_has(n) for n in needed):
        g.update(export_function=export_function, import_function=import_function, exporter=exporter,
                 FunctionExporter=FunctionExporter)
