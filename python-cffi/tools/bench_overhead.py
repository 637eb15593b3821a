"""Per-call overhead: 10 000 chained `a = a + 1` on a 1-element array, graph build plus one
mx.eval, median of 5 runs. Works with any mlx.core (real MLX or mlx-arm's):

    .venv/bin/python python-cffi/tools/bench_overhead.py
    /opt/oracle/bin/python python-cffi/tools/bench_overhead.py
"""
import statistics
import time

import mlx.core as mx

N = 10_000


def once():
    a = mx.array([0.0])
    t = time.perf_counter()
    for _ in range(N):
        a = a + 1
    t_build = time.perf_counter() - t
    mx.eval(a)
    t_total = time.perf_counter() - t
    assert a.item() == N
    return t_build, t_total


def main():
    once()
    runs = [once() for _ in range(5)]
    build = statistics.median(r[0] for r in runs)
    total = statistics.median(r[1] for r in runs)
    print(f"{mx.__name__} from {mx.__file__}")
    print(f"{N} x (a + 1): build {build * 1e3:.1f} ms, build+eval {total * 1e3:.1f} ms, {total / N * 1e6:.2f} us/op")


if __name__ == "__main__":
    main()
