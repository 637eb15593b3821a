"""Hand-written ``mx.fft``: MLX's Python functions take ``n``/``s``/``axes`` as optional and
``norm`` as a string, while mlx-c's ``fft.h`` always takes sizes and an ``mlx_fft_norm`` enum.
Defaults are filled in here as MLX's Python layer fills them (sizes from the array's shape,
``2·(len − 1)`` for the real inverse's last axis); everything else is checked by the core.
Installed by ``_extra.install`` only when the library exports the C functions."""
from ._array import stream_handle, to_array
from ._ffi import ffi

_NORMS = {"backward": 0, "ortho": 1, "forward": 2}


def _res(cname, *args):
    from ._extra import _res as r

    return r(cname, *args)


def _norm(norm, op):
    if not isinstance(norm, str) or norm not in _NORMS:
        raise ValueError(f"[{op}] Invalid norm. Expected one of {{'backward', 'ortho', 'forward'}}.")
    return _NORMS[norm]


def _ints(v):
    v = [int(x) for x in v]
    return ffi.new("int[]", v) if v else ffi.NULL, len(v)


def _size_of(a, axis):
    nd = a.ndim
    if not -nd <= axis < nd:
        raise IndexError(f"[fftn] Invalid axis received for array with {nd} dimensions.")
    return a.shape[axis]


def _one(cname, op, real_inverse):
    def f(a, n=None, axis=-1, norm="backward", stream=None):
        code = _norm(norm, op)
        a = to_array(a)
        axis = int(axis)
        if n is None:
            n = _size_of(a, axis)
            if real_inverse:
                n = (n - 1) * 2
        return _res(cname, a._p[0], int(n), axis, code, stream_handle(stream))

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"MLX's ``mx.fft.{op}(a, n=None, axis=-1, norm='backward')``."
    return f


def _many(cname, op, real_inverse, default_axes):
    def f(a, s=None, axes=default_axes, norm="backward", stream=None):
        code = _norm(norm, op)
        a = to_array(a)
        if axes is None:
            if s is not None:
                raise ValueError(f"[{op}] `axes` should not be `None` if `s` is not `None`.")
            axes = list(range(a.ndim))
        axes = [int(x) for x in axes]
        if s is None:
            s = [_size_of(a, ax) for ax in axes]
            if real_inverse and s:
                s[-1] = (s[-1] - 1) * 2
        sp, sn = _ints(s)
        ap, an = _ints(axes)
        return _res(cname, a._p[0], sp, sn, ap, an, code, stream_handle(stream))

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"MLX's ``mx.fft.{op}(a, s=None, axes={default_axes!r}, norm='backward')``."
    return f


def _shift(cname, op):
    def f(a, axes=None, stream=None):
        a = to_array(a)
        if axes is None:
            axes = list(range(a.ndim))
        elif isinstance(axes, int) and not isinstance(axes, bool):
            axes = [axes]
        ap, an = _ints(axes)
        return _res(cname, a._p[0], ap, an, stream_handle(stream))

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"MLX's ``mx.fft.{op}(a, axes=None)``: a roll by half of each axis."
    return f


def _freq(cname, op):
    def f(n, d=1.0, stream=None):
        return _res(cname, int(n), float(d), stream_handle(stream))

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"MLX's ``mx.fft.{op}(n, d=1.0)``: sample frequencies, float32."
    return f


# (attribute path, function, C functions needed) for _extra.install
TABLE = []
for _op in ["fft", "ifft", "rfft", "irfft"]:
    TABLE.append((f"fft.{_op}", _one(f"mlx_fft_{_op}", _op, _op == "irfft"), [f"mlx_fft_{_op}"]))
for _op in ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]:
    _default = [-2, -1] if _op.endswith("2") else None
    TABLE.append((f"fft.{_op}", _many(f"mlx_fft_{_op}", _op, _op.startswith("irfft"), _default), [f"mlx_fft_{_op}"]))
for _op in ["fftshift", "ifftshift"]:
    TABLE.append((f"fft.{_op}", _shift(f"mlx_fft_{_op}", _op), [f"mlx_fft_{_op}"]))
for _op in ["fftfreq", "rfftfreq"]:
    TABLE.append((f"fft.{_op}", _freq(f"mlx_fft_{_op}", _op), [f"mlx_fft_{_op}"]))
