"""Golden gradients from real MLX for core/tests/grad_golden.rs.

Each case differentiates L = sum(f(*xs) * w) (w random, so every output element gets its own
cotangent) with mx.value_and_grad over all inputs, in float32. Ties and kinks are avoided
(random inputs in each op's smooth domain). Run with the oracle venv:
    /work/oracle-venv/bin/python core/tests/data/grad/gen_grad.py
"""
import json
import os
import sys

import mlx.core as mx
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden import encode  # noqa: E402

rng = np.random.default_rng(19)


def u(shape, lo=-2.0, hi=2.0):
    return mx.array(rng.uniform(lo, hi, size=shape).astype(np.float32))


def ties(shape):
    """Small integers as float32: many equal values."""
    return mx.array(rng.integers(0, 3, size=shape).astype(np.float32))


def c64(shape, lo=0.3, hi=1.5):
    """Complex numbers away from 0 (where abs, log, reciprocal are not smooth)."""
    mag = rng.uniform(lo, hi, size=shape)
    ang = rng.uniform(-3.0, 3.0, size=shape)
    return mx.array((mag * np.exp(1j * ang)).astype(np.complex64))


X = (2, 3)
CASES = [
    # name, function, inputs
    ("exp", lambda x: mx.exp(x), [u(X)]),
    ("log", lambda x: mx.log(x), [u(X, 0.2, 3)]),
    ("sin", lambda x: mx.sin(x), [u(X)]),
    ("cos", lambda x: mx.cos(x), [u(X)]),
    ("tanh", lambda x: mx.tanh(x), [u(X)]),
    ("sigmoid", lambda x: mx.sigmoid(x), [u(X)]),
    ("sqrt", lambda x: mx.sqrt(x), [u(X, 0.2, 3)]),
    ("rsqrt", lambda x: mx.rsqrt(x), [u(X, 0.2, 3)]),
    ("abs", lambda x: mx.abs(x), [u(X)]),
    ("square", lambda x: mx.square(x), [u(X)]),
    ("erf", lambda x: mx.erf(x), [u(X)]),
    ("log1p", lambda x: mx.log1p(x), [u(X, 0.2, 3)]),
    ("arctan", lambda x: mx.arctan(x), [u(X)]),
    ("add", lambda a, b: a + b, [u((3, 1)), u((4,))]),
    ("subtract", lambda a, b: a - b, [u((3, 1)), u((4,))]),
    ("multiply", lambda a, b: a * b, [u((3, 1)), u((4,))]),
    ("divide", lambda a, b: a / b, [u((3, 1)), u((4,), 0.5, 2)]),
    ("power", lambda a, b: mx.power(a, b), [u((3, 1), 0.5, 2), u((4,))]),
    ("maximum", lambda a, b: mx.maximum(a, b), [u((3, 1)), u((4,))]),
    ("minimum", lambda a, b: mx.minimum(a, b), [u((3, 1)), u((4,))]),
    ("arctan2", lambda a, b: mx.arctan2(a, b), [u((3, 1)), u((4,))]),
    ("logaddexp", lambda a, b: mx.logaddexp(a, b), [u((3, 1)), u((4,))]),
    ("remainder", lambda a, b: mx.remainder(a, b), [u((3, 1)), u((4,), 0.5, 2)]),
    ("sum", lambda x: mx.sum(x, axis=1), [u((2, 3, 4))]),
    ("mean", lambda x: mx.mean(x, axis=(0, 2)), [u((2, 3, 4))]),
    ("max", lambda x: mx.max(x, axis=2), [u((2, 3, 4))]),
    ("min", lambda x: mx.min(x, axis=0, keepdims=True), [u((2, 3, 4))]),
    ("prod", lambda x: mx.prod(x, axis=1), [u((2, 3, 4), 0.5, 1.5)]),
    ("logsumexp", lambda x: mx.logsumexp(x, axis=-1), [u((2, 3, 4))]),
    ("softmax", lambda x: mx.softmax(x, axis=-1), [u((2, 3, 4))]),
    ("var", lambda x: mx.var(x, axis=-1, ddof=1), [u((2, 3, 4))]),
    ("cumsum", lambda x: mx.cumsum(x, axis=1), [u((2, 3, 4))]),
    ("cumsum_rev_excl", lambda x: mx.cumsum(x, axis=2, reverse=True, inclusive=False), [u((2, 3, 4))]),
    ("reshape", lambda x: mx.reshape(x, (4, 6)), [u((2, 3, 4))]),
    ("transpose", lambda x: mx.transpose(x, (2, 0, 1)), [u((2, 3, 4))]),
    ("broadcast_to", lambda x: mx.broadcast_to(x, (3, 2, 3, 4)), [u((2, 1, 4))]),
    ("slice", lambda x: x[:, 1:3, ::-2], [u((2, 3, 4))]),
    ("concatenate", lambda a, b: mx.concatenate([a, b, a], axis=1), [u((2, 3, 4)), u((2, 1, 4))]),
    ("pad", lambda x: mx.pad(x, [(1, 2), (0, 1), (2, 0)]), [u((2, 3, 4))]),
    ("take", lambda x: mx.take(x, mx.array([[2, 0], [2, 1]]), axis=1), [u((3, 4))]),
    ("take_along_axis", lambda x: mx.take_along_axis(x, mx.array([[0, 3], [3, 1], [2, 2]]), axis=1), [u((3, 4))]),
    ("where", lambda a, b: mx.where(a > 0, a, b), [u((2, 3)), u((3,))]),
    ("matmul", lambda a, b: a @ b, [u((2, 2, 3)), u((3, 4))]),
    ("addmm", lambda a, b, c: mx.addmm(c, a, b, alpha=0.5, beta=2.0), [u((2, 3)), u((3, 4)), u((4,))]),
    ("trace", lambda x: mx.trace(x, offset=1, axis1=1, axis2=2), [u((2, 3, 4))]),
    ("rms_norm", lambda x, w: mx.fast.rms_norm(x, w, 1e-5), [u((2, 3, 4)), u((4,))]),
    ("layer_norm", lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5), [u((2, 3, 4)), u((4,)), u((4,))]),
    ("rope", lambda x: mx.fast.rope(x, 8, traditional=False, base=10000.0, scale=1.0, offset=2), [u((1, 2, 3, 8))]),
    ("sdpa", lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5), [u((1, 2, 3, 4)), u((1, 2, 5, 4)), u((1, 2, 5, 4))]),
    ("sdpa_causal", lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask="causal"), [u((1, 2, 3, 4)), u((1, 2, 5, 4)), u((1, 2, 5, 4))]),
    # Permutations and running extremes; the tie cases (small integers) pin MLX's choice of
    # which element gets the cotangent.
    ("sort", lambda x: mx.sort(x, axis=1), [u((3, 4))]),
    ("sort_axis0", lambda x: mx.sort(x, axis=0), [u((3, 4))]),
    ("cummax_ties", lambda x: mx.cummax(x, axis=1), [ties((3, 5))]),
    ("cummax_rev_excl", lambda x: mx.cummax(x, axis=1, reverse=True, inclusive=False)[:, :-1], [ties((3, 5))]),
    ("cummin_ties", lambda x: mx.cummin(x, axis=0), [ties((4, 3))]),
    ("cummin_rev", lambda x: mx.cummin(x, axis=1, reverse=True), [ties((3, 5))]),
    ("cummin_excl", lambda x: mx.cummin(x, axis=1, inclusive=False)[:, 1:], [ties((3, 5))]),
    ("scatter_max", lambda a, v: a.at[mx.array([0, 2, 2])].maximum(v), [ties((4, 3)), ties((3, 3))]),
    ("scatter_min", lambda a, v: a.at[mx.array([3, 1, 3])].minimum(v), [ties((4, 3)), ties((3, 3))]),
    ("slice_multiply", lambda a, v: a.at[1:3].multiply(v), [u((4, 3), 0.5, 2), u((2, 3), 0.5, 2)]),
    ("slice_maximum", lambda a, v: a.at[1:3].maximum(v), [ties((4, 3)), ties((2, 3))]),
]


