"""Differential test against real MLX 0.32.4 (docs/COMPAT.md, "Differential tester").

difftest/goldens.json holds the results real MLX gave for seeded random programs (written by
difftest/gen_goldens.py in the oracle venv; CI never runs MLX). Each program is rebuilt from its
seed, run on our `mlx.core`, and compared: exception class, container, dtype, shape and values
(dtype-appropriate tolerances). A difference passes only under a named undefined-behaviour rule
(difftest/programs.py UB_RULES), each of which docs/COMPAT.md explains.
"""
import json
import os
import sys

import pytest

import mlx.core as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "difftest"))
import programs  # noqa: E402
import replay  # noqa: E402


@pytest.fixture(scope="module")
def goldens():
    with open(os.path.join(HERE, "difftest", "goldens.json"), encoding="utf-8") as f:
        return json.load(f)


def test_programs_match_real_mlx(goldens):
    assert goldens["mlx"] == "0.32.4"
    counts, diffs = replay.replay(mx, goldens)
    assert counts["run"] == len(goldens["programs"]) >= 1000
    assert counts["same"] >= 0.9 * counts["run"], counts
    assert not diffs, f"{len(diffs)} programs differ from real MLX ({dict(counts)}):\n" + "\n".join(
        f"seed {s}: {d}: {why}" for s, d, why in diffs[:40])


def test_every_rule_is_documented():
    with open(os.path.join(HERE, "..", "..", "docs", "COMPAT.md"), encoding="utf-8") as f:
        doc = f.read()
    for name in list(programs.UB_RULES) + ["oracle_crash", "oracle_hang"]:
        assert f"`{name}`" in doc, f"UB rule {name} is not explained in docs/COMPAT.md"


def test_compare_catches_differences():
    """The comparison itself: a changed value, dtype, shape or exception class is reported."""
    prog = ("add", [programs.Arr("float32", (2,), "c", 1, False)] * 2, {})
    want = {"o": [["float32", [2], [1.0, 2.0]]]}
    assert programs.compare(prog, {"o": [["float32", [2], [1.0, 2.0]]]}, want) is None
    assert "values" in programs.compare(prog, {"o": [["float32", [2], [1.0, 2.1]]]}, want)
    assert "dtype" in programs.compare(prog, {"o": [["float16", [2], [1.0, 2.0]]]}, want)
    assert "shape" in programs.compare(prog, {"o": [["float32", [1, 2], [1.0, 2.0]]]}, want)
    assert "exception" in programs.compare(prog, {"e": "TypeError"}, {"e": "ValueError"})
    assert "raised" in programs.compare(prog, {"e": "TypeError"}, want)
