#!/usr/bin/env python3
"""Goldens for core/tests/quantized_ops.rs: MLX's array-level quantization API
(quantize, dequantize, quantized_matmul, gather_qmm, to_fp8, from_fp8) from real MLX.

Run: /opt/oracle/bin/python core/tests/data/quantized_ops/gen_quantized_ops.py
Writes quantized_ops.json next to this script. Arrays are {"dtype", "shape", "hex"} with the
raw little-endian bytes (bf16 as its uint16 bits), so every value round-trips exactly.
Each case: {"name", "op", "args", "inputs": {name: array}, "views": {name: view},
"expect": {"outputs": [...]} | {"error": type, "message": str}}; qmm cases in f16/bf16 also
carry "absref" = |x| @ |dequantize(w)|ᵀ (f32) for the accumulation-error budget.
"""
import json
import os
import sys

import mlx.core as mx
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quantized_ops.json")
DT = {"float32": mx.float32, "float16": mx.float16, "bfloat16": mx.bfloat16,
      "float64": mx.float64, "int32": mx.int32, "uint32": mx.uint32, "uint8": mx.uint8,
      "int64": mx.int64}
rng = np.random.default_rng(20261123)


def enc(a):
    dtype = str(a.dtype).split(".")[-1]
    b = a.view(mx.uint16) if a.dtype == mx.bfloat16 else a
    return {"dtype": dtype, "shape": list(a.shape), "hex": np.ascontiguousarray(np.array(b)).tobytes().hex()}


def run(fn):
    try:
        out = fn()
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        mx.eval(*outs)
        return {"outputs": [enc(o) for o in outs]}
    except Exception as e:  # the oracle's failure is part of the expected behaviour
        return {"error": type(e).__name__, "message": str(e)}


def rand(shape, dtype="float32", scale=1.0):
    return mx.array((rng.standard_normal(shape) * scale).astype(np.float32)).astype(DT[dtype])


def view(a, v):
    if v == "swap_last":
        return mx.swapaxes(a, -1, -2)
    return a


cases = []


def add(name, op, args, inputs, fn, views=None, extra=None):
    c = {"name": name, "op": op, "args": args, "inputs": {k: enc(v) for k, v in inputs.items()},
         "views": views or {}, "expect": run(fn)}
    if extra:
        c.update(extra)
    cases.append(c)


MODES = [("affine", 4, 64), ("affine", 3, 32), ("affine", 8, 128), ("affine", 2, 64),
         ("affine", 1, 32), ("affine", 5, 32), ("affine", 6, 64),
         ("mxfp4", 4, 32), ("mxfp8", 8, 32), ("nvfp4", 4, 16)]

# ---- quantize + dequantize --------------------------------------------------------------
for mode, bits, gs in MODES:
    for dt in ["float32", "float16", "bfloat16"]:
        k = max(2 * gs, 64) if gs < 128 else 128
        w = rand((2, 3, k), dt)
        w = w.at[0, 0].add(mx.array(5.0, dtype=DT[dt]))  # an outlier row
        kw = {"group_size": gs, "bits": bits, "mode": mode}
        add(f"quantize_{mode}{bits}_g{gs}_{dt}_batch", "quantize", kw, {"w": w},
            lambda: mx.quantize(w, **kw))
        q = mx.quantize(w, **kw)
        ins = {"w": q[0], "scales": q[1]}
        if mode == "affine":
            ins["biases"] = q[2]
        # The default dtype, and one requested dtype (rotating through f32/f16/f64).
        for odt in [None, ["float32", "float16", "float64"][len(cases) % 3]]:
            dkw = dict(kw)
            if odt:
                dkw["dtype"] = DT[odt]
            add(f"dequantize_{mode}{bits}_g{gs}_{dt}_to_{odt or 'default'}", "dequantize",
                dict(kw, dtype=odt), ins,
                lambda: mx.dequantize(q[0], q[1], q[2] if mode == "affine" else None, **dkw))

