"""Golden outputs of real MLX 0.32 (CPU) for mx.fast: rms_norm, layer_norm, rope and
scaled_dot_product_attention (MLX's CPU evaluates their composed fallbacks).
Run: /opt/oracle/bin/python gen_fast.py  (writes fast.json)

A case: {"name", "op", "inputs": [array], "args": {...}, "output"|"error"}. Optional inputs
(weight, bias, freqs, mask) are named in args by their index in "inputs"."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx
import numpy as np
from golden import encode, run, write

mx.set_default_device(mx.cpu)
rng = np.random.default_rng(11)
cases = []


def arr(shape, dtype=mx.float32, lo=-2.0, hi=2.0):
    a = np.round(rng.uniform(lo, hi, size=shape) * 16) / 16
    return mx.array(a.astype(np.float32)).astype(dtype)


def case(name, op, inputs, fn, args):
    c = {"name": name, "op": op, "inputs": [encode(a) for a in inputs], "args": args}
    c.update(run(lambda: fn(*inputs)))
    cases.append(c)


F = [("f32", mx.float32), ("f16", mx.float16), ("bf16", mx.bfloat16)]

# ---- rms_norm: args {"eps", "weight": index or null}
for tag, dt in F:
    case(f"rms_norm_weight_{tag}", "rms_norm", [arr((2, 3, 8), dt), arr((8,), dt)],
         lambda x, w: mx.fast.rms_norm(x, w, 1e-5), {"eps": 1e-5, "weight": 1})
    case(f"rms_norm_noweight_{tag}", "rms_norm", [arr((4, 16), dt)],
         lambda x: mx.fast.rms_norm(x, None, 1e-6), {"eps": 1e-6, "weight": None})
case("rms_norm_mixed_f16_x_f32_w", "rms_norm", [arr((3, 8), mx.float16), arr((8,))],
     lambda x, w: mx.fast.rms_norm(x, w, 1e-5), {"eps": 1e-5, "weight": 1})
case("rms_norm_1d", "rms_norm", [arr((5,))], lambda x: mx.fast.rms_norm(x, None, 1e-5), {"eps": 1e-5, "weight": None})
case("rms_norm_err_weight_size", "rms_norm", [arr((2, 8)), arr((4,))], lambda x, w: mx.fast.rms_norm(x, w, 1e-5), {"eps": 1e-5, "weight": 1})
case("rms_norm_err_weight_rank", "rms_norm", [arr((2, 8)), arr((1, 8))], lambda x, w: mx.fast.rms_norm(x, w, 1e-5), {"eps": 1e-5, "weight": 1})
case("rms_norm_err_int", "rms_norm", [mx.array([[1, 2]], dtype=mx.int32)], lambda x: mx.fast.rms_norm(x, None, 1e-5), {"eps": 1e-5, "weight": None})
case("rms_norm_err_scalar", "rms_norm", [mx.array(1.0)], lambda x: mx.fast.rms_norm(x, None, 1e-5), {"eps": 1e-5, "weight": None})

# ---- layer_norm: args {"eps", "weight", "bias"}
for tag, dt in F:
    case(f"layer_norm_wb_{tag}", "layer_norm", [arr((2, 3, 8), dt), arr((8,), dt), arr((8,), dt)],
         lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5), {"eps": 1e-5, "weight": 1, "bias": 2})
case("layer_norm_plain", "layer_norm", [arr((3, 10))], lambda x: mx.fast.layer_norm(x, None, None, 1e-5),
     {"eps": 1e-5, "weight": None, "bias": None})
case("layer_norm_weight_only", "layer_norm", [arr((3, 10)), arr((10,))], lambda x, w: mx.fast.layer_norm(x, w, None, 1e-4),
     {"eps": 1e-4, "weight": 1, "bias": None})
case("layer_norm_bias_only", "layer_norm", [arr((3, 10)), arr((10,))], lambda x, b: mx.fast.layer_norm(x, None, b, 1e-4),
     {"eps": 1e-4, "weight": None, "bias": 1})
case("layer_norm_err_bias", "layer_norm", [arr((3, 10)), arr((9,))], lambda x, b: mx.fast.layer_norm(x, None, b, 1e-4),
     {"eps": 1e-4, "weight": None, "bias": 1})

# ---- rope: args {"dims", "traditional", "base" (or null), "scale", "offset": int or {"input": i}, "freqs": index or null}
def rope_fn(a):
    def f(*xs):
        off = a["offset"] if isinstance(a["offset"], int) else xs[a["offset"]["input"]]
        freqs = xs[a["freqs"]] if a.get("freqs") is not None else None
        return mx.fast.rope(xs[0], a["dims"], traditional=a["traditional"], base=a["base"], scale=a["scale"],
                            offset=off, freqs=freqs)
    return f


for name, shape, dt, a in [
    ("rope_basic", (1, 2, 5, 8), mx.float32, {"dims": 8, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
    ("rope_traditional", (1, 2, 5, 8), mx.float32, {"dims": 8, "traditional": True, "base": 10000.0, "scale": 1.0, "offset": 3}),
    ("rope_partial_dims", (2, 1, 4, 12), mx.float32, {"dims": 6, "traditional": False, "base": 500.0, "scale": 0.5, "offset": 7}),
    ("rope_partial_trad", (2, 1, 4, 12), mx.float32, {"dims": 6, "traditional": True, "base": 500.0, "scale": 0.5, "offset": 7}),
    ("rope_3d", (2, 6, 8), mx.float32, {"dims": 8, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 100}),
    ("rope_5d", (1, 2, 2, 3, 4), mx.float32, {"dims": 4, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 1}),
    ("rope_f16", (1, 2, 5, 8), mx.float16, {"dims": 8, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 2}),
    ("rope_bf16_trad", (1, 2, 5, 8), mx.bfloat16, {"dims": 8, "traditional": True, "base": 10000.0, "scale": 1.0, "offset": 2}),
    ("rope_err_dims_odd", (1, 2, 5, 8), mx.float32, {"dims": 5, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
    ("rope_err_dims_big", (1, 2, 5, 8), mx.float32, {"dims": 10, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
    ("rope_err_rank", (5, 8), mx.float32, {"dims": 8, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
]:
    case(name, "rope", [arr(shape, dt)], rope_fn(a), a)
a = {"dims": 8, "traditional": False, "base": None, "scale": 1.0, "offset": 1, "freqs": 1}
case("rope_freqs", "rope", [arr((1, 1, 4, 8)), mx.array([1.0, 4.0, 16.0, 64.0])], rope_fn(a), a)
a = {"dims": 8, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": {"input": 1}}
case("rope_offset_array", "rope", [arr((3, 2, 4, 8)), mx.array([0, 5, 9], dtype=mx.int32)], rope_fn(a), a)
case("rope_offset_scalar_array", "rope", [arr((2, 2, 4, 8)), mx.array(4, dtype=mx.int32)], rope_fn(a), a)
case("rope_err_offset_float", "rope", [arr((2, 2, 4, 8)), mx.array(4.0)], rope_fn(a), a)
a = {"dims": 8, "traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0, "freqs": 1}
case("rope_err_base_and_freqs", "rope", [arr((1, 1, 4, 8)), mx.array([1.0, 4.0, 16.0, 64.0])], rope_fn(a), a)

# ---- sdpa: args {"scale", "mask": null | "causal" | index}
def sdpa_fn(a):
    def f(q, k, v, *rest):
        m = a["mask"]
        mask = rest[0] if isinstance(m, int) else m
        return mx.fast.scaled_dot_product_attention(q, k, v, scale=a["scale"], mask=mask)
    return f


def qkv(b, hq, hkv, l, s, d, dt=mx.float32, dv=None):
    return [arr((b, hq, l, d), dt), arr((b, hkv, s, d), dt), arr((b, hkv, s, dv or d), dt)]


for name, ins, a in [
    ("sdpa_nomask", qkv(1, 2, 2, 3, 5, 8), {"scale": 0.35, "mask": None}),
    ("sdpa_causal_square", qkv(2, 2, 2, 4, 4, 8), {"scale": 0.35, "mask": "causal"}),
    ("sdpa_causal_offset", qkv(1, 2, 2, 2, 6, 4), {"scale": 0.5, "mask": "causal"}),
    ("sdpa_gqa", qkv(1, 4, 2, 3, 5, 8), {"scale": 0.35, "mask": None}),
    ("sdpa_mqa_causal", qkv(1, 4, 1, 3, 3, 8), {"scale": 0.35, "mask": "causal"}),
    ("sdpa_dv_differs", qkv(1, 2, 2, 3, 5, 8, dv=6), {"scale": 0.35, "mask": None}),
    ("sdpa_f16", qkv(1, 2, 2, 3, 5, 8, mx.float16), {"scale": 0.35, "mask": "causal"}),
    ("sdpa_bf16", qkv(1, 2, 1, 3, 5, 8, mx.bfloat16), {"scale": 0.35, "mask": None}),
]:
    case(name, "sdpa", ins, sdpa_fn(a), a)
a = {"scale": 0.35, "mask": 3}
bm = mx.array(rng.uniform(size=(3, 5)) > 0.4)
case("sdpa_bool_mask", "sdpa", qkv(1, 2, 2, 3, 5, 8) + [bm], sdpa_fn(a), a)
case("sdpa_bool_mask_gqa_heads", "sdpa", qkv(1, 4, 2, 3, 5, 8) + [mx.array(rng.uniform(size=(1, 4, 3, 5)) > 0.5)], sdpa_fn(a), a)
case("sdpa_bool_mask_all_false_row", "sdpa", qkv(1, 1, 1, 2, 3, 4) + [mx.array([[True, False, True], [False, False, False]])], sdpa_fn(a), a)
case("sdpa_additive_mask", "sdpa", qkv(1, 2, 2, 3, 5, 8) + [arr((3, 5))], sdpa_fn(a), a)
case("sdpa_additive_mask_gqa", "sdpa", qkv(2, 4, 2, 3, 5, 8) + [arr((2, 1, 3, 5))], sdpa_fn(a), a)
case("sdpa_additive_f16", "sdpa", qkv(1, 2, 2, 3, 5, 8, mx.float16) + [arr((3, 5), mx.float16)], sdpa_fn(a), a)
case("sdpa_err_mask_type", "sdpa", qkv(1, 2, 2, 3, 5, 8, mx.float16) + [arr((3, 5))], sdpa_fn(a), a)
a = {"scale": 1.0, "mask": None}
case("sdpa_err_rank", "sdpa", [arr((2, 3, 8)), arr((2, 3, 8)), arr((2, 3, 8))], sdpa_fn(a), a)
case("sdpa_err_heads", "sdpa", qkv(1, 3, 2, 3, 5, 8), sdpa_fn(a), a)
case("sdpa_err_head_dim", "sdpa", [arr((1, 2, 3, 8)), arr((1, 2, 5, 4)), arr((1, 2, 5, 4))], sdpa_fn(a), a)
case("sdpa_err_int", "sdpa", [mx.zeros((1, 1, 2, 2), mx.int32)] * 3, sdpa_fn(a), a)

write(os.path.join(os.path.dirname(__file__), "fast.json"), cases)
