"""PyTorch (cuBLAS/cuDNN) figures for backends/vulkan/examples/bench_vulkan.rs, same cases and
sizes. Prints one JSON object {case: seconds}. Needs torch with CUDA; exits 1 without it."""
import json
import sys
import time

import torch


def timed(f, runs=10):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    s = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        torch.cuda.synchronize()
        s.append(time.perf_counter() - t)
    s.sort()
    return s[len(s) // 2]


def main():
    n, rows, elems = (int(v) for v in sys.argv[1:4])
    if not torch.cuda.is_available():
        sys.exit(1)
    dev = "cuda"
    out = {}
    for name, dt in (("f32", torch.float32), ("f16", torch.float16)):
        a = torch.randn(n, n, device=dev, dtype=dt)
        b = torch.randn(n, n, device=dev, dtype=dt)
        # Plain f32 (no TF32), as our kernel computes.
        torch.backends.cuda.matmul.allow_tf32 = False
        out[f"matmul_{name}_{n}"] = timed(lambda: a @ b)
    dim = rows
    x = torch.randn(rows, dim, device=dev)
    w = torch.randn(dim, device=dev)
    out[f"softmax_f32_{rows}x{dim}"] = timed(lambda: torch.softmax(x, -1))
    out[f"rms_norm_f32_{rows}x{dim}"] = timed(lambda: torch.nn.functional.rms_norm(x, (dim,), w, 1e-5))
    big = torch.randn(elems, device=dev)
    out[f"add_f32_{elems}"] = timed(lambda: big + big)
    print(json.dumps(out))


main()
