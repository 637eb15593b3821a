"""Per-call overhead of the Python binding, for this interpreter's mlx.core and, in the same run,
for real MLX (another interpreter, default /opt/oracle/bin/python), side by side with the ratio.

Cases (N calls each, graph build plus one ``mx.eval``, median of 5 runs after a warm-up):
- ``a + 1``: chained array operator on a 1-element float32 array (the original measure);
- ``mx.add(a, 1)``: the same through the generic op binder (``mx.<name>``);
- ``mx.sum(x, axis=-1)``: a binder call with an axis and a keyword;
- ``x[..., i:i+1, :]``: a basic-index read (a KV cache's prefix read);
- ``x[..., i:i+1, :] = u``: a basic-index assignment (a KV cache's write).

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
M = 2_000  # the per-call cases (each builds an independent node)


def _timed(mx, n, build):
    """Times `build()` (the graph) and then one `mx.eval` of what it returns: (n, build s, total s)."""
    t = time.perf_counter()
    outs = build()
    t_build = time.perf_counter() - t
    mx.eval(outs)
    return n, t_build, time.perf_counter() - t, outs


def _chain(mx, step):
    def build():
        a = mx.array([0.0])
        for _ in range(N):
            a = step(a)
        return a
    n, t_build, t_total, a = _timed(mx, N, build)
    assert a.item() == N
    return n, t_build, t_total


def chain_op(mx):
    return _chain(mx, lambda a: a + 1)


def chain_binder(mx):
    return _chain(mx, lambda a: mx.add(a, 1))


def _kv(mx):
    return mx.zeros((1, 2, 16, 4)), mx.ones((1, 2, 1, 4))


def sum_axis(mx):
    x, _ = _kv(mx)
    return _timed(mx, M, lambda: [mx.sum(x, axis=-1, keepdims=False) for _ in range(M)])[:3]


def slice_read(mx):
    x, _ = _kv(mx)
    return _timed(mx, M, lambda: [x[..., i % 16:i % 16 + 1, :] for i in range(M)])[:3]


def slice_write(mx):
    x, u = _kv(mx)

    def build():
        for i in range(M):
            x[..., i % 16:i % 16 + 1, :] = u
        return x
    n, t_build, t_total, _ = _timed(mx, M, build)
    assert x.sum().item() == 16 * 2 * 4
    return n, t_build, t_total


CASES = [("a + 1", chain_op), ("mx.add(a, 1)", chain_binder), ("mx.sum(x, axis=-1)", sum_axis),
         ("x[..., i:i+1, :]", slice_read), ("x[..., i:i+1, :] = u", slice_write)]


def measure():
    import mlx.core as mx

    res = {"module": mx.__file__, "version": getattr(mx, "__version__", "?"), "cases": {}}
    for name, fn in CASES:
        fn(mx)
        runs = [fn(mx) for _ in range(5)]
        n = runs[0][0]
        res["cases"][name] = {"n": n, "build_us": statistics.median(r[1] for r in runs) / n * 1e6,
                              "total_us": statistics.median(r[2] for r in runs) / n * 1e6}
    return res


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
    ref = None
    if not args.no_ref and os.path.exists(args.ref_python):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLX_ARM_LIBRARY")}
        out = subprocess.run([args.ref_python, os.path.abspath(__file__), "--single"], env=env, check=True,
                             capture_output=True, text=True, cwd="/")
        ref = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"per call, graph build (and build + one eval), median of 5; mlx-arm: {ours['module']}")
    if ref:
        print(f"real MLX {ref['version']}: {ref['module']}")
    print(f"{'case':24s} {'mlx-arm build':>14s} {'(+eval)':>10s}" + (f" {'real MLX build':>15s} {'(+eval)':>10s} {'ratio build':>12s} {'(+eval)':>8s}" if ref else ""))
    for name, _ in CASES:
        o = ours["cases"][name]
        row = f"{name:24s} {o['build_us']:11.2f} us {o['total_us']:7.2f} us"
        if ref:
            r = ref["cases"][name]
            row += (f" {r['build_us']:12.2f} us {r['total_us']:7.2f} us {o['build_us'] / r['build_us']:11.2f}x"
                    f" {o['total_us'] / r['total_us']:7.2f}x")
        print(row)


if __name__ == "__main__":
    sys.exit(main())
