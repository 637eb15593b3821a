"""Activation functions and their module wrappers (MLX 0.32's set).

MLX compiles most of these with ``mx.compile(shapeless=True)``; mlx-arm has no compile yet,
so they are plain compositions of the same ops (same results).
"""
import math
from typing import Any

import mlx.core as mx
from mlx.nn.layers.base import Module

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def sigmoid(x):
    r"""The logistic sigmoid :math:`1 / (1 + e^{-x})`."""
    return mx.sigmoid(x)


def relu(x):
    """Rectified linear unit: ``max(x, 0)``."""
    return mx.maximum(x, 0)


def relu2(x):
    """Squared ReLU: ``max(x, 0) ** 2``."""
    return mx.square(mx.maximum(x, 0))


def relu6(x):
    """ReLU clipped at 6: ``min(max(x, 0), 6)``."""
    return mx.minimum(mx.maximum(x, 0), 6.0)


def leaky_relu(x, negative_slope=0.01):
    """``max(negative_slope * x, x)``."""
    return mx.maximum(negative_slope * x, x)


def log_softmax(x, axis=-1):
    """The logarithm of the softmax along ``axis``, computed stably."""
    shifted = x - mx.stop_gradient(mx.max(x, axis=axis, keepdims=True))
    return shifted - mx.logsumexp(shifted, axis=axis, keepdims=True)


def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""
    return mx.where(x > 0, x, alpha * (mx.exp(x) - 1))


def softmax(x, axis=-1):
    """Softmax along ``axis``."""
    return mx.softmax(x, axis=axis)


def softplus(x):
    """``log(1 + exp(x))``."""
    return mx.logaddexp(x, 0)


def softsign(x):
    """``x / (1 + |x|)``."""
    return mx.divide(x, 1 + mx.abs(x))


def softshrink(x, lambd: float = 0.5):
    """``x - sign(x) * lambd`` where ``|x| > lambd``, 0 elsewhere."""
    return mx.where(mx.abs(x) > lambd, x - mx.sign(x) * lambd, 0)


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: ``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)``."""
    return mx.maximum(x, 0.0) + alpha * (mx.exp(mx.minimum(x, 0.0) / alpha) - 1)


def silu(x):
    """Sigmoid linear unit (swish): ``x * sigmoid(x)``."""
    return x * mx.sigmoid(x)


def log_sigmoid(x):
    """``log(sigmoid(x))`` = ``-softplus(-x)``."""
    return -softplus(-x)


def gelu(x) -> mx.array:
    """Gaussian error linear unit, exact: ``x * Phi(x)`` with the normal CDF through erf."""
    return x * (1 + mx.erf(x / _SQRT_2)) / 2


def gelu_approx(x):
    """GELU with the tanh approximation."""
    return 0.5 * x * (1 + mx.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def gelu_fast_approx(x):
    """GELU with the sigmoid approximation ``x * sigmoid(1.702 x)``."""
    return x * mx.sigmoid(1.702 * x)


def glu(x: mx.array, axis: int = -1) -> mx.array:
    """Gated linear unit: split ``x`` in two halves ``a, b`` along ``axis``; ``a * sigmoid(b)``."""
    a, b = mx.split(x, indices_or_sections=2, axis=axis)
    return a * mx.sigmoid(b)


def step(x: mx.array, threshold: float = 0.0):
    """1 where ``x >= threshold``, else 0."""
    return mx.where(x >= threshold, 1, 0)


def selu(x):
    """Scaled ELU (alpha 1.67326, scale 1.0507)."""
    return elu(x, 1.67326) * 1.0507


def prelu(x: mx.array, alpha: mx.array) -> mx.array:
    """Parametric ReLU: ``max(0, x) + alpha * min(0, x)``."""
    return mx.maximum(0, x) + alpha * mx.minimum(0, x)


def mish(x: mx.array) -> mx.array:
    """``x * tanh(softplus(x))``."""
    return x * mx.tanh(softplus(x))


def hardswish(x):
    """``x * min(max(x + 3, 0), 6) / 6``."""
    return x * mx.minimum(mx.maximum(x + 3, 0), 6) / 6


def hard_tanh(x, min_val=-1.0, max_val=1.0):
    """``x`` clipped to ``[min_val, max_val]``."""
    return mx.minimum(mx.maximum(x, min_val), max_val)


def hard_shrink(x, lambd=0.5):
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    return mx.where(mx.abs(x) > lambd, x, 0)


def softmin(x, axis=-1):
    """``softmax(-x)`` along ``axis``."""
    return mx.softmax(-x, axis=axis)


def tanh(x):
    """Hyperbolic tangent."""
    return mx.tanh(x)


def _wraps(fn, doc):
    """A parameterless activation module class calling ``fn``."""

    def decorate(cls):
        cls.__call__ = lambda self, x: fn(x)
        cls.__doc__ = doc
        return cls

    return decorate


class GLU(Module):
    """Module form of :func:`glu` (``axis`` kept)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def __call__(self, x) -> Any:
        return glu(x=x, axis=self.axis)


