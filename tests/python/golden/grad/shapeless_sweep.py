"""Shapeless-compile trace counts over three shapes of one rank, a line per case (traces after
each call, and whether the values equal the uncompiled function's). Run it under real MLX and
under mlx-arm and diff the two (docs/COMPILE.md, helper cm28):

    /work/oracle-venv/bin/python tests/python/golden/grad/shapeless_sweep.py > mlx.txt
    PYTHONPATH=python-cffi MLX_ARM_LIBRARY=target/release/libmlx_arm.so .venv/bin/python \
        tests/python/golden/grad/shapeless_sweep.py > ours.txt; diff mlx.txt ours.txt
"""
import sys
import mlx.core as mx

mx.eval(mx.compile(lambda a: a + 1)(mx.array(1.0)))

def counts(fun, shapes, shapeless=True):
    n = [0]
    def counted(*a):
        n[0] += 1
        return fun(*a)
    c = mx.compile(counted, shapeless=shapeless)
    tr, vals = [], []
    for i, sh in enumerate(shapes):
        args = [mx.random.normal(s, key=mx.random.key(10 * i + j)) for j, s in enumerate(sh)]
        try:
            out = c(*args)
            out = out if isinstance(out, (list, tuple)) else [out]
            mx.eval(out)
            ref = fun(*args)
            ref = ref if isinstance(ref, (list, tuple)) else [ref]
            ok = all(o.shape == r.shape and mx.allclose(o, r, rtol=1e-4, atol=1e-4, equal_nan=True).item() for o, r in zip(out, ref))
            vals.append("ok" if ok else "BAD")
        except Exception as e:
            vals.append("ERR:" + type(e).__name__ + ":" + str(e)[:50].replace("\n", " "))
        tr.append(n[0])
    return tr, vals

S1 = [[(2, 3)], [(4, 5)], [(3, 7)]]
S1v = [[(3,)], [(5,)], [(8,)]]
S2 = [[(2, 3), (2, 3)], [(4, 5), (4, 5)], [(3, 7), (3, 7)]]
SB = [[(2, 3), (3,)], [(4, 5), (5,)], [(3, 7), (7,)]]
SM = [[(2, 3), (3, 4)], [(4, 5), (5, 2)], [(3, 7), (7, 6)]]
SBM = [[(2, 1, 3, 4), (5, 4, 2)], [(3, 1, 2, 3), (4, 3, 1)], [(2, 1, 2, 5), (3, 5, 4)]]

cases = {
    "exp": (lambda x: mx.exp(x), S1),
    "x+1": (lambda x: x + 1, S1),
    "x*2.5": (lambda x: x * 2.5, S1),
    "2-x": (lambda x: 2 - x, S1),
    "x/3": (lambda x: x / 3, S1),
    "x**2": (lambda x: x ** 2, S1),
    "x**3.0": (lambda x: x ** 3.0, S1),
    "2**x": (lambda x: 2 ** x, S1),
    "x**y": (lambda x, y: x ** y, S2),
    "square": (lambda x: mx.square(x), S1),
    "maximum(x,0)": (lambda x: mx.maximum(x, 0), S1),
    "where": (lambda x: mx.where(x > 0, x, 0.0), S1),
    "sin*cos": (lambda x: mx.sin(x) * mx.cos(x), S1),
    "x+y": (lambda x, y: x + y, S2),
    "x+row": (lambda x, y: x + y, SB),
    "sum": (lambda x: x.sum(), S1),
    "sum(0)": (lambda x: x.sum(0), S1),
    "sum(-1,kd)": (lambda x: x.sum(-1, keepdims=True), S1),
    "max(1)": (lambda x: x.max(1), S1),
    "prod": (lambda x: x.prod(), S1),
    "mean": (lambda x: x.mean(), S1),
    "mean(1,kd)": (lambda x: x.mean(1, keepdims=True), S1),
    "var": (lambda x: x.var(), S1),
    "var(0)": (lambda x: mx.var(x, 0), S1),
    "std": (lambda x: mx.std(x), S1),
    "x-mean": (lambda x: x - x.mean(-1, keepdims=True), S1),
    "logsumexp": (lambda x: mx.logsumexp(x, -1), S1),
    "softmax": (lambda x: mx.softmax(x, -1), S1),
    "argmax": (lambda x: mx.argmax(x, -1), S1),
    "argmax()": (lambda x: mx.argmax(x), S1),
    "argmin(kd)": (lambda x: mx.argmin(x, keepdims=True), S1),
    "flatten": (lambda x: x.flatten() * 2, S1),
    "matmul": (lambda x, y: x @ y, SM),
    "sum(matmul)": (lambda x, y: (x @ y).sum(), SM),
    "sum(bmatmul)": (lambda x, y: mx.matmul(x, y).sum(), SBM),
    "sum(bmatmul**2)": (lambda x, y: (mx.matmul(x, y) ** 2).sum(), SBM),
    "astype": (lambda x: x.astype(mx.float16), S1),
    "astype+": (lambda x: x.astype(mx.float16) * 2, S1),
    "abs(x)": (lambda x: mx.abs(x), S1),
    "sum(x**2)": (lambda x: (x ** 2).sum(), S1),
    "sum(x*x)": (lambda x: (x * x).sum(), S1),
    "sigmoid": (lambda x: mx.sigmoid(x), S1),
    "erf": (lambda x: mx.erf(x), S1),
    "rsqrt(mean sq)": (lambda x: x * mx.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5), S1),
    "transpose": (lambda x: x.T * 2, S1),
    "bcast_to": (lambda x, y: mx.broadcast_to(y, x.shape) + x, SB),
    "grad sum exp": (lambda x: mx.grad(lambda z: mx.exp(z).sum())(x), S1),
    "grad sum sq": (lambda x: mx.grad(lambda z: (z ** 2).sum())(x), S1),
    "grad sum x*x": (lambda x: mx.grad(lambda z: (z * z).sum())(x), S1),
    "grad mean": (lambda x: mx.grad(lambda z: z.mean())(x), S1),
    "grad sum(matmul)": (lambda x, y: mx.grad(lambda a, b: (a @ b).sum())(x, y), SM),
    "grad sum(bmatmul)": (lambda x, y: mx.grad(lambda a, b: mx.matmul(a, b).sum())(x, y), SBM),
    "grad sum(bmm**2)": (lambda x, y: mx.grad(lambda a, b: (mx.matmul(a, b) ** 2).sum(), argnums=(0, 1))(x, y), SBM),
    "vag sum sq": (lambda x: mx.value_and_grad(lambda z: (z ** 2).sum())(x), S1),
    "grad softmax": (lambda x: mx.grad(lambda z: (mx.softmax(z, -1) * z).sum())(x), S1),
    "1d exp+1": (lambda x: mx.exp(x) + 1, S1v),
    "1d sum": (lambda x: x.sum(), S1v),
    "zeros_like": (lambda x: mx.zeros_like(x) + x, S1),
    "ones_like*x": (lambda x: mx.ones_like(x) * x, S1),
    "full x.shape": (lambda x: mx.full(x.shape, 2.0) * x, S1),
    "arange": (lambda x: x + mx.arange(x.shape[-1]), S1),
}
only = sys.argv[1:] 
for name, (f, shapes) in cases.items():
    if only and name not in only:
        continue
    tr, vals = counts(f, shapes)
    print(f"{name:20s} {tr} {' '.join(vals)}")
