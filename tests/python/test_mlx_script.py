"""The issue's end-to-end check: an ordinary MLX script (examples/python/mlx_script.py: arrays,
ops, random, fast ops, quantization, I/O) runs unchanged with mlx-arm and prints what real MLX
0.32 printed (tests/python/golden/mlx_script.out, made with
`/opt/oracle/bin/python examples/python/mlx_script.py > tests/python/golden/mlx_script.out`).
Numbers are compared to 1e-4 relative (float32 sums may round in another order)."""
import math
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
NUM = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _split(line):
    return NUM.sub("#", line), [float(x) for x in NUM.findall(line)]


def test_mlx_script_runs_unchanged(tmp_path):
    script = os.path.join(ROOT, "examples", "python", "mlx_script.py")
    got = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    with open(os.path.join(ROOT, "tests", "python", "golden", "mlx_script.out")) as f:
        want = f.read().splitlines()
    lines = got.stdout.splitlines()
    assert len(lines) == len(want), got.stdout
    for g, w in zip(lines, want):
        (gt, gn), (wt, wn) = _split(g), _split(w)
        assert gt == wt and len(gn) == len(wn), (g, w)
        assert all(math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6) for a, b in zip(gn, wn)), (g, w)
