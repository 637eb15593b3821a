#!/usr/bin/env python3
"""Goldens for core/tests/mlx_quant.rs from real MLX (0.32.4 CPU wheel).

Run: /opt/oracle/bin/python core/tests/data/mlxquant/gen_mlxquant.py
Writes mlxquant.json next to this script. Arrays are stored as hex strings of their raw
little-endian bytes (f32/f16/bf16 bit patterns, uint32 words, uint8 codes).
"""
import json
import os

import mlx.core as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlxquant.json")
DT = {"float32": mx.float32, "float16": mx.float16, "bfloat16": mx.bfloat16}


def hx(a):
    """Raw bytes of an mx/numpy array as hex (bf16 viewed as uint16)."""
    if isinstance(a, mx.array):
        if a.dtype == mx.bfloat16:
            a = a.view(mx.uint16)
        a = np.array(a)
    return np.ascontiguousarray(a).tobytes().hex()


def weights(rng, rows, k, dtype):
    huge, tiny = (3e3, 1e-6) if dtype == "float16" else (1e30, 1e-30)
    w = rng.standard_normal((rows, k)).astype(np.float32)
    w[0] = 0.0                                   # all zeros
    w[1] = 0.37                                  # constant
    w[2] = -np.abs(w[2])                         # negative only
    w[3] = np.abs(w[3])                          # positive only
    w[4] *= huge                                 # huge
    w[5] *= tiny                                 # tiny
    w[7] = rng.integers(-24, 25, k) / 4.0        # fp4 midpoints / exact codes
    w[7, ::16] = 6.0                             # amax 6 -> scale exactly 1 per group
    return mx.array(w).astype(DT[dtype])


def case(rng, mode, bits, gs, dtype, global_scale=None):
    rows, k = 8, (2 * gs if gs <= 32 else gs)
    w = weights(rng, rows, k, dtype)
    kw = {"group_size": gs, "bits": bits, "mode": mode}
    if global_scale is not None:
        kw["global_scale"] = mx.array(global_scale, dtype=mx.float32)
    q = mx.quantize(w, **kw)
    c = {"mode": mode, "bits": bits, "group_size": gs, "dtype": dtype, "rows": rows, "k": k,
         "global_scale": global_scale, "w": hx(w), "wq": hx(q[0]), "scales": hx(q[1]),
         "biases": hx(q[2]) if mode == "affine" else None}
    dkw = dict(kw)
    dq = mx.dequantize(*q, **dkw)               # default dtype
    c["dq_dtype"] = str(dq.dtype).split(".")[-1]
    c["dq"] = hx(dq)
    if mode != "affine":  # affine: dtype=float32 is a plain astype of dq
        c["dq32"] = hx(mx.dequantize(*q, dtype=mx.float32, **dkw))
    # quantized_matmul (global scale is not an argument of quantized_matmul)
    qkw = {"group_size": gs, "bits": bits, "mode": mode}
    extra = (q[2],) if mode == "affine" else ()
    m = 3
    xt = mx.array(rng.standard_normal((m, k)).astype(np.float32)).astype(DT[dtype])
    yt = mx.quantized_matmul(xt, q[0], q[1], *extra, transpose=True, **qkw)
    xn = mx.array(rng.standard_normal((m, rows)).astype(np.float32)).astype(DT[dtype])
    yn = mx.quantized_matmul(xn, q[0], q[1], *extra, transpose=False, **qkw)
    assert yt.dtype == DT[dtype] and yn.dtype == DT[dtype]
    c.update({"m": m, "xt": hx(xt), "yt": hx(yt), "xn": hx(xn), "yn": hx(yn)})
    return c


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return str(e)
    return None


def main():
    rng = np.random.default_rng(20260822)
    cases = []
    for dtype in DT:
        for gs in (32, 64, 128):
            for bits in (1, 2, 3, 4, 5, 6, 8):
                cases.append(case(rng, "affine", bits, gs, dtype))
        cases.append(case(rng, "mxfp4", 4, 32, dtype))
        cases.append(case(rng, "mxfp8", 8, 32, dtype))
        cases.append(case(rng, "nvfp4", 4, 16, dtype))
        cases.append(case(rng, "nvfp4", 4, 16, dtype, global_scale=3.5))

    # to_fp8 / from_fp8
    x = (rng.standard_normal(2048) * 100).astype(np.float32)
    specials = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 448.0, -448.0, 464.0, 463.99997,
                465.0, 480.0, 2.0 ** -6, 2.0 ** -7, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11,
                2.0 ** -10 + 2.0 ** -30, 1e-45, 1e30, -1e30, 0.0009765625, 17.0, 18.0, 19.0]
    x[:len(specials)] = specials
    x[100:300] = rng.standard_normal(200) * 1e-2   # subnormal range
    fp8 = {"x_float32": hx(x), "to_float32": hx(mx.to_fp8(mx.array(x)))}
    for name in ("float16", "bfloat16"):
        xa = mx.array(x).astype(DT[name])
        fp8["x_" + name] = hx(xa)
        fp8["to_" + name] = hx(mx.to_fp8(xa))
    codes = mx.array(np.arange(256, dtype=np.uint8))
    for name, dt in DT.items():
        fp8["from_" + name] = hx(mx.from_fp8(codes, dtype=dt))

    # error messages (call -> message); the Rust test replays the same arguments
    z = lambda shape, dt=mx.float32: mx.zeros(shape, dtype=dt)  # noqa: E731
    errors = []

    def qerr(shape, dtype="float32", mode="affine", gs=None, bits=None, gscale=False):
        kw = {"mode": mode}
        if gs is not None:
            kw["group_size"] = gs
        if bits is not None:
            kw["bits"] = bits
        if gscale:
            kw["global_scale"] = mx.array(1.0)
        msg = err(lambda: mx.quantize(z(shape, getattr(mx, dtype)), **kw))
        errors.append({"op": "quantize", "shape": list(shape), "dtype": dtype, "mode": mode,
                       "group_size": gs, "bits": bits, "global_scale": gscale, "msg": msg})

    qerr((4, 64), bits=7)
    qerr((4, 64), bits=0)
    qerr((4, 64), bits=9)
    qerr((4, 64), gs=16)
    qerr((4, 48), gs=16)
    qerr((4, 48), gs=32)
    qerr((4, 40), gs=16)
    qerr((4, 64), dtype="int32")
    qerr((4, 64), dtype="uint8")
    qerr((64,))
    qerr((4, 64), mode="foo")
    qerr((4, 64), mode="mxfp4", gs=64)
    qerr((4, 64), mode="mxfp4", bits=8)
    qerr((4, 64), mode="mxfp8", bits=4)
    qerr((4, 64), mode="nvfp4", gs=32)
    qerr((4, 64), mode="nvfp4", bits=8)
    qerr((4, 64), mode="affine", gscale=True)
    qerr((4, 64), mode="mxfp8", gscale=True)
    qerr((4, 64), mode="nvfp4", gscale=True)   # fine: msg None
    qerr((2, 3, 64), bits=8)                   # fine: msg None

    json.dump({"mlx_version": mx.__version__, "cases": cases, "fp8": fp8, "errors": errors},
              open(OUT, "w"), separators=(",", ":"))
    print(f"wrote {OUT}: {os.path.getsize(OUT)} bytes, {len(cases)} cases")


main()
