"""Normalization layers: LayerNorm, RMSNorm, GroupNorm, BatchNorm, InstanceNorm.

Inputs are channels-last: the feature axis is the last one.
"""
from typing import Tuple

import mlx.core as mx
from mlx.nn.layers.base import Module


def _check_eps(name, eps):
    if eps <= 0.0:
        raise ValueError(f"[{name}] 'eps' must be positive but got {eps}.")


class InstanceNorm(Module):
    """Normalizes each channel of each sample over the spatial axes (inputs ``(N, ..., C)``);
    with ``affine`` a learned per-channel scale and shift follow."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = False):
        super().__init__()
        _check_eps("InstanceNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            self.bias = mx.zeros((dims,))
        self.dims = dims
        self.eps = eps

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim < 3:
            raise ValueError(
                "InstanceNorm expects inputs with at least 3 dimensions (N, ..., C) but the "
                f"input has {x.ndim} dimensions."
            )
        n, c = x.shape[0], x.shape[-1]
        spatial = x.shape[1:-1]
        k = len(spatial)
        # (N, C, prod(spatial)) so that layer_norm normalizes each channel over space.
        cf = mx.transpose(x, (0, x.ndim - 1, *range(1, x.ndim - 1))).reshape(n, c, -1)
        y = mx.fast.layer_norm(cf, None, None, self.eps).reshape(n, c, *spatial)
        y = mx.transpose(y, (0, *range(2, k + 2), 1))
        if "weight" in self:
            return self.weight * y + self.bias
        return y


class LayerNorm(Module):
    """Normalizes over the last axis to zero mean and unit variance, then (``affine``)
    scales by a learned weight and (``bias``) shifts by a learned bias."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = True, bias: bool = True):
        super().__init__()
        _check_eps("LayerNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        return mx.fast.layer_norm(x, self.get("weight"), self.get("bias"), self.eps)


class RMSNorm(Module):
    """Divides by the root mean square over the last axis and scales by a learned weight."""

    def __init__(self, dims: int, eps: float = 1e-5):
        super().__init__()
        _check_eps("RMSNorm", eps)
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x):
        return mx.fast.rms_norm(x, self["weight"], self.eps)


class GroupNorm(Module):
    """Splits the ``dims`` features into ``num_groups`` groups and normalizes each group of
    each sample (over the spatial axes too). ``pytorch_compatible`` groups consecutive
    features as PyTorch does; the default groups features ``i, i + num_groups, …``."""

    def __init__(
        self,
        num_groups: int,
        dims: int,
        eps: float = 1e-5,
        affine: bool = True,
        pytorch_compatible: bool = False,
    ):
        super().__init__()
        _check_eps("GroupNorm", eps)
        if num_groups <= 0:
            raise ValueError(f"The number of groups ({num_groups}) must be a positive integer.")
        if dims <= 0:
            raise ValueError(f"The number of features ({dims}) must be a positive integer.")
        if dims % num_groups != 0:
            raise ValueError(
                f"The number of features ({dims}) must be evenly divisible by the number of "
                f"groups ({num_groups})."
            )
        if affine:
            self.bias = mx.zeros((dims,))
            self.weight = mx.ones((dims,))
        self.num_groups = num_groups
        self.dims = dims
        self.eps = eps
        self.pytorch_compatible = pytorch_compatible

    def _extra_repr(self):
        return (
            f"{self.num_groups}, {self.dims}, eps={self.eps}, affine={'weight' in self}, "
            f"pytorch_compatible={self.pytorch_compatible}"
        )

    def _torch_style(self, x):
        g = self.num_groups
        n, *spatial, d = x.shape
        per = d // g
        y = x.reshape(n, -1, g, per).transpose(0, 2, 1, 3).reshape(n, g, -1)
        y = mx.fast.layer_norm(y, None, None, self.eps)
        return y.reshape(n, g, -1, per).transpose(0, 2, 1, 3).reshape(n, *spatial, d)

    def _strided_style(self, x):
        g = self.num_groups
        n, *spatial, d = x.shape
        y = x.reshape(n, -1, g)
        mean = mx.mean(y, axis=1, keepdims=True)
        var = mx.var(y, axis=1, keepdims=True)
        y = (y - mean) * mx.rsqrt(var + self.eps)
        return y.reshape(n, *spatial, d)

    def __call__(self, x):
        y = self._torch_style(x) if self.pytorch_compatible else self._strided_style(x)
        if "weight" in self:
            return self.weight * y + self.bias
        return y


class BatchNorm(Module):
    """Normalizes each feature over the batch (and spatial) axes; inputs ``(N, C)``,
    ``(N, L, C)`` or ``(N, H, W, C)``.

    In training mode the batch statistics are used and (``track_running_stats``) the running
    mean and unbiased variance are updated with ``momentum``; in eval mode the running
    statistics are used. The running statistics are never trainable.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ):
        super().__init__()
        _check_eps("BatchNorm", eps)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = mx.ones((num_features,))
            self.bias = mx.zeros((num_features,))
        if self.track_running_stats:
            self.running_mean = mx.zeros((num_features,))
            self.running_var = mx.ones((num_features,))
            self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def unfreeze(self, *args, **kwargs):
        """Unfreeze as :meth:`Module.unfreeze`; the running statistics stay frozen."""
        super().unfreeze(*args, **kwargs)
        self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def _extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={'weight' in self}, track_running_stats={self.track_running_stats}"
        )

    def _calc_stats(self, x: mx.array, ddof: int = 0) -> Tuple[mx.array, mx.array]:
        axes = tuple(range(x.ndim - 1))
        return mx.mean(x, axis=axes), mx.var(x, axis=axes, ddof=ddof)

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim < 2 or x.ndim > 4:
            raise ValueError(
                f"Expected input tensor to have 2, 3 or 4 dimensions, but got {x.ndim}"
            )
        if self.training:
            count = 1
            for s in x.shape[:-1]:
                count *= s
            if count == 1:
                raise ValueError("BatchNorm training requires more than one value per channel.")
        mean, var = self._calc_stats(x)
        if self.training and self.track_running_stats:
            m = self.momentum
            _, unbiased = self._calc_stats(x, ddof=1)
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * unbiased
        elif self.track_running_stats:
            mean, var = self.running_mean, self.running_var
        y = (x - mean) * mx.rsqrt(var + self.eps)
        if "weight" in self:
            return self.weight * y + self.bias
        return y
