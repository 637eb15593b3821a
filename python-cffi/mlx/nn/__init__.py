"""``mlx.nn``: neural-network layers, losses and initializers over ``mlx.core`` (pure Python,
following MLX 0.32's API). The distributed layers run on mlx-arm's one-process group."""
from mlx.nn import init, losses
from mlx.nn.layers import *  # noqa: F401,F403
from mlx.nn.utils import average_gradients, value_and_grad
from mlx.nn.layers import distributed  # noqa: F401  (MLX's star import exposes the submodule as nn.distributed)
from mlx.nn.layers.distributed import (  # noqa: F401
    AllToShardedLinear, FullyShardedModule, QuantizedAllToShardedLinear, QuantizedShardedToAllLinear,
    ShardedToAllLinear, fully_shard,
)
