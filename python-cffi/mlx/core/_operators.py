"""Operators (``+ - * / // % ** @ & | ^ << >> ~ == != < <= > >=``, in-place and reflected)
and basic/integer-array indexing of ``mlx.core.array``.

Binary operators call the C op directly (no signature binding) because they are the hottest
path; a Python scalar operand is weakly typed (see ``_array.weak_scalar``).
"""
from . import _dtypes as D
from ._array import _ARR_PTR, _C, _Ctx, _newp, array, error, to_array, weak_scalar, wrap
from ._array import rebind as _rebind
from ._ffi import check, ffi, lib

from ._array import _SCALAR_CACHE

_cache_get = _SCALAR_CACHE.get
_dtype_code = lib.mlx_array_dtype
_obj_new = object.__new__


def _operand(self, other):
    """``other`` as an array next to ``self``, or None when the operator does not apply."""
    if type(other) is array or isinstance(other, array):
        return other
    a = weak_scalar(other, self.dtype)
    if a is not None:
        return a
    m = type(other).__module__
    if m == "numpy" or m.startswith("numpy."):
        if getattr(other, "ndim", None) == 0 and not hasattr(other, "__len__"):
            return weak_scalar(other.item(), self.dtype)
        return to_array(other)
    return None


# MLX's words for each operator in its "Cannot perform ..." errors.
_DESC = {
    "mlx_add": "addition", "mlx_subtract": "subtraction", "mlx_multiply": "multiplication",
    "mlx_divide": "division", "mlx_floor_divide": "floor division", "mlx_remainder": "modulus",
    "mlx_power": "power", "mlx_bitwise_and": "bitwise and", "mlx_bitwise_or": "bitwise or",
    "mlx_bitwise_xor": "bitwise xor", "mlx_left_shift": "left shift", "mlx_right_shift": "right shift",
    "mlx_less": "less than", "mlx_less_equal": "less than or equal", "mlx_greater": "greater than",
    "mlx_greater_equal": "greater than or equal", "mlx_equal": "equal", "mlx_not_equal": "not equal",
}


def _unsupported(cfn_name, other):
    """MLX raises ValueError for str/list/tuple operands; other types get NotImplemented (TypeError)."""
    if isinstance(other, (str, list, tuple)) and cfn_name not in ("mlx_equal", "mlx_not_equal"):
        raise ValueError(f"Cannot perform {_DESC[cfn_name]} on an mlx.core.array and {type(other).__name__}")
    return NotImplemented


_BITWISE = frozenset({"mlx_bitwise_and", "mlx_bitwise_or", "mlx_bitwise_xor", "mlx_left_shift", "mlx_right_shift"})


def _no_float_bitwise(cfn_name, a, b):
    """MLX's operators refuse inexact operands of a bitwise op before the op is called (ValueError;
    mx.bitwise_and & co. leave it to the op, which raises RuntimeError)."""
    if D.is_inexact(a.dtype) or D.is_inexact(b.dtype):
        raise ValueError(f"Floating point types not allowed with {_DESC[cfn_name]}.")


def _binary(cfn_name):
    cfn = getattr(lib, cfn_name)
    bitwise = cfn_name in _BITWISE

    def op(self, other):
        # Fast paths first (this is the hottest code of the package): an array operand, or a
        # Python scalar whose constant is already cached for this dtype.
        h = self._p[0]
        t = type(other)
        if t is array:
            o = other
        elif t is int or t is float:
            # (``is None``, not ``or``: ``or`` would call the cached array's __bool__, which evaluates it)
            o = _cache_get((t, other.hex() if t is float else other, _dtype_code(h)))
            if o is None:
                o = _operand(self, other)
        else:
            o = _operand(self, other)
        if o is None:
            return _unsupported(cfn_name, other)
        if bitwise:
            _no_float_bitwise(cfn_name, self, o)
        p = _newp(_ARR_PTR)
        if cfn(p, h, o._p[0], _Ctx.stream):
            raise error()
        if _C is not None:  # (the C array type: one call)
            return wrap(p)
        a = _obj_new(array)
        a._p = p
        a._s = a._d = None
        return a

    def rop(self, other):
        o = _operand(self, other)
        if o is None:
            return _unsupported(cfn_name, other)
        p = _newp(_ARR_PTR)
        if cfn(p, o._p[0], self._p[0], _Ctx.stream):
            raise error()
        return wrap(p)

    def iop(self, other):
        if cfn_name == "mlx_divide" and not D.is_inexact(self.dtype):
            raise ValueError("In place division cannot cast to non-floating point type.")
        r = op(self, other)
        if r is NotImplemented:
            return r
        _rebind(self, r)
        return self

    return op, rop, iop


