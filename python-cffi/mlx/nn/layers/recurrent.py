"""Recurrent layers: RNN, GRU, LSTM (inputs ``(..., L, D)``; every step's hidden state is
returned, stacked on axis -2)."""
import math
from typing import Callable, Optional

import mlx.core as mx
from mlx.nn.layers.activations import tanh
from mlx.nn.layers.base import Module


def _uniform(k, shape):
    return mx.random.uniform(low=-k, high=k, shape=shape)


class RNN(Module):
    """Elman RNN: ``h_t = f(W_xh x_t + W_hh h_{t-1} + b)`` (``f`` defaults to tanh).

    Parameters start uniform in ``[-k, k]``, ``k = 1 / sqrt(hidden_size)``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: Optional[Callable] = None):
        super().__init__()
        self.nonlinearity = nonlinearity or tanh
        if not callable(self.nonlinearity):
            raise ValueError(f"Nonlinearity must be callable. Current value: {nonlinearity}.")
        k = 1.0 / math.sqrt(hidden_size)
        self.hidden_size = hidden_size
        self.Wxh = _uniform(k, (hidden_size, input_size))
        self.Whh = _uniform(k, (hidden_size, hidden_size))
        self.bias = _uniform(k, (hidden_size,)) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wxh.shape[1]}, hidden_size={self.hidden_size}, "
            f"nonlinearity={self.nonlinearity}, bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None):
        xw = mx.addmm(self.bias, x, self.Wxh.T) if self.bias is not None else x @ self.Wxh.T
        outs = []
        for t in range(xw.shape[-2]):
            pre = xw[..., t, :]
            if hidden is not None:
                pre = mx.addmm(pre, hidden, self.Whh.T)
            hidden = self.nonlinearity(pre)
            outs.append(hidden)
        return mx.stack(outs, axis=-2)


class GRU(Module):
    """Gated recurrent unit (reset, update and candidate gates; ``bhn`` is the candidate's
    hidden-side bias)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        k = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(k, (3 * hidden_size, input_size))
        self.Wh = _uniform(k, (3 * hidden_size, hidden_size))
        self.b = _uniform(k, (3 * hidden_size,)) if bias else None
        self.bhn = _uniform(k, (hidden_size,)) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.b is not None}"
        )

    def __call__(self, x, hidden=None):
        H = self.hidden_size
        xw = mx.addmm(self.b, x, self.Wx.T) if self.b is not None else x @ self.Wx.T
        x_rz, x_n = xw[..., :-H], xw[..., -H:]
        outs = []
        for t in range(xw.shape[-2]):
            rz = x_rz[..., t, :]
            if hidden is not None:
                hw = hidden @ self.Wh.T
                h_rz, h_n = hw[..., :-H], hw[..., -H:]
                if self.bhn is not None:
                    h_n = h_n + self.bhn
                rz = rz + h_rz
            r, z = mx.split(mx.sigmoid(rz), 2, axis=-1)
            n = x_n[..., t, :]
            if hidden is not None:
                n = n + r * h_n
            elif self.bhn is not None:
                n = n + r * self.bhn
            n = mx.tanh(n)
            hidden = (1 - z) * n + z * hidden if hidden is not None else (1 - z) * n
            outs.append(hidden)
        return mx.stack(outs, axis=-2)


class LSTM(Module):
    """Long short-term memory; returns ``(hidden states, cell states)``, each stacked over
    the steps."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        k = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(k, (4 * hidden_size, input_size))
        self.Wh = _uniform(k, (4 * hidden_size, hidden_size))
        self.bias = _uniform(k, (4 * hidden_size,)) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None, cell=None):
        xw = mx.addmm(self.bias, x, self.Wx.T) if self.bias is not None else x @ self.Wx.T
        hs, cs = [], []
        for t in range(xw.shape[-2]):
            gates = xw[..., t, :]
            if hidden is not None:
                gates = mx.addmm(gates, hidden, self.Wh.T)
            i, f, g, o = mx.split(gates, 4, axis=-1)
            i, f, g, o = mx.sigmoid(i), mx.sigmoid(f), mx.tanh(g), mx.sigmoid(o)
            cell = f * cell + i * g if cell is not None else i * g
            hidden = o * mx.tanh(cell)
            cs.append(cell)
            hs.append(hidden)
        return mx.stack(hs, axis=-2), mx.stack(cs, axis=-2)
