"""The fast path of indexing: an index made only of Python ints, slices, ``None`` and ``...``
(what models use, e.g. a KV cache's ``cache[..., i:j, :] = kv`` and ``cache[..., :n, :]``).

``getitem`` / ``setitem`` hand the index, flattened by ``encode``, to one C call
(``mlx_arm_index_basic`` / ``_update``), which resolves it against the shape and makes the
``mlx_slice`` + ``mlx_reshape`` (reading) or the ``mlx_slice_update`` (assignment). Where the
library lacks them, or the C call refuses the index (out of range, not 32-bit …), the Python
resolution below (``basic_window``, one ``mlx_slice`` / ``mlx_slice_update``) runs instead.
An index neither recognises (arrays, bools, numpy scalars …) or that is out of range gives
None, and the caller uses the general code in ``_indexing``, which raises MLX's errors.
"""
from ._array import _ARR_PTR, _C, _INTS, _Ctx, _newp, array, wrap
from ._ffi import exported, ffi, lib
from ._indexing import _I32, _c, _reshape, _weak

_NONE_T, _ELLIPSIS_T = type(None), type(Ellipsis)


_I64S = ffi.typeof("int64_t[]")
_obj_new = object.__new__
_clear_error = lib.mlx_arm_clear_last_error
# (None when this library build predates them: the Python resolution then does all the work)
_index = lib.mlx_arm_index_basic if exported("mlx_arm_index_basic") else None
_index_update = lib.mlx_arm_index_basic_update if exported("mlx_arm_index_basic_update") else None


def encode(idx):
    """``idx`` as ``mlx_arm_index_basic``'s int64 list (see include/mlx/c/mlx_arm.h), or None
    when it holds anything but Python ints, slices of ints, ``None`` and ``...``."""
    if type(idx) is not tuple:
        if type(idx) is int:
            return (0, idx)
        idx = (idx,)
    spec = []
    for i in idx:
        t = type(i)
        if t is int:
            spec += (0, i)
        elif t is slice:
            b, e, st = i.start, i.stop, i.step
            if not ((b is None or type(b) is int) and (e is None or type(e) is int)
                    and (st is None or type(st) is int)):
                return None
            # (flags: which bounds are given; a bound left out is sent as 0)
            spec += (8 | (b is not None) | (e is not None) << 1 | (st is not None) << 2, b or 0, e or 0, st or 0)
        elif i is None:
            spec.append(1)
        elif i is Ellipsis:
            spec.append(2)
        else:
            return None
    return spec


# ``a[i]``'s index buffers, by ``i`` (read-only to the C call, so shared; bounded like the
# scalar constants' cache)
_INT_SPECS = {}
_INT_SPECS_MAX = 512


def _spec_buffer(idx):
    """``encode(idx)`` as the C call's ``int64_t[]``, or None (not a plain basic index, or an
    int beyond int64: the general path raises MLX's 32-bit error)."""
    if type(idx) is int:
        sp = _INT_SPECS.get(idx)
        if sp is None:
            try:
                sp = _newp(_I64S, (0, idx))
            except OverflowError:
                return None
            if len(_INT_SPECS) >= _INT_SPECS_MAX:
                _INT_SPECS.clear()
            _INT_SPECS[idx] = sp
        return sp
    spec = encode(idx)
    if spec is None:
        return None
    try:
        return _newp(_I64S, spec)
    except OverflowError:
        return None


def getitem(a, idx):
    """``a[idx]`` through one ``mlx_arm_index_basic`` call; None when ``idx`` is not a plain
    basic index in range (the caller's slower paths then give the result or MLX's error)."""
    if _index is None:
        return None
    sp = _spec_buffer(idx)
    if sp is None:
        return None
    p = _newp(_ARR_PTR)
    if _index(p, a._p[0], sp, len(sp), _Ctx.stream):
        _clear_error()
        return None
    if _C is not None:  # (the C array type: one call)
        return wrap(p)
    r = _obj_new(array)
    r._p = p
    r._s = r._d = None
    return r


