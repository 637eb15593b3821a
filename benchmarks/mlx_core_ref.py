"""Real MLX's figures for the core benchmark (core/examples/bench_core.rs runs this in the same
run and prints both side by side). Prints one JSON object: {case: median seconds}.
Usage: python benchmarks/mlx_core_ref.py [--runs N]   (needs `pip install mlx mlx-cpu numpy`)"""
import json
import statistics
import sys
import time

import mlx.core as mx
import numpy as np

RUNS = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 7
N16M = 16 * 1024 * 1024


def median_seconds(fn, runs=RUNS, warmup=2):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def graph_10k():
    x = mx.array(np.ones((16,), np.float32))
    a = mx.array(np.full((16,), 1.0001, np.float32))
    b = mx.array(np.full((16,), 0.5, np.float32))
    y = x
    for i in range(5000):  # 2 ops per iteration = 10k ops
        y = y * a
        y = y - b if i % 2 else y + b
    mx.eval(y)


rng = np.random.default_rng(0)
A = mx.array(rng.standard_normal(N16M, dtype=np.float32))
B = mx.array(rng.standard_normal(N16M, dtype=np.float32))
mx.eval(A, B)
out = {
    "graph_10k_small_ops": median_seconds(graph_10k),
    "add_f32_16M": median_seconds(lambda: mx.eval(A + B)),
    "exp_f32_16M": median_seconds(lambda: mx.eval(mx.exp(A))),
}
print(json.dumps(out))
