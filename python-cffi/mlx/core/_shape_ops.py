"""Hand-written ``tile``, ``repeat``, ``tensordot``, ``conv2d``, ``conv3d``,
``conv_transpose2d``, ``conv_transpose3d``, ``conv_general``, ``slice``, ``slice_update``, ``roll``, ``trace``, ``clip`` and ``put_along_axis`` (axis None keeps the shape): their C
parameters are named or split differently from MLX's Python ones (``arr`` for ``a``,
``stride_0, stride_1`` for ``stride``, ``axes_a, axes_b`` for ``axes``), one Python function
spans several C variants (``roll``), or a ``None`` default means "the input's dtype"
(``trace``) or Python scalars are weakly typed against the array (``clip``), so the
name-matching binder cannot map them. Installed by ``_extra.install`` only when the
library exports the C functions each needs."""
from ._array import stream_handle, to_array
from ._ffi import ffi


def _res(cname, *args):
    from ._extra import _res as r

    return r(cname, *args)


def _int(v, what):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{what} must be an int, got {type(v).__name__}")
    return v.__index__()


def _ints(v, what):
    if isinstance(v, int) and not isinstance(v, bool):
        return [v]
    return [_int(x, what) for x in v]


def _buf(vals):
    return ffi.new("int[]", vals), len(vals)


def tile(a, reps, /, *, stream=None):
    """``a`` repeated ``reps`` times along each axis (numpy's tile)."""
    a = to_array(a)
    b, n = _buf(_ints(reps, "reps"))
    return _res("mlx_tile", a._p[0], b, n, stream_handle(stream))


def repeat(array, repeats, axis=None, *, stream=None):
    """Each element repeated ``repeats`` times (along ``axis``; flattened when None)."""
    a = to_array(array)
    if axis is None:
        return _res("mlx_repeat", a._p[0], _int(repeats, "repeats"), stream_handle(stream))
    return _res("mlx_repeat_axis", a._p[0], _int(repeats, "repeats"), _int(axis, "axis"), stream_handle(stream))


def tensordot(a, b, /, axes=2, *, stream=None):
    """Sum over the last ``axes`` axes of ``a`` and first of ``b``, or over the two axis lists."""
    a, b = to_array(a), to_array(b)
    if isinstance(axes, int) and not isinstance(axes, bool):
        return _res("mlx_tensordot_axis", a._p[0], b._p[0], axes, stream_handle(stream))
    axes = list(axes)
    if len(axes) != 2:
        raise ValueError("[tensordot] axes must be an int or a pair of axis lists")
    xa, na = _buf(_ints(axes[0], "axes"))
    xb, nb = _buf(_ints(axes[1], "axes"))
    return _res("mlx_tensordot", a._p[0], b._p[0], xa, na, xb, nb, stream_handle(stream))


def _per_dim(v, n, what):
    vals = _ints(v, what)
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n:
        raise TypeError(f"[conv] {what} must be an int or a tuple of {n} ints")  # MLX: incompatible arguments
    return vals


def conv2d(input, weight, /, stride=1, padding=0, dilation=1, groups=1, *, stream=None):
    """2-D convolution, channels last (NHWC input, OHWI weight)."""
    x, w = to_array(input), to_array(weight)
    s, p, d = (_per_dim(v, 2, n) for v, n in ((stride, "stride"), (padding, "padding"), (dilation, "dilation")))
    return _res("mlx_conv2d", x._p[0], w._p[0], *s, *p, *d, _int(groups, "groups"), stream_handle(stream))


def conv3d(input, weight, /, stride=1, padding=0, dilation=1, groups=1, *, stream=None):
    """3-D convolution, channels last (NDHWC input, ODHWI weight)."""
    x, w = to_array(input), to_array(weight)
    s, p, d = (_per_dim(v, 3, n) for v, n in ((stride, "stride"), (padding, "padding"), (dilation, "dilation")))
    return _res("mlx_conv3d", x._p[0], w._p[0], *s, *p, *d, _int(groups, "groups"), stream_handle(stream))


