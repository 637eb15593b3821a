"""Seeded random `mlx.core` programs for the differential tester (docs/COMPAT.md, "Differential tester").

One program is one call: an `mlx.core` function (or an operator, a method, an index) with arguments
drawn from the table below — arrays of every dtype and of shapes with size-0 and 0-d axes, given
contiguous or as transposed / strided / reversed / broadcast views, Python scalars, keyword
arguments, and invalid arguments (bad axes, bad shapes, dtypes an op refuses).

Programs are built from Python's `random.Random(seed)` alone (no numpy generator), so the same seed
gives the same program under real MLX (`gen_goldens.py`, run in the oracle venv) and under ours
(`tests/python/test_difftest.py`). `run(mx, prog)` turns a program's result into a record:
`{"e": class name}` for an exception, else `{"o": [output, ...]}` with each output's dtype, shape
and values. `compare(got, want)` says how two records differ (None when they agree), applying the
named undefined-behaviour rules of `UB_RULES`.
"""
import math
import operator
import random

import numpy as np

DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "complex64"]
FLOATS = {"float16", "bfloat16", "float32"}
INTS = {"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"}

# Tolerances per output dtype (relative, absolute): the ops are the same formulas, the kernels not.
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2), "float32": (2e-5, 2e-6),
       "complex64": (2e-5, 2e-6)}


class Arr:
    """An array argument: dtype, shape, how it is laid out, and the seed of its values."""

    def __init__(self, dtype, shape, view, seed, special):
        self.dtype, self.shape, self.view, self.seed, self.special = dtype, tuple(shape), view, seed, special

    def __repr__(self):
        s = "x".join(map(str, self.shape)) or "0d"
        return f"{self.dtype}[{s}]{self.view}{'!' if self.special else ''}"


