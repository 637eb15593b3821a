"""Binds C ops to ``mx.<name>`` automatically, with real MLX's Python signatures.

Inputs:
- ``_signatures.json``: real MLX's parameter names, kinds (positional-only, keyword-only) and
  defaults, read from its docstrings by tools/gen_signatures.py;
- the C declarations (``_ffi.FUNCTIONS``): ``int mlx_<name>[_axis|_axes](outputs…, inputs…,
  const mlx_stream s)``, with parameter names.

For ``mx.<name>`` (``mx.random.<name>`` → ``mlx_random_<name>`` and so on) the C variants are
collected; a call binds its arguments with MLX's signature, picks the variant by the ``axis``
argument (None → the variant without an axis parameter, an int → ``_axis``, a sequence →
``_axes``) and converts each C parameter from the Python argument of the same name. A C op
added later is picked up with no Python change, provided its parameter names match MLX's.

Never silently wrong: an argument that is not at its default but that the chosen C variant
cannot receive raises NotImplementedError, as does a C parameter with no Python counterpart.
"""
import json
import os

from . import _dtypes as D
from ._array import _ARR_PTR, _C, _Ctx, _newp, array, stream_handle, to_array, weak_scalar, wrap
from ._ffi import FUNCTIONS, check, error, ffi, lib

_obj_new = object.__new__

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "_signatures.json"), encoding="utf-8") as _f:
    SIGNATURES = json.load(_f)["functions"]

_MISSING = object()
_VAR_ARRAY_PTR = ffi.typeof("mlx_vector_array*")


def eval_default(text):
    """A default value from the signature text (``None``, ``-1``, ``float32``, ``[]`` …)."""
    if text is None:
        return _MISSING
    env = dict(D.NAMES)
    env.update({"None": None, "True": True, "False": False, "inf": float("inf")})
    try:
        return eval(text, {"__builtins__": {}}, env)  # literals and dtype names only
    except Exception:
        return _MISSING


class Signature:
    """A parsed MLX signature that binds ``*args, **kwargs`` into ``{name: value}``."""

    def __init__(self, name, spec):
        self.name = name
        self.params = spec["params"]
        self.defaults = {p["name"]: eval_default(p.get("default")) for p in self.params}
        self.types = {p["name"]: p.get("type", "") for p in self.params}
        self.positional = [p["name"] for p in self.params if p["kind"] in ("posonly", "pos")]
        self.posonly = {p["name"] for p in self.params if p["kind"] == "posonly"}
        self.names = {p["name"] for p in self.params if p["kind"] in ("pos", "kwonly")}
        self.npos = len(self.positional)
        # (name, default, is_var) in order: what bind fills in for parameters not passed.
        self.fill = [(p["name"], self.defaults[p["name"]], p["kind"] in ("varpos", "varkw")) for p in self.params]

    def bind(self, args, kwargs):
        if len(args) > self.npos:
            raise TypeError(f"{self.name}() takes at most {self.npos} positional arguments ({len(args)} given)")
        out = dict(zip(self.positional, args))
        if kwargs:
            for k, v in kwargs.items():
                if k not in self.names:
                    raise TypeError(f"{self.name}() got an unexpected keyword argument '{k}'")
                if k in out:
                    raise TypeError(f"{self.name}() got multiple values for argument '{k}'")
                out[k] = v
        for n, d, is_var in self.fill:
            if n not in out:
                if d is _MISSING:
                    if is_var:
                        continue
                    raise TypeError(f"{self.name}() missing required argument: '{n}'")
                out[n] = d
        return out


def _ints(v, what):
    t = type(v)
    if t is tuple or t is list:  # the common case: plain ints, passed as they are
        for x in v:
            if type(x) is not int:
                break
        else:
            return v
    if isinstance(v, int) and not isinstance(v, bool):
        return [v]
    try:
        seq = [int(x.__index__()) for x in v]
    except (TypeError, AttributeError):
        raise TypeError(f"{what} must be an int or a sequence of ints, got {type(v).__name__}") from None
    return seq


def _int(v, what):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{what} must be an int, got {type(v).__name__}")
    return v.__index__()


