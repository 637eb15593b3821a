"""Upsampling of channels-last inputs ``(N, *spatial, C)``: nearest, (bi/tri)linear and
cubic interpolation, optionally antialiased (for downscaling)."""
import operator
from functools import reduce
from itertools import product
from math import ceil
from typing import Callable, Literal, Tuple, Union

import mlx.core as mx
from mlx.nn.layers.base import Module


def _axis_shape(ndims, dim):
    shape = [1] * ndims
    shape[dim] = -1
    return shape


def _source_coords(N, scale, align_corners, dim, ndims):
    """For each of the ``int(scale * N)`` outputs along ``dim``, its (fractional) source
    coordinate, shaped to broadcast along that spatial axis."""
    M = int(scale * N)
    pos = mx.arange(M, dtype=mx.float32)
    if align_corners:
        coords = pos * ((N - 1) / max(M - 1, 1))
    else:
        step = 1 / scale
        coords = pos * step - ((M - 1) * step - N + 1) / 2
    return coords.reshape(_axis_shape(ndims, dim))


def _nearest_indices(N, scale, dim, ndims):
    M = int(scale * N)
    pos = mx.arange(M, dtype=mx.float32)
    if M > N:
        pos = ((pos + 0.5) * (N / M) - 0.5).round()
    else:
        pos = pos * (N / M)
    return pos.astype(mx.uint32).reshape(_axis_shape(ndims, dim))


def _linear_indices(N, scale, align_corners, dim, ndims):
    c = mx.clip(_source_coords(N, scale, align_corners, dim, ndims), a_min=0, a_max=N - 1)
    lo, hi = mx.floor(c), mx.ceil(c)
    w = mx.expand_dims(c - lo, -1)
    return ((lo.astype(mx.uint32), 1 - w), (hi.astype(mx.uint32), w))


def _triangle(x):
    return mx.maximum(1.0 - x, 0.0)


def _keys_cubic(x, a):
    """Keys' cubic convolution kernel with parameter ``a`` (|x| given)."""
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return near, far


def _cubic_aa_kernel(x):
    near, far = _keys_cubic(x, -0.5)
    return mx.where(x <= 1.0, near, mx.where(x <= 2.0, far, 0.0))


def _antialiased_indices(N, scale, align_corners, dim, ndims, kernel, radius):
    """Taps and normalized weights of a kernel stretched by ``1 / scale`` when downscaling."""
    c = _source_coords(N, scale, align_corners, dim, ndims)
    stretch = 1.0 / scale if scale < 1 else 1.0
    taps = ceil(radius * stretch) + 1
    idxs, ws = [], []
    base = mx.floor(c)
    for k in range(-taps + 1, taps):
        idx = base + k
        w = kernel(mx.abs(c - idx) / stretch)
        w = mx.where((idx >= 0) & (idx < N), w, 0.0)
        idxs.append(idx)
        ws.append(w)
    total = sum(ws)
    total = mx.where(total > 0, total, 1.0)
    return tuple(
        (mx.clip(idx, a_min=0, a_max=N - 1).astype(mx.uint32), mx.expand_dims(w / total, -1))
        for idx, w in zip(idxs, ws)
    )


def _linear_aa_indices(N, scale, align_corners, dim, ndims):
    return _antialiased_indices(N, scale, align_corners, dim, ndims, _triangle, 1.0)


def _cubic_aa_indices(N, scale, align_corners, dim, ndims):
    return _antialiased_indices(N, scale, align_corners, dim, ndims, _cubic_aa_kernel, 2.0)


def _cubic_indices(N, scale, align_corners, dim, ndims):
    c = _source_coords(N, scale, align_corners, dim, ndims)
    l1 = mx.floor(c)
    r1 = mx.floor(c + 1)
    l2 = l1 - 1
    r2 = r1 + 1

    def weight(grid, inner):
        near, far = _keys_cubic(mx.abs(c - grid), -0.75)
        return (near if inner else far)[..., None]

    out = []
    for grid, inner in ((l1, True), (r1, True), (l2, False), (r2, False)):
        w = weight(grid, inner)
        out.append((mx.clip(grid, a_min=0, a_max=N - 1).astype(mx.uint32), w))
    return tuple(out)


def _check_antialias(align_corners, antialias):
    if antialias and align_corners:
        raise ValueError(
            "[Upsample] antialias=True with align_corners=True is not supported. Use "
            "align_corners=False for antialiased interpolation."
        )


