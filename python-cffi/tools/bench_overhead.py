"""Per-call overhead of the Python binding, for this interpreter's mlx.core and, in the same run,
for real MLX (another interpreter), side by side with the ratio.

Each case runs N calls (graph build), then one ``mx.eval`` of what they built; the figures are
µs per call, best of 7 runs after a warm-up (the least disturbed run: what is measured is a
fixed cost): "build" (the calls alone) and "+eval" (the calls and the one eval). Cases with no graph (``item()``, ``a.dtype``, ``mx.eval`` itself) have one
figure. Graph cases work on tiny arrays, so what is measured is the binding, not the kernels:

- chains of 10 000 ops: ``a = a + 1`` and ``a = mx.add(a, 1)`` on a 1-element float32 array;
- 2 000 independent calls each of: ``a * b``, ``mx.add(a, b)``, ``a[0]``, ``a[:, 1]``,
  ``a.reshape(4)``, ``a.T``, ``mx.transpose(a)``, ``mx.matmul(a, b)`` on (2, 2) float32 arrays;
  ``mx.array([1.0, 2.0, 3.0])``, ``mx.array([[1, 2], [3, 4]])``, ``mx.array([[1.0, 2], [3, 4]])``,
  ``mx.array([True, False, True])``, ``mx.array`` of a 4×8 nested list of floats; ``mx.sum(x, axis=-1)``, ``x[..., i:i+1, :]`` and
  ``x[..., i:i+1, :] = u`` on a (1, 2, 16, 4) array (a KV cache's read and write);
- ``mx.multiply(a, 2.0)``, ``a * 2.0``, ``mx.exp(a)`` on a (2, 2) float32 array; one forward of
  a small MLP (``maximum(x @ w1 + b1, 0.0) @ w2 + b2``, 16 → 32 → 8, batch 1: 5 ops per call);
- no graph: ``mx.eval`` of a 2-node graph (built outside the timing), ``a.item()`` (float32
  and int32),
  ``a.dtype``, ``a.shape``, ``a.ndim``.

    PYTHONPATH=python-cffi MLX_ARM_LIBRARY=target/release/libmlx_arm.so \\
        .venv/bin/python python-cffi/tools/bench_overhead.py [--ref-python PY | --no-ref] [--clock cpu]

``--ref-python`` is real MLX's interpreter (default: /work/oracle-venv/bin/python, else
/opt/oracle/bin/python). ``--single`` measures only the running interpreter's mlx.core and
prints one JSON line; the script calls itself that way for the reference and for each
``--before`` variant (another source tree as ``PYTHONPATH``, or this one under ``ENV=VALUE``, e.g.
``--before MLX_ARM_CARRAY=0`` for the pure-Python array class), shown in columns before ours. ``--clock cpu`` times
with the process's CPU time instead of the wall clock: on a machine loaded by other work it
counts only this process's time (a multi-threaded eval counts every thread's, so read the
"+eval" figures of real MLX, whose eval uses a thread pool, with care).
"""
import argparse
import json
import os
import subprocess
import sys
import time

N = 10_000  # chain length
M = 2_000  # the per-call cases (each builds an independent node)
REF_PYTHONS = ("/work/oracle-venv/bin/python", "/opt/oracle/bin/python")
RUNS = 7
clock = time.perf_counter


def _timed(mx, n, build):
    """Times `build()` and then one `mx.eval` of what it returns (nothing when it returns None):
    (n, build s, total s, result)."""
    t = clock()
    outs = build()
    t_build = clock() - t
    if outs is not None:
        mx.eval(outs)
    return n, t_build, clock() - t, outs


def _chain(mx, step):
    def build():
        a = mx.array([0.0])
        for _ in range(N):
            a = step(a)
        return a
    n, t_build, t_total, a = _timed(mx, N, build)
    assert a.item() == N
    return n, t_build, t_total


def _each(make_args, call):
    """A case of M independent calls ``call(mx, *args)``, the arguments made once."""
    def case(mx):
        args = make_args(mx)
        return _timed(mx, M, lambda: [call(mx, *args) for _ in range(M)])[:3]
    return case


