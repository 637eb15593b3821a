"""Which calls the C array type (``_carray.c``) runs without Python, decided from the binder's
tables (the op signatures of ``_signatures.json`` and the C declarations), not from a list.

- ``mx.<op>`` (``fast_op``): an op bound to one C function (no ``axis`` choice) whose Python
  parameters are its array operands and ``stream`` only, one or two of them, with the C
  signature ``int(mlx_array*, mlx_array[, mlx_array], mlx_stream)``: the positional call with
  arrays (or, for ops the binder types weakly, one array and a Python int/float) goes straight
  to the C function; any other call to the compiled Python function, which stays the reference.
- the arithmetic operators (``install_operators``): ``_operators``' table of operator → C op,
  less the bitwise ones (their float check is in Python), ``@`` as ``mx.matmul``, and ``a[idx]``
  for an index of ints, int slices, None and ``...`` (``_basic_index``'s one-call form).

Nothing here runs without the C type (``_array._C`` None).
"""
from . import _binder as B
from ._array import _C
from ._ffi import ffi, lib

_UNARY = "int(*)(mlx_array *, mlx_array, mlx_stream)"
_BINARY = "int(*)(mlx_array *, mlx_array, mlx_array, mlx_stream)"


def _address(cname, ctype):
    """The C function's address when its C type is ``ctype``, else None."""
    try:
        fp = ffi.addressof(lib, cname)
    except (AttributeError, ffi.error):
        return None
    if ffi.typeof(fp) != ffi.typeof(ctype):
        return None
    return int(ffi.cast("uintptr_t", fp))


def fast_op(op, f):
    """``f`` (the compiled ``mx.<name>`` of ``op``, a ``_binder.Op``) with the C fast call in
    front of it when ``op`` qualifies (module docstring), else ``f`` itself."""
    v = op.fixed
    if _C is None or v is None or op.pyname in B._DTYPE_CASTS_INPUT or op._unused[v.cname] or v.outs != ["array"]:
        return f
    arrays = [cn for cn, conv, paired in v.steps if conv is not None]
    if len(arrays) not in (1, 2) or len(v.steps) != len(arrays) + 1 or v.steps[-1][1] is not None:
        return f
    if any(conv is not B._conv_array or paired for _, conv, paired in v.steps[:-1]):
        return f
    params = op.sig.params
    if [p["name"] for p in params] != arrays + ["stream"] or any(p["kind"] not in ("pos", "posonly") for p in params[:-1]):
        return f
    weak = bool(op.weak)
    if weak and list(op.weak) != arrays:
        return f
    addr = _address(v.cname, _UNARY if len(arrays) == 1 else _BINARY)
    if addr is None:
        return f
    return _C.fast_op(f, len(arrays), addr, weak)


# The C parameter kinds args_call converts (one letter each: its pattern) and their C types.
_KIND_CTYPE = {"i": "int", "b": "_Bool", "d": "mlx_dtype", "I": "int *, size_t"}


def _kind(conv, ctype, paired):
    if conv is B._conv_int and ctype == "int" and not paired:
        return "i"
    if conv is B._conv_bool and not paired:
        return "b"
    if conv is B._conv_dtype and not paired:
        return "d"
    if paired and ctype == "int*":
        return "I"
    return None


