"""Per-call overhead of the Python binding: 10 000 chained ``a = a + 1`` on a 1-element
array, graph build plus one ``mx.eval``, median of 5 runs — for this interpreter's mlx.core
and, in the same run, for real MLX (another interpreter, default /opt/oracle/bin/python),
printed side by side with the ratio.

    .venv/bin/python python-cffi/tools/bench_overhead.py [--ref-python PY | --no-ref]

(``--single`` measures only the running interpreter's mlx.core and prints one JSON line;
the script calls itself that way for the reference.)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

N = 10_000


def once(mx):
    a = mx.array([0.0])
    t = time.perf_counter()
    for _ in range(N):
        a = a + 1
    t_build = time.perf_counter() - t
    mx.eval(a)
    t_total = time.perf_counter() - t
    assert a.item() == N
    return t_build, t_total


def measure():
    import mlx.core as mx

    once(mx)
    runs = [once(mx) for _ in range(5)]
    return {"module": mx.__file__, "version": getattr(mx, "__version__", "?"),
            "build_s": statistics.median(r[0] for r in runs), "total_s": statistics.median(r[1] for r in runs)}


def line(name, r):
    return (f"{name:8s} build {r['build_s'] * 1e3:7.1f} ms, build+eval {r['total_s'] * 1e3:7.1f} ms, "
            f"{r['total_s'] / N * 1e6:5.2f} us/op  ({r['module']})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref-python", default="/opt/oracle/bin/python")
    ap.add_argument("--no-ref", action="store_true")
    ap.add_argument("--single", action="store_true")
    args = ap.parse_args()
    if args.single:
        print(json.dumps(measure()))
        return
    ours = measure()
    print(f"{N} x (a = a + 1) on a 1-element float32 array, build + eval, median of 5")
    print(line("mlx-arm", ours))
    if args.no_ref or not os.path.exists(args.ref_python):
        return
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLX_ARM_LIBRARY")}
    out = subprocess.run([args.ref_python, os.path.abspath(__file__), "--single"], env=env, check=True,
                         capture_output=True, text=True, cwd="/")
    ref = json.loads(out.stdout.strip().splitlines()[-1])
    print(line("real MLX", ref))
    print(f"ratio mlx-arm / real MLX: build {ours['build_s'] / ref['build_s']:.2f}x, "
          f"build+eval {ours['total_s'] / ref['total_s']:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