# Convolution family: transposed convolutions with per-axis pairs/triples (C splits them into _0/_1/_2).
def _conv_transpose(n, cname, input, weight, stride, padding, dilation, output_padding, groups, stream):
    x, w = to_array(input), to_array(weight)
    named = ((stride, "stride"), (padding, "padding"), (dilation, "dilation"), (output_padding, "output_padding"))
    flat = [v for val, what in named for v in _per_dim(val, n, what)]
    return _res(cname, x._p[0], w._p[0], *flat, _int(groups, "groups"), stream_handle(stream))


def conv_transpose2d(input, weight, /, stride=1, padding=0, dilation=1, output_padding=0, groups=1, *, stream=None):
    """2-D transposed convolution, channels last (NHWC input, OHWI weight)."""
    return _conv_transpose(2, "mlx_conv_transpose2d", input, weight, stride, padding, dilation, output_padding, groups, stream)


def conv_transpose3d(input, weight, /, stride=1, padding=0, dilation=1, output_padding=0, groups=1, *, stream=None):
    """3-D transposed convolution, channels last (NDHWC input, ODHWI weight)."""
    return _conv_transpose(3, "mlx_conv_transpose3d", input, weight, stride, padding, dilation, output_padding, groups, stream)


def conv_general(input, weight, /, stride=1, padding=0, kernel_dilation=1, input_dilation=1, groups=1, flip=False, *,
                 stream=None):
    """N-D convolution; ``padding`` an int, a sequence (symmetric) or a (low, high) pair of sequences."""
    x, w = to_array(input), to_array(weight)
    n = x.ndim - 2
    if isinstance(padding, (tuple, list)) and len(padding) == 2 and all(isinstance(p, (tuple, list)) for p in padding):
        lo, hi = _per_dim(padding[0], n, "padding"), _per_dim(padding[1], n, "padding")
    else:
        lo = hi = _per_dim(padding, n, "padding")
    bufs = [_buf(_per_dim(stride, n, "stride")), _buf(lo), _buf(hi), _buf(_per_dim(kernel_dilation, n, "kernel_dilation")),
            _buf(_per_dim(input_dilation, n, "input_dilation"))]
    flat = [v for b in bufs for v in b]
    return _res("mlx_conv_general", x._p[0], w._p[0], *flat, _int(groups, "groups"), bool(flip), stream_handle(stream))


def slice(a, start_indices, axes, slice_size, *, stream=None):
    """``a[start:start+size]`` along ``axes``, the starts read from an array at evaluation."""
    a, st = to_array(a), to_array(start_indices)
    ax, na = _buf(_ints(axes, "axes"))
    sz, nz = _buf(_ints(slice_size, "slice_size"))
    return _res("mlx_slice_dynamic", a._p[0], st._p[0], ax, na, sz, nz, stream_handle(stream))


def slice_update(a, update, start_indices, axes, *, stream=None):
    """``a`` with ``update`` written at the starts (an array) along ``axes``."""
    a, u, st = to_array(a), to_array(update), to_array(start_indices)
    ax, na = _buf(_ints(axes, "axes"))
    return _res("mlx_slice_update_dynamic", a._p[0], u._p[0], st._p[0], ax, na, stream_handle(stream))


def roll(a, shift, /, axis=None, *, stream=None):
    """MLX's roll: with no axis the shifts add up over the flattened array; an int shift
    applies to every axis of a tuple; a tuple of shifts with an int axis adds up there."""
    a = to_array(a)
    sh, ns = _buf(_ints(shift, "shift"))
    if axis is None:
        return _res("mlx_roll", a._p[0], sh, ns, stream_handle(stream))
    if isinstance(axis, int) or (hasattr(axis, "__index__") and not isinstance(axis, (list, tuple))):
        return _res("mlx_roll_axis", a._p[0], sh, ns, _int(axis, "axis"), stream_handle(stream))
    ax, na = _buf(_ints(axis, "axis"))
    return _res("mlx_roll_axes", a._p[0], sh, ns, ax, na, stream_handle(stream))


