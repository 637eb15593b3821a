"""Linear, Bilinear and Identity layers."""
import math
from typing import Any, Optional

import mlx.core as mx
from mlx.nn.layers.base import Module
from mlx.nn.layers.quantized import QQLinear, QuantizedLinear


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def __call__(self, x: mx.array) -> mx.array:
        return x


class Linear(Module):
    """``y = x W^T + b`` with ``W`` of shape ``(output_dims, input_dims)``.

    Weight and bias start uniform in ``[-k, k]`` with ``k = 1 / sqrt(input_dims)``.
    """

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        k = math.sqrt(1.0 / input_dims)
        self.weight = mx.random.uniform(low=-k, high=k, shape=(output_dims, input_dims))
        if bias:
            self.bias = mx.random.uniform(low=-k, high=k, shape=(output_dims,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    def to_quantized(
        self,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ):
        """A :class:`QuantizedLinear` holding this layer's weights quantized."""
        if quantize_input:
            if mode not in ("nvfp4", "mxfp8"):
                raise ValueError(
                    f"Quantized activations are only supported for 'nvfp4' and 'mxfp8' modes, got {mode}."
                )
            return QQLinear.from_linear(self, group_size, bits, mode)
        return QuantizedLinear.from_linear(self, group_size, bits, mode)


class Bilinear(Module):
    """``y_i = x_1^T W_i x_2 + b_i`` with ``W`` of shape ``(output_dims, input2_dims,
    input1_dims)``; parameters start uniform in ``[-k, k]``, ``k = 1 / sqrt(input1_dims)``."""

    def __init__(self, input1_dims: int, input2_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        k = math.sqrt(1.0 / input1_dims)
        self.weight = mx.random.uniform(
            low=-k, high=k, shape=(output_dims, input2_dims, input1_dims)
        )
        if bias:
            self.bias = mx.random.uniform(low=-k, high=k, shape=(output_dims,))

    def _extra_repr(self) -> str:
        out_dims, in2, in1 = self.weight.shape
        return (
            f"input1_dims={in1}, input2_dims={in2}, output_dims={out_dims}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x1: mx.array, x2: mx.array) -> mx.array:
        out_dims, in2, in1 = self.weight.shape
        lead = x1.shape[:-1]
        a = x1.reshape(-1, in1)
        b = x2.reshape(-1, 1, in2)
        # (n, out*in2) -> (n, in2, out), then contract with x2 over in2.
        t = (a @ self.weight.reshape(out_dims * in2, in1).T).reshape(-1, out_dims, in2)
        y = (b @ t.swapaxes(-2, -1)).squeeze(1).reshape(*lead, out_dims)
        if "bias" in self:
            y = y + self.bias
        return y
