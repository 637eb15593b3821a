"""Reference timings for core/examples/bench_fft.rs: numpy.fft.fft (and real MLX's mx.fft.fft
when importable) of complex64 vectors of 2^10..2^20, the same input rule as the Rust side.
Prints JSON {"numpy": {"1024": seconds, ...}, "mlx": {...}}: medians after warm-ups."""
import json
import sys
import time

import numpy as np


def median_seconds(f, warm, runs):
    for _ in range(warm):
        f()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]


def signal(n):
    j = np.arange(n, dtype=np.int64)
    re = (((j * 7919) % 10007) / 10007.0 - 0.5).astype(np.float32)
    im = (((j * 104729) % 10009) / 10009.0 - 0.5).astype(np.float32)
    return (re + 1j * im).astype(np.complex64)


def runs_for(n):
    return max(5, min(51, (1 << 22) // n))


out = {"numpy": {}, "mlx": {}}
sizes = [1 << k for k in range(10, 21)]
for n in sizes:
    x = signal(n)
    out["numpy"][str(n)] = median_seconds(lambda: np.fft.fft(x), 3, runs_for(n))
try:
    import mlx.core as mx

    mx.set_default_device(mx.cpu)
    for n in sizes:
        xm = mx.array(signal(n))
        mx.eval(xm)
        out["mlx"][str(n)] = median_seconds(lambda: mx.eval(mx.fft.fft(xm)), 3, runs_for(n))
except ImportError as e:
    print(f"real MLX not measured: {e}", file=sys.stderr)
print(json.dumps(out))