class Variant:
    """One C function and how to fill its parameters."""

    def __init__(self, cname):
        ret, params = FUNCTIONS[cname]
        self.cname = cname
        self.fn = getattr(lib, cname)
        self.outs = []  # output kinds, in order: "array" | "vector"
        self.ins = []  # (c type, name, companion length param or None)
        i = 0
        while i < len(params) and params[i][0] in ("mlx_array*", "mlx_vector_array*"):
            self.outs.append("array" if params[i][0] == "mlx_array*" else "vector")
            i += 1
        rest = params[i:]
        names = [n for _, n in rest]
        for j, (t, n) in enumerate(rest):
            if n.endswith("_num") and n[:-4] in names and t == "size_t":
                continue
            companion = n + "_num" if t.endswith("*") and (n + "_num") in names else None
            self.ins.append((t.replace("const ", "").strip(), n, companion))
        self.in_names = {n for _, n, _ in self.ins}
        # The per-call plan: (name, converter or None for the stream, has a length companion).
        self.steps = [(n, None if t == "mlx_stream" else converter(t), companion is not None) for t, n, companion in self.ins]
        self.single = self.outs == ["array"]


_OPTIONAL = {"mlx_optional_int": "int", "mlx_optional_float": "float", "mlx_optional_dtype": "dtype"}


# One converter per C parameter type, looked up once per variant (not per call):
# ``conv(name, value, keep, as_array)`` gives the C argument for ``value`` (a (buffer, length)
# pair for pointer parameters with a ``_num`` companion); ``keep`` holds temporaries alive until
# the call ends; ``as_array(name, value)`` makes array arguments (weak scalars included).
def _conv_array(name, value, keep, as_array):
    if value is None:
        return lib.mlx_array_new()  # the empty handle: mlx-c's "no array"
    a = as_array(name, value)
    keep.append(a)
    return a._p[0]


def _conv_bool(name, value, keep, as_array):
    return bool(value)


def _conv_int(name, value, keep, as_array):
    return _int(value, name)


def _conv_float(name, value, keep, as_array):
    return float(value)


def _conv_dtype(name, value, keep, as_array):
    if not isinstance(value, D.Dtype):
        raise TypeError(f"{name} must be an mlx.core.Dtype, got {type(value).__name__}")
    return value.code


def _conv_ints(ctype):
    arr_type = ffi.typeof(ctype.replace("*", "[]"))

    def conv(name, value, keep, as_array):
        vals = _ints(value, name)
        buf = ffi.new(arr_type, vals)
        keep.append(buf)
        return buf, len(vals)

    return conv


def _conv_str(name, value, keep, as_array):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    buf = ffi.new("char[]", value.encode("utf-8"))
    keep.append(buf)
    return buf


def _conv_vector(name, value, keep, as_array):
    arrs = [to_array(x) for x in value]
    keep.extend(arrs)
    hs = ffi.new("mlx_array[]", [x._p[0] for x in arrs])
    vec = lib.mlx_vector_array_new_data(hs, len(arrs))
    keep.append(_VecGuard(vec))
    return vec


def _conv_optional(ctype):
    kind = _OPTIONAL[ctype]
    ptr_type = ffi.typeof(ctype + "*")

    def conv(name, value, keep, as_array):
        o = ffi.new(ptr_type)
        if value is not None:
            o.has_value = True
            o.value = value.code if kind == "dtype" else (float(value) if kind == "float" else _int(value, name))
        return o[0]

    return conv


def _conv_unknown(ctype):
    def conv(name, value, keep, as_array):
        raise NotImplementedError(f"C parameter type {ctype} ({name}) has no Python conversion yet")

    return conv


_SIMPLE = {"mlx_array": _conv_array, "bool": _conv_bool, "float": _conv_float, "double": _conv_float,
           "mlx_dtype": _conv_dtype, "char*": _conv_str, "mlx_vector_array": _conv_vector}
for _t in ("int", "int32_t", "int64_t", "uint64_t", "size_t", "uint32_t"):
    _SIMPLE[_t] = _conv_int


def converter(ctype):
    """The converter for C parameter type ``ctype`` (see above)."""
    if ctype in _SIMPLE:
        return _SIMPLE[ctype]
    if ctype in ("int*", "int64_t*"):
        return _conv_ints(ctype)
    if ctype in _OPTIONAL:
        return _conv_optional(ctype)
    return _conv_unknown(ctype)


class _VecGuard:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __del__(self):
        lib.mlx_vector_array_free(self.v)


def _vector_to_list(v):
    try:
        n = lib.mlx_vector_array_size(v)
        out = []
        for i in range(n):
            p = ffi.new(_ARR_PTR)
            check(lib.mlx_vector_array_get(p, v, i))
            out.append(wrap(p))
        return out
    finally:
        lib.mlx_vector_array_free(v)


