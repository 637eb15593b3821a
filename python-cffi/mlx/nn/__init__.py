"""``mlx.nn``: neural-network layers, losses and initializers over ``mlx.core`` (pure Python,
following MLX 0.32's API). Distributed layers are not provided."""
from mlx.nn import init, losses
from mlx.nn.layers import *  # noqa: F401,F403
from mlx.nn.utils import average_gradients, value_and_grad
