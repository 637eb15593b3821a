"""Initializers of ``mlx.nn.init``: each factory returns a function that takes an array and
returns a new array of the same shape (the input's values are not used)."""
import math
from typing import Callable, Literal

import mlx.core as mx


def constant(value: float, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Fill with ``value``."""

    def initializer(a: mx.array) -> mx.array:
        return mx.full(a.shape, value, dtype=dtype)

    return initializer


def normal(mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Samples of a normal distribution ``N(mean, std^2)``."""

    def initializer(a: mx.array) -> mx.array:
        return mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)

    return initializer


def uniform(low: float = 0.0, high: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Samples of the uniform distribution on ``[low, high)``."""

    def initializer(a: mx.array) -> mx.array:
        return mx.random.uniform(low, high, a.shape, dtype=dtype)

    return initializer


def identity(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """The identity matrix (square 2-D inputs only)."""

    def initializer(arr: mx.array) -> mx.array:
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"The input array must be a square matrix but got shape {arr.shape}.")
        return mx.eye(n=arr.shape[0], dtype=dtype)

    return initializer


def _fans(a):
    """``(fan_in, fan_out)``: the last and first axes, times the receptive field (the
    product of the axes in between)."""
    if a.ndim < 2:
        raise ValueError(
            "Glorot / He initialization requires at least 2 dimensional input but input "
            f"with {a.ndim} dimensions."
        )
    field = math.prod(a.shape[1:-1]) if a.ndim > 2 else 1
    return a.shape[-1] * field, a.shape[0] * field


def _pick_fan(a, mode):
    fan_in, fan_out = _fans(a)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise ValueError(f"Invalid mode: {mode}. Valid modes are: fan_in, fan_out")


def glorot_normal(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, float], mx.array]:
    """Normal with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Xavier/Glorot)."""

    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _fans(a)
        std = gain * math.sqrt(2.0 / (fan_in + fan_out))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def glorot_uniform(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, float], mx.array]:
    """Uniform on ``[-l, l]``, ``l = gain * sqrt(6 / (fan_in + fan_out))``."""

    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _fans(a)
        limit = gain * math.sqrt(6.0 / (fan_in + fan_out))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def he_normal(
    dtype: mx.Dtype = mx.float32,
) -> Callable[[mx.array, Literal["fan_in", "fan_out"], float], mx.array]:
    """Normal with ``std = gain / sqrt(fan)`` (Kaiming/He); ``mode`` picks the fan."""

    def initializer(a: mx.array, mode: Literal["fan_in", "fan_out"] = "fan_in", gain: float = 1.0) -> mx.array:
        std = gain / math.sqrt(_pick_fan(a, mode))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def he_uniform(
    dtype: mx.Dtype = mx.float32,
) -> Callable[[mx.array, Literal["fan_in", "fan_out"], float], mx.array]:
    """Uniform on ``[-l, l]``, ``l = gain * sqrt(3 / fan)``."""

    def initializer(a: mx.array, mode: Literal["fan_in", "fan_out"] = "fan_in", gain: float = 1.0) -> mx.array:
        limit = gain * math.sqrt(3.0 / _pick_fan(a, mode))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def sparse(
    sparsity: float, mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32
) -> Callable[[mx.array], mx.array]:
    """Normal samples with ``ceil(sparsity * columns)`` entries of every row set to zero
    (2-D inputs only)."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError("Only tensors with 2 dimensions are supported")
        rows, cols = a.shape
        zeros_per_row = int(math.ceil(sparsity * cols))
        order = mx.argsort(mx.random.uniform(shape=a.shape), axis=1)
        out = mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)
        out[mx.arange(rows).reshape(rows, 1), order[:, :zeros_per_row]] = 0
        return out

    return initializer


def orthogonal(gain: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """A (semi-)orthogonal matrix times ``gain``: Q of the QR decomposition of a normal
    square matrix, with column signs fixed by R's diagonal (2-D inputs only)."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError(
                f"Orthogonal initialization requires a 2D array but got a {a.ndim}D array."
            )
        rows, cols = a.shape
        n = max(rows, cols)
        q, r = mx.linalg.qr(mx.random.normal(shape=(n, n)), stream=mx.cpu)
        q = q * mx.sign(mx.diag(r))
        return (q[:rows, :cols] * gain).astype(dtype)

    return initializer
