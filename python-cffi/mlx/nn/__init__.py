"""``mlx.nn``: neural-network layers, losses and initializers over ``mlx.core`` (pure Python,
following MLX 0.32's API). Distributed layers are not provided."""
from mlx.nn import init, losses
from mlx.nn.layers import *  # noqa: F401,F403
from mlx.nn.utils import average_gradients, value_and_grad

# MLX 0.32's distributed layers need mx.distributed, which mlx-arm does not have yet.
_NOT_YET = {
    "AllToShardedLinear", "ShardedToAllLinear", "QuantizedAllToShardedLinear",
    "QuantizedShardedToAllLinear", "FullyShardedModule", "fully_shard", "distributed",
}


def __getattr__(name):
    if name in _NOT_YET:
        raise NotImplementedError(
            f"mlx.nn.{name} is not implemented yet in mlx-arm (it needs mx.distributed)"
        )
    raise AttributeError(f"module 'mlx.nn' has no attribute '{name}'")
