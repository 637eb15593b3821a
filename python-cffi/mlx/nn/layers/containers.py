"""Sequential container."""
from mlx.nn.layers.base import Module


class Sequential(Module):
    """Calls the given modules (or callables) one after the other."""

    def __init__(self, *modules):
        super().__init__()
        self.layers = list(modules)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