# Ops whose `dtype` argument casts the input before the op (real MLX 0.32.4's Python binding).
_DTYPE_CASTS_INPUT = frozenset({"cumsum", "cumprod"})

# Ops whose list of arrays real MLX 0.32.4 returns as a tuple (the others return a list).
_TUPLE_VECTORS = frozenset({"unstack"})


def _vector_result(pyname, v):
    out = _vector_to_list(v)
    return tuple(out) if pyname in _TUPLE_VECTORS else out


def _is_array_type(t):
    return "array" in t or "scalar" in t


class Op:
    """``mx.<name>`` over its C variants (see the module doc)."""

    def __init__(self, pyname, sig, variants):
        self.pyname = pyname
        self.sig = sig
        self.variants = variants  # list of Variant
        by = {}
        for v in variants:
            if "axis" in v.in_names:
                by.setdefault("axis", v)
            elif "axes" in v.in_names:
                by.setdefault("axes", v)
            else:
                by.setdefault("none", v)
        self.by = by
        # Array-like parameters that combine with weak typing (binary ops, where's x/y: MLX
        # converts where's condition on its own, so it takes no part in the promotion).
        self.weak = [p["name"] for p in sig.params
                     if p["kind"] in ("posonly", "pos") and "scalar" in p.get("type", "") and p["name"] != "condition"]
        if len(self.weak) < 2:
            self.weak = []
        # Without an axis parameter the variant never depends on the arguments: chosen once.
        names = {p["name"] for p in sig.params}
        self.fixed = None if names & {"axis", "axes"} else (by.get("none") or variants[0])
        self._unused = {v.cname: self._unchecked(v) for v in variants}

    def choose(self, b):
        """The variant for bound args ``b`` and the adjusted args."""
        axis_key = "axis" if "axis" in b else ("axes" if "axes" in b else None)
        if axis_key is None:
            return self.by.get("none") or self.variants[0], b
        ax = b[axis_key]
        if ax is None:
            if "none" in self.by:
                return self.by["none"], b
            if "axes" in self.by and self.by["axes"] is not None:
                b = dict(b)
                b["axes"] = list(range(to_array(self._first_array(b)).ndim))
                return self.by["axes"], b
            if "axis" in self.by:
                # MLX's convention for single-axis ops: axis=None works on the flattened array.
                b = dict(b)
                name = self._first_array_name(b)
                a = to_array(b[name])
                p = ffi.new(_ARR_PTR)
                check(lib.mlx_reshape(p, a._p[0], ffi.new("int[]", [-1]), 1, _Ctx.stream))
                b[name] = wrap(p)
                b["axis"] = 0
                return self.by["axis"], b
        elif isinstance(ax, int) or hasattr(ax, "__index__") and not isinstance(ax, (list, tuple)):
            if "axis" in self.by:
                b = dict(b)
                b["axis"] = ax
                return self.by["axis"], b
            if "axes" in self.by:
                b = dict(b)
                b["axes"] = [ax]
                return self.by["axes"], b
        else:
            if "axes" in self.by:
                b = dict(b)
                b["axes"] = list(ax)
                return self.by["axes"], b
            if "axis" in self.by and len(ax) == 1:
                b = dict(b)
                b["axis"] = ax[0]
                return self.by["axis"], b
        raise NotImplementedError(f"mx.{self.pyname}: {axis_key}={ax!r} is not supported by the C API yet")

    def _first_array_name(self, b):
        for p in self.sig.params:
            if p["name"] in b and _is_array_type(p.get("type", "")):
                return p["name"]
        raise TypeError(f"{self.pyname}(): no array argument")

    def _first_array(self, b):
        return b[self._first_array_name(b)]

    def _unchecked(self, v):
        """Bound arguments that ``v`` does not receive (only their defaults are accepted):
        (name, default) pairs."""
        taken = set(v.in_names) | {"axis", "axes"}
        if any(c is None for _, c, _ in v.steps):
            taken.add("stream")
        return [(n, d) for n, d, _ in self.sig.fill if n not in taken]

    def only_default(self, n, val, d):
        """Raises NotImplementedError unless ``val`` is the default ``d`` of argument ``n`` (which
        the chosen C function cannot receive)."""
        if d is _MISSING or not (val is d or (val == d if not isinstance(val, array) else False)):
            raise NotImplementedError(f"mx.{self.pyname}: argument '{n}' is not supported by the C API yet (only its default {d!r})")

    def weak_as_array(self, b):
        """``as_array`` for a call whose weak operands are not all arrays: Python scalars take
        the promoted dtype of the array operands (MLX's weak typing)."""
        weak, weak_dtype = self.weak, None
        for n in weak:
            x = b.get(n)
            if isinstance(x, array):
                d = x.dtype
                weak_dtype = d if weak_dtype is None else D.promote_types(weak_dtype, d)

        def as_array(name, value):
            if isinstance(value, array):
                return value
            if weak_dtype is not None and name in weak:
                if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
                    value = value.item()
                a = weak_scalar(value, weak_dtype)
                if a is not None:
                    return a
            return to_array(value)

        return as_array

    def __call__(self, *args, **kwargs):
        return self.run(self.sig.bind(args, kwargs))

    def run(self, b):
        """The call for bound arguments ``b`` ({parameter name: value}, defaults filled in)."""
        if self.pyname in _DTYPE_CASTS_INPUT and b.get("dtype") is not None:
            # MLX's cumsum/cumprod(dtype=...) cast the input first; the C op has no dtype argument.
            b = dict(b, a=to_array(b["a"]).astype(b["dtype"]), dtype=None)
        v = self.fixed
        if v is None:
            v, b = self.choose(b)
        as_array = _plain_as_array
        for n in self.weak:
            if type(b.get(n)) is not array and not isinstance(b.get(n), array):
                as_array = self.weak_as_array(b)
                break
        keep, cargs = [], []
        for n, conv, paired in v.steps:
            if conv is None:
                cargs.append(stream_handle(b.get("stream")))
            elif n not in b:
                raise NotImplementedError(f"mx.{self.pyname}: C parameter '{n}' of {v.cname} has no Python argument of that name")
            elif paired:
                cargs.extend(conv(n, b[n], keep, as_array))
            else:
                cargs.append(conv(n, b[n], keep, as_array))
        for n, d in self._unused[v.cname]:
            if n in b:
                self.only_default(n, b[n], d)
        if v.single:
            p = _newp(_ARR_PTR)
            if v.fn(p, *cargs):
                raise error()
            if _C is not None:  # (the C array type: one call)
                return wrap(p)
            a = _obj_new(array)
            a._p = p
            a._s = a._d = None
            return a
        outs = [_newp(_ARR_PTR) if kind == "array" else _newp(_VAR_ARRAY_PTR) for kind in v.outs]
        check(v.fn(*outs, *cargs))
        res = [wrap(o) if k == "array" else _vector_result(self.pyname, o[0]) for o, k in zip(outs, v.outs)]
        return res[0] if len(res) == 1 else tuple(res)


