"""Golden cases for the convolution family (core/tests/conv_family.rs) from real MLX 0.32: conv3d,
conv_transpose1d/2d/3d and convolve — float32 values over strides, paddings (negative too),
dilations, output paddings, groups and odd sizes; float16/bfloat16 and integer-weight
promotion; and MLX's errors (bad ndim, channel/group mismatch, non-positive stride/dilation,
too-small input, non-float input, bad convolve inputs/mode).
Run: /opt/oracle/bin/python core/tests/data/conv_family/gen_conv_family.py
Each case: {name, op, inputs: [encoded arrays], args: {...}, and the oracle's output or error}."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx  # noqa: E402
import numpy as np  # noqa: E402
from golden import encode, run, write  # noqa: E402

rng = np.random.default_rng(4)
cases = []


def rand(*shape, dtype=mx.float32):
    return mx.array(rng.standard_normal(shape).astype(np.float32)).astype(dtype)


def case(name, op, inputs, fn, **args):
    c = {"name": name, "op": op, "inputs": [encode(x) for x in inputs], "args": args}
    c.update(run(lambda: fn(*inputs)))
    cases.append(c)


def tup(v, n):
    return list(v) if isinstance(v, (tuple, list)) else [v] * n


# ---- conv3d: (x shape, w shape, stride, padding, dilation, groups) ----
C3 = [
    ("basic", (1, 4, 4, 4, 2), (3, 2, 2, 2, 2), 1, 0, 1, 1),
    ("stride_pad", (2, 5, 6, 4, 3), (2, 3, 2, 3, 3), (2, 1, 3), (1, 0, 2), 1, 1),
    ("dilation", (1, 7, 5, 6, 1), (2, 2, 3, 2, 1), 1, (0, 1, 1), (2, 1, 3), 1),
    ("odd", (1, 3, 5, 7, 3), (1, 3, 3, 3, 3), (1, 2, 2), 1, 1, 1),
    ("neg_pad", (1, 6, 6, 6, 2), (2, 2, 2, 2, 2), 1, -1, 1, 1),
    ("1x1x1", (2, 2, 3, 4, 5), (4, 1, 1, 1, 5), 1, 0, 1, 1),
    ("one_out_channel", (1, 5, 4, 6, 2), (1, 3, 3, 3, 2), 1, 1, 1, 1),
]
for name, xs, ws, s, p, d, g in C3:
    case(f"conv3d_{name}", "conv3d", [rand(*xs), rand(*ws)],
         lambda x, w, s=s, p=p, d=d, g=g: mx.conv3d(x, w, s, p, d, g),
         stride=tup(s, 3), padding=tup(p, 3), dilation=tup(d, 3), groups=g)
case("conv3d_f16", "conv3d", [rand(1, 3, 4, 3, 2, dtype=mx.float16), rand(2, 2, 2, 2, 2, dtype=mx.float16)],
     lambda x, w: mx.conv3d(x, w), stride=[1] * 3, padding=[0] * 3, dilation=[1] * 3, groups=1)
case("conv3d_int_weight", "conv3d", [rand(1, 3, 3, 3, 2), mx.array(rng.integers(-3, 4, (2, 2, 2, 2, 2)).astype(np.int32))],
     lambda x, w: mx.conv3d(x, w), stride=[1] * 3, padding=[0] * 3, dilation=[1] * 3, groups=1)
E3 = [
    ("groups2", (1, 3, 3, 3, 4), (4, 2, 2, 2, 2), 1, 0, 1, 2),
    ("x_4d", (1, 3, 3, 2), (4, 2, 2, 2, 2), 1, 0, 1, 1),
    ("channels", (1, 3, 3, 3, 2), (4, 2, 2, 2, 3), 1, 0, 1, 1),
    ("stride0", (1, 3, 3, 3, 2), (4, 2, 2, 2, 2), 0, 0, 1, 1),
    ("dilation0", (1, 3, 3, 3, 2), (4, 2, 2, 2, 2), 1, 0, (1, 0, 1), 1),
    ("too_small", (1, 3, 3, 3, 2), (4, 4, 2, 2, 2), 1, 0, 1, 1),
    ("neg_pad_too_small", (1, 3, 3, 3, 2), (4, 2, 2, 2, 2), 1, -1, 1, 1),
]
for name, xs, ws, s, p, d, g in E3:
    case(f"conv3d_err_{name}", "conv3d", [rand(*xs), rand(*ws)],
         lambda x, w, s=s, p=p, d=d, g=g: mx.conv3d(x, w, s, p, d, g),
         stride=tup(s, 3), padding=tup(p, 3), dilation=tup(d, 3), groups=g)
case("conv3d_err_int_input", "conv3d", [mx.ones((1, 3, 3, 3, 2), mx.int32), rand(2, 2, 2, 2, 2)],
     lambda x, w: mx.conv3d(x, w), stride=[1] * 3, padding=[0] * 3, dilation=[1] * 3, groups=1)

# ---- conv_transpose{1,2,3}d: (n, x shape, w shape, stride, padding, dilation, output_padding, groups) ----
CT = [
    (1, "basic", (1, 5, 2), (3, 3, 2), 1, 0, 1, 0, 1),
    (1, "stride2_pad1_outpad1", (2, 5, 2), (3, 3, 2), 2, 1, 1, 1, 1),
    (1, "stride3_dil2", (1, 4, 3), (2, 3, 3), 3, 0, 2, 0, 1),
    (1, "groups2", (1, 5, 4), (4, 3, 2), 1, 0, 1, 0, 2),
    (1, "groups4_stride2", (2, 6, 8), (8, 2, 2), 2, 1, 1, 1, 4),
    (1, "depthwise_k9", (2, 12, 4), (4, 9, 1), 2, 3, 1, 1, 4),
    (1, "bigpad_crops", (1, 5, 2), (3, 3, 2), 1, 3, 1, 0, 1),
    (1, "neg_pad", (1, 5, 2), (3, 3, 2), 1, -1, 1, 0, 1),
    (1, "neg_outpad", (1, 5, 2), (3, 3, 2), 2, 0, 1, -1, 1),
    (1, "big_outpad", (1, 5, 2), (3, 3, 2), 2, 0, 1, 3, 1),
    (2, "basic", (1, 4, 4, 2), (3, 3, 3, 2), 1, 0, 1, 0, 1),
    (2, "mixed", (2, 3, 5, 3), (2, 2, 3, 3), (2, 3), (1, 0), (1, 2), (1, 2), 1),
    (2, "groups3", (1, 4, 3, 6), (6, 3, 2, 2), 2, 1, 1, 0, 3),
    (2, "odd", (1, 5, 7, 1), (1, 3, 5, 1), (3, 2), (2, 1), 1, (2, 0), 1),
    (3, "basic", (1, 3, 3, 3, 2), (2, 2, 2, 2, 2), 1, 0, 1, 0, 1),
    (3, "mixed", (1, 3, 4, 2, 2), (3, 2, 3, 2, 2), (2, 1, 3), (1, 1, 0), (1, 2, 1), (1, 0, 2), 1),
]
for n, name, xs, ws, s, p, d, op, g in CT:
    f = getattr(mx, f"conv_transpose{n}d")
    case(f"conv_transpose{n}d_{name}", f"conv_transpose{n}d", [rand(*xs), rand(*ws)],
         lambda x, w, f=f, s=s, p=p, d=d, op=op, g=g: f(x, w, s, p, d, op, g),
         stride=tup(s, n), padding=tup(p, n), dilation=tup(d, n), output_padding=tup(op, n), groups=g)
case("conv_transpose2d_f16", "conv_transpose2d", [rand(1, 3, 3, 2, dtype=mx.float16), rand(2, 2, 2, 2, dtype=mx.float16)],
     lambda x, w: mx.conv_transpose2d(x, w, 2), stride=[2, 2], padding=[0, 0], dilation=[1, 1], output_padding=[0, 0], groups=1)
case("conv_transpose1d_bf16", "conv_transpose1d", [rand(1, 4, 2, dtype=mx.bfloat16), rand(3, 2, 2, dtype=mx.bfloat16)],
     lambda x, w: mx.conv_transpose1d(x, w, 2, 1), stride=[2], padding=[1], dilation=[1], output_padding=[0], groups=1)
case("conv_transpose1d_bf16_f32", "conv_transpose1d", [rand(1, 4, 2, dtype=mx.bfloat16), rand(3, 2, 2)],
     lambda x, w: mx.conv_transpose1d(x, w), stride=[1], padding=[0], dilation=[1], output_padding=[0], groups=1)
ECT = [
    (1, "w_2d", (1, 5, 2), (3, 2), 1, 0, 1, 0, 1),
    (1, "w_4d", (1, 5, 2), (3, 2, 2, 2), 1, 0, 1, 0, 1),
    (1, "w_1d", (1, 3, 2), (3,), 1, 0, 1, 0, 1),
    (1, "x_1d", (3,), (3, 2, 2), 1, 0, 1, 0, 1),
    (1, "x_2d", (3, 2), (3, 2, 2), 1, 0, 1, 0, 1),
    (1, "x_4d", (1, 4, 4, 2), (3, 3, 2), 1, 0, 1, 0, 1),
    (2, "x_3d", (1, 5, 2), (3, 3, 3, 2), 1, 0, 1, 0, 1),
    (2, "w_2d", (1, 3, 3, 2), (3, 2), 1, 0, 1, 0, 1),
    (1, "channels", (1, 5, 2), (3, 3, 3), 1, 0, 1, 0, 1),
    (1, "groups_indivisible", (1, 5, 4), (4, 3, 2), 1, 0, 1, 0, 3),
    (1, "groups_out_channels", (1, 5, 4), (3, 3, 2), 1, 0, 1, 0, 2),
    (1, "groups_in_channels", (1, 5, 4), (4, 3, 1), 1, 0, 1, 0, 2),
    (1, "stride0", (1, 5, 2), (3, 3, 2), 0, 0, 1, 0, 1),
    (1, "stride_neg", (1, 5, 2), (3, 3, 2), -1, 0, 1, 0, 1),
    (1, "dilation0", (1, 5, 2), (3, 3, 2), 1, 0, 0, 0, 1),
    (1, "pad_too_big", (1, 2, 2), (3, 3, 2), 1, 4, 1, 0, 1),
    (3, "groups2", (1, 3, 3, 3, 4), (4, 2, 2, 2, 2), 1, 0, 1, 0, 2),
]
for n, name, xs, ws, s, p, d, op, g in ECT:
    f = getattr(mx, f"conv_transpose{n}d")
    case(f"conv_transpose{n}d_err_{name}", f"conv_transpose{n}d", [rand(*xs), rand(*ws)],
         lambda x, w, f=f, s=s, p=p, d=d, op=op, g=g: f(x, w, s, p, d, op, g),
         stride=tup(s, n), padding=tup(p, n), dilation=tup(d, n), output_padding=tup(op, n), groups=g)
case("conv_transpose1d_err_int_input", "conv_transpose1d", [mx.ones((1, 5, 2), mx.int32), rand(3, 3, 2)],
     lambda x, w: mx.conv_transpose1d(x, w), stride=[1], padding=[0], dilation=[1], output_padding=[0], groups=1)

# ---- convolve ----
for la, lv in ((5, 3), (5, 4), (3, 5), (4, 6), (1, 1), (1, 2), (2, 2), (7, 1), (6, 6), (9, 2), (40, 21), (16, 33)):
    for mode in ("full", "same", "valid"):
        case(f"convolve_{la}_{lv}_{mode}", "convolve", [rand(la), rand(lv)],
             lambda a, v, mode=mode: mx.convolve(a, v, mode=mode), mode=mode)
case("convolve_f16", "convolve", [rand(6, dtype=mx.float16), rand(3, dtype=mx.float16)],
     lambda a, v: mx.convolve(a, v), mode="full")
case("convolve_f16_f32", "convolve", [rand(6, dtype=mx.float16), rand(4)],
     lambda a, v: mx.convolve(a, v, "same"), mode="same")
case("convolve_int_kernel", "convolve", [rand(6), mx.array([1, -2, 3], mx.int32)],
     lambda a, v: mx.convolve(a, v), mode="full")
case("convolve_err_int", "convolve", [mx.array([1, 2, 3]), mx.array([1, 2])], lambda a, v: mx.convolve(a, v), mode="full")
case("convolve_err_bool_same", "convolve", [mx.array([True, False, True]), mx.array([1.0, 2.0])],
     lambda a, v: mx.convolve(a, v, "same"), mode="same")
case("convolve_err_2d", "convolve", [mx.ones((2, 2)), mx.ones(2)], lambda a, v: mx.convolve(a, v), mode="full")
case("convolve_err_scalar", "convolve", [mx.array(1.0), mx.ones(5)], lambda a, v: mx.convolve(a, v), mode="full")
case("convolve_err_empty", "convolve", [mx.ones(0), mx.ones(2)], lambda a, v: mx.convolve(a, v), mode="full")
case("convolve_err_mode", "convolve", [mx.ones(3), mx.ones(2)], lambda a, v: mx.convolve(a, v, "bad"), mode="bad")
case("convolve_err_mode_int", "convolve", [mx.array([1, 2]), mx.array([1])], lambda a, v: mx.convolve(a, v, "nope"), mode="nope")

write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_family.json"), cases)
