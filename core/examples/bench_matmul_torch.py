"""PyTorch anchor of core/examples/bench_matmul.rs: the same cases, timed as ../shared/anchors/perf/bench_torch.py times them.

`python3 bench_matmul_torch.py THREADS` (pin it with taskset like the Rust program)."""
import sys, time, statistics, torch
torch.set_num_threads(int(sys.argv[1]))
def timeit(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)
for (m, k, n, dt, reps) in [(64, 4096, 4096, torch.float32, 5), (512, 2048, 2048, torch.float32, 5),
                            (1024, 1024, 1024, torch.float32, 5), (1024, 1024, 1024, torch.float16, 5),
                            (1024, 1024, 1024, torch.bfloat16, 5), (64, 4096, 4096, torch.bfloat16, 5),
                            (512, 2048, 2048, torch.bfloat16, 5), (2048, 2048, 2048, torch.bfloat16, 3)]:
    x, w = torch.randn(m, k).to(dt), torch.randn(n, k).to(dt)
    s = timeit(lambda: x @ w.T, reps)
    print(f"matmul_{m}x{k}x{n}_{str(dt).split('.')[-1]} {2 * m * k * n / s / 1e9:.1f}", flush=True)
