"""Hand-written ``mx.fast.scaled_dot_product_attention``, ``mx.linalg.norm``,
``mx.linalg.svd``, ``mx.linalg.lu`` and ``mx.pad``: MLX's Python functions pick among C functions or reshape their arguments
(a mask that is None / a str / an array, ``ord`` that is None / a number / a str,
numpy-style ``pad_width``), which the name-matching binder cannot do. Installed by
``_extra.install`` only when the library exports the C functions each needs."""
import operator

from ._array import array, stream_handle, to_array, weak_scalar
from ._ffi import ffi, lib


def _res(cname, *args):
    from ._extra import _res as r

    return r(cname, *args)


def _str(s):
    return ffi.new("char[]", s.encode("utf-8"))


def scaled_dot_product_attention(q, k, v, *, scale, mask=None, sinks=None, force_fused=False, stream=None):
    """softmax(q·kᵀ·scale + mask)·v. ``mask``: None, ``"causal"`` or an additive/boolean array.
    ``force_fused`` only selects a kernel in MLX (same result), so it is accepted and ignored."""
    q, k, v = to_array(q), to_array(k), to_array(v)
    keep = []
    m_arr = lib.mlx_array_new()
    if mask is None:
        mode = ""
    elif isinstance(mask, str):
        mode = mask
    else:
        m = to_array(mask)
        keep.append(m)
        mode, m_arr = "array", m._p[0]
    s_arr = lib.mlx_array_new()
    if sinks is not None:
        s = to_array(sinks)
        keep.append(s)
        s_arr = s._p[0]
    return _res("mlx_fast_scaled_dot_product_attention", q._p[0], k._p[0], v._p[0], float(scale), _str(mode),
                m_arr, s_arr, stream_handle(stream))


def _axis_arg(axis):
    if axis is None:
        return ffi.NULL, 0
    if isinstance(axis, bool):
        raise TypeError("norm(): axis must be None, an int or a sequence of ints")
    ax = [axis] if isinstance(axis, int) else [int(x) for x in axis]
    return ffi.new("int[]", ax), len(ax)


def norm(a, /, ord=None, axis=None, keepdims=False, *, stream=None):
    """MLX's matrix or vector norm: ``ord`` None (2-norm / Frobenius), a number, ``'fro'`` or ``'nuc'``."""
    a = to_array(a)
    ax, n = _axis_arg(axis)
    s = stream_handle(stream)
    if ord is None:
        return _res("mlx_linalg_norm_l2", a._p[0], ax, n, bool(keepdims), s)
    if isinstance(ord, str):
        return _res("mlx_linalg_norm_matrix", a._p[0], _str(ord), ax, n, bool(keepdims), s)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"norm(): ord must be None, a number or a str, got {type(ord).__name__}")
    return _res("mlx_linalg_norm", a._p[0], float(ord), ax, n, bool(keepdims), s)


def svd(a, /, compute_uv=True, *, stream=None):
    """``(U, S, Vt)`` as a tuple, or only ``S`` (an array) with ``compute_uv=False``, as MLX."""
    from ._extra import _vector_list

    a = to_array(a)
    out = _vector_list("mlx_linalg_svd", a._p[0], bool(compute_uv), stream_handle(stream))
    return tuple(out) if compute_uv else out[0]


def lu(a, /, *, stream=None):
    """``(P, L, U)`` as a tuple, as MLX (mlx-c returns a vector)."""
    from ._extra import _vector_list

    a = to_array(a)
    return tuple(_vector_list("mlx_linalg_lu", a._p[0], stream_handle(stream)))


def _pad_width_type_error():
    # A TypeError, as MLX's binding raises for a pad_width of any other shape or type.
    return TypeError("pad(): pad_width must be an int, a tuple of one or two ints or a list of pairs of ints")


def _pad_int(x):
    """An int as nanobind's int caster takes it: ints, bools and integer objects with
    ``__index__`` (numpy integers), never floats or strings."""
    if isinstance(x, (float, str, bytes)) or not hasattr(x, "__index__"):
        raise _pad_width_type_error()
    return operator.index(x)


def _pad_pairs(pad_width, ndim):
    """``pad_width`` → one (low, high) pair per axis, by the overloads of MLX's binding: an
    int, a sequence of one or two ints, or a sequence of (low, high) pairs (lists and tuples
    alike, as nanobind converts them)."""
    if not isinstance(pad_width, (tuple, list)):
        i = _pad_int(pad_width)
        return [(i, i)] * ndim
    pw = list(pad_width)
    if len(pw) in (1, 2) and not any(isinstance(p, (tuple, list)) for p in pw):
        return [(_pad_int(pw[0]), _pad_int(pw[-1]))] * ndim
    out = []
    for p in pw:
        if not isinstance(p, (tuple, list)) or len(p) != 2:
            raise _pad_width_type_error()
        out.append((_pad_int(p[0]), _pad_int(p[1])))
    if len(out) == 1:
        return out * ndim
    if len(out) != ndim:
        raise ValueError(f"Invalid number of padding sizes passed to pad with axes of size {ndim}")
    return out


_PAD_SIG = ("pad(a: array, pad_width: int | tuple[int] | tuple[int, int] | list[tuple[int, int]], mode: "
            "Literal['constant', 'edge', 'reflect', 'symmetric'] = 'constant', constant_values: scalar | array = 0, *, "
            "stream: StreamOrDevice = None) -> array")


def pad(a, pad_width, mode="constant", constant_values=0, *, stream=None):
    """``a`` padded on every axis (``mode``: constant, edge, reflect, symmetric)."""
    given = a
    a = to_array(a)
    try:
        pairs = _pad_pairs(pad_width, a.ndim)
    except TypeError:
        # nanobind's message (exact for the usual positional ``pad(a, pad_width)`` call).
        from ._nbargs import incompatible

        raise incompatible("pad", _PAD_SIG, (given, pad_width), {}) from None
    if isinstance(constant_values, array):
        cv = constant_values
    else:
        cv = weak_scalar(constant_values, a.dtype)
        if cv is None:
            cv = to_array(constant_values)
    if not isinstance(mode, str):
        raise TypeError("pad(): mode must be a str")
    n = len(pairs)
    axes = ffi.new("int[]", list(range(n)))
    lo = ffi.new("int[]", [p[0] for p in pairs])
    hi = ffi.new("int[]", [p[1] for p in pairs])
    return _res("mlx_pad", a._p[0], axes, n, lo, n, hi, n, cv._p[0], _str(mode), stream_handle(stream))


# (attribute path, function, C functions needed) for _extra.install
TABLE = [
    ("fast.scaled_dot_product_attention", scaled_dot_product_attention, ["mlx_fast_scaled_dot_product_attention"]),
    ("linalg.norm", norm, ["mlx_linalg_norm", "mlx_linalg_norm_matrix", "mlx_linalg_norm_l2"]),
    ("pad", pad, ["mlx_pad"]),
    ("linalg.svd", svd, ["mlx_linalg_svd"]),
    ("linalg.lu", lu, ["mlx_linalg_lu"]),
]
