"""``mlx.nn``: neural-network layers, losses and initializers over ``mlx.core`` (pure Python,
following MLX 0.32's API). The distributed layers run on mlx-arm's one-process group;
``fully_shard`` is not provided."""
from mlx.core._missing import NotProvidedError as _NotProvidedError
from mlx.nn import init, losses
from mlx.nn.layers import *  # noqa: F401,F403
from mlx.nn.utils import average_gradients, value_and_grad
from mlx.nn.layers import distributed  # noqa: F401  (MLX's star import exposes the submodule as nn.distributed)
from mlx.nn.layers.distributed import (  # noqa: F401
    AllToShardedLinear, QuantizedAllToShardedLinear, QuantizedShardedToAllLinear, ShardedToAllLinear,
)

# MLX 0.32's fully sharded data parallelism is not written yet.
_NOT_YET = {"FullyShardedModule", "fully_shard"}


def __getattr__(name):
    if name in _NOT_YET:
        raise _NotProvidedError(
            f"mlx.nn.{name} is not implemented yet in mlx-arm (fully sharded data parallelism)"
        )
    raise AttributeError(f"module 'mlx.nn' has no attribute '{name}'")