_BIN = {
    "add": "mlx_add", "sub": "mlx_subtract", "mul": "mlx_multiply", "truediv": "mlx_divide",
    "floordiv": "mlx_floor_divide", "mod": "mlx_remainder", "pow": "mlx_power",
    "and": "mlx_bitwise_and", "or": "mlx_bitwise_or", "xor": "mlx_bitwise_xor",
    "lshift": "mlx_left_shift", "rshift": "mlx_right_shift",
}
for _name, _c in _BIN.items():
    _op, _rop, _iop = _binary(_c)
    setattr(array, f"__{_name}__", _op)
    if _c not in _BITWISE:  # MLX's array has no reflected bitwise operators: `9 & a` is a TypeError
        setattr(array, f"__r{_name}__", _rop)
    setattr(array, f"__i{_name}__", _iop)

for _name, _c in {"eq": "mlx_equal", "ne": "mlx_not_equal", "lt": "mlx_less", "le": "mlx_less_equal",
                  "gt": "mlx_greater", "ge": "mlx_greater_equal"}.items():
    setattr(array, f"__{_name}__", _binary(_c)[0])


def _eq_or_false(op_eq, result_if_unsupported):
    def f(self, other):
        if other is None:
            raise TypeError("__eq__(): incompatible function arguments: None")
        r = op_eq(self, other)
        return result_if_unsupported if r is NotImplemented else r

    return f


array.__eq__ = _eq_or_false(array.__eq__, False)
array.__ne__ = _eq_or_false(array.__ne__, True)


def _matmul(self, other):
    from . import matmul  # bound from the C API when it has mlx_matmul

    return matmul(self, other)


def _rmatmul(self, other):
    from . import matmul

    return matmul(other, self)


array.__matmul__ = _matmul
array.__rmatmul__ = _rmatmul


def _imatmul(self, other):
    r = _matmul(self, other)
    _rebind(self, r)
    return self


array.__imatmul__ = _imatmul


def _unary(cfn_name, check_dtype=None):
    cfn = getattr(lib, cfn_name)

    def op(self):
        if check_dtype:
            check_dtype(self.dtype)
        p = _newp(_ARR_PTR)
        if cfn(p, self._p[0], _Ctx.stream):
            raise error()
        return wrap(p)

    return op


def _no_bool_negative(d):
    if d == D.bool_:
        raise ValueError("[negative] Not supported for bool, use logical_not instead.")


def _no_float_invert(d):
    if D.is_inexact(d):
        raise ValueError("Floating point types not allowed with bitwise inversion.")


array.__neg__ = _unary("mlx_negative", _no_bool_negative)
array.__abs__ = _unary("mlx_abs")
array.__invert__ = _unary("mlx_bitwise_invert", _no_float_invert)


# --- indexing (the general machinery lives in _indexing) ------------------------------------

from . import _basic_index as _bx  # noqa: E402
from . import _indexing as _ix  # noqa: E402

_expand_index = _ix.expand_index
_is_int = _ix.is_int
_is_array_index = _ix.is_array_index


def _int_apart_from_array(items):
    """Whether an int index is separated from the array index by a slice or None: then numpy
    (and MLX) move the indexed dims to the front, which the general path does."""
    slots = [k for k, i in enumerate(items) if _is_array_index(i) or _is_int(i)]
    return bool(slots) and slots != list(range(slots[0], slots[-1] + 1))


_fast_getitem, _fast_setitem = _bx.getitem, _bx.setitem