def _plain_as_array(name, value):
    return value if isinstance(value, array) else to_array(value)


from . import _callgen  # noqa: E402  (needs the names above)
from . import _fastpath  # noqa: E402

compile_op = _callgen.compile_op


def c_name(pyname):
    return "mlx_" + pyname.replace(".", "_")


def variants_for(pyname):
    base = c_name(pyname)
    out = []
    arm = "mlx_arm_" + pyname.replace(".", "_")  # extensions for MLX ops mlx-c lacks
    for cand in (base, base + "_axis", base + "_axes", arm, arm + "_axis", arm + "_axes"):
        if cand in FUNCTIONS and FUNCTIONS[cand][0] == "int":
            try:
                out.append(Variant(cand))
            except AttributeError:  # declared in the header but missing from this library build
                pass
    return out


def make_op(pyname):
    """A bound ``mx.<pyname>``, or None when the C API has no function for it."""
    spec = SIGNATURES.get(pyname)
    if spec is None:
        return None
    vs = variants_for(pyname)
    if not vs:
        return None
    op = Op(pyname, Signature(pyname, spec), vs)
    f = compile_op(op)
    if f is None:
        def f(*args, **kwargs):
            return op(*args, **kwargs)

    f.__name__ = pyname.split(".")[-1]
    f.__qualname__ = f.__name__
    f.__doc__ = f"mx.{pyname}: bound to {', '.join(v.cname for v in vs)} (signature as in MLX)."
    f._op = op
    g = _fastpath.fast_op(op, f)
    return g if g is not f else _fastpath.fast_args_op(op, f)