def trace(a, /, offset=0, axis1=0, axis2=1, dtype=None, *, stream=None):
    """The sum of a diagonal; ``dtype`` None keeps ``a``'s dtype (as MLX)."""
    from . import _dtypes as D

    a = to_array(a)
    if dtype is None:
        dtype = a.dtype
    if not isinstance(dtype, D.Dtype):
        raise TypeError(f"dtype must be an mlx.core.Dtype, got {type(dtype).__name__}")
    return _res("mlx_trace", a._p[0], _int(offset, "offset"), _int(axis1, "axis1"), _int(axis2, "axis2"), dtype.code,
                stream_handle(stream))


def clip(a, /, a_min, a_max, *, stream=None):
    """``a`` clipped to ``[a_min, a_max]``; Python scalar bounds take ``a``'s dtype where they
    fit it (MLX's weak typing: an int16 array clipped by ints stays int16)."""
    from ._array import lib, weak_scalar

    a = to_array(a)
    if a_min is None and a_max is None:
        raise ValueError("At most one of a_min and a_max may be None")
    keep = []

    def bound(v):
        if v is None:
            return lib.mlx_array_new()
        w = None if hasattr(v, "_p") else weak_scalar(v, a.dtype)
        w = w if w is not None else to_array(v)
        keep.append(w)
        return w._p[0]

    return _res("mlx_clip", a._p[0], bound(a_min), bound(a_max), stream_handle(stream))


def put_along_axis(a, /, indices, values, axis=None, *, stream=None):
    """``values`` written at ``indices`` along ``axis``; with no axis the flattened positions
    are written and the result keeps ``a``'s shape (as MLX and numpy)."""
    from ._array import _ARR_PTR, _Ctx, wrap
    from ._ffi import check, lib

    a, i, v = to_array(a), to_array(indices), to_array(values)
    if axis is not None:
        return _res("mlx_put_along_axis", a._p[0], i._p[0], v._p[0], _int(axis, "axis"), stream_handle(stream))

    def flat(x):
        p = ffi.new(_ARR_PTR)
        check(lib.mlx_reshape(p, x._p[0], ffi.new("int[]", [-1]), 1, _Ctx.stream))
        return wrap(p)

    if i.size == 0:
        return a  # nothing to write (MLX does not check empty indices' dtype here either)
    fa, fi, fv = flat(a), flat(i), flat(v)
    r = _res("mlx_put_along_axis", fa._p[0], fi._p[0], fv._p[0], 0, stream_handle(stream))
    sh, n = _buf(list(a.shape))
    return _res("mlx_reshape", r._p[0], sh, n, stream_handle(stream))


TABLE = [
    ("tile", tile, ["mlx_tile"]),
    ("repeat", repeat, ["mlx_repeat", "mlx_repeat_axis"]),
    ("tensordot", tensordot, ["mlx_tensordot", "mlx_tensordot_axis"]),
    ("conv2d", conv2d, ["mlx_conv2d"]),
    ("conv3d", conv3d, ["mlx_conv3d"]),
    ("conv_general", conv_general, ["mlx_conv_general"]),
    ("conv_transpose2d", conv_transpose2d, ["mlx_conv_transpose2d"]),
    ("conv_transpose3d", conv_transpose3d, ["mlx_conv_transpose3d"]),
    ("slice", slice, ["mlx_slice_dynamic"]),
    ("slice_update", slice_update, ["mlx_slice_update_dynamic"]),
    ("roll", roll, ["mlx_roll", "mlx_roll_axis", "mlx_roll_axes"]),
    ("trace", trace, ["mlx_trace"]),
    ("clip", clip, ["mlx_clip"]),
    ("put_along_axis", put_along_axis, ["mlx_put_along_axis", "mlx_reshape"]),
]