@_wraps(sigmoid, "Module form of :func:`sigmoid`.")
class Sigmoid(Module):
    pass


@_wraps(mish, "Module form of :func:`mish`.")
class Mish(Module):
    pass


@_wraps(relu, "Module form of :func:`relu`.")
class ReLU(Module):
    pass


@_wraps(relu2, "Module form of :func:`relu2`.")
class ReLU2(Module):
    pass


@_wraps(relu6, "Module form of :func:`relu6`.")
class ReLU6(Module):
    pass


class LeakyReLU(Module):
    """Module form of :func:`leaky_relu`."""

    def __init__(self, negative_slope=0.01):
        super().__init__()
        self._negative_slope = negative_slope

    def __call__(self, x):
        return leaky_relu(x, self._negative_slope)


class ELU(Module):
    """Module form of :func:`elu`."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return elu(x, self._alpha)


@_wraps(softmax, "Module form of :func:`softmax` (last axis).")
class Softmax(Module):
    pass


@_wraps(softplus, "Module form of :func:`softplus`.")
class Softplus(Module):
    pass


@_wraps(softsign, "Module form of :func:`softsign`.")
class Softsign(Module):
    pass


class Softshrink(Module):
    """Module form of :func:`softshrink`."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return softshrink(x, self.lambd)


class CELU(Module):
    """Module form of :func:`celu`."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return celu(x, self._alpha)


@_wraps(silu, "Module form of :func:`silu`.")
class SiLU(Module):
    pass


@_wraps(log_softmax, "Module form of :func:`log_softmax` (last axis).")
class LogSoftmax(Module):
    pass


@_wraps(log_sigmoid, "Module form of :func:`log_sigmoid`.")
class LogSigmoid(Module):
    pass


class PReLU(Module):
    """Parametric ReLU with a learned slope per channel (``num_parameters``), initialised
    to ``init``."""

    def __init__(self, num_parameters=1, init=0.25):
        super().__init__()
        self.weight = mx.full([num_parameters], init)

    def __call__(self, x: mx.array):
        return prelu(x, self.weight)


class GELU(Module):
    """GELU module. ``approx``: ``'none'`` (exact), ``'precise'`` or ``'tanh'`` (the tanh
    approximation), ``'fast'`` (the sigmoid approximation)."""

    _MODES = ["none", "precise", "tanh", "fast"]

    def __init__(self, approx="none"):
        super().__init__()
        if approx not in self._MODES:
            raise ValueError(
                f"The approximation should be in {self._MODES} but '{approx}' was given"
            )
        self._approx = approx

    def __call__(self, x):
        if self._approx == "none":
            return gelu(x)
        if self._approx in ("precise", "tanh"):
            return gelu_approx(x)
        return gelu_fast_approx(x)


@_wraps(tanh, "Module form of :func:`tanh`.")
class Tanh(Module):
    pass


@_wraps(hardswish, "Module form of :func:`hardswish`.")
class Hardswish(Module):
    pass


class Step(Module):
    """Module form of :func:`step`."""

    def __init__(self, threshold: float = 0.0):
        super().__init__()
        self.threshold = threshold

    def __call__(self, x: mx.array):
        return step(x, self.threshold)


@_wraps(selu, "Module form of :func:`selu`.")
class SELU(Module):
    pass


@_wraps(hard_tanh, "Module form of :func:`hard_tanh`.")
class HardTanh(Module):
    pass


class HardShrink(Module):
    """Module form of :func:`hard_shrink`."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return hard_shrink(x, self.lambd)


@_wraps(softmin, "Module form of :func:`softmin` (last axis).")
class Softmin(Module):
    pass
