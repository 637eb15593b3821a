"""Quantized layers and :func:`quantize` (over ``mx.quantize`` / ``mx.quantized_matmul``)."""
import math
from typing import Callable, Optional, Union

import mlx.core as mx
from mlx.nn.layers.base import Module
from mlx.utils import tree_map_with_path

# (group_size, bits) used when a mode's value is not given.
_MODE_DEFAULTS = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}


def _defaults_for_mode(mode, group_size, bits):
    if mode not in _MODE_DEFAULTS:
        raise ValueError(
            f"Invalid quantization mode '{mode}'. Valid modes are: {', '.join(_MODE_DEFAULTS)}."
        )
    g, b = _MODE_DEFAULTS[mode]
    return group_size or g, bits or b


def _quantize_into(layer, weight, group_size, bits, mode):
    """Set ``layer.weight``, ``layer.scales`` and (affine) ``layer.biases`` from ``weight``."""
    parts = mx.quantize(weight, group_size, bits, mode=mode)
    layer.weight, layer.scales = parts[0], parts[1]
    layer.biases = parts[2] if len(parts) > 2 else None


def quantize(
    model: Module,
    group_size: int = None,
    bits: int = None,
    *,
    mode: str = "affine",
    quantize_input: bool = False,
    class_predicate: Optional[Callable[[str, Module], Union[bool, dict]]] = None,
):
    """Replace, in place, the leaf modules of ``model`` chosen by ``class_predicate(path,
    module)`` (default: those with a ``to_quantized`` method) by their quantized versions.

    The predicate may return a dict of keyword arguments for ``to_quantized`` instead of
    ``True``.
    """
    choose = class_predicate or (lambda _, m: hasattr(m, "to_quantized"))

    def convert(path, m):
        verdict = choose(path, m)
        if not verdict:
            return m
        if not hasattr(m, "to_quantized"):
            raise ValueError(f"Unable to quantize model of type {type(m)}")
        if isinstance(verdict, bool):
            kwargs = {"group_size": group_size, "bits": bits, "mode": mode}
            if quantize_input:
                kwargs["quantize_input"] = quantize_input
            return m.to_quantized(**kwargs)
        if isinstance(verdict, dict):
            if "quantize_input" in verdict and not verdict["quantize_input"]:
                verdict.pop("quantize_input")
            return m.to_quantized(**verdict)
        raise ValueError(
            "``class_predicate`` must return a bool or a dict of parameters to pass to ``to_quantized``"
        )

    leaves = tree_map_with_path(convert, model.leaf_modules(), is_leaf=Module.is_module)
    model.update_modules(leaves)


