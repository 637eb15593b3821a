"""The fast path of indexing: an index made only of Python ints, slices, ``None`` and ``...``
(what models use, e.g. a KV cache's ``cache[..., i:j, :] = kv`` and ``cache[..., :n, :]``) maps
straight onto one ``mlx_slice`` (reading) or one ``mlx_slice_update`` (assignment).
``basic_window`` works out the window with integer arithmetic per axis, never per element.
An index it does not recognise (arrays, bools, numpy scalars …) or that is out of range gives
None, and the caller uses the general code in ``_indexing``, which raises MLX's errors.
"""
from ._array import _Ctx, array
from ._ffi import ffi, lib
from ._indexing import _I32, _astype, _c, _reshape, _weak

_INTS = ffi.typeof("int[]")
_NONE_T, _ELLIPSIS_T = type(None), type(Ellipsis)


def _int_buf(vals):
    return ffi.new(_INTS, vals)


def _small_int(v):
    """Whether ``v`` is a Python int (not bool) that fits MLX's 32-bit indices."""
    return type(v) is int and _I32[0] <= v <= _I32[1]


class Window:
    """A basic index resolved against a shape: ``start``/``stop``/``step`` per axis (``mlx_slice``'s
    form), the window's ``shape`` (ints give a 1), the result's shape ``out`` (ints dropped,
    ``None`` adds a 1) and ``kinds``: per index entry in order, "n" (None), "i" (int), "s" (axis kept)."""

    __slots__ = ("start", "stop", "step", "shape", "out", "kinds", "whole")


def basic_window(shape, idx):
    """The ``Window`` of ``idx`` over ``shape``, or None when ``idx`` is not a plain basic index
    (arrays, bools, numpy scalars …) or is out of range (the general path raises the error)."""
    if type(idx) is not tuple:
        idx = (idx,)
    ndim = len(shape)
    consumed = ells = 0
    for i in idx:
        t = type(i)
        if t is int:
            if not _I32[0] <= i <= _I32[1]:
                return None
            consumed += 1
        elif t is slice:
            if not ((i.start is None or _small_int(i.start)) and (i.stop is None or _small_int(i.stop))
                    and (i.step is None or (_small_int(i.step) and i.step != 0))):
                return None
            consumed += 1
        elif t is _ELLIPSIS_T:
            ells += 1
        elif t is not _NONE_T:
            return None
    if ells > 1 or consumed > ndim:
        return None
    start, stop, step, win, out, kinds = [], [], [], [], [], []
    axis = 0
    for i in idx:
        t = type(i)
        if t is _NONE_T:
            out.append(1)
            kinds.append("n")
            continue
        if t is _ELLIPSIS_T:
            for n in shape[axis:axis + ndim - consumed]:
                start.append(0), stop.append(n), step.append(1), win.append(n), out.append(n), kinds.append("s")
            axis += ndim - consumed
            continue
        n = shape[axis]
        if t is int:
            if not -n <= i < n:
                return None
            k = i % n
            start.append(k), stop.append(k + 1), step.append(1), win.append(1), kinds.append("i")
        else:
            b, e, st = i.indices(n)
            ln = len(range(b, e, st))
            if ln == 0:
                b, e, st = 0, 0, 1  # empty (``indices`` may give a start of -1, which the C op wraps)
            elif st < 0 and e < 0:
                e = -n - 1  # "before the first element"; the C op reads a plain -1 as n - 1
            start.append(b), stop.append(e), step.append(st), win.append(ln), out.append(ln), kinds.append("s")
        axis += 1
    for n in shape[axis:]:
        start.append(0), stop.append(n), step.append(1), win.append(n), out.append(n), kinds.append("s")
    w = Window()
    w.start, w.stop, w.step, w.shape, w.out, w.kinds = start, stop, step, win, out, kinds
    w.whole = win == list(shape) and all(s == 1 for s in step)
    return w


def getitem_basic(a, w):
    """``a[idx]`` for a basic index's window ``w``: one slice (unless whole) and one reshape
    (unless the shapes already agree); always a new array object, as MLX returns."""
    if not w.whole:
        n = len(w.start)
        a = _c(lib.mlx_slice, a._p[0], _int_buf(w.start), n, _int_buf(w.stop), n, _int_buf(w.step), n, _Ctx.stream)
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
    vs = list(vshape)
    out = w.out
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
    return ws


def setitem_basic(a, w, value):
    """``a`` with window ``w`` set from ``value`` (one ``mlx_slice_update``); ``a`` itself when the
    window is empty (after the broadcast check, as MLX)."""
    v = value if isinstance(value, array) else _weak(value, a.dtype)
    ws = _window_update(w, v.shape)
    if 0 in w.shape:
        return a
    v = _astype(v, a.dtype)
    if tuple(ws) != v.shape:
        v = _reshape(v, ws)
    n = len(w.start)
    return _c(lib.mlx_slice_update, a._p[0], v._p[0], _int_buf(w.start), n, _int_buf(w.stop), n, _int_buf(w.step), n,
              _Ctx.stream)
