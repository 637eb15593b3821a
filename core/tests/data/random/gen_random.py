#!/usr/bin/env python3
"""Goldens for core/tests/random_kernels.rs, drawn from real MLX (run with /opt/oracle/bin/python).

Every float sample is stored as its raw bit pattern (uint32 for float32, uint16 for
float16/bfloat16) so the Rust tests can assert bit-identity. The 2^20-sample normal run is
stored as a 64-bit FNV-1a hash of its little-endian bytes (the samples would be 4 MB).
Writes random.json next to this script.
"""
import json
import os

import mlx.core as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random.json")
SEEDS = [0, 1, 42, 2**40 + 7, 2**64 - 1]
FDT = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16}
BITS_VIEW = {"f32": mx.uint32, "f16": mx.uint16, "bf16": mx.uint16}
IDT = {"i8": mx.int8, "i16": mx.int16, "i32": mx.int32, "i64": mx.int64,
       "u8": mx.uint8, "u16": mx.uint16, "u32": mx.uint32, "u64": mx.uint64, "bool": mx.bool_}


def fbits(a, dt):
    return [int(v) for v in np.array(a.view(BITS_VIEW[dt])).ravel()]


def ints(a):
    return [int(v) for v in np.array(a).ravel()]


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:  # fine for 4 MB
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    g = {"mlx_version": mx.__version__}
    g["key"] = [{"seed": s, "key": ints(mx.random.key(s))} for s in SEEDS]
    g["split"] = [{"seed": s, "num": num, "keys": ints(mx.random.split(mx.random.key(s), num=num))}
                  for s in [3, 42] for num in [1, 2, 3, 5, 8]]
    g["uniform"] = []
    for dt in FDT:
        for s in [0, 2**40 + 7]:
            for n in [1, 3, 5, 7, 64, 257]:
                for lo, hi in [(0.0, 1.0), (-3.5, 2.25), (10.0, 10.5), (0.1, 0.7)]:
                    a = mx.random.uniform(lo, hi, shape=(n,), dtype=FDT[dt], key=mx.random.key(s))
                    g["uniform"].append({"dtype": dt, "seed": s, "n": n, "low": lo, "high": hi,
                                         "bits": fbits(a, dt)})
    g["normal"] = []
    for dt in FDT:
        for s in [0, 2**40 + 7]:
            for loc, scale in [(None, None), (0.5, None), (None, 2.5), (-1.25, 0.3)]:
                n = 1025 if dt == "f32" else 513
                kw = {}
                if loc is not None:
                    kw["loc"] = loc
                if scale is not None:
                    kw["scale"] = scale
                a = mx.random.normal(shape=(n,), dtype=FDT[dt], key=mx.random.key(s), **kw)
                g["normal"].append({"dtype": dt, "seed": s, "n": n, "loc": loc, "scale": scale,
                                    "bits": fbits(a, dt)})
    big = np.array(mx.random.normal(shape=(1 << 20,), key=mx.random.key(0))).view(np.uint32)
    g["normal_big"] = {"seed": 0, "n": 1 << 20, "fnv1a64": fnv1a64(big.astype("<u4").tobytes())}
    g["truncated_normal"] = []
    for dt in FDT:
        for s in [1, 9]:
            for lo, hi in [(-1.0, 2.0), (0.5, 3.0), (-2.0, -1.5), (-float("inf"), 0.0)]:
                a = mx.random.truncated_normal(lo, hi, shape=(513,), dtype=FDT[dt], key=mx.random.key(s))
                g["truncated_normal"].append({"dtype": dt, "seed": s, "lower": str(lo), "upper": str(hi),
                                              "n": 513, "bits": fbits(a, dt)})
    g["gumbel"] = [{"dtype": dt, "seed": s, "n": 777,
                    "bits": fbits(mx.random.gumbel(shape=(777,), dtype=FDT[dt], key=mx.random.key(s)), dt)}
                   for dt in FDT for s in [2, 11]]
    g["laplace"] = [{"dtype": dt, "seed": s, "n": 1025, "loc": loc, "scale": sc,
                     "bits": fbits(mx.random.laplace(shape=(1025,), dtype=FDT[dt], loc=loc, scale=sc,
                                                     key=mx.random.key(s)), dt)}
                    for dt in FDT for s in [3, 12] for loc, sc in [(0.0, 1.0), (1.5, 0.25)]]
    g["bernoulli"] = []
    for s in [4, 13]:
        for p in [0.5, 0.3, 0.0, 1.0, 1e-9]:
            a = mx.random.bernoulli(p, shape=(999,), key=mx.random.key(s))
            g["bernoulli"].append({"seed": s, "p": [p], "n": 999, "out": ints(a)})
        pv = np.linspace(0, 1, 257).astype(np.float32)
        a = mx.random.bernoulli(mx.array(pv), key=mx.random.key(s))
        g["bernoulli"].append({"seed": s, "p": [float(v) for v in pv], "n": 257, "out": ints(a)})
        ph = np.linspace(0, 1, 100).astype(np.float16)
        a = mx.random.bernoulli(mx.array(ph), key=mx.random.key(s))
        g["bernoulli"].append({"seed": s, "p": [float(v) for v in ph], "n": 100, "out": ints(a)})
    g["randint"] = []
    cases = [(-7, 100, "i32"), (0, 256, "u8"), (-128, 128, "i8"), (0, 1000, "i8"), (5, 5, "i32"),
             (9, 5, "i32"), (-2**31, 2**31 - 1, "i32"), (0, 2**31 - 1, "i64"), (0, 2**31 - 1, "u32"),
             (-5, 5, "u32"), (0, 65536, "u16"), (-300, 300, "i16"), (3, 2**30, "i64"), (0, 10, "u64"),
             (0, 2, "bool"), (-2**31, 0, "i32"), (16777215, 16777300, "i32")]
    for s in [5, 14]:
        for lo, hi, dt in cases:
            a = mx.random.randint(lo, hi, shape=(301,), dtype=IDT[dt], key=mx.random.key(s))
            g["randint"].append({"seed": s, "low": lo, "high": hi, "dtype": dt, "n": 301, "out": ints(a)})
    g["categorical"] = []
    rng = np.random.default_rng(0)
    logit_sets = {
        "small": np.array([0.1, 2.0, -1.0, 0.5], np.float32),
        "wide": (rng.standard_normal(1000) * 3).astype(np.float32),
        "neginf": np.array([-np.inf, 0.0, -np.inf, 1.0, 1.0], np.float32),
        "allinf": np.array([-np.inf, np.inf, 3.0, np.inf], np.float32),
    }
    for name, lg in logit_sets.items():
        for s in [6, 15]:
            for shape in ["vector", "row"]:
                x = mx.array(lg if shape == "vector" else lg[None])
                for ns in [None, 1, 33]:
                    a = mx.random.categorical(x, num_samples=ns, key=mx.random.key(s))
                    g["categorical"].append({"seed": s, "logits": [str(v) for v in lg], "rows": None if shape == "vector" else 1,
                                             "classes": len(lg), "num_samples": ns, "out": ints(a)})
    m = (rng.standard_normal((5, 37)) * 2).astype(np.float32)
    m[2, 3] = np.inf
    for s in [6, 15]:
        for ns in [None, 1, 9]:
            a = mx.random.categorical(mx.array(m), num_samples=ns, key=mx.random.key(s))
            g["categorical"].append({"seed": s, "logits": [str(v) for v in m.ravel()], "rows": 5, "classes": 37,
                                     "num_samples": ns, "out": ints(a)})
    g["permutation"] = [{"seed": s, "n": n, "out": ints(mx.random.permutation(n, key=mx.random.key(s)))}
                        for s in [7, 16] for n in [1, 2, 10, 1000]]
    with open(OUT, "w") as f:
        json.dump(g, f, separators=(",", ":"))
    print(OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