# nvfp4 with a global scale, and a non-contiguous (transposed) weight.
for dt in ["float32", "bfloat16"]:
    w = rand((4, 64), dt, 3.0)
    g = mx.array(0.75, dtype=mx.float32)
    kw = {"group_size": 16, "bits": 4, "mode": "nvfp4"}
    add(f"quantize_nvfp4_global_scale_{dt}", "quantize", kw, {"w": w, "global_scale": g},
        lambda: mx.quantize(w, global_scale=g, **kw))
    q = mx.quantize(w, global_scale=g, **kw)
    for odt in [None, "bfloat16"]:
        dkw = dict(kw)
        if odt:
            dkw["dtype"] = DT[odt]
        add(f"dequantize_nvfp4_global_scale_{dt}_to_{odt or 'default'}", "dequantize",
            dict(kw, dtype=odt), {"w": q[0], "scales": q[1], "global_scale": g},
            lambda: mx.dequantize(q[0], q[1], global_scale=g, **dkw))
ws = rand((128, 6))
add("quantize_affine4_g64_transposed_view", "quantize", {"group_size": 64, "bits": 4, "mode": "affine"},
    {"w": ws}, lambda: mx.quantize(view(ws, "swap_last"), group_size=64, bits=4), views={"w": "swap_last"})
add("quantize_mxfp4_transposed_view", "quantize", {"group_size": 32, "bits": 4, "mode": "mxfp4"},
    {"w": ws}, lambda: mx.quantize(view(ws, "swap_last"), mode="mxfp4"), views={"w": "swap_last"})

# ---- quantized_matmul ---------------------------------------------------------------------
QMM_MODES = [("affine", 4, 64), ("affine", 3, 32), ("affine", 8, 32), ("mxfp4", 4, 32),
             ("mxfp8", 8, 32), ("nvfp4", 4, 16)]
# (label, x batch+M shape prefix, w batch)
SHAPES = [("x1d_w2d", (), None), ("x2d_w2d", (3,), None), ("x3d_w2d", (2, 3), None),
          ("x4d_w3d_bcast", (2, 1, 2), (3,)), ("x2d_w3d_first", (3,), (2,)),
          ("x3d_w3d_bcast1", (1, 2), (2,))]
si = 0
for mode, bits, gs in QMM_MODES:
    for dt in ["float32", "float16", "bfloat16"]:
        for transpose in [True, False]:
            label, xpre, wb = SHAPES[si % len(SHAPES)]
            si += 1
            k = 2 * gs if transpose else 24
            n = 8 if transpose else 2 * gs
            x = rand(xpre + (k,), dt)
            wshape = (n, k) if transpose else (k, n)
            if wb:
                wshape = wb + wshape
            wf = rand(wshape, dt)
            q = mx.quantize(wf, group_size=gs, bits=bits, mode=mode)
            ins = {"x": x, "w": q[0], "scales": q[1]}
            if mode == "affine":
                ins["biases"] = q[2]
            kw = {"transpose": transpose, "group_size": gs, "bits": bits, "mode": mode}
            b = q[2] if mode == "affine" else None
            fn = lambda: mx.quantized_matmul(x, q[0], q[1], b, **kw)
            extra = None
            if dt != "float32":
                # The budget reference |x| @ |ŵ| with ŵ as dequantize gives it in dt.
                wd = mx.dequantize(q[0], q[1], b, group_size=gs, bits=bits, mode=mode,
                                   dtype=DT[dt]).astype(mx.float32)
                wd = mx.abs(wd)
                xa = mx.abs(x.astype(mx.float32))
                ref = mx.matmul(xa, mx.swapaxes(wd, -1, -2) if transpose else wd)
                if wb and len(xpre) < 2:
                    ref = mx.matmul(xa, mx.swapaxes(wd[0], -1, -2) if transpose else wd[0])
                extra = {"absref": enc(ref.astype(mx.float32))}
            add(f"qmm_{mode}{bits}_g{gs}_{dt}_{'t' if transpose else 'n'}_{label}", "quantized_matmul",
                kw, ins, fn, extra=extra)

