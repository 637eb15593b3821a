"""Golden gradients from real MLX for the vjp rules added in session 21 (logcumsumexp,
as_strided, dequantize, quantize), read by core/tests/grad_golden.rs
(`more_rules_match_mlx`). Kept apart from gen_grad.py so its random stream (and its
goldens) stay as they are.

Each case differentiates L = sum(f(*xs) * w) (w random) with mx.value_and_grad over the inputs
listed in "argnums", in float32. Run with the oracle venv:
    /work/oracle-venv/bin/python core/tests/data/grad/gen_grad_rules.py
"""
import json
import os
import sys

import mlx.core as mx
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden import encode  # noqa: E402

rng = np.random.default_rng(29)


def u(shape, lo=-2.0, hi=2.0):
    return mx.array(rng.uniform(lo, hi, size=shape).astype(np.float32))


W = u((4, 64), -1.0, 1.0)
WQ, S, B = mx.quantize(W, 32, 4)

CASES = [
    # name, function, inputs, argnums
    ("logcumsumexp", lambda x: mx.logcumsumexp(x, axis=1), [u((3, 5))], [0]),
    ("logcumsumexp_rev", lambda x: mx.logcumsumexp(x, axis=0, reverse=True), [u((3, 5))], [0]),
    # An exclusive scan's first output is -inf: it is left out of the loss.
    ("logcumsumexp_excl", lambda x: mx.logcumsumexp(x, axis=1, inclusive=False)[:, 1:], [u((3, 5))], [0]),
    ("logcumsumexp_rev_excl", lambda x: mx.logcumsumexp(x, axis=1, reverse=True, inclusive=False)[:, :-1], [u((3, 5))], [0]),
    ("as_strided", lambda x: mx.as_strided(x, (4, 3), (2, 1), 1), [u((12,))], [0]),
    ("as_strided_2d", lambda x: mx.as_strided(x, (2, 5), (3, 1), 1), [u((3, 4))], [0]),
    ("dequantize", lambda wq, s, b: mx.dequantize(wq, s, b, 32, 4), [WQ, S, B], [1, 2]),
    ("quantize_scales", lambda w: mx.quantize(w, 32, 4)[1], [u((4, 64))], [0]),
    ("quantize_biases", lambda w: mx.quantize(w, 32, 4)[2], [u((4, 64))], [0]),
    ("quantize_both_8bit", lambda w: mx.concatenate(mx.quantize(w, 64, 8)[1:], axis=1), [u((3, 128))], [0]),
]


def main():
    out = []
    for name, fn, xs, argnums in CASES:
        y = fn(*xs)
        w = u(y.shape, -1, 1)
        loss = lambda *a: mx.sum(fn(*a) * w)
        val, grads = mx.value_and_grad(loss, argnums=argnums)(*xs)
        if not isinstance(grads, (list, tuple)):
            grads = [grads]
        out.append({
            "name": name,
            "inputs": [encode(x) for x in xs],
            "argnums": argnums,
            "w": encode(w),
            "value": encode(val),
            "grads": [encode(g) for g in grads],
        })
    path = os.path.join(os.path.dirname(__file__), "grad_rules.json")
    with open(path, "w") as fh:
        json.dump({"mlx": mx.__version__, "cases": out}, fh)
    print(path, len(out))


if __name__ == "__main__":
    main()
