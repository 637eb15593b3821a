"""Embedding layer."""
import math
from typing import Optional

import mlx.core as mx
from mlx.nn.layers.base import Module
from mlx.nn.layers.quantized import QuantizedEmbedding


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``dims``, looked up by integer index.

    Initialised from a normal distribution with standard deviation ``1 / sqrt(dims)``.
    """

    def __init__(self, num_embeddings: int, dims: int):
        super().__init__()
        self.weight = mx.random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"

    def __call__(self, x):
        return self.weight[x]

    def as_linear(self, x):
        """Use the table as the weight of a linear map (``x @ weight.T``), e.g. for tied
        input/output embeddings."""
        return x @ self.weight.T

    def to_quantized(
        self,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ):
        """A :class:`QuantizedEmbedding` holding this table quantized."""
        if quantize_input:
            raise ValueError("Quantized input is not supported.")
        return QuantizedEmbedding.from_embedding(self, group_size, bits, mode)