# Non-contiguous x (a transposed view), f32, both transposes.
for transpose in [True, False]:
    k, n = (64, 8) if transpose else (24, 64)
    xs = rand((k, 3))
    wf = rand((n, k) if transpose else (k, n))
    q = mx.quantize(wf, group_size=64, bits=4)
    kw = {"transpose": transpose, "group_size": 64, "bits": 4, "mode": "affine"}
    add(f"qmm_affine4_f32_{'t' if transpose else 'n'}_x_transposed_view", "quantized_matmul", kw,
        {"x": xs, "w": q[0], "scales": q[1], "biases": q[2]},
        lambda: mx.quantized_matmul(view(xs, "swap_last"), q[0], q[1], q[2], **kw), views={"x": "swap_last"})
# int x promoted to the scales' float type.
xi = mx.array(rng.integers(-3, 4, (2, 64)).astype(np.int32))
wf = rand((8, 64))
q = mx.quantize(wf)
add("qmm_affine_int32_x_promotes", "quantized_matmul", {"transpose": True, "group_size": 64, "bits": 4, "mode": "affine"},
    {"x": xi, "w": q[0], "scales": q[1], "biases": q[2]}, lambda: mx.quantized_matmul(xi, q[0], q[1], q[2]))

# ---- gather_qmm ---------------------------------------------------------------------------
W3 = rand((3, 8, 64))
q3 = mx.quantize(W3, group_size=32, bits=4)
q3f = mx.quantize(W3, mode="mxfp4")
W3n = rand((3, 64, 64))
q3n = mx.quantize(W3n, group_size=64, bits=4)
GATHER = [
    ("rhs_only", (2, 3, 64), None, [[0, 2], [1, 1]], True),
    ("lhs_only", (4, 3, 64), [3, 0, 1], None, True),
    ("both_bcast", (4, 3, 64), [[3], [0]], [1, 2, 0], True),
    ("x2d_rhs", (3, 64), None, [0, 2], True),
    ("rhs_sorted_int64", (1, 2, 64), None, [0, 0, 1, 2], True),
    ("rhs_only_nontransposed", (2, 3, 64), None, [[0, 2], [1, 1]], False),
]
for label, xshape, lhs, rhs, transpose in GATHER:
    for mode, qq, dt in [("affine", q3 if transpose else q3n, "float32"), ("affine", q3 if transpose else q3n, "bfloat16"),
                         ("mxfp4", q3f, "float32")]:
        if mode == "mxfp4" and not transpose:
            continue
        x = rand(xshape, dt)
        gs = 32 if mode == "mxfp4" else (32 if transpose else 64)
        kw = {"transpose": transpose, "group_size": gs, "bits": 4, "mode": mode,
              "sorted_indices": label.startswith("rhs_sorted")}
        ins = {"x": x, "w": qq[0], "scales": qq[1]}
        b = None
        if mode == "affine":
            ins["biases"] = qq[2]
            b = qq[2]
        idt = mx.int64 if "int64" in label else mx.uint32
        li = None if lhs is None else mx.array(lhs, dtype=idt)
        ri = None if rhs is None else mx.array(rhs, dtype=idt)
        if li is not None:
            ins["lhs_indices"] = li
        if ri is not None:
            ins["rhs_indices"] = ri
        extra = None
        if dt != "float32":
            wd = mx.abs(mx.dequantize(qq[0], qq[1], b, group_size=gs, bits=4, mode=mode, dtype=DT[dt]).astype(mx.float32))
            xa = mx.abs(x.astype(mx.float32))
            one = mx.gather_mm(xa, mx.swapaxes(wd, -1, -2) if transpose else wd, li, ri)
            extra = {"absref": enc(one)}
        add(f"gather_qmm_{mode}_{dt}_{label}", "gather_qmm", kw, ins,
            lambda: mx.gather_qmm(x, qq[0], qq[1], b, lhs_indices=li, rhs_indices=ri, **kw), extra=extra)

