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
        _C.install_getitem(array.__getitem__)


def _basic_index_in_library():
    """``a[idx]``'s C slot calls ``mlx_arm_index_basic`` (the form of ``_basic_index.encode``):
    only when this library has it (the extension then resolved it too)."""
    from ._ffi import exported

    return exported("mlx_arm_index_basic")
