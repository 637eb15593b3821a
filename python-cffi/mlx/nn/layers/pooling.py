"""Max and average pooling over channels-last inputs ``(N, *spatial, C)``."""
from typing import Optional, Tuple, Union

import mlx.core as mx
from mlx.nn.layers.base import Module


def _as_list(v, n, msg):
    if isinstance(v, (list, tuple)):
        if len(v) != n:
            raise ValueError(msg)
        return list(v)
    if not isinstance(v, int):
        raise ValueError(msg)
    return [v] * n


def _windows(x, window, strides):
    """A view ``(N, *out_spatial, *window, C)`` of the pooling windows of ``x``."""
    if x.ndim < 3:
        raise ValueError(
            "To extract sliding windows at least 1 spatial dimension (3 total) is needed but "
            f"the input only has {x.ndim} dimensions."
        )
    spatial = x.shape[1:-1]
    if not len(spatial) == len(window) == len(strides):
        raise ValueError(
            "To extract sliding windows the window shapes and strides must have the same "
            f"number of spatial dimensions as the signal but the signal has {len(spatial)} "
            f"dims and the window shape has {len(window)} and strides have {len(strides)}."
        )
    n, c = x.shape[0], x.shape[-1]
    if all(w == s and size % w == 0 for size, w, s in zip(spatial, window, strides)):
        # Non-overlapping windows tiling the input: a reshape and a transpose.
        split = [n]
        for size, w in zip(spatial, window):
            split += [size // w, w]
        split.append(c)
        k = len(spatial)
        order = [0] + [1 + 2 * i for i in range(k)] + [2 + 2 * i for i in range(k)] + [2 * k + 1]
        return x.reshape(split).transpose(order)
    # Row-major element strides of x.
    elem = [1] * x.ndim
    for i in range(x.ndim - 2, -1, -1):
        elem[i] = elem[i + 1] * x.shape[i + 1]
    out = [(size - w) // s + 1 for size, w, s in zip(spatial, window, strides)]
    shape = [n, *out, *window, c]
    st = [elem[0]] + [e * s for e, s in zip(elem[1:-1], strides)] + elem[1:-1] + [elem[-1]]
    return mx.as_strided(x, shape, st)


class _Pool(Module):
    def __init__(self, reduce_fn, kernel_size, stride, padding, padding_value):
        super().__init__()
        name = type(self).__name__
        for what, vals in (("kernel_size", kernel_size), ("stride", stride)):
            if any(v <= 0 for v in vals):
                raise ValueError(f"[{name}] '{what}' must be positive but got {tuple(vals)}.")
        if any(p[0] < 0 for p in padding):
            raise ValueError(
                f"[{name}] 'padding' must be non-negative but got {tuple(p[0] for p in padding)}."
            )
        self._pooling_function = reduce_fn
        self._kernel_size = kernel_size
        self._stride = stride
        self._padding = padding
        self._padding_value = padding_value
        self._axes = tuple(range(-len(kernel_size) - 1, -1))

    def _extra_repr(self):
        return (
            f"kernel_size={tuple(self._kernel_size)}, stride={tuple(self._stride)}, "
            f"padding={tuple(p[0] for p in self._padding)}"
        )

    def __call__(self, x):
        if any(p[0] > 0 for p in self._padding):
            x = mx.pad(x, [(0, 0)] + self._padding + [(0, 0)], constant_values=self._padding_value)
        return self._pooling_function(_windows(x, self._kernel_size, self._stride), self._axes)


def _make_pool_base(n):
    word = "1 integer" if n == 1 else f"{n} integers"

    class _PoolNd(_Pool):
        def __init__(self, reduce_fn, padding_value, kernel_size, stride=None, padding=0):
            name = type(self).__name__
            msg = f"[{name}] '{{}}' must be an integer or a tuple containing {word}"
            kernel_size = _as_list(kernel_size, n, msg.format("kernel_size"))
            stride = kernel_size if stride is None else _as_list(stride, n, msg.format("stride"))
            padding = [(p, p) for p in _as_list(padding, n, msg.format("padding"))]
            super().__init__(reduce_fn, kernel_size, stride, padding, padding_value)

    return _PoolNd


_Pool1d, _Pool2d, _Pool3d = (_make_pool_base(n) for n in (1, 2, 3))


class MaxPool1d(_Pool1d):
    """Max pooling over ``(N, L, C)``; ``stride`` defaults to ``kernel_size``, padding with -inf."""

    def __init__(self, kernel_size: Union[int, Tuple[int]], stride: Optional[Union[int, Tuple[int]]] = None, padding: Union[int, Tuple[int]] = 0):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool1d(_Pool1d):
    """Average pooling over ``(N, L, C)``; padding with zeros (counted in the average)."""

    def __init__(self, kernel_size: Union[int, Tuple[int]], stride: Optional[Union[int, Tuple[int]]] = None, padding: Union[int, Tuple[int]] = 0):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)


class MaxPool2d(_Pool2d):
    """Max pooling over ``(N, H, W, C)``."""

    def __init__(self, kernel_size: Union[int, Tuple[int, int]], stride: Optional[Union[int, Tuple[int, int]]] = None, padding: Optional[Union[int, Tuple[int, int]]] = 0):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool2d(_Pool2d):
    """Average pooling over ``(N, H, W, C)``."""

    def __init__(self, kernel_size: Union[int, Tuple[int, int]], stride: Optional[Union[int, Tuple[int, int]]] = None, padding: Optional[Union[int, Tuple[int, int]]] = 0):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)


class MaxPool3d(_Pool3d):
    """Max pooling over ``(N, D, H, W, C)``."""

    def __init__(self, kernel_size: Union[int, Tuple[int, int, int]], stride: Optional[Union[int, Tuple[int, int, int]]] = None, padding: Optional[Union[int, Tuple[int, int, int]]] = 0):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool3d(_Pool3d):
    """Average pooling over ``(N, D, H, W, C)``."""

    def __init__(self, kernel_size: Union[int, Tuple[int, int, int]], stride: Optional[Union[int, Tuple[int, int, int]]] = None, padding: Optional[Union[int, Tuple[int, int, int]]] = 0):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)