class Dt:
    """A dtype argument (`mx.<name>`)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"mx.{self.name}"


def _values(dtype, n, seed, special):
    r = random.Random(seed)
    if dtype == "bool":
        return [r.random() < 0.5 for _ in range(n)]
    if dtype.startswith("uint"):
        return [r.randint(0, 9) for _ in range(n)]
    if dtype.startswith("int"):
        return [r.randint(-5, 5) for _ in range(n)]
    specials = [math.nan, math.inf, -math.inf, 0.0, -0.0]

    def f():
        if special and r.random() < 0.25:
            return r.choice(specials)
        return round(r.uniform(-4, 4), 2)

    if dtype == "complex64":
        return [complex(f(), f()) for _ in range(n)]
    return [f() for _ in range(n)]


def build(mx, a):
    """The mx array for `Arr` a, laid out as its view says (every view has a's shape)."""
    shape = a.shape
    base = list(shape)
    if a.view == "T":
        base = base[::-1]
    elif a.view == "s":
        base[-1] = base[-1] * 2
    elif a.view == "r":
        pass
    elif a.view == "b":
        base[0] = 1
    n = int(np.prod(base)) if base else 1
    vals = _values(a.dtype, n, a.seed, a.special)
    np_dt = {"bfloat16": "float32"}.get(a.dtype, a.dtype)
    x = mx.array(np.array(vals, dtype=np_dt).reshape(base))
    if a.dtype == "bfloat16":
        x = x.astype(mx.bfloat16)
    if a.view == "T":
        x = mx.transpose(x)
    elif a.view == "s":
        x = x[..., ::2]
    elif a.view == "r":
        x = x[::-1]
    elif a.view == "b":
        x = mx.broadcast_to(x, shape)
    return x


class Gen:
    """Draws arguments for one program."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.special = self.r.random() < 0.15

    def dtype(self, kinds=None):
        return self.r.choice(kinds or DTYPES)

    def shape(self, min_nd=0, max_nd=3):
        nd = self.r.randint(min_nd, max_nd)
        return tuple(0 if self.r.random() < 0.06 else self.r.randint(1, 4) for _ in range(nd))

    def arr(self, dtype=None, shape=None, min_nd=0):
        shape = self.shape(min_nd) if shape is None else tuple(shape)
        views = ["c", "c"]
        if len(shape) >= 2:
            views.append("T")
        if len(shape) >= 1:
            views += ["s", "r"]
            if shape[0] > 1:
                views.append("b")
        return Arr(dtype or self.dtype(), shape, self.r.choice(views), self.r.randrange(1 << 30), self.special)

    def axis(self, nd, allow_none=True):
        """An axis of an nd array (sometimes negative, rarely out of range: an invalid call)."""
        if allow_none and self.r.random() < 0.2:
            return None
        if nd == 0 or self.r.random() < 0.06:
            return self.r.choice([nd, -nd - 1, 5])
        ax = self.r.randrange(nd)
        return ax - nd if self.r.random() < 0.3 else ax

    def bshape(self, shape):
        """A shape that broadcasts with `shape` (rarely one that does not)."""
        if self.r.random() < 0.05 and shape:
            return tuple(d + 1 for d in shape)
        s = list(shape[self.r.randint(0, len(shape)):]) if self.r.random() < 0.3 else list(shape)
        return tuple(1 if self.r.random() < 0.25 else d for d in s)

    def scalar(self, dtype_hint=None):
        k = self.r.choice(["int", "int", "float", "float", "bool", "complex", "negint"])
        if k == "int":
            return self.r.randint(0, 9)
        if k == "negint":
            return -self.r.randint(1, 3)
        if k == "float":
            return round(self.r.uniform(-3, 3), 2)
        if k == "bool":
            return self.r.random() < 0.5
        return complex(round(self.r.uniform(-2, 2), 1), 1.0)


UNARY = ["abs", "negative", "sign", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin",
         "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
         "sigmoid", "erf", "erfinv", "floor", "ceil", "round", "square", "reciprocal", "logical_not", "isnan",
         "isinf", "isfinite", "isposinf", "isneginf", "conjugate", "real", "imag", "degrees", "radians",
         "stop_gradient", "bitwise_invert", "nan_to_num", "op:neg", "op:invert", "op:abs"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "maximum", "minimum",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "arctan2", "logaddexp",
          "divmod", "op:add", "op:sub", "op:mul", "op:truediv", "op:floordiv", "op:mod", "op:pow", "op:and_",
          "op:or_", "op:xor", "op:lshift", "op:rshift", "op:eq", "op:lt", "op:ge"]
REDUCE = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "argmax", "argmin", "logsumexp"]
SCAN = ["cumsum", "cumprod", "cummax", "cummin"]


def _g_unary(g, op):
    return [g.arr()], {}


def _g_binary(g, op):
    x = g.arr()
    y = g.arr(shape=g.bshape(x.shape))
    if g.r.random() < 0.5:
        y = Arr(x.dtype, y.shape, y.view, y.seed, y.special)  # same dtype half the time
    if g.r.random() < 0.25:
        y = g.scalar()
    if g.r.random() < 0.1:
        x, y = y, x
    return [x, y], {}


def _g_reduce(g, op):
    x = g.arr()
    nd = len(x.shape)
    kw = {}
    if g.r.random() < 0.8:
        if op in ("argmax", "argmin") or g.r.random() < 0.7:
            ax = g.axis(nd)
        else:
            ax = tuple(sorted(set(g.r.sample(range(nd), g.r.randint(0, nd))))) if nd else ()
        if ax is not None:
            kw["axis"] = ax
    if g.r.random() < 0.4:
        kw["keepdims"] = g.r.random() < 0.5
    if op in ("var", "std") and g.r.random() < 0.3:
        kw["ddof"] = g.r.randint(0, 2)
    return [x], kw


def _axis_kw(g, x):
    """{"axis": a} for a drawn axis of x, or {} when the draw is None."""
    ax = g.axis(len(x.shape))
    return {} if ax is None else {"axis": ax}


def _g_scan(g, op):
    x = g.arr()
    kw = _axis_kw(g, x)
    if g.r.random() < 0.3:
        kw["reverse"] = g.r.random() < 0.5
    if g.r.random() < 0.3:
        kw["inclusive"] = g.r.random() < 0.5
    return [x], kw


def _g_reshape(g, op):
    x = g.arr()
    n = int(np.prod(x.shape)) if x.shape else 1
    opts = [(n,), (-1,), (1, n), (n, 1, -1)]
    if n % 2 == 0 and n:
        opts.append((2, -1))
    opts.append((n + 1,))  # invalid
    return [x, list(g.r.choice(opts))], {}


def _g_transpose(g, op):
    x = g.arr()
    nd = len(x.shape)
    if g.r.random() < 0.3:
        return [x], {}
    axes = list(range(nd))
    g.r.shuffle(axes)
    if g.r.random() < 0.1:
        axes = axes + [0]
    return [x, axes], {}


def _g_swapaxes(g, op):
    x = g.arr(min_nd=1)
    nd = len(x.shape)
    return [x, g.axis(nd, False), g.axis(nd, False)], {}


def _g_expand_dims(g, op):
    x = g.arr()
    return [x, g.axis(len(x.shape) + 1, False)], {}


def _g_squeeze(g, op):
    x = g.arr()
    nd = len(x.shape)
    if g.r.random() < 0.5 or nd == 0:
        return [x], {}
    return [x], {"axis": g.axis(nd, False)}


def _g_flatten(g, op):
    x = g.arr()
    kw = {}
    nd = max(len(x.shape), 1)
    if g.r.random() < 0.5:
        kw["start_axis"] = g.axis(nd, False)
    if g.r.random() < 0.5:
        kw["end_axis"] = g.axis(nd, False)
    return [x], kw


def _g_concat(g, op):
    x = g.arr(min_nd=1)
    k = g.r.randint(1, 3)
    ax = g.axis(len(x.shape), False)
    others = []
    for _ in range(k):
        s = list(x.shape)
        if op == "concatenate" and isinstance(ax, int) and -len(s) <= ax < len(s):
            s[ax] = g.r.randint(0, 3)
        if g.r.random() < 0.05:
            s = s + [1]
        a = g.arr(shape=s)
        if g.r.random() < 0.6:
            a = Arr(x.dtype, a.shape, a.view, a.seed, a.special)
        others.append(a)
    kw = {"axis": ax} if g.r.random() < 0.8 else {}
    return [[x] + others], kw


def _g_split(g, op):
    x = g.arr(min_nd=1)
    nd = len(x.shape)
    ax = g.axis(nd, False)
    if g.r.random() < 0.5:
        idx = g.r.randint(1, 3)
    else:
        idx = sorted(g.r.randint(0, 4) for _ in range(g.r.randint(1, 2)))
    return [x, idx], ({"axis": ax} if g.r.random() < 0.8 else {})


def _g_tile(g, op):
    x = g.arr()
    reps = [g.r.randint(0, 3) for _ in range(g.r.randint(1, 3))]
    return [x, reps], {}


def _g_repeat(g, op):
    x = g.arr()
    kw = _axis_kw(g, x)
    return [x, g.r.randint(0, 3)], kw


def _g_pad(g, op):
    x = g.arr()
    nd = len(x.shape)
    c = g.r.random()
    if c < 0.3:
        w = g.r.randint(0, 2)
    elif c < 0.6:
        w = [(g.r.randint(0, 2), g.r.randint(0, 2)) for _ in range(nd)]
    elif c < 0.9:
        w = (g.r.randint(0, 2), g.r.randint(0, 2))
    else:
        w = "x"
    kw = {}
    if g.r.random() < 0.3:
        kw["mode"] = g.r.choice(["constant", "edge"])
    if g.r.random() < 0.3:
        kw["constant_values"] = g.r.randint(0, 3)
    return [x, w], kw


def _g_roll(g, op):
    x = g.arr()
    nd = len(x.shape)
    kw = {}
    if g.r.random() < 0.6:
        kw["axis"] = g.axis(nd) if g.r.random() < 0.8 else tuple(range(nd))
    shift = g.r.randint(-5, 5)
    if isinstance(kw.get("axis"), tuple) and g.r.random() < 0.5:
        shift = tuple(g.r.randint(-3, 3) for _ in kw["axis"])
    return [x, shift], kw


def _g_broadcast_to(g, op):
    x = g.arr()
    s = list(x.shape)
    if g.r.random() < 0.5:
        s = [g.r.randint(1, 3)] + s
    s = [g.r.randint(2, 3) if d == 1 and g.r.random() < 0.5 else d for d in s]
    if g.r.random() < 0.07 and s:
        s[-1] += 1
    return [x, s], {}


def _g_take(g, op):
    x = g.arr(min_nd=1)
    nd = len(x.shape)
    ax = g.axis(nd)
    n = x.shape[ax] if isinstance(ax, int) and -nd <= ax < nd else int(np.prod(x.shape))
    ishape = g.shape(0, 2)
    idt = g.dtype(["int32", "int64", "uint32", "int8", "uint8"] + (["float32"] if g.r.random() < 0.1 else []))
    idx = Arr(idt, ishape, "c", g.r.randrange(1 << 30), False)
    idx.bound = max(n, 1)
    kw = {"axis": ax} if ax is not None else {}
    return [x, idx], kw


def _g_take_along(g, op):
    x = g.arr(min_nd=1)
    nd = len(x.shape)
    ax = g.axis(nd)
    if ax is None:
        ishape = (g.r.randint(0, 4),)
        n = int(np.prod(x.shape))
    else:
        ishape = list(x.shape)
        if isinstance(ax, int) and -nd <= ax < nd:
            ishape[ax] = g.r.randint(0, 3)
            n = x.shape[ax]
        else:
            n = 1
    idx = Arr(g.dtype(["int32", "uint32", "int64"]), ishape, "c", g.r.randrange(1 << 30), False)
    idx.bound = max(n, 1)
    return [x, idx], {"axis": ax}


def _g_where(g, op):
    x = g.arr()
    c = g.arr(dtype=g.dtype(["bool", "bool", "float32", "int32"]), shape=g.bshape(x.shape))
    y = g.arr(shape=g.bshape(x.shape))
    args = [c, x, y]
    if g.r.random() < 0.3:
        args[g.r.randint(1, 2)] = g.scalar()
    return args, {}


def _g_clip(g, op):
    x = g.arr()
    lo = g.r.choice([None, g.scalar(), g.arr(shape=g.bshape(x.shape))])
    hi = g.r.choice([None, g.scalar(), g.arr(shape=g.bshape(x.shape))])
    return [x, lo, hi], {}


def _g_sortlike(g, op):
    x = g.arr()
    nd = len(x.shape)
    if op in ("topk", "partition", "argpartition"):
        ax = g.axis(nd)
        n = x.shape[ax] if isinstance(ax, int) and -nd <= ax < nd else int(np.prod(x.shape))
        k = g.r.randint(0, n + 1) if g.r.random() < 0.95 else n + 2
        if op == "partition" or op == "argpartition":
            k = g.r.randint(-n, n - 1) if n else 0
        kw = {"axis": ax} if g.r.random() < 0.8 else {}
        return [x, k], kw
    kw = {"axis": g.axis(nd)} if g.r.random() < 0.7 else {}
    return [x], kw


def _g_astype(g, op):
    return [g.arr(), Dt(g.dtype())], {}


def _g_diag(g, op):
    x = g.arr(shape=g.shape(1, 2) if g.r.random() < 0.9 else g.shape(3, 3))
    kw = {"k": g.r.randint(-2, 2)} if g.r.random() < 0.5 else {}
    return [x], kw


def _g_tri(g, op):
    x = g.arr(shape=g.shape(2, 3) if g.r.random() < 0.9 else g.shape(0, 1))
    kw = {"k": g.r.randint(-2, 2)} if g.r.random() < 0.5 else {}
    return [x], kw


def _g_matmul(g, op):
    m, k, n = g.r.randint(1, 4), g.r.randint(0, 4), g.r.randint(1, 4)
    dt = g.dtype(["float32", "float32", "float16", "bfloat16", "int32", "complex64"])
    a_shape, b_shape = (m, k), (k if g.r.random() < 0.95 else k + 1, n)
    if g.r.random() < 0.3:
        a_shape = (g.r.randint(1, 2),) + a_shape
    if g.r.random() < 0.15:
        b_shape = (n,)[:0] + (b_shape[0],)
    a = g.arr(dtype=dt, shape=a_shape)
    b = g.arr(dtype=dt if g.r.random() < 0.8 else g.dtype(), shape=b_shape)
    return [a, b], {}


def _g_softmax(g, op):
    x = g.arr(dtype=g.dtype(["float32", "float16", "bfloat16", "float32"]))
    kw = {"axis": g.axis(len(x.shape))} if g.r.random() < 0.7 else {}
    if g.r.random() < 0.2:
        kw["precise"] = True
    return [x], kw


def _g_unstack(g, op):
    x = g.arr(min_nd=1)
    return [x], ({"axis": g.axis(len(x.shape), False)} if g.r.random() < 0.5 else {})


def _g_full(g, op):
    s = list(g.shape())
    v = g.r.choice([g.scalar(), g.arr(shape=g.bshape(tuple(s)))])
    kw = {"dtype": Dt(g.dtype())} if g.r.random() < 0.5 else {}
    return [s, v], kw


def _g_moveaxis(g, op):
    x = g.arr(min_nd=1)
    nd = len(x.shape)
    return [x, g.axis(nd, False), g.axis(nd, False)], {}


def _g_getitem(g, op):
    x = g.arr(min_nd=1)
    idx = []
    for d in x.shape:
        c = g.r.random()
        if c < 0.3:
            idx.append(g.r.randint(-d - 1, d) if d else 0)
        elif c < 0.7:
            idx.append(slice(g.r.choice([None, 0, 1, -1, -3]), g.r.choice([None, 0, 2, -1, 5]),
                             g.r.choice([None, 1, 2, -1, -2])))
        elif c < 0.8:
            a = Arr("int32", (g.r.randint(0, 3),), "c", g.r.randrange(1 << 30), False)
            a.bound = max(d, 1)
            idx.append(a)
        elif c < 0.9:
            idx.append(None)
        else:
            idx.append(Ellipsis)
            break
    if g.r.random() < 0.05:
        idx.append(0)
    return [x, tuple(idx)], {}


def _g_inner(g, op):
    x = g.arr(dtype=g.dtype(["float32", "int32", "float16"]), shape=g.shape(1, 2))
    s = list(g.shape(1, 2))
    if op == "inner":
        s[-1] = x.shape[-1]
    y = g.arr(dtype=x.dtype, shape=s)
    return [x, y], {}


def _g_trace(g, op):
    x = g.arr(shape=g.shape(2, 3))
    kw = {}
    if g.r.random() < 0.4:
        kw["offset"] = g.r.randint(-2, 2)
    if g.r.random() < 0.3:
        kw["dtype"] = Dt(g.dtype(["float32", "int32", "int64"]))
    return [x], kw


TABLE = [(op, _g_unary) for op in UNARY] + [(op, _g_binary) for op in BINARY] + \
    [(op, _g_reduce) for op in REDUCE] + [(op, _g_scan) for op in SCAN] + [
    ("reshape", _g_reshape), ("transpose", _g_transpose), ("swapaxes", _g_swapaxes),
    ("moveaxis", _g_moveaxis), ("expand_dims", _g_expand_dims), ("squeeze", _g_squeeze),
    ("flatten", _g_flatten), ("concatenate", _g_concat), ("stack", _g_concat), ("split", _g_split),
    ("tile", _g_tile), ("repeat", _g_repeat), ("pad", _g_pad), ("roll", _g_roll),
    ("broadcast_to", _g_broadcast_to), ("take", _g_take), ("take_along_axis", _g_take_along),
    ("where", _g_where), ("clip", _g_clip), ("sort", _g_sortlike), ("argsort", _g_sortlike),
    ("topk", _g_sortlike), ("partition", _g_sortlike), ("argpartition", _g_sortlike),
    ("method:astype", _g_astype), ("diag", _g_diag), ("diagonal", _g_diag), ("tril", _g_tri),
    ("triu", _g_tri), ("matmul", _g_matmul), ("softmax", _g_softmax), ("unstack", _g_unstack),
    ("full", _g_full), ("getitem", _g_getitem), ("inner", _g_inner), ("outer", _g_inner),
    ("trace", _g_trace),
]


def program(seed):
    """Program number `seed`: (op, args, kwargs) of specs."""
    g = Gen(seed)
    op, gen = TABLE[g.r.randrange(len(TABLE))]
    args, kw = gen(g, op)
    return op, args, kw


def describe(prog):
    op, args, kw = prog
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in sorted(kw.items())]
    return f"{op}({', '.join(parts)})"


def _materialize(mx, v):
    if isinstance(v, Arr):
        x = build(mx, v)
        bound = getattr(v, "bound", None)
        if bound is not None and v.dtype != "float32":  # index arrays: mostly in range, some negative
            x = (x.astype(mx.int32) % bound).astype(getattr(mx, v.dtype))
            if v.dtype in ("int32", "int64", "int8") and v.seed % 3 == 0:
                x = x - bound
        return x
    if isinstance(v, Dt):
        return getattr(mx, "bool_" if v.name == "bool" else v.name)
    if isinstance(v, list):
        return [_materialize(mx, e) for e in v]
    if isinstance(v, tuple):
        return tuple(_materialize(mx, e) for e in v)
    return v


def _call(mx, op, args, kw):
    if op.startswith("op:"):
        return getattr(operator, op[3:])(*args)
    if op.startswith("method:"):
        return getattr(args[0], op[7:])(*args[1:], **kw)
    if op == "getitem":
        return args[0][args[1]]
    return getattr(mx, op)(*args, **kw)


def _exc_name(e):
    for c in type(e).__mro__:
        if c.__module__ == "builtins":
            return c.__name__
    return type(e).__name__


def _output(mx, a):
    dt = str(a.dtype).split(".")[-1]
    v = a.astype(mx.float32) if dt == "bfloat16" else a
    vals = np.array(v)
    if dt == "complex64":
        flat = [[float(z.real), float(z.imag)] for z in vals.reshape(-1)]
    elif dt in FLOATS:
        flat = [float(z) for z in vals.reshape(-1)]
    else:
        flat = [int(z) for z in vals.reshape(-1)]
    return [dt, list(a.shape), flat]


def run(mx, prog):
    """The record of program `prog` under the `mx` module given."""
    op, args, kw = prog
    try:
        margs = [_materialize(mx, a) for a in args]
        mkw = {k: _materialize(mx, v) for k, v in kw.items()}
    except Exception as e:  # an input the generator could not build is a tester bug, not a finding
        return {"build": f"{type(e).__name__}: {e}"}
    try:
        out = _call(mx, op, margs, mkw)
        outs = out if isinstance(out, (tuple, list)) else [out]
        rec = {"o": [_output(mx, o) for o in outs]}
        if isinstance(out, (tuple, list)):
            rec["c"] = type(out).__name__
        return rec
    except Exception as e:
        return {"e": _exc_name(e)}


# --- undefined behaviour: named rules, each explained in docs/COMPAT.md -----------------------------
# A rule is asked only when ours and MLX disagree; it says whether MLX's result there is undefined
# (garbage, unchecked memory reads, implementation-specific NaN patterns). `got`/`want` are records.

def _float_to_int_out_of_range(prog, got, want):
    """astype from a float/complex array holding NaN/inf, or negative values to an unsigned type
    (also the cast of `trace(x, dtype=<int>)`)."""
    op, args, kw = prog
    dt = kw.get("dtype")
    if op == "trace" and isinstance(args[0], Arr) and isinstance(dt, Dt):
        return args[0].dtype in FLOATS and dt.name in INTS and args[0].special
    if op != "method:astype" or not isinstance(args[0], Arr):
        return False
    src, dst = args[0].dtype, args[1].name
    if src not in FLOATS and src != "complex64":
        return False
    return dst in INTS and (args[0].special or dst.startswith("uint"))


def _partition_order(prog, got, want):
    """partition/argpartition/topk: MLX leaves the order of elements on each side unspecified."""
    return prog[0] in ("partition", "argpartition", "topk") and "o" in got and "o" in want


def _half_scan_nan(prog, got, want):
    """cummax/cummin of float16/bfloat16 holding NaN: MLX 0.32.4's CPU scan gives 0 where NaN should go."""
    op, args, _ = prog
    return op in ("cummax", "cummin") and args[0].dtype in ("float16", "bfloat16") and args[0].special


def _unchecked_gather_index(prog, got, want):
    """take/take_along_axis/array indices out of range: MLX does not check them (reads any memory);
    ours returns the same shape with other values, or raises IndexError/ValueError."""
    op, args, _ = prog
    idx = args[1] if op == "getitem" else args[1:2]
    return op in ("take", "take_along_axis", "getitem") and any(
        getattr(a, "bound", None) is not None for a in (idx if isinstance(idx, (tuple, list)) else [idx]))


def _unchecked_int_index(prog, got, want):
    """x[i] with an int i out of range: MLX does not check it (garbage, a crash, or a later op's
    error); ours raises IndexError."""
    op, args, _ = prog
    if op != "getitem" or got.get("e") != "IndexError":
        return False
    shape, items = args[0].shape, list(args[1])
    if Ellipsis in items:  # the items after it index the last axes
        k = items.index(Ellipsis)
        after = [i for i in items[k + 1:] if i is not None]
        items = items[:k] + [slice(None)] * (len(shape) - len([i for i in items[:k] if i is not None]) - len(after)) \
            + items[k + 1:]
    axis = 0
    for i in items:
        if i is None:
            continue
        if isinstance(i, int) and 0 <= axis < len(shape) and not -shape[axis] <= i < shape[axis]:
            return True
        axis += 1
    return False


def _complex_nonfinite(prog, got, want):
    """Complex elementwise math on inf/NaN parts: which part becomes NaN follows each library's
    complex formulas (MLX multiplies by a complex scalar, so (inf+1j)*k has a NaN real part).
    Also a real array holding inf/NaN made complex by a complex Python scalar (py29: MLX's
    `power(inf, -1.7+1j)` is 0 by libstdc++'s exp(y·log x), ours NaN)."""
    op, args, _ = prog
    if any(isinstance(a, Arr) and a.dtype == "complex64" and a.special for a in args) and "o" in got:
        return True
    return (any(isinstance(a, complex) for a in args) and any(isinstance(a, Arr) and a.special for a in args)
            and "o" in got)


def _edge_pad_empty_axis(prog, got, want):
    """pad(mode="edge") of an axis of size 0: there is no edge value; MLX fills zeros, ours raises."""
    op, args, kw = prog
    return op == "pad" and kw.get("mode") == "edge" and 0 in args[0].shape and got.get("e") == "ValueError"


def _shift_count_out_of_range(prog, got, want):
    """left_shift/right_shift by a negative count or one of at least the type's width: undefined
    in C++, so MLX's result is whatever its CPU gives (often 0); ours differs."""
    op, args, _ = prog
    if op not in ("left_shift", "right_shift", "op:lshift", "op:rshift"):
        return False
    count = args[1]
    if isinstance(count, Arr):
        return count.dtype.startswith("int")  # signed counts in the generator reach -5
    return isinstance(count, int) and count < 0


def _bool_divide_by_zero(prog, got, want):
    """floor_divide/remainder/divmod (and `//`, `%`) of bools by a bool divisor: where the divisor is
    False this is C++ integer division by zero in MLX (its result there is garbage: divmod and
    floor_divide of the same arrays disagree; integer arrays crash it, rule oracle_crash)."""
    op, args, _ = prog
    if op not in ("floor_divide", "remainder", "divmod", "op:floordiv", "op:mod"):
        return False
    a, b = args[0], args[1]
    return isinstance(b, Arr) and b.dtype == "bool" and (not isinstance(a, Arr) or a.dtype == "bool")


def _empty_reduce_garbage(prog, got, want):
    """sum/prod of an integer array with a size-0 axis over several axes: MLX 0.32.4's CPU reduction
    can leave such outputs unwritten (values change from run to run, e.g. `sum(uint16[3x0x3],
    axis=(1, 2))`); ours gives the identity (0 for sum, 1 for prod). The same unwritten sum
    reaches `mean` (garbage / 0: inf where ours is NaN) and `all`/`any` (py29: `all(uint8[2x0x4],
    axis=(1, 2))` gives False there, True here)."""
    op, args, _ = prog
    return (op in ("sum", "prod", "mean", "all", "any") and isinstance(args[0], Arr) and 0 in args[0].shape
            and args[0].dtype not in FLOATS and "o" in got and "o" in want)


UB_RULES = {
    "float_to_int_out_of_range": _float_to_int_out_of_range,
    "partition_order": _partition_order,
    "half_scan_nan": _half_scan_nan,
    "unchecked_gather_index": _unchecked_gather_index,
    "unchecked_int_index": _unchecked_int_index,
    "complex_nonfinite": _complex_nonfinite,
    "edge_pad_empty_axis": _edge_pad_empty_axis,
    "shift_count_out_of_range": _shift_count_out_of_range,
    "bool_divide_by_zero": _bool_divide_by_zero,
    "empty_reduce_garbage": _empty_reduce_garbage,
}


def ub_rule(prog, got, want):
    """The name of the undefined-behaviour rule that explains this difference, or None."""
    for name, rule in UB_RULES.items():
        if rule(prog, got, want):
            return name
    return None


def _close(dt, got, want):
    if dt in TOL or dt == "complex64":
        g, w = np.array(got, np.float64), np.array(want, np.float64)
        if g.shape != w.shape:
            return False
        rtol, atol = TOL[dt]
        return bool(np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True))
    return got == want


