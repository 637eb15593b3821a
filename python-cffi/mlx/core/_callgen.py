"""Compiled callers for bound ops: a Python function with MLX's exact signature per ``mx.<name>``.

The generic ``Op.__call__`` binds ``*args, **kwargs`` in Python and loops over the C parameters
on every call, which costs several microseconds per op — more than building the graph node
(mlx-lm's decode loop makes a few hundred such calls per token). Here each op gets, once at
import, the source of a function whose parameter list is MLX's (so CPython binds the arguments)
and whose body is the conversion of each C parameter written out in order:

- an ``mlx_array`` parameter given an ``array`` passes its handle directly; anything else goes
  through the parameter's converter (``_binder.converter``) as in the generic path;
- parameters the C function cannot receive are checked against their default
  (``Op.only_default``, NotImplementedError otherwise), after the conversions as before;
- weak typing (binary ops' Python scalars) is decided only when an operand is not an array.

Ops whose C variant depends on the arguments (an ``axis``/``axes`` parameter), with several
outputs, or whose signature cannot be written as Python (``*args``, odd names) get a function
that only binds (still by CPython) and hands the arguments to ``Op.run``. Behaviour is the
generic path's; tests/python/test_callgen.py compares the two.
"""
import keyword

from . import _binder as B
from . import _dtypes as D
from ._array import _ARR_PTR, _C, _Ctx, array, stream_handle, weak_scalar, wrap
from ._ffi import error

C_ARRAY = _C is not None  # mlx.core.array is the C type (_array._load_carray)

_KINDS = ("posonly", "pos", "kwonly")


def _weak_next_to(value, a):
    """The Python int/float ``value`` as a weakly typed operand next to the array ``a``."""
    return weak_scalar(value, a.dtype)


# Converters with an inline fast case: (the test on the value, the C argument it then gives),
# ``{}`` standing for the parameter's name; the converter itself gives the same for such a value.
_INLINE = {B._conv_array: ("_type({}) is _array", "{}._p[0]"), B._conv_int: ("_type({}) is int", "{}"),
           B._conv_dtype: ("_type({}) is _Dtype", "{}.code")}


def _param_list(params):
    """MLX's parameters as Python source (defaults as ``_D<i>`` globals), or None."""
    out, seen_pos, seen_kw = [], False, False
    for i, p in enumerate(params):
        n, kind = p["name"], p["kind"]
        if kind not in _KINDS or not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_"):
            return None
        if kind == "pos" and not seen_pos:
            seen_pos = True
            if any(q["kind"] == "posonly" for q in params[:i]):
                out.append("/")
        if kind == "kwonly" and not seen_kw:
            seen_kw = True
            if any(q["kind"] == "posonly" for q in params[:i]) and not seen_pos:
                out.append("/")
            out.append("*")
        out.append(n if p.get("_missing") else f"{n}=_D{i}")
    if params and params[-1]["kind"] == "posonly":
        out.append("/")
    return ", ".join(out)


def _body_direct(op, v, names, tag="", alias=None):
    """Straight-line conversion + call for variant ``v`` (single output), or None. ``tag``
    keeps this variant's globals apart; ``alias`` maps C parameter names to Python ones."""
    if not v.single:
        return None
    alias = alias or {}
    lines = _fast_case(op, v, names, tag, alias)
    if len(op.weak) == 2:
        # The common mixed case, an array and a Python int/float (``mx.add(a, 1)``): the
        # scalar's cached weak constant (``weak_scalar``, as the operators use), not the
        # general promotion of ``weak_as_array``, which gives the same array.
        x, y = op.weak
        lines += [f"if _type({x}) is _array:",
                  f"    if _type({y}) is int or _type({y}) is float: {y} = _weak_next_to({y}, {x})",
                  f"elif _type({y}) is _array and (_type({x}) is int or _type({x}) is float): "
                  f"{x} = _weak_next_to({x}, {y})"]
    if op.weak:
        cond = " and ".join(f"_type({n}) is _array" for n in op.weak)
        got = ", ".join(f"{n!r}: {n}" for n in op.weak)
        lines.append(f"_as = _plain if {cond} else _op.weak_as_array({{{got}}})")
    else:
        lines.append("_as = _plain")
    lines.append("_k = []")
    cargs = []
    for i, (cn, conv, paired) in enumerate(v.steps):
        if conv is None:  # (the thread's stream read inline: stream_handle(None) gives it)
            cargs.append("(_Ctx.stream if stream is None else _stream(stream))" if "stream" in names else "_Ctx.stream")
            continue
        n = alias.get(cn, cn)
        if n not in names:
            return None  # the generic path raises its NotImplementedError
        cv = f"_cv{tag}{i}"
        # The common value types are converted inline (_INLINE; bool() is what _conv_bool
        # does); anything else still goes through the converter, which raises its errors.
        inline = _INLINE.get(conv)
        if inline is not None:
            test, value = inline
            lines.append(f"_a{i} = {value.format(n)} if {test.format(n)} else {cv}({cn!r}, {n}, _k, _as)")
            cargs.append(f"_a{i}")
        elif conv is B._conv_bool:
            lines.append(f"_a{i} = _bool({n})")
            cargs.append(f"_a{i}")
        elif paired:
            lines.append(f"_a{i}, _n{i} = {cv}({cn!r}, {n}, _k, _as)")
            cargs += [f"_a{i}", f"_n{i}"]
        else:
            lines.append(f"_a{i} = {cv}({cn!r}, {n}, _k, _as)")
            cargs.append(f"_a{i}")
    for n, _ in op._unused[v.cname]:
        j = names.index(n)
        lines.append(f"if {n} is not _D{j}: _op.only_default({n!r}, {n}, _D{j})")
    return lines + _call_and_wrap(tag, cargs)