class QuantizedEmbedding(Module):
    """An :class:`Embedding` whose table is stored quantized (frozen); lookups dequantize
    the selected rows."""

    def __init__(self, num_embeddings: int, dims: int, group_size: int = None, bits: int = None, mode: str = "affine"):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        table = mx.random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))
        _quantize_into(self, table, group_size, bits, mode)
        self.num_embeddings = num_embeddings
        self.dims = dims
        self.freeze()

    def __call__(self, x):
        biases = self.get("biases")
        return mx.dequantize(
            self["weight"][x],
            scales=self["scales"][x],
            biases=biases[x] if biases is not None else None,
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    def as_linear(self, x):
        """``x @ table.T`` with the quantized table (``mx.quantized_matmul``)."""
        return mx.quantized_matmul(
            x,
            self["weight"],
            scales=self["scales"],
            biases=self.get("biases"),
            transpose=True,
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    def _extra_repr(self):
        return (
            f"{self.num_embeddings}, {self.dims}, group_size={self.group_size}, "
            f"bits={self.bits}, mode={self.mode}"
        )

    @classmethod
    def from_embedding(cls, embedding_layer: Module, group_size: int = None, bits: int = None, mode: str = "affine"):
        """Quantize an :class:`Embedding`'s table."""
        n, dims = embedding_layer.weight.shape
        q = cls(n, dims, group_size, bits, mode=mode)
        _quantize_into(q, embedding_layer.weight, group_size, bits, mode)
        return q


class QuantizedLinear(Module):
    """A :class:`Linear` whose weight is stored quantized (frozen; the bias too)."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True, group_size: int = None, bits: int = None, mode: str = "affine"):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        k = math.sqrt(1 / input_dims)
        w = mx.random.uniform(low=-k, high=k, shape=(output_dims, input_dims))
        _quantize_into(self, w, group_size, bits, mode)
        if bias:
            self.bias = mx.zeros((output_dims,))
        self.freeze()

    def _extra_repr(self):
        out_dims, packed = self.weight.shape
        in_dims = packed * 32 // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    def __call__(self, x):
        y = mx.quantized_matmul(
            x,
            self["weight"],
            scales=self["scales"],
            biases=self.get("biases"),
            transpose=True,
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )
        return y + self["bias"] if "bias" in self else y

    @classmethod
    def from_linear(cls, linear_layer: Module, group_size: int = None, bits: int = None, mode: str = "affine"):
        """Quantize a :class:`Linear` layer's weight (its bias is kept as is)."""
        out_dims, in_dims = linear_layer.weight.shape
        q = cls(in_dims, out_dims, False, group_size, bits, mode=mode)
        _quantize_into(q, linear_layer.weight, group_size, bits, mode)
        if "bias" in linear_layer:
            q.bias = linear_layer.bias
        return q


class QQLinear(Module):
    """A linear layer (no bias) whose weights *and* inputs are quantized (``mx.qqmm``,
    modes ``'nvfp4'`` / ``'mxfp8'``).

    In training mode the weight is kept in floating point (quantized on the fly by
    ``mx.qqmm``); switching to eval mode quantizes it once (``weight`` + ``scales``), and
    back to training mode dequantizes it.
    """

    def __init__(self, input_dims: int, output_dims: int, group_size: int = None, bits: int = None, mode: str = "nvfp4"):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        k = math.sqrt(1 / input_dims)
        self.weight = mx.random.uniform(low=-k, high=k, shape=(output_dims, input_dims))
        self._quantized = False

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape
        if self.weight.dtype == mx.uint32:
            in_dims = in_dims * 32 // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, group_size={self.group_size}, "
            f"bits={self.bits}, mode={self.mode}"
        )

    def quantize(self):
        """Store the weight quantized (no-op if it already is)."""
        if self._quantized:
            return
        self.weight, self.scales = mx.quantize(self.weight, self.group_size, self.bits, mode=self.mode)
        self._quantized = True

    def dequantize(self):
        """Store the weight in floating point again (no-op if it is)."""
        if not self._quantized:
            return
        self.weight = mx.dequantize(
            self.weight, scales=self.scales, group_size=self.group_size, bits=self.bits, mode=self.mode
        )
        del self.scales
        self._quantized = False

    def _set_training_mode(self, mode: bool):
        super()._set_training_mode(mode)
        if mode:
            self.dequantize()
        else:
            self.quantize()

    def __call__(self, x):
        return mx.qqmm(
            x, self["weight"], scales=self.get("scales"), group_size=self.group_size, bits=self.bits, mode=self.mode
        )

    @classmethod
    def from_linear(cls, linear_layer: Module, group_size: int = None, bits: int = None, mode: str = "nvfp4"):
        """A QQLinear holding a bias-free :class:`Linear`'s weight (in the linear layer's
        training mode)."""
        out_dims, in_dims = linear_layer.weight.shape
        if linear_layer.get("bias") is not None:
            raise NotImplementedError("QQLinear does not support bias yet.")
        q = cls(in_dims, out_dims, group_size, bits, mode=mode)
        q.weight = linear_layer.weight
        q.train(linear_layer.training)
        return q