def setitem(a, idx, value):
    """``a[idx] = value`` through one ``mlx_arm_index_basic_update`` call, which rebinds ``a``'s
    handle in place; False when it did nothing (not a plain basic index, out of range, an update
    that does not broadcast: the caller's slower paths then do it or raise MLX's error).
    Not taken in a shapeless trace: the C call returns an empty window's source unchanged,
    a shortcut such a trace must not record (``setitem_basic`` keeps a node then)."""
    if _index_update is None or SHAPELESS_TRACES[0]:
        return False
    sp = _spec_buffer(idx)
    if sp is None:
        return False
    v = value if isinstance(value, array) else _weak(value, a.dtype)
    # (the C call computes the whole result before it writes a's handle: a failure leaves a)
    if _index_update(a._p, a._p[0], v._p[0], sp, len(sp), _Ctx.stream):
        _clear_error()
        return False
    return True


class Window:
    """A basic index resolved against a shape: ``start``/``stop``/``step`` per axis (lists,
    ``mlx_slice``'s form), the window's ``shape`` (a tuple; ints give a 1), the result's ``out``
    (ints dropped, ``None`` adds a 1), ``kinds``: a str with, per index entry in order, "n"
    (None), "i" (int) or "s" (an axis kept), and ``whole``: the window is the whole array."""

    __slots__ = ("start", "stop", "step", "shape", "out", "kinds", "whole")


def basic_window(shape, idx):
    """The ``Window`` of ``idx`` over ``shape``, or None when ``idx`` is not a plain basic index
    (arrays, bools, numpy scalars …) or is out of range (the general path raises the error)."""
    if type(idx) is not tuple:
        idx = (idx,)
    lo, hi = _I32
    consumed = ells = 0
    for i in idx:
        t = type(i)
        if t is int:
            if not lo <= i <= hi:
                return None
            consumed += 1
        elif t is slice:
            for v in (i.start, i.stop, i.step):
                if v is not None and (type(v) is not int or not lo <= v <= hi):
                    return None
            if i.step == 0:
                return None
            consumed += 1
        elif t is _ELLIPSIS_T:
            ells += 1
        elif t is not _NONE_T:
            return None
    ndim = len(shape)
    if ells > 1 or consumed > ndim:
        return None
    # One pass, straight into mlx_slice's three lists and the two shapes.
    start, stop, step, wshape, out, kinds = [], [], [], [], [], ""
    axis = 0
    whole = True
    for i in idx:
        t = type(i)
        if t is int:
            n = shape[axis]
            if not -n <= i < n:
                return None
            if i < 0:
                i += n
            start.append(i)
            stop.append(i + 1)
            step.append(1)
            wshape.append(1)
            kinds += "i"
            whole = whole and n == 1
            axis += 1
        elif t is slice:
            n = shape[axis]
            b, e, st = i.indices(n)
            ln = len(range(b, e, st))
            if ln == 0:
                b, e, st = 0, 0, 1  # empty (``indices`` may give a start of -1, which the C op wraps)
            elif st < 0 and e < 0:
                e = -n - 1  # "before the first element"; the C op reads a plain -1 as n - 1
            start.append(b)
            stop.append(e)
            step.append(st)
            wshape.append(ln)
            out.append(ln)
            kinds += "s"
            whole = whole and ln == n and st == 1
            axis += 1
        elif t is _NONE_T:
            out.append(1)
            kinds += "n"
        else:  # the Ellipsis: every axis the other entries leave
            k = ndim - consumed
            full = shape[axis:axis + k]
            start += [0] * k
            stop += full
            step += [1] * k
            wshape += full
            out += full
            kinds += "s" * k
            axis += k
    if axis < ndim:
        full = shape[axis:]
        start += [0] * (ndim - axis)
        stop += full
        step += [1] * (ndim - axis)
        wshape += full
        out += full
        kinds += "s" * (ndim - axis)
    w = Window()
    w.start, w.stop, w.step, w.shape = start, stop, step, tuple(wshape)
    w.out, w.kinds, w.whole = tuple(out), kinds, whole
    return w