def _call_and_wrap(tag, cargs):
    """The lines that call the C function into a fresh handle and return it as an array (the
    C array type's ``wrap`` when it is in use; inline object setup for the Python class)."""
    call = ["_p = _newp(_PTR)", f"if _fn{tag}(_p, {', '.join(cargs)}): raise _error()"]
    if C_ARRAY:
        return call + ["return _wrap(_p)"]
    return call + ["_r = _obj_new(_array)", "_r._p = _p", "_r._s = _r._d = None", "return _r"]


def _fast_case(op, v, names, tag, alias):
    """The lines of the common call first, when every C parameter is an array, int or dtype
    (``_INLINE``), a bool or the stream: one test of the argument types (and of ``stream`` being None),
    then the call with the arguments read inline, skipping the weak-typing tests, the keep
    list and the per-argument conditionals of the general body below. Empty when an argument
    needs a converter or a default check."""
    if op._unused[v.cname]:
        return []
    conds, cargs = [], []
    for cn, conv, paired in v.steps:
        if conv is None:
            if "stream" in names:
                conds.append("stream is None")
            cargs.append("_Ctx.stream")
            continue
        n = alias.get(cn, cn)
        if conv is B._conv_bool and n in names:
            cargs.append(f"_bool({n})")
            continue
        inline = _INLINE.get(conv)
        if inline is None or paired or n not in names:
            return []
        test, value = inline
        conds.append(test.format(n))
        cargs.append(value.format(n))
    if not conds:
        return []
    return [f"if {' and '.join(conds)}:"] + ["    " + line for line in _call_and_wrap(tag, cargs)]


def _axis_dispatch(op, names, used):
    """For an op with an ``axis``/``axes`` parameter: a direct body per common case of its value
    (as ``Op.choose`` picks: None → the variant without an axis, an int → ``_axis``, a list or
    tuple → ``_axes``), anything else through ``Op.run``; None when there is no such case."""
    ax = "axis" if "axis" in names else "axes"
    alias = {"axis": ax, "axes": ax}
    cases = []
    if "none" in op.by:
        cases.append((f"{ax} is None", "n", op.by["none"]))
    if "axis" in op.by:
        cases.append((f"_type({ax}) is int", "i", op.by["axis"]))
    if "axes" in op.by:
        cases.append((f"_type({ax}) is list or _type({ax}) is tuple", "s", op.by["axes"]))
    lines = []
    for cond, tag, v in cases:
        body = _body_direct(op, v, names, tag, alias)
        if body is None:
            continue
        used[tag] = v
        lines.append(f"if {cond}:")
        lines += ["    " + line for line in body]
    if not lines:
        return None
    return lines + ["return _op.run({" + ", ".join(f"{n!r}: {n}" for n in names) + "})"]


def compile_op(op):
    """``mx.<name>`` for ``op`` (a ``_binder.Op``) as a compiled function, or None (use the
    generic wrapper)."""
    if op.pyname in B._DTYPE_CASTS_INPUT:
        return None  # Op.run casts the input for their `dtype` argument
    params = [dict(p, _missing=op.sig.defaults[p["name"]] is B._MISSING) for p in op.sig.params]
    plist = _param_list(params)
    if plist is None:
        return None
    names = [p["name"] for p in params]
    run = ["return _op.run({" + ", ".join(f"{n!r}: {n}" for n in names) + "})"]
    used = {}  # tag → variant whose globals the source refers to
    if op.fixed is not None:
        body = _body_direct(op, op.fixed, names)
        used[""] = op.fixed
    else:
        body = _axis_dispatch(op, names, used)
    body = body or run
    fname = op.pyname.split(".")[-1]
    if not fname.isidentifier() or keyword.iskeyword(fname):
        fname = "op"
    src = f"def {fname}({plist}):\n" + "".join(f"    {line}\n" for line in body)
    # (builtins the body uses are bound as _-names: a parameter may be called like one)
    env = {"__name__": "mlx.core._binder", "_type": type, "_op": op, "_array": array, "_plain": B._plain_as_array, "_stream": stream_handle, "_newp": B._newp,
           "_PTR": _ARR_PTR, "_error": error, "_obj_new": B._obj_new, "_wrap": wrap, "_weak_next_to": _weak_next_to, "_Ctx": _Ctx,
           "_bool": bool, "_Dtype": D.Dtype}
    for i, p in enumerate(params):
        env[f"_D{i}"] = op.sig.defaults[p["name"]]
    for tag, v in used.items():
        env[f"_fn{tag}"] = v.fn
        for i, (_, conv, _) in enumerate(v.steps):
            env[f"_cv{tag}{i}"] = conv
    try:
        exec(compile(src, f"<mx.{op.pyname}>", "exec"), env)
    except SyntaxError:  # a parameter order Python cannot express (a default before a required one)
        return None
    f = env[fname]
    f._source = src
    return f
