"""mlx.optimizers (every optimizer over a few steps on given gradients, MultiOptimizer, state
handling, schedules, clip_grad_norm, MLX's errors) against REAL MLX 0.32 goldens: the cases of
golden/nn/nn_cases.py (groups "optim", "sched") run here and must give what real MLX gave."""
import os
import sys

import pytest

import mlx.core as mx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "nn"))
import nn_cases  # noqa: E402

GROUPS = {g: nn_cases.load_group(g) for g in ("optim", "sched")}
PARAMS = [(g, e) for g, (entries, _) in GROUPS.items() for e in entries]


@pytest.mark.parametrize("group,entry", PARAMS, ids=[f"{g}-{e['name']}" for g, e in PARAMS])
def test_optimizers_match_real_mlx(group, entry):
    nn_cases.check(entry, GROUPS[group][1], mx)
