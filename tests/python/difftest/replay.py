"""Replays golden programs on the `mlx.core` importable here (ours) and sorts the outcomes.

    python tests/python/difftest/replay.py GOLDENS.json     # summary of a long run, per reason

`replay(mx, goldens)` returns counts and the list of unexplained differences; test_difftest.py
asserts that list is empty for the committed goldens.
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import programs  # noqa: E402


def replay(mx, goldens):
    start = goldens.get("start", 0)
    counts = collections.Counter()
    diffs = []
    for i, want in enumerate(goldens["programs"]):
        prog = programs.program(start + i)
        desc = programs.describe(prog)
        if desc != want["d"]:
            raise AssertionError(f"program {start + i} is {desc!r}, goldens have {want['d']!r}: regenerate them")
        got = programs.run(mx, prog)
        counts["run"] += 1
        if "ub" in want:  # MLX crashed or hung: ours must only survive (it did, we are here)
            counts["ub:" + want["ub"]] += 1
            continue
        if "build" in want:
            counts["oracle_build_failed"] += 1
            continue
        why = programs.compare(prog, got, want)
        if why is None:
            counts["same"] += 1
        elif isinstance(why, tuple):
            counts["ub:" + why[1]] += 1
        else:
            counts["differ"] += 1
            diffs.append((start + i, desc, why))
    return counts, diffs


def main():
    import mlx.core as mx

    with open(sys.argv[1], encoding="utf-8") as f:
        goldens = json.load(f)
    counts, diffs = replay(mx, goldens)
    by_op = collections.Counter(d.split("(")[0] for _, d, _ in diffs)
    for seed, desc, why in diffs:
        print(f"{seed}: {desc}: {why}")
    print(dict(counts))
    print("differences by op:", by_op.most_common())


if __name__ == "__main__":
    main()