def compare(prog, got, want):
    """None when records agree; else a short reason. Values are skipped under a named UB rule
    (the rule's name is returned as ("ub", name) so callers can count it)."""
    if "build" in got:
        return f"input build failed: {got['build']}"
    if ("e" in got) != ("e" in want) or got.get("e") != want.get("e"):
        rule = ub_rule(prog, got, want)
        if rule:
            return ("ub", rule)
        if "e" in got and "e" in want:
            return f"exception {got['e']} != MLX {want['e']}"
        g = f"raised {got['e']}" if "e" in got else "returned"
        w = f"raised {want['e']}" if "e" in want else "returned"
        return f"ours {g}, MLX {w}"
    if "e" in want:
        return None
    if got.get("c") != want.get("c"):
        return f"container {got.get('c')} != MLX {want.get('c')}"
    if len(got["o"]) != len(want["o"]):
        return f"{len(got['o'])} outputs != MLX {len(want['o'])}"
    rule = None
    for (gd, gs, gv), (wd, ws, wv) in zip(got["o"], want["o"]):
        if gd != wd:
            return f"dtype {gd} != MLX {wd}"
        if gs != ws:
            return f"shape {gs} != MLX {ws}"
        if not _close(gd, gv, wv):
            rule = rule or ub_rule(prog, got, want)
            if rule is None:
                return f"values differ ({gd}{gs}): ours {gv[:6]} MLX {wv[:6]}"
    return ("ub", rule) if rule else None