def _no_graph(make_args, call):
    """A case of M calls that build nothing (their figure is the build one)."""
    def case(mx):
        args = make_args(mx)

        def run():
            for _ in range(M):
                call(mx, *args)
        return _timed(mx, M, run)[:3]
    return case


def _pair(mx):
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    b = mx.array([[0.5, -1.0], [2.0, 0.25]])
    mx.eval(a, b)
    return a, b


def _one(mx):
    a, _ = _pair(mx)
    return (a,)


def _kv(mx):
    x, u = mx.zeros((1, 2, 16, 4)), mx.ones((1, 2, 1, 4))
    mx.eval(x, u)
    return x, u


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


def _mlp(mx):
    """A small MLP's weights: 16 → 32 → 8, batch 1."""
    x = mx.ones((1, 16))
    w1, b1 = mx.full((16, 32), 0.01), mx.zeros((32,))
    w2, b2 = mx.full((32, 8), 0.02), mx.zeros((8,))
    mx.eval(x, w1, b1, w2, b2)
    return x, w1, b1, w2, b2


def _mlp_forward(mx, x, w1, b1, w2, b2):
    """One forward: matmul, bias, ReLU (``mx.maximum`` with a scalar), matmul, bias: 5 ops."""
    return mx.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def eval_tiny(mx):
    """mx.eval of a fresh 2-node graph per call; only the eval is timed."""
    a, b = _pair(mx)
    graphs = [(a + b) * b for _ in range(M)]
    
    def run():
        for g in graphs:
            mx.eval(g)
    return _timed(mx, M, run)[:3]


CASES = [
    ("a + 1 (chain)", lambda mx: _chain(mx, lambda a: a + 1)),
    ("mx.add(a, 1) (chain)", lambda mx: _chain(mx, lambda a: mx.add(a, 1))),
    ("a * b", _each(_pair, lambda mx, a, b: a * b)),
    ("mx.add(a, b)", _each(_pair, lambda mx, a, b: mx.add(a, b))),
    ("mx.multiply(a, 2.0)", _each(_one, lambda mx, a: mx.multiply(a, 2.0))),
    ("a * 2.0", _each(_one, lambda mx, a: a * 2.0)),
    ("mx.exp(a)", _each(_one, lambda mx, a: mx.exp(a))),
    ("MLP forward (5 ops)", _each(_mlp, _mlp_forward)),
    ("a[0]", _each(_one, lambda mx, a: a[0])),
    ("a[:, 1]", _each(_one, lambda mx, a: a[:, 1])),
    ("a.reshape(4)", _each(_one, lambda mx, a: a.reshape(4))),
    ("a.T", _each(_one, lambda mx, a: a.T)),
    ("mx.transpose(a)", _each(_one, lambda mx, a: mx.transpose(a))),
    ("mx.matmul(a, b)", _each(_pair, lambda mx, a, b: mx.matmul(a, b))),
    ("mx.array([1., 2., 3.])", _each(lambda mx: (), lambda mx: mx.array([1.0, 2.0, 3.0]))),
    ("mx.array([[1, 2], [3, 4]])", _each(lambda mx: (), lambda mx: mx.array([[1, 2], [3, 4]]))),
    ("mx.array([[1., 2], [3, 4]])", _each(lambda mx: (), lambda mx: mx.array([[1.0, 2], [3, 4]]))),
    ("mx.array([True, False, True])", _each(lambda mx: (), lambda mx: mx.array([True, False, True]))),
    ("mx.array(4×8 nested floats)", _each(lambda mx: ([[float(i * 8 + j) for j in range(8)] for i in range(4)],),
                                          lambda mx, v: mx.array(v))),
    ("mx.sum(x, axis=-1)", _each(_kv, lambda mx, x, u: mx.sum(x, axis=-1, keepdims=False))),
    ("x.sum(axis=-1)", _each(_kv, lambda mx, x, u: x.sum(axis=-1))),
    ("x.mean((1, 2))", _each(_kv, lambda mx, x, u: x.mean((1, 2)))),
    ("a.astype(mx.int32)", _each(_one, lambda mx, a: a.astype(mx.int32))),
    ("a.transpose(1, 0)", _each(_one, lambda mx, a: a.transpose(1, 0))),
    ("mx.expand_dims(a, 0)", _each(_one, lambda mx, a: mx.expand_dims(a, 0))),
    ("x.squeeze(0)", _each(_kv, lambda mx, x, u: x.squeeze(0))),
    ("x[..., i:i+1, :]", slice_read),
    ("x[..., i:i+1, :] = u", slice_write),
    ("mx.eval(tiny graph)", eval_tiny),
    ("a.item()", _no_graph(lambda mx: (mx.array(1.5),), lambda mx, a: a.item())),
    ("k.item() (int32)", _no_graph(lambda mx: (mx.array(7),), lambda mx, a: a.item())),
    ("a.dtype", _no_graph(_one, lambda mx, a: a.dtype)),
    ("a.shape", _no_graph(_one, lambda mx, a: a.shape)),
    ("a.ndim", _no_graph(_one, lambda mx, a: a.ndim)),
]


