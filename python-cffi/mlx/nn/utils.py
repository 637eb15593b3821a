"""``nn.value_and_grad``, ``checkpoint``, ``average_gradients`` and ``clip_grad_norm_sharded``."""
from functools import wraps
from typing import Any, Callable, Optional

import mlx.core as mx
from mlx.nn.layers.base import Module


def _transform(name):
    """``mx.<name>`` if mlx.core provides it (looked up at call time)."""
    fn = None
    try:
        fn = getattr(mx, name)
    except (AttributeError, NotImplementedError):
        fn = None
    if fn is None:
        raise NotImplementedError(
            f"mlx.nn needs mx.{name}, which this mlx-arm build does not provide yet "
            "(function transformations / autograd)"
        )
    return fn


def value_and_grad(model: Module, fn: Callable):
    """Wrap ``fn(*args)`` so that calling the result returns ``(fn(*args), gradients)``, the
    gradients being taken with respect to ``model.trainable_parameters()`` (a tree shaped like
    them). ``fn`` may return ``(loss, aux…)`` as ``mx.value_and_grad`` allows."""

    def with_params(params, *args, **kwargs):
        model.update(params)
        return fn(*args, **kwargs)

    value_grad_fn = None

    @wraps(fn)
    def wrapped(*args, **kwargs):
        nonlocal value_grad_fn
        if value_grad_fn is None:  # looked up at the first call, as before
            value_grad_fn = _transform("value_and_grad")(with_params)
        return value_grad_fn(model.trainable_parameters(), *args, **kwargs)

    return wrapped


def checkpoint(module: Module, fn: Optional[Callable] = None):
    """Gradient checkpointing of ``module`` (or ``fn``) with respect to its trainable
    parameters; needs ``mx.checkpoint``."""
    target = module if fn is None else fn

    def with_params(params, *args, **kwargs):
        module.update(params)
        return target(*args, **kwargs)

    @wraps(target)
    def wrapped(*args, **kwargs):
        return _transform("checkpoint")(with_params)(module.trainable_parameters(), *args, **kwargs)

    return wrapped


def average_gradients(
    gradients: Any,
    group: Optional[Any] = None,
    all_reduce_size: int = 32 * 1024**2,
    communication_stream: Optional[Any] = None,
):
    """Average ``gradients`` over the processes of a distributed group. mlx-arm runs a
    single process (no ``mx.distributed`` yet), so the gradients are returned unchanged
    unless a group of more than one process is given."""
    if group is None or group.size() == 1:
        return gradients
    raise NotImplementedError("mx.distributed is not provided by mlx-arm yet")


def clip_grad_norm_sharded(gradients: Any, max_norm: float, group: Optional["mx.distributed.Group"] = None):
    """``optim.clip_grad_norm`` for gradients sharded across ``group`` (e.g. a
    ``FullyShardedModule``'s): the squared norms of the local shards are summed over the group,
    so every rank scales by the same global norm. Returns ``(clipped, global_norm)``."""
    from mlx.utils import tree_map, tree_reduce

    local = tree_reduce(lambda acc, g: acc + g.square().sum(), gradients, 0.0)
    norm = mx.sqrt(mx.distributed.all_sum(local, group=group))
    scale = mx.minimum(max_norm / (norm + 1e-6), 1.0)
    return tree_map(lambda g: g * scale, gradients), norm