def getitem_int(a, i):
    """``a[i]`` for a Python int ``i`` in range on an array of rank >= 1 (the commonest index):
    one slice of the first axis and one reshape dropping it, without a ``Window``; None when
    ``i`` is out of range or ``a`` is 0-d (the general path raises MLX's error)."""
    shape = a.shape
    if not shape:
        return None
    n = shape[0]
    if not -n <= i < n:
        return None
    if i < 0:
        i += n
    rest = shape[1:]
    k = len(shape)
    a = _c(lib.mlx_slice, a._p[0], _newp(_INTS, (i,) + (0,) * (k - 1)), k, _newp(_INTS, (i + 1,) + rest), k,
           _newp(_INTS, (1,) * k), k, _Ctx.stream)
    return _c(lib.mlx_reshape, a._p[0], _newp(_INTS, rest), k - 1, _Ctx.stream)


# Shapeless compile traces running (mx.compile(shapeless=True) raises it while the function
# runs): the shortcuts below that depend on the traced shape (a whole window, an empty update)
# are not taken then, so the trace keeps a node that other shapes replay correctly.
SHAPELESS_TRACES = [0]


def getitem_basic(a, w):
    """``a[idx]`` for a basic index's window ``w``: one slice (unless whole) and one reshape
    (unless the shapes already agree); always a new array object, as MLX returns."""
    if not w.whole or SHAPELESS_TRACES[0]:
        n = len(w.start)
        a = _c(lib.mlx_slice, a._p[0], _newp(_INTS, w.start), n, _newp(_INTS, w.stop), n, _newp(_INTS, w.step), n, _Ctx.stream)
        if w.out != w.shape:
            a = _reshape(a, w.out)
        return a
    if w.out != w.shape:
        return _reshape(a, w.out)
    return array(a)


def _shape_text(shape):
    return "(" + ",".join(str(d) for d in shape) + ")"


def _window_update(w, vshape):
    """The shape to give an update of shape ``vshape`` so it broadcasts onto window ``w`` (MLX's
    rule: leading 1s of the update beyond ``a[idx]``'s rank are dropped; it must then broadcast
    to ``a[idx]``'s shape); ValueError when it cannot."""
    out = w.out
    if vshape == out and out == w.shape:  # already the window's shape (no int or None entries)
        return vshape
    vs = list(vshape)
    while len(vs) > len(out) and vs[0] == 1:
        vs.pop(0)
    if len(vs) > len(out):
        raise ValueError(f"Cannot broadcast array of shape {_shape_text(vshape)} into shape {_shape_text(w.shape)}.")
    vs = [1] * (len(out) - len(vs)) + vs
    if any(d != o and d != 1 for d, o in zip(vs, out)):
        raise ValueError(f"[broadcast_shapes] Shapes {_shape_text(vshape)} and {_shape_text(w.shape)} cannot be broadcast.")
    ws, j = [], 0
    for k in w.kinds:
        if k == "i":
            ws.append(1)
        elif k == "n":
            j += 1  # a size-1 axis of a[idx] that the window lacks (the check above made it 1)
        else:
            ws.append(vs[j])
            j += 1
    return tuple(ws)


def setitem_basic(a, w, value):
    """``a`` with window ``w`` set from ``value`` (one ``mlx_slice_update``); ``a`` itself when the
    window is empty (after the broadcast check, as MLX)."""
    v = value if isinstance(value, array) else _weak(value, a.dtype)
    vshape = v.shape
    ws = _window_update(w, vshape)
    if 0 in w.shape and not SHAPELESS_TRACES[0]:
        return a
    if ws != vshape:
        v = _reshape(v, ws)
    # (the C op casts the update to a's dtype)
    n = len(w.start)
    return _c(lib.mlx_slice_update, a._p[0], v._p[0], _newp(_INTS, w.start), n, _newp(_INTS, w.stop), n, _newp(_INTS, w.step), n,
              _Ctx.stream)
