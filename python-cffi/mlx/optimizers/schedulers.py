"""Learning-rate schedules: functions of the step (an ``mx.array``) returning the rate."""
import math
from typing import Callable, List

import mlx.core as mx

__all__ = ["exponential_decay", "step_decay", "cosine_decay", "join_schedules", "linear_schedule"]


def exponential_decay(init: float, decay_rate: float) -> Callable:
    """``init * decay_rate ** step``."""

    def schedule(step):
        return init * decay_rate**step

    return schedule


def step_decay(init: float, decay_rate: float, step_size: int) -> Callable:
    """``init * decay_rate ** (step // step_size)``."""
    if step_size < 1:
        raise ValueError(f"step_size must be greater than 0, but got {step_size}.")

    def schedule(step):
        return init * decay_rate ** (step // step_size)

    return schedule


def cosine_decay(init: float, decay_steps: int, end: float = 0.0) -> Callable:
    """Half a cosine from ``init`` down to ``end`` over ``decay_steps`` steps, then ``end``."""
    if decay_steps < 1:
        raise ValueError(f"decay_steps must be greater than 0, but got {decay_steps}.")

    def schedule(step):
        s = mx.minimum(step, decay_steps)
        return end + 0.5 * (1.0 + mx.cos(math.pi / decay_steps * s)) * (init - end)

    return schedule


def join_schedules(schedules: List[Callable], boundaries: List[int]) -> Callable:
    """Use ``schedules[i + 1]`` from step ``boundaries[i]`` on (its step counted from the
    boundary)."""
    if len(schedules) == 0:
        raise ValueError("Must provide at least 1 schedule to join.")
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(
            f"Received {len(boundaries)} boundaries but expected {len(schedules) - 1}."
        )

    def schedule(step):
        out = schedules[0](step)
        for bound, later in zip(boundaries, schedules[1:]):
            out = mx.where(step < bound, out, later(step - bound))
        return out

    return schedule


def linear_schedule(init: float, end: float, steps: int) -> Callable:
    """Linear from ``init`` to ``end`` over ``steps`` steps, then ``end``."""
    if steps < 1:
        raise ValueError(f"steps must be greater than 0, but got {steps}.")

    def schedule(step):
        s = mx.minimum(step, steps)
        return s * ((end - init) / steps) + init

    return schedule