def upsample_nearest(x: mx.array, scale_factor: Tuple):
    """Nearest-neighbour upsampling by ``scale_factor`` (one per spatial axis)."""
    dims = x.ndim - 2
    if dims != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    if tuple(map(int, scale_factor)) == scale_factor:
        # Integer factors: repeat every element with a broadcast.
        n, *spatial, c = x.shape
        expanded = [n]
        for s in spatial:
            expanded += [s, 1]
        x = x.reshape(expanded + [c])
        target = [n]
        for s, f in zip(spatial, scale_factor):
            target += [s, int(f)]
        x = mx.broadcast_to(x, target + [c])
        return x.reshape([n] + [s * int(f) for s, f in zip(spatial, scale_factor)] + [c])
    n, *spatial, c = x.shape
    index = [slice(None)]
    for i, (size, f) in enumerate(zip(spatial, scale_factor)):
        index.append(_nearest_indices(size, f, i, dims))
    return x[tuple(index)]


def _interpolate(x, scale_factor, indices_fn, align_corners=False):
    """Sum over all combinations of the per-axis taps of ``weight product * sample``."""
    dims = x.ndim - 2
    if dims != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    _, *spatial, _ = x.shape
    per_axis = [
        indices_fn(size, f, align_corners, i, dims)
        for i, (size, f) in enumerate(zip(spatial, scale_factor))
    ]
    samples, weights = [], []
    for combo in product(*per_axis):
        idx, w = zip(*combo)
        samples.append(x[(slice(None),) + idx])
        weights.append(reduce(operator.mul, w))
    return sum(w * s for w, s in zip(weights, samples))


def _interpolate_separable(x, scale_factor, indices_fn, align_corners=False):
    """Interpolate one spatial axis at a time."""
    dims = x.ndim - 2
    if dims != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    _, *spatial, _ = x.shape
    out = x
    for i, (size, f) in enumerate(zip(spatial, scale_factor)):
        out = sum(
            mx.take(out, idx.reshape(-1), axis=i + 1) * w
            for idx, w in indices_fn(size, f, align_corners, i, dims)
        )
    return out


def upsample_linear(x: mx.array, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False):
    """(Bi/tri)linear upsampling."""
    _check_antialias(align_corners, antialias)
    if antialias:
        return _interpolate_separable(x, scale_factor, _linear_aa_indices, align_corners)
    if not align_corners:
        return _interpolate_separable(x, scale_factor, _linear_indices, align_corners)
    return _interpolate(x, scale_factor, _linear_indices, align_corners)


def upsample_cubic(x: mx.array, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False):
    """(Bi/tri)cubic upsampling."""
    _check_antialias(align_corners, antialias)
    if antialias:
        return _interpolate_separable(x, scale_factor, _cubic_aa_indices, align_corners)
    return _interpolate(x, scale_factor, _cubic_indices, align_corners)


class Upsample(Module):
    """Upsample the spatial axes of ``(N, *spatial, C)`` inputs by ``scale_factor`` (a
    number or one per spatial axis) with ``mode`` ``'nearest'``, ``'linear'`` or ``'cubic'``."""

    def __init__(
        self,
        scale_factor: Union[float, Tuple],
        mode: Literal["nearest", "linear", "cubic"] = "nearest",
        align_corners: bool = False,
        antialias: bool = False,
    ):
        super().__init__()
        if mode not in ("nearest", "linear", "cubic"):
            raise ValueError(f"[Upsample] Got unsupported upsampling algorithm: {mode}")
        if antialias and mode == "nearest":
            raise ValueError(
                "[Upsample] Antialiasing is not supported for nearest neighbor upsampling"
            )
        if isinstance(scale_factor, (list, tuple)):
            scale_factor = tuple(float(s) for s in scale_factor)
        else:
            scale_factor = float(scale_factor)
        _check_antialias(align_corners, antialias)
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.antialias = antialias

    def _extra_repr(self) -> str:
        text = f"scale_factor={self.scale_factor}, mode={self.mode!r}, align_corners={self.align_corners}"
        if self.antialias:
            text += ", antialias=True"
        return text

    def __call__(self, x: mx.array) -> mx.array:
        dims = x.ndim - 2
        if dims <= 0:
            raise ValueError(
                "[Upsample] The input should have at least 1 spatial dimension which means it "
                f"should be at least 3D but {x.ndim}D was provided"
            )
        sf = self.scale_factor
        if isinstance(sf, tuple):
            if len(sf) != dims:
                raise ValueError(
                    f"[Upsample] One scale per spatial dimension is required but "
                    f"scale_factor={sf} and the number of spatial dimensions were {dims}"
                )
        else:
            sf = (sf,) * dims
        if self.mode == "nearest":
            return upsample_nearest(x, sf)
        if self.mode == "linear":
            return upsample_linear(x, sf, self.align_corners, self.antialias)
        return upsample_cubic(x, sf, self.align_corners, self.antialias)