def args_plan(op):
    """How ``_carray.c``'s fast_args_op calls ``op`` (a ``_binder.Op``), or None when it cannot:
    (names, defaults, npos, axis, variants) — see m_fast_args_op. The op takes one array first
    (not weakly typed), then only int / bool / dtype / int-sequence parameters and the stream;
    an ``axis``/``axes`` parameter picks the variant as ``Op.choose`` does (None: the variant
    without it, an int: ``_axis``, a sequence: ``_axes``); every variant receives every other
    parameter (nothing the C function ignores)."""
    if _C is None or op.weak or op.pyname in B._DTYPE_CASTS_INPUT:
        return None
    params = op.sig.params
    if len(params) < 2 or params[0]["kind"] not in ("pos", "posonly") or params[-1]["name"] != "stream":
        return None
    if params[-1]["kind"] != "kwonly" or not B._is_array_type(params[0].get("type", "")):
        return None
    rest = params[1:-1]
    if any(p["kind"] not in ("pos", "posonly", "kwonly") for p in rest) or len(rest) > 4:
        return None
    names = tuple(p["name"] for p in rest)
    npos = sum(1 for p in rest if p["kind"] != "kwonly")
    if any(p["kind"] == "kwonly" for p in rest[:npos]):
        return None
    defaults = []
    for n in names:
        d = op.sig.defaults[n]
        defaults.append(() if d is B._MISSING else (d,))
    axis_name = None if op.fixed is not None else ("axis" if "axis" in names else "axes")
    if axis_name is not None and axis_name not in names:
        return None
    slots = {"none": 0, "axis": 1, "axes": 2}
    variants = [None, None, None]
    for key, v in ([("none", op.fixed)] if op.fixed is not None else op.by.items()):
        if op._unused[v.cname] or v.outs != ["array"] or len(v.steps) < 2:
            return None
        first, *mid, last = v.steps
        if first[1] is not B._conv_array or first[2] or last[1] is not None:
            return None
        ctypes = {n: t for t, n, _ in v.ins}
        pat, src = "", []
        for cn, conv, paired in mid:
            k = _kind(conv, ctypes.get(cn), paired)
            pyname = axis_name if cn in ("axis", "axes") and axis_name is not None else cn
            if k is None or pyname not in names:
                return None
            pat += k
            src.append(names.index(pyname))
        # every Python parameter but the axis one reaches the C function
        if set(src) | ({names.index(axis_name)} if axis_name else set()) != set(range(len(names))):
            return None
        if pat not in _C.PATTERNS:
            return None
        ctype = "int(*)(mlx_array *, mlx_array, " + "".join(_KIND_CTYPE[c] + ", " for c in pat) + "mlx_stream)"
        addr = _address(v.cname, ctype)
        if addr is None:
            return None
        variants[slots[key]] = (addr, _C.PATTERNS.index(pat), tuple(src))
    axis = names.index(axis_name) if axis_name else -1
    return names, tuple(defaults), npos, axis, tuple(variants)


def fast_args_op(op, f, method=None, varargs=False):
    """``f`` with the C call of ``args_plan(op)`` in front of it, or ``f`` itself. ``method``:
    the method flavour (a descriptor; ``method`` is then the Python method it stands for)."""
    plan = args_plan(op)
    if plan is None:
        return f if method is None else method
    return _C.fast_args_op(f if method is None else method, *plan, method is not None, varargs)


def install_operators(array, table, bitwise, matmul):
    """The C slots for ``array``'s arithmetic operators: ``table`` maps the operator's name (add,
    sub...) to its C function's name, as ``_operators`` binds them (with weakly typed Python
    scalars); ``@`` calls ``matmul`` (``mx.matmul``), whose C function the binder chose."""
    if _C is None:
        return
    ops = [(name, cname, True) for name, cname in table.items() if cname not in bitwise]
    if isinstance(matmul, _C.FastOp) and matmul._op.fixed is not None:
        ops.append(("matmul", matmul._op.fixed.cname, False))
    for name, cname, weak in ops:
        addr = _address(cname, _BINARY)
        if addr is not None:
            _C.install_binop(name, addr, getattr(array, f"__{name}__"), getattr(array, f"__r{name}__", None), weak)
    if _basic_index_in_library():
        from ._basic_index import SHAPELESS_TRACES

        _C.install_getitem(array.__getitem__)
        _C.install_setitem(array.__setitem__, SHAPELESS_TRACES)


def _basic_index_in_library():
    """``a[idx]``'s C slot calls ``mlx_arm_index_basic`` and ``a[idx] = v``'s
    ``mlx_arm_index_basic_update`` (the form of ``_basic_index.encode``): only when this library
    has them (the extension then resolved them too)."""
    from ._ffi import exported

    return exported("mlx_arm_index_basic") and exported("mlx_arm_index_basic_update")


def install_methods(array, module, plain, special):
    """The C method flavour for ``array``'s methods that call ``mx.<name>`` with the array first:
    ``plain`` (names whose method is exactly that call) and ``special`` ({name: takes *args},
    the methods with their own Python form: reshape/transpose's varargs, astype's positional
    stream — other calls go to that Python method). Only where ``mx.<name>`` is the binder's op
    with a C fast call of its own (``fast_args_op``); ``a.T`` then becomes ``mx.transpose(a)``'s
    C call as a property."""
    if _C is None:
        return
    for name in list(plain) + list(special):
        f = module.get(name)
        if type(f) is not _C.FastOp or args_plan(f._op) is None:
            continue
        setattr(array, name, fast_args_op(f._op, f.__wrapped__, getattr(array, name), special.get(name, False)))
    from ._array import _STREAM_OWNERS

    _C.install_item(array.item, _STREAM_OWNERS)
    _C.install_init()
    t = module.get("transpose")
    if type(t) is _C.FastOp and args_plan(t._op) is not None:
        array.T = property(t, doc=array.T.__doc__)
