"""Dropout layers (active only in training mode)."""
import mlx.core as mx
from mlx.nn.layers.base import Module


class _DropoutBase(Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self) -> str:
        return f"p={1 - self._p_1}"

    def _drop(self, x, mask_shape):
        keep = mx.random.bernoulli(p=self._p_1, shape=mask_shape)
        return keep * x * (1 / self._p_1)


class Dropout(_DropoutBase):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``."""

    def __call__(self, x: mx.array) -> mx.array:
        if self._p_1 == 1 or not self.training:
            return x
        return self._drop(x, x.shape)


class Dropout2d(_DropoutBase):
    """Zeroes whole channels of ``(N, H, W, C)`` / ``(H, W, C)`` inputs with probability ``p``."""

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim not in (3, 4):
            raise ValueError(
                f"Received input with {x.ndim} dimensions. Expected 3 or 4 dimensions."
            )
        if self._p_1 == 1 or not self.training:
            return x
        shape = list(x.shape)
        shape[-3] = shape[-2] = 1
        return self._drop(x, shape)


class Dropout3d(_DropoutBase):
    """Zeroes whole channels of ``(N, D, H, W, C)`` / ``(D, H, W, C)`` inputs with probability ``p``."""

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim not in (4, 5):
            raise ValueError(
                f"Received input with {x.ndim} dimensions. Expected 4 or 5 dimensions."
            )
        if self._p_1 == 1 or not self.training:
            return x
        shape = list(x.shape)
        shape[-4] = shape[-3] = shape[-2] = 1
        return self._drop(x, shape)