# ---- to_fp8 / from_fp8 ---------------------------------------------------------------------
# float64 is left out: MLX 0.32.4 reads float64 buffers as if they were float32 here
# (to_fp8 of [1.0, 2.5] gives [0, 63]); we convert the values.
for dt in ["float32", "float16", "bfloat16"]:
    x = (rand((3, 5), "float32", 100.0)).astype(DT[dt])
    add(f"to_fp8_{dt}", "to_fp8", {}, {"x": x}, lambda: mx.to_fp8(x))
codes = mx.array(np.arange(256, dtype=np.uint8).reshape(16, 16))
for dt in ["bfloat16", "float32", "float16"]:
    add(f"from_fp8_all_codes_{dt}", "from_fp8", {"dtype": dt}, {"x": codes},
        lambda: mx.from_fp8(codes, dtype=DT[dt]))

# ---- errors ----------------------------------------------------------------------------------
w = rand((4, 64))
q = mx.quantize(w)
qf = mx.quantize(w, mode="mxfp4")
x = rand((2, 64))
E = [
    ("quantize_bits7", "quantize", {"bits": 7, "mode": "affine"}, {"w": w}, lambda: mx.quantize(w, bits=7)),
    ("quantize_group16_affine", "quantize", {"group_size": 16, "mode": "affine"}, {"w": w}, lambda: mx.quantize(w, group_size=16)),
    ("quantize_1d", "quantize", {"mode": "affine"}, {"w": w[0]}, lambda: mx.quantize(w[0])),
    ("quantize_int", "quantize", {"mode": "affine"}, {"w": w.astype(mx.int32)}, lambda: mx.quantize(w.astype(mx.int32))),
    ("quantize_float64", "quantize", {"mode": "affine"}, {"w": w.astype(mx.float64)}, lambda: mx.quantize(w.astype(mx.float64))),
    ("quantize_k_not_divisible", "quantize", {"group_size": 128, "mode": "affine"}, {"w": w}, lambda: mx.quantize(w, group_size=128)),
    ("quantize_bad_mode", "quantize", {"mode": "foo"}, {"w": w}, lambda: mx.quantize(w, mode="foo")),
    ("quantize_mxfp4_group64", "quantize", {"group_size": 64, "mode": "mxfp4"}, {"w": w}, lambda: mx.quantize(w, group_size=64, mode="mxfp4")),
    ("quantize_global_scale_affine", "quantize", {"mode": "affine"}, {"w": w, "global_scale": mx.array(1.0)},
     lambda: mx.quantize(w, global_scale=mx.array(1.0))),
    ("quantize_global_scale_vector", "quantize", {"mode": "nvfp4"}, {"w": w, "global_scale": mx.array([1.0, 2.0])},
     lambda: mx.quantize(w, mode="nvfp4", global_scale=mx.array([1.0, 2.0]))),
    ("dequantize_w_not_uint32", "dequantize", {"mode": "affine"}, {"w": q[0].astype(mx.int32), "scales": q[1], "biases": q[2]},
     lambda: mx.dequantize(q[0].astype(mx.int32), q[1], q[2])),
    ("dequantize_scales_mismatch", "dequantize", {"mode": "affine"}, {"w": q[0], "scales": q[1][:, :0], "biases": q[2][:, :0]},
     lambda: mx.dequantize(q[0], q[1][:, :0], q[2][:, :0])),
    ("dequantize_missing_biases", "dequantize", {"mode": "affine"}, {"w": q[0], "scales": q[1]},
     lambda: mx.dequantize(q[0], q[1])),
    ("dequantize_biases_for_mxfp4", "dequantize", {"mode": "mxfp4"}, {"w": qf[0], "scales": qf[1], "biases": qf[1]},
     lambda: mx.dequantize(qf[0], qf[1], qf[1], mode="mxfp4")),
    ("dequantize_int_dtype", "dequantize", {"mode": "affine", "dtype": "int32"}, {"w": q[0], "scales": q[1], "biases": q[2]},
     lambda: mx.dequantize(q[0], q[1], q[2], dtype=mx.int32)),
    ("qmm_k_mismatch", "quantized_matmul", {"mode": "affine"}, {"x": x[:, :32], "w": q[0], "scales": q[1], "biases": q[2]},
     lambda: mx.quantized_matmul(x[:, :32], q[0], q[1], q[2])),
    ("qmm_w_not_uint32", "quantized_matmul", {"mode": "affine"}, {"x": x, "w": q[0].astype(mx.int32), "scales": q[1], "biases": q[2]},
     lambda: mx.quantized_matmul(x, q[0].astype(mx.int32), q[1], q[2])),
    ("qmm_scales_biases_shape", "quantized_matmul", {"mode": "affine"}, {"x": x, "w": q[0], "scales": q[1], "biases": q[2][:2]},
     lambda: mx.quantized_matmul(x, q[0], q[1], q[2][:2])),
    ("qmm_batch_not_broadcastable", "quantized_matmul", {"mode": "affine", "group_size": 32},
     {"x": rand((2, 5, 64)), "w": q3[0], "scales": q3[1], "biases": q3[2]},
     lambda: mx.quantized_matmul(rand((2, 5, 64)), q3[0], q3[1], q3[2], group_size=32)),
    ("qmm_mxfp4_float_scales", "quantized_matmul", {"mode": "mxfp4"}, {"x": x, "w": qf[0], "scales": q[1]},
     lambda: mx.quantized_matmul(x, qf[0], q[1], mode="mxfp4")),
    ("qmm_float64_x", "quantized_matmul", {"mode": "affine"}, {"x": x.astype(mx.float64), "w": q[0], "scales": q[1], "biases": q[2]},
     lambda: mx.quantized_matmul(x.astype(mx.float64), q[0], q[1], q[2])),
    ("gather_qmm_x1d", "gather_qmm", {"mode": "affine", "group_size": 32}, {"x": x[0], "w": q3[0], "scales": q3[1], "biases": q3[2],
                                                        "rhs_indices": mx.array([0, 2])},
     lambda: mx.gather_qmm(x[0], q3[0], q3[1], q3[2], rhs_indices=mx.array([0, 2]), group_size=32)),
    ("gather_qmm_float_indices", "gather_qmm", {"mode": "affine", "group_size": 32},
     {"x": x, "w": q3[0], "scales": q3[1], "biases": q3[2], "rhs_indices": mx.array([0.0])},
     lambda: mx.gather_qmm(x, q3[0], q3[1], q3[2], rhs_indices=mx.array([0.0]), group_size=32)),
    ("to_fp8_int", "to_fp8", {}, {"x": mx.ones((3,), dtype=mx.int32)}, lambda: mx.to_fp8(mx.ones((3,), dtype=mx.int32))),
    ("from_fp8_uint32", "from_fp8", {"dtype": "bfloat16"}, {"x": mx.ones((3,), dtype=mx.uint32)},
     lambda: mx.from_fp8(mx.ones((3,), dtype=mx.uint32))),
    ("from_fp8_int_dtype", "from_fp8", {"dtype": "int32"}, {"x": mx.ones((3,), dtype=mx.uint8)},
     lambda: mx.from_fp8(mx.ones((3,), dtype=mx.uint8), dtype=mx.int32)),
]
for name, op, args, ins, fn in E:
    add("error_" + name, op, args, ins, fn)

with open(OUT, "w") as f:
    json.dump({"mlx_version": mx.__version__, "cases": cases}, f, separators=(",", ":"))
print(f"wrote {len(cases)} cases, {os.path.getsize(OUT)} bytes to {os.path.relpath(OUT)}")
