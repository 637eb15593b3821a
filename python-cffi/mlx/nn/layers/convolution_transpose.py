"""Transposed convolution layers (channels-last; weights ``(C_out, *kernel, C_in)``)."""
import math
from typing import Union

import mlx.core as mx
from mlx.nn.layers.base import Module
from mlx.nn.layers.convolution import _init_weight, _ntuple


class _ConvTransposeNd(Module):
    _n = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, bias):
        super().__init__()
        n = self._n
        if n > 1:
            kernel_size, stride, padding, output_padding = (
                _ntuple(v, n) for v in (kernel_size, stride, padding, output_padding)
            )
            kernel = kernel_size
        else:
            kernel = (kernel_size,)
        self.weight = _init_weight(out_channels, kernel, in_channels)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.stride = stride
        self.dilation = dilation
        self.output_padding = output_padding

    def _extra_repr(self):
        n = self._n
        ks = self.weight.shape[1] if n == 1 else self.weight.shape[1 : 1 + n]
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, kernel_size={ks}, "
            f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
            f"output_padding={self.output_padding}, bias={'bias' in self}"
        )

    def __call__(self, x):
        op = (mx.conv_transpose1d, mx.conv_transpose2d, mx.conv_transpose3d)[self._n - 1]
        y = op(x, self.weight, self.stride, self.padding, self.dilation, self.output_padding)
        return y + self.bias if "bias" in self else y


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over ``(N, L, C_in)`` inputs."""

    _n = 1

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        output_padding: int = 0,
        bias: bool = True,
    ):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, bias)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over ``(N, H, W, C_in)`` inputs."""

    _n = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        output_padding: Union[int, tuple] = 0,
        bias: bool = True,
    ):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, bias)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over ``(N, D, H, W, C_in)`` inputs."""

    _n = 3

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        output_padding: Union[int, tuple] = 0,
        bias: bool = True,
    ):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, bias)