def measure():
    import mlx.core as mx

    res = {"module": mx.__file__, "version": getattr(mx, "__version__", "?"), "cases": {}}
    for name, fn in CASES:
        fn(mx)
        runs = [fn(mx) for _ in range(RUNS)]
        n = runs[0][0]
        res["cases"][name] = {"n": n, "build_us": min(r[1] for r in runs) / n * 1e6,
                              "total_us": min(r[2] for r in runs) / n * 1e6}
    return res


def _reference(ref_python, clock_name):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLX_ARM_LIBRARY")}
    out = subprocess.run([ref_python, os.path.abspath(__file__), "--single", "--clock", clock_name], env=env, check=True,
                         capture_output=True, text=True, cwd="/")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _before(spec, clock_name):
    """The "before" package: this interpreter and library with ``spec`` = ``PYTHONPATH`` (another
    source tree) or ``ENV=VALUE`` (this tree under that variable, e.g. ``MLX_ARM_CARRAY=0``)."""
    env = dict(os.environ)
    if "=" in spec and not os.path.isdir(spec):
        k, v = spec.split("=", 1)
        env[k] = v
    else:
        env["PYTHONPATH"] = spec
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--single", "--clock", clock_name], env=env,
                         check=True, capture_output=True, text=True, cwd="/")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref-python", default=next((p for p in REF_PYTHONS if os.path.exists(p)), REF_PYTHONS[0]))
    ap.add_argument("--no-ref", action="store_true")
    ap.add_argument("--single", action="store_true")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--before", action="append", default=[], metavar="PATH|ENV=VALUE",
                    help="also measure this package variant (a PYTHONPATH, or this tree with ENV=VALUE); repeatable")
    args = ap.parse_args()
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.single:
        print(json.dumps(measure()))
        return
    befores = [_before(b, args.clock) for b in args.before]
    ours = measure()
    ref = None if args.no_ref or not os.path.exists(args.ref_python) else _reference(args.ref_python, args.clock)
    print(f"µs per call ({args.clock} clock), best of {RUNS}; mlx-arm: {ours['module']}")
    for i, b in enumerate(args.before):
        print(f"before{i + 1}: {b}")
    if ref:
        print(f"real MLX {ref['version']}: {ref['module']}")
    head = f"{'case':24s}" + "".join(f" {f'before{i + 1}':>9s}" for i in range(len(befores)))
    head += f" {'mlx-arm':>9s} {'(+eval)':>9s}"
    if befores:
        head += f" {'/before1':>9s}"
    if ref:
        head += f" {'real MLX':>9s} {'(+eval)':>9s} {'ratio':>7s} {'(+eval)':>8s}"
    print(head)
    for name, _ in CASES:
        o = ours["cases"][name]
        row = f"{name:24s}" + "".join(f" {b['cases'][name]['build_us']:9.2f}" for b in befores)
        row += f" {o['build_us']:9.2f} {o['total_us']:9.2f}"
        if befores:
            row += f" {o['build_us'] / befores[0]['cases'][name]['build_us']:8.2f}x"
        if ref:
            r = ref["cases"][name]
            row += (f" {r['build_us']:9.2f} {r['total_us']:9.2f} {o['build_us'] / r['build_us']:6.2f}x"
                    f" {o['total_us'] / r['total_us']:7.2f}x")
        print(row)


if __name__ == "__main__":
    sys.exit(main())
