"""``mlx.optimizers``: optimizers, learning-rate schedules and ``clip_grad_norm`` over
``mlx.core`` (pure Python, following MLX 0.32's API)."""
from mlx.optimizers.optimizers import *  # noqa: F401,F403
from mlx.optimizers.schedulers import *  # noqa: F401,F403
