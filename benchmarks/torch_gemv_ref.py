"""PyTorch (cuBLAS) anchor for backends/vulkan/examples/bench_gemv.rs: one float16 GEMV
(x @ Wᵀ, one row of x) per weight shape N×K, timed as a chain of C launches each reading the
last one's output (the first K outputs when N ≥ K; alternating with a K×N weight otherwise, the
figure then per pair), with CUDA events. Usage: torch_gemv_ref.py SHAPES [CHAIN], SHAPES as
bench_gemv's --shapes ("576x576,192x576,..."). Exits 1 without torch and CUDA."""
import sys

import torch


def main():
    shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]
    chain = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    if not torch.cuda.is_available():
        sys.exit(1)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}: float16 GEMV, chained")
    for n, k in shapes:
        w = torch.randn(n, k, device="cuda", dtype=torch.float16) * 0.02
        w2 = torch.randn(k, n, device="cuda", dtype=torch.float16) * 0.02 if n < k else None
        x = torch.randn(1, k, device="cuda", dtype=torch.float16)

        def run():
            y = x
            for _ in range(chain):
                y = torch.nn.functional.linear(y, w)
                y = y[:, :k] if w2 is None else torch.nn.functional.linear(y, w2)
            return y

        for _ in range(3):
            run()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            torch.cuda.synchronize()
            best = min(best, a.elapsed_time(b) * 1e3 / chain)
        label = f"{n}x{k}" if w2 is None else f"{n}x{k}+{k}x{n}"
        print(f"{label:>16} {best:8.2f} µs per GEMV{' pair' if w2 is not None else ''} (fp16 weights {w.numel() * 2 / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
