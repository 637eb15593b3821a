"""mlx.utils (tree_flatten, tree_unflatten, tree_map, tree_map_with_path, tree_reduce,
tree_merge) against REAL MLX 0.32: the cases of golden/nn/nn_cases.py (group "tree") run here and
must give what real MLX gave (golden/nn/gen_nn_goldens.py)."""
import os
import sys

import pytest

import mlx.core as mx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "nn"))
import nn_cases  # noqa: E402

ENTRIES, ARRAYS = nn_cases.load_group("tree")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_tree_matches_real_mlx(entry):
    nn_cases.check(entry, ARRAYS, mx)


def test_tree_arrays_are_leaves():
    from mlx.utils import tree_flatten, tree_map
    t = {"w": mx.ones((2, 2)), "l": [mx.zeros(3)]}
    flat = tree_flatten(t)
    assert [k for k, _ in flat] == ["w", "l.0"]
    doubled = tree_map(lambda a: a * 2, t)
    assert doubled["w"].tolist() == [[2.0, 2.0], [2.0, 2.0]]
