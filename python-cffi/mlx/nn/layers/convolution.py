"""Convolution layers (channels-last inputs: ``(N, ..., C_in)``; weights
``(C_out, *kernel, C_in / groups)``)."""
import math
from typing import Union

import mlx.core as mx
from mlx.nn.layers.base import Module


def _ntuple(v, n):
    return (v,) * n if isinstance(v, int) else v


def _init_weight(out_channels, kernel, in_per_group):
    k = math.sqrt(1 / (in_per_group * math.prod(kernel)))
    return mx.random.uniform(low=-k, high=k, shape=(out_channels, *kernel, in_per_group))


def _check_groups(in_channels, groups):
    if in_channels % groups != 0:
        raise ValueError(
            f"The number of input channels ({in_channels}) must be divisible by the number "
            f"of groups ({groups})"
        )


class Conv1d(Module):
    """1-D convolution over ``(N, L, C_in)`` inputs. Weights start uniform in ``[-k, k]``,
    ``k = 1 / sqrt(C_in / groups * kernel_size)``; the bias starts at zero."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        super().__init__()
        _check_groups(in_channels, groups)
        self.weight = _init_weight(out_channels, (kernel_size,), in_channels // groups)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.dilation = dilation
        self.stride = stride
        self.groups = groups

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        y = mx.conv1d(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        return y + self.bias if "bias" in self else y


class Conv2d(Module):
    """2-D convolution over ``(N, H, W, C_in)`` inputs; ints or pairs for the sizes."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        super().__init__()
        _check_groups(in_channels, groups)
        kernel_size, stride, padding = (_ntuple(v, 2) for v in (kernel_size, stride, padding))
        self.weight = _init_weight(out_channels, kernel_size, in_channels // groups)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.stride = stride
        self.dilation = dilation
        self.groups = groups

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1:3]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        y = mx.conv2d(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        return y + self.bias if "bias" in self else y


class Conv3d(Module):
    """3-D convolution over ``(N, D, H, W, C_in)`` inputs; ints or triples for the sizes."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        bias: bool = True,
    ):
        super().__init__()
        kernel_size, stride, padding = (_ntuple(v, 3) for v in (kernel_size, stride, padding))
        self.weight = _init_weight(out_channels, kernel_size, in_channels)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.stride = stride
        self.dilation = dilation

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1:4]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, bias={'bias' in self}"
        )

    def __call__(self, x):
        y = mx.conv3d(x, self.weight, self.stride, self.padding, self.dilation)
        return y + self.bias if "bias" in self else y
