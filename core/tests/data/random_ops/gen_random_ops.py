#!/usr/bin/env python3
"""Goldens for core/tests/random_ops.rs: the array-level mx.random API (and mx.erfinv) from
real MLX 0.32 (run with /opt/oracle/bin/python). Writes random_ops.json next to this script.

Each case names the op and its arguments; keys are given as their two uint32 words (from
mx.random.key / mx.random.split), arrays with golden.encode. Floats are stored exactly (f32,
f16 and bf16 values are exact in JSON doubles), so the Rust side compares bit for bit.
"Seeded" cases call mx.random.seed(s) and then several samplers without a key, checking the
global key sequence.
"""
import os
import sys

import mlx.core as mx
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden import encode, run, write  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_ops.json")
FDT = {"float32": mx.float32, "float16": mx.float16, "bfloat16": mx.bfloat16, "float64": mx.float64}
IDT = {"int8": mx.int8, "int16": mx.int16, "int32": mx.int32, "int64": mx.int64, "uint8": mx.uint8,
       "uint16": mx.uint16, "uint32": mx.uint32, "uint64": mx.uint64, "bool": mx.bool_, "float32": mx.float32}
BITS = {mx.float32: mx.uint32, mx.float16: mx.uint16, mx.bfloat16: mx.uint16, mx.float64: mx.uint64}
ALL = {**FDT, **IDT, "complex64": mx.complex64}


def kw(k):
    return [int(v) for v in np.array(k)]


def keys():
    out = [mx.random.key(s) for s in [0, 1, 42, 2**40 + 7, 2**64 - 1]]
    out.append(mx.random.split(mx.random.key(3), 3)[2])
    return out


def fnum(x):
    """A float argument for JSON: infinities as strings, like golden.encode."""
    return "-inf" if x == -float("inf") else "inf" if x == float("inf") else x


def param(v):
    return encode(v) if isinstance(v, mx.array) else v