# Complex vjps (MLX's convention: g · conj(f'(z)) for holomorphic f), each with a complex
# cotangent (a real one for abs, whose output is real).
COMPLEX = [
    ("exp", lambda z: mx.exp(z), 1),
    ("log", lambda z: mx.log(z), 1),
    ("sin", lambda z: mx.sin(z), 1),
    ("square", lambda z: mx.square(z), 1),
    ("tanh", lambda z: mx.tanh(z), 1),
    ("sqrt", lambda z: mx.sqrt(z), 1),
    ("reciprocal", lambda z: mx.reciprocal(z), 1),
    ("abs", lambda z: mx.abs(z), 1),
    ("real", lambda z: mx.real(z), 1),
    ("imag", lambda z: mx.imag(z), 1),
    ("multiply", lambda a, b: a * b, 2),
    ("divide", lambda a, b: a / b, 2),
    ("prod", lambda z: mx.prod(z, axis=0), 1),
]


def main():
    out = []
    for name, fn, xs in CASES:
        y = fn(*xs)
        w = u(y.shape, -1, 1)
        loss = lambda *a: mx.sum(fn(*a) * w)
        val, grads = mx.value_and_grad(loss, argnums=list(range(len(xs))))(*xs)
        if not isinstance(grads, (list, tuple)):
            grads = [grads]
        out.append({
            "name": name,
            "inputs": [encode(x) for x in xs],
            "w": encode(w),
            "value": encode(val),
            "grads": [encode(g) for g in grads],
        })
    # Second derivatives of sum(f(x)) (grad of grad).
    second = []
    for name in ["sin", "exp", "tanh", "sigmoid", "log"]:
        f = getattr(mx, name)
        x = u((5,), 0.2, 1.5)
        g2 = mx.grad(lambda x: mx.sum(mx.grad(lambda y: mx.sum(f(y)))(x)))(x)
        second.append({"name": name, "x": encode(x), "grad2": encode(g2)})
    complex_cases = []
    for name, fn, n in COMPLEX:
        zs = [c64((3, 4)) for _ in range(n)]
        y = fn(*zs)
        cot = u(y.shape, -1, 1) if y.dtype != mx.complex64 else c64(y.shape, 0.2, 1.0)
        _, vjps = mx.vjp(fn, zs, [cot])
        complex_cases.append({
            "name": name,
            "inputs": [encode(z) for z in zs],
            "cotangent": encode(cot),
            "vjps": [encode(v) for v in vjps],
        })
    path = os.path.join(os.path.dirname(__file__), "grad.json")
    with open(path, "w") as fh:
        json.dump({"mlx": mx.__version__, "cases": out, "second": second, "complex": complex_cases}, fh)
    print(path, len(out), len(second))


if __name__ == "__main__":
    main()
