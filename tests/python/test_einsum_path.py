"""mx.einsum_path (pure Python, shapes only) against real MLX's paths, texts and errors
(tests/python/golden/einsum_path.json, from gen_einsum_path.py)."""
import json
import os

import pytest

import mlx.core as mx

with open(os.path.join(os.path.dirname(__file__), "golden", "einsum_path.json"), encoding="utf-8") as f:
    CASES = json.load(f)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["subscripts"] + str(c["shapes"]) for c in CASES])
def test_einsum_path_matches_mlx(case):
    ops = [mx.zeros(s) for s in case["shapes"]]
    if "error" in case:
        with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[case["error"]]) as e:
            mx.einsum_path(case["subscripts"], *ops)
        assert str(e.value) == case["message"]
        return
    path, text = mx.einsum_path(case["subscripts"], *ops)
    assert path == [tuple(p) for p in case["path"]]
    assert text == case["text"]