def _getitem(self, idx):
    r = _fast_getitem(self, idx)
    if r is not None:
        return r
    if type(idx) is int:
        r = _bx.getitem_int(self, idx)
        if r is not None:
            return r
    shape = self.shape
    w = _bx.basic_window(shape, idx)
    if w is not None:
        return _bx.getitem_basic(self, w)
    items = _expand_index(idx, len(shape))
    for i in items:
        if isinstance(i, bool) or (isinstance(i, array) and i.dtype == D.bool_):
            raise ValueError("boolean indices are not yet supported")
        if not (i is None or isinstance(i, slice) or _is_int(i) or _is_array_index(i)):
            raise ValueError("Cannot index mlx array using the given type.")
    n_arr = sum(1 for i in items if _is_array_index(i))
    if n_arr > 1 or (n_arr == 1 and _int_apart_from_array(items)):
        return _ix.getitem_general(self, items)
    # 1) slices and ints on every dimension (one mlx_slice), remembering dims to drop.
    start, stop, step, drop, final, axis = [], [], [], [], [], 0
    arr_pos = None
    for i in items:
        if i is None:
            final.append("new")
            continue
        n = shape[axis]
        if isinstance(i, slice):
            b, e, s = i.indices(n)
            if not len(range(b, e, s)):
                b, e, s = 0, 0, 1  # empty (indices() may give a start of -1 when stepping back)
            elif s < 0 and e < 0:
                e = -n - 1  # "before the first element"; the C op reads a plain -1 as n - 1
            start.append(b), stop.append(e), step.append(s)
            final.append("keep")
        elif _is_int(i):
            k = int(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            k %= n
            start.append(k), stop.append(k + 1), step.append(1)
            final.append("drop")
        else:
            start.append(0), stop.append(n), step.append(1)
            final.append("arr")
            arr_pos = axis
        axis += 1
    a = self
    if shape and any((b, e, s) != (0, n, 1) for b, e, s, n in zip(start, stop, step, shape)):
        p = _newp(_ARR_PTR)
        check(lib.mlx_slice(p, a._p[0], ffi.new("int[]", start), len(start), ffi.new("int[]", stop), len(stop),
                            ffi.new("int[]", step), len(step), _Ctx.stream))
        a = wrap(p)
    # 2) the integer-array index (take along its axis; its dims go where the axis was).
    kept_axes = [k for k, f in enumerate(x for x in final if x != "new")]
    if arr_pos is not None:
        arr_idx = next(i for i in items if _is_array_index(i))
        ind = to_array(arr_idx)
        if not (D.is_integer(ind.dtype)):
            raise ValueError("Cannot index mlx array using the given type.")
        p = _newp(_ARR_PTR)
        check(lib.mlx_take_axis(p, a._p[0], ind._p[0], arr_pos, _Ctx.stream))
        a = wrap(p)
        arr_nd = ind.ndim
    else:
        arr_nd = 0
    # 3) reshape: drop int dims, insert None dims, expand the array index dims.
    cur = a.shape
    new_shape, ci = [], 0
    for f in final:
        if f == "new":
            new_shape.append(1)
        elif f == "drop":
            ci += 1
        elif f == "arr":
            new_shape.extend(cur[ci:ci + arr_nd])
            ci += arr_nd
        else:
            new_shape.append(cur[ci])
            ci += 1
    if tuple(new_shape) != cur:
        p = _newp(_ARR_PTR)
        check(lib.mlx_reshape(p, a._p[0], ffi.new("int[]", new_shape), len(new_shape), _Ctx.stream))
        a = wrap(p)
    elif a is self:
        a = array(self)
    del kept_axes
    return a


array.__getitem__ = _getitem


def _setitem(self, idx, value):
    if _fast_setitem(self, idx, value):
        return
    w = _bx.basic_window(self.shape, idx)
    if w is None:
        return _ix.setitem(self, idx, value)
    r = _bx.setitem_basic(self, w, value)
    if r is not self:
        _rebind(self, r)


array.__setitem__ = _setitem
array.at = property(lambda self: _ix.ArrayAt(self), doc="Indexed updates: a.at[idx].add(v) …")