def main():
    cases = []

    def add(name, op, fn, **args):
        c = {"name": name, "op": op, **args}
        c.update(run(fn))
        if "error" not in c:
            # Raw bit patterns of float outputs, so the test is exact whatever JSON parsing does.
            outs = fn()
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            encs = c["outputs"] if "outputs" in c else [c["output"]]
            for o, e in zip(outs, encs):
                if o.dtype in BITS:
                    e["bits"] = [int(v) for v in np.array(o.view(BITS[o.dtype])).ravel()]
        cases.append(c)

    ks = keys()
    for s in [0, 5, 2**33 + 1, 2**64 - 1]:
        add(f"key {s}", "key", lambda: mx.random.key(s), seed=s)
    for i, k in enumerate(ks[:3]):
        for num in [0, 1, 2, 5]:
            add(f"split k{i} num={num}", "split", lambda: mx.random.split(k, num), key=kw(k), num=num)

    shapes = [[], [1], [7], [3, 5], [2, 3, 5], [0], [257]]
    # uniform: scalar bounds, all float dtypes (float64 is an error), several keys and shapes
    for i, k in enumerate(ks):
        for dt in ["float32", "float16", "bfloat16"]:
            for sh in shapes[i % 3::2]:
                for lo, hi in [(0.0, 1.0), (-3.5, 2.25)]:
                    add(f"uniform k{i} {dt} {sh} [{lo},{hi})", "uniform",
                        lambda: mx.random.uniform(lo, hi, shape=sh, dtype=FDT[dt], key=k),
                        key=kw(k), low=lo, high=hi, shape=sh, dtype=dt)
    # uniform: array bounds (broadcast)
    lo_a = mx.array([0.0, 1.0, -2.5])
    hi_a = mx.array([[2.0], [3.0]])
    for dt in ["float32", "float16", "bfloat16"]:
        add(f"uniform array low {dt}", "uniform", lambda: mx.random.uniform(lo_a, 5.0, shape=[2, 3], dtype=FDT[dt], key=ks[1]),
            key=kw(ks[1]), low=encode(lo_a), high=5.0, shape=[2, 3], dtype=dt)
        add(f"uniform array both {dt}", "uniform", lambda: mx.random.uniform(lo_a, hi_a, shape=[2, 3], dtype=FDT[dt], key=ks[2]),
            key=kw(ks[2]), low=encode(lo_a), high=encode(hi_a), shape=[2, 3], dtype=dt)
    add("uniform array shape mismatch", "uniform", lambda: mx.random.uniform(lo_a, 5.0, shape=[], key=ks[0]),
        key=kw(ks[0]), low=encode(lo_a), high=5.0, shape=[], dtype="float32")
    add("uniform int dtype", "uniform", lambda: mx.random.uniform(shape=[2], dtype=mx.int32, key=ks[0]),
        key=kw(ks[0]), low=0.0, high=1.0, shape=[2], dtype="int32")
    add("uniform float64", "uniform", lambda: mx.random.uniform(shape=[2], dtype=mx.float64, key=ks[0]),
        key=kw(ks[0]), low=0.0, high=1.0, shape=[2], dtype="float64")
    bad_keys = [mx.array([0, 1], mx.int32), mx.array([0, 1, 2], mx.uint32), mx.random.split(ks[0], 2)]
    for j, bk in enumerate(bad_keys):
        add(f"uniform bad key {j}", "uniform", lambda: mx.random.uniform(shape=[2], key=bk),
            badkey=encode(bk), low=0.0, high=1.0, shape=[2], dtype="float32")

    # normal: scalar / array loc and scale, float64 too
    for i, k in enumerate(ks):
        for dt in ["float32", "float16", "bfloat16", "float64"]:
            for loc, scale in [(None, None), (0.5, None), (None, 2.5), (-1.25, 0.3)]:
                sh = shapes[(i + len(cases)) % len(shapes)]
                kws = {}
                if loc is not None:
                    kws["loc"] = loc
                if scale is not None:
                    kws["scale"] = scale
                add(f"normal k{i} {dt} {sh} loc={loc} scale={scale}", "normal",
                    lambda: mx.random.normal(shape=sh, dtype=FDT[dt], key=k, **kws),
                    key=kw(k), shape=sh, dtype=dt, loc=loc, scale=scale)
    loc_a = mx.array([0.0, 1.0, 2.0])
    sc_a = mx.array([[1.0], [2.0]], mx.float16)
    for dt in ["float32", "float16", "bfloat16"]:
        add(f"normal array loc {dt}", "normal", lambda: mx.random.normal(shape=[2, 3], dtype=FDT[dt], loc=loc_a, key=ks[3]),
            key=kw(ks[3]), shape=[2, 3], dtype=dt, loc=encode(loc_a), scale=None)
        add(f"normal array scale broadcasts up {dt}", "normal",
            lambda: mx.random.normal(shape=[3], dtype=FDT[dt], loc=0.25, scale=sc_a, key=ks[4]),
            key=kw(ks[4]), shape=[3], dtype=dt, loc=0.25, scale=encode(sc_a))
    add("normal int dtype", "normal", lambda: mx.random.normal(shape=[2], dtype=mx.int32, key=ks[0]),
        key=kw(ks[0]), shape=[2], dtype="int32", loc=None, scale=None)

    # truncated_normal
    for i, k in enumerate(ks[:4]):
        for dt in ["float32", "float16", "bfloat16"]:
            for lo, hi in [(-1.0, 2.0), (0.5, 3.0), (-float("inf"), 0.0)]:
                sh = [[5], [3, 3], [1], []][i]
                add(f"truncated_normal k{i} {dt} [{lo},{hi}] {sh}", "truncated_normal",
                    lambda: mx.random.truncated_normal(lo, hi, shape=sh, dtype=FDT[dt], key=k),
                    key=kw(k), lower=fnum(lo), upper=fnum(hi), shape=sh, dtype=dt)
    add("truncated_normal no shape", "truncated_normal", lambda: mx.random.truncated_normal(0.0, 1.0, key=ks[1]),
        key=kw(ks[1]), lower=0.0, upper=1.0, shape=None, dtype="float32")
    for dt in ["int32", "float64"]:
        add(f"truncated_normal {dt}", "truncated_normal",
            lambda: mx.random.truncated_normal(0.0, 1.0, shape=[2], dtype=ALL[dt], key=ks[1]),
            key=kw(ks[1]), lower=0.0, upper=1.0, shape=[2], dtype=dt)

    # gumbel and laplace
    for i, k in enumerate(ks[:3]):
        for dt in ["float32", "float16", "bfloat16"]:
            sh = [[9], [4, 3], [2, 1, 5]][i]
            add(f"gumbel k{i} {dt} {sh}", "gumbel", lambda: mx.random.gumbel(shape=sh, dtype=FDT[dt], key=k),
                key=kw(k), shape=sh, dtype=dt)
        for dt in ["float32", "float16", "bfloat16", "float64"]:
            for loc, scale in [(0.0, 1.0), (1.5, 0.25)]:
                sh = [[9], [4, 3], [2, 1, 5]][i]
                add(f"laplace k{i} {dt} {sh} loc={loc} scale={scale}", "laplace",
                    lambda: mx.random.laplace(shape=sh, dtype=FDT[dt], loc=loc, scale=scale, key=k),
                    key=kw(k), shape=sh, dtype=dt, loc=loc, scale=scale)
    add("gumbel int", "gumbel", lambda: mx.random.gumbel(shape=[2], dtype=mx.int32, key=ks[0]), key=kw(ks[0]), shape=[2], dtype="int32")
    add("gumbel float64", "gumbel", lambda: mx.random.gumbel(shape=[2], dtype=mx.float64, key=ks[0]), key=kw(ks[0]), shape=[2], dtype="float64")
    add("laplace int", "laplace", lambda: mx.random.laplace(shape=[2], dtype=mx.int32, key=ks[0]),
        key=kw(ks[0]), shape=[2], dtype="int32", loc=0.0, scale=1.0)

    # bernoulli
    p1 = mx.array([0.1, 0.5, 0.9])
    p16 = mx.array([[0.25], [0.75]], mx.float16)
    p_base = mx.array([[0.1, 0.2], [0.8, 0.9], [0.5, 0.6]])
    for i, k in enumerate(ks[:3]):
        add(f"bernoulli k{i} transposed p", "bernoulli", lambda: mx.random.bernoulli(p_base.T, shape=[4, 2, 3], key=k),
            key=kw(k), p=encode(p_base), transpose=True, shape=[4, 2, 3])
        for p, sh in [(0.5, [11]), (0.3, [3, 4]), (0.5, None), (p1, None), (p1, [4, 3]), (p16, [2, 5])]:
            add(f"bernoulli k{i} p={param(p) if not isinstance(p, mx.array) else list(p.shape)} shape={sh}", "bernoulli",
                lambda: mx.random.bernoulli(p, shape=sh, key=k) if sh is not None else mx.random.bernoulli(p, key=k),
                key=kw(k), p=param(p), shape=sh)
    add("bernoulli p shape incompatible", "bernoulli", lambda: mx.random.bernoulli(mx.array([[0.1, 0.9]] * 3), shape=[1, 2], key=ks[0]),
        key=kw(ks[0]), p=encode(mx.array([[0.1, 0.9]] * 3)), shape=[1, 2])
    add("bernoulli p int", "bernoulli", lambda: mx.random.bernoulli(mx.array([0, 1]), key=ks[0]),
        key=kw(ks[0]), p=encode(mx.array([0, 1])), shape=None)

    # randint
    for i, k in enumerate(ks):
        for dt in ["int32", "int8", "uint8", "int64", "uint32", "bool", "int16", "uint16", "uint64"][i::2]:
            for lo, hi in [(0, 10), (-100, 7), (5, 5), (-2**31, 2**31 - 1)]:
                sh = [[13], [4, 5]][i % 2]
                add(f"randint k{i} {dt} [{lo},{hi}) {sh}", "randint",
                    lambda: mx.random.randint(lo, hi, shape=sh, dtype=IDT[dt], key=k),
                    key=kw(k), low=lo, high=hi, shape=sh, dtype=dt)
    add("randint float dtype", "randint", lambda: mx.random.randint(0, 5, shape=[2], dtype=mx.float32, key=ks[0]),
        key=kw(ks[0]), low=0, high=5, shape=[2], dtype="float32")

    # categorical: both paths, N-D logits, axis, shape / num_samples, dtypes, transposed logits
    rng = np.random.default_rng(1)
    cat = [([6], -1, None, None), ([6], -1, None, 1), ([6], -1, None, 4), ([6], -1, [4], None), ([6], -1, [2, 3], None),
           ([6], -1, [], None), ([1, 6], -1, None, None), ([1, 6], -1, None, 4), ([6, 1], 0, None, 3), ([1, 1, 6], -1, None, None),
           ([2, 6], -1, None, None), ([2, 6], -1, None, 3), ([2, 6], 0, None, None), ([2, 3, 4], 1, None, None),
           ([2, 3, 4], 1, None, 5), ([2, 4], -1, [3, 2], None), ([1, 6], -1, [3, 1], None), ([3, 5], 1, [2, 3], None)]
    for j, (ls, ax, sh, ns) in enumerate(cat):
        logits = mx.array(rng.normal(size=ls).astype(np.float32))
        k = ks[j % len(ks)]
        add(f"categorical {ls} axis={ax} shape={sh} num_samples={ns}", "categorical",
            lambda: mx.random.categorical(logits, axis=ax, shape=sh, num_samples=ns, key=k),
            key=kw(k), logits=encode(logits), axis=ax, shape=sh, num_samples=ns)
    lg = mx.array(rng.normal(size=[5, 3]).astype(np.float32))
    add("categorical transposed logits", "categorical", lambda: mx.random.categorical(lg.T, key=ks[1]),
        key=kw(ks[1]), logits=encode(lg), transpose=True, axis=-1, shape=None, num_samples=None)
    lg16 = mx.array(rng.normal(size=[3, 7]).astype(np.float32)).astype(mx.float16)
    add("categorical float16 gumbel", "categorical", lambda: mx.random.categorical(lg16, num_samples=2, key=ks[2]),
        key=kw(ks[2]), logits=encode(lg16), axis=-1, shape=None, num_samples=2)
    add("categorical float16 icdf", "categorical", lambda: mx.random.categorical(lg16[0], num_samples=6, key=ks[2]),
        key=kw(ks[2]), logits=encode(lg16[0]), axis=-1, shape=None, num_samples=6)
    inf_l = mx.array([-float("inf"), 0.0, -float("inf"), 1.0])
    add("categorical -inf logits gumbel", "categorical", lambda: mx.random.categorical(mx.stack([inf_l, inf_l]), key=ks[3]),
        key=kw(ks[3]), logits=encode(mx.stack([inf_l, inf_l])), axis=-1, shape=None, num_samples=None)
    for name, fn, a in [
        ("categorical both shape and num_samples", lambda: mx.random.categorical(mx.zeros((2, 4)), shape=[3, 2], num_samples=3, key=ks[0]),
         dict(logits=encode(mx.zeros((2, 4))), axis=-1, shape=[3, 2], num_samples=3)),
        ("categorical bad axis", lambda: mx.random.categorical(mx.zeros((2, 4)), axis=2, key=ks[0]),
         dict(logits=encode(mx.zeros((2, 4))), axis=2, shape=None, num_samples=None)),
        ("categorical 0-d logits", lambda: mx.random.categorical(mx.array(1.0), key=ks[0]),
         dict(logits=encode(mx.array(1.0)), axis=-1, shape=None, num_samples=None)),
        ("categorical shape not broadcast", lambda: mx.random.categorical(mx.zeros((2, 4)), shape=[3], key=ks[0]),
         dict(logits=encode(mx.zeros((2, 4))), axis=-1, shape=[3], num_samples=None)),
        ("categorical zero classes", lambda: mx.random.categorical(mx.zeros((2, 0)), key=ks[0]),
         dict(logits=encode(mx.zeros((2, 0))), axis=-1, shape=None, num_samples=None)),
    ]:
        add(name, "categorical", fn, key=kw(ks[0]), **a)

    # permutation
    for i, k in enumerate(ks[:4]):
        for n in [0, 1, 2, 10, 100]:
            add(f"permutation n={n} k{i}", "permutation_n", lambda: mx.random.permutation(n, key=k), key=kw(k), n=n)
    x = mx.arange(12).reshape(3, 4)
    for ax in [0, 1, -1]:
        add(f"permutation x axis={ax}", "permutation", lambda: mx.random.permutation(x, axis=ax, key=ks[1]),
            key=kw(ks[1]), x=encode(x), axis=ax)
    xf = mx.array([[1.5, -2.0], [3.25, 0.0], [7.0, 8.0]], mx.float16)
    add("permutation float16 rows", "permutation", lambda: mx.random.permutation(xf, key=ks[2]), key=kw(ks[2]), x=encode(xf), axis=0)
    add("permutation bad axis", "permutation", lambda: mx.random.permutation(mx.arange(3), axis=1, key=ks[0]),
        key=kw(ks[0]), x=encode(mx.arange(3)), axis=1)
    add("permutation 0-d", "permutation", lambda: mx.random.permutation(mx.array(3.0), key=ks[0]),
        key=kw(ks[0]), x=encode(mx.array(3.0)), axis=0)

    # the global key sequence: seed, then consecutive calls without a key
    for s in [0, 7, 2**40 + 3]:
        def seq():
            mx.random.seed(s)
            return [mx.random.normal(shape=[5]), mx.random.normal(shape=[2, 3], dtype=mx.float16),
                    mx.random.uniform(shape=[4]), mx.random.randint(0, 100, shape=[6]),
                    mx.random.bernoulli(0.5, shape=[8]), mx.random.split(mx.random.key(1), 2)]
        add(f"seeded sequence {s}", "seeded", seq, seed=s)

    # mx.erfinv (the unary op), every float dtype and an int input
    grid = np.concatenate([np.linspace(-1, 1, 41), [-1.0, 1.0, 0.0, -0.0, 1e-7, -1e-7, 0.999999, -0.9999999, 2.0, -3.0, np.nan, np.inf]])
    for dt in ["float32", "float16", "bfloat16", "float64"]:
        a = mx.array(grid.astype(np.float32)).astype(FDT[dt]) if dt != "float64" else mx.array(grid, mx.float64)
        add(f"erfinv {dt}", "erfinv", lambda: mx.erfinv(a), x=encode(a))
    u = mx.random.uniform(-1, 1, shape=[2000], key=ks[0])
    add("erfinv float32 2000 uniform draws", "erfinv", lambda: mx.erfinv(u), x=encode(u))
    xi = mx.array([0, 1, -1, 2], mx.int32)
    add("erfinv int32", "erfinv", lambda: mx.erfinv(xi), x=encode(xi))

    write(OUT, cases)


if __name__ == "__main__":
    main()
