"""Golden outputs of real MLX 0.32 (CPU) for the linalg family: matmul, addmm, inner, outer,
tensordot, einsum, trace, kron, conv1d/conv2d/conv_general and linalg.norm.
Run: /opt/oracle/bin/python gen_linalg.py  (writes linalg.json)

A case: {"name", "op", "inputs": [array], "views": [null|"T"|"swap"] (built on both sides:
"T" reverses all axes, "swap" swaps the last two), "args": {...}, "output"|"error"}."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx
import numpy as np
from golden import encode, run, write

mx.set_default_device(mx.cpu)
rng = np.random.default_rng(7)
cases = []


def arr(shape, dtype=mx.float32, lo=-2.0, hi=2.0):
    """Random values on a 1/8 grid, so every dtype holds them exactly."""
    a = np.round(rng.uniform(lo, hi, size=shape) * 8) / 8
    if dtype in (mx.int32, mx.int64, mx.int8, mx.uint8):
        a = np.round(rng.uniform(0, 5, size=shape))
    return mx.array(a.astype(np.float32)).astype(dtype)


def view(a, v):
    if v == "T":
        return a.T
    if v == "swap":
        return mx.swapaxes(a, -1, -2)
    return a


def case(name, op, inputs, fn, args=None, views=None):
    views = views or [None] * len(inputs)
    xs = [view(a, v) for a, v in zip(inputs, views)]
    c = {"name": name, "op": op, "inputs": [encode(a) for a in inputs], "views": views, "args": args or {}}
    c.update(run(lambda: fn(*xs)))
    cases.append(c)


F = [("f32", mx.float32), ("f16", mx.float16), ("bf16", mx.bfloat16)]

# ---- matmul
mm = lambda a, b: mx.matmul(a, b)
for tag, dt in F + [("f64", mx.float64)]:
    case(f"matmul_2d_{tag}", "matmul", [arr((3, 5), dt), arr((5, 4), dt)], mm)
case("matmul_vec_mat", "matmul", [arr((5,)), arr((5, 4))], mm)
case("matmul_mat_vec", "matmul", [arr((3, 5)), arr((5,))], mm)
case("matmul_vec_vec", "matmul", [arr((5,)), arr((5,))], mm)
case("matmul_batched_vec", "matmul", [arr((2, 3, 5)), arr((5,))], mm)
case("matmul_vec_batched", "matmul", [arr((5,)), arr((2, 5, 3))], mm)
case("matmul_broadcast_batch", "matmul", [arr((2, 1, 2, 3)), arr((4, 3, 5))], mm)
case("matmul_batch_3d_2d", "matmul", [arr((3, 2, 4)), arr((4, 6))], mm)
case("matmul_transposed_views", "matmul", [arr((5, 3)), arr((4, 5))], mm, views=["T", "T"])
case("matmul_swapped_batch_view", "matmul", [arr((2, 5, 3)), arr((2, 5, 4))], mm, views=["swap", None])
case("matmul_blocking_edges", "matmul", [arr((37, 70)), arr((70, 19))], mm)
case("matmul_long_k", "matmul", [arr((3, 300)), arr((300, 18))], mm)
case("matmul_mixed_f16_f32", "matmul", [arr((2, 3), mx.float16), arr((3, 2))], mm)
case("matmul_mixed_f16_bf16", "matmul", [arr((2, 3), mx.float16), arr((3, 2), mx.bfloat16)], mm)
case("matmul_complex", "matmul", [mx.array([[1 + 2j, 0.5 - 1j], [2j, 1]]), mx.array([[1, 1j], [2 - 1j, 0.5]])], mm)
case("matmul_empty_k", "matmul", [arr((2, 0)), arr((0, 3))], mm)
case("matmul_empty_m", "matmul", [arr((0, 3)), arr((3, 2))], mm)
case("matmul_nan_inf", "matmul", [mx.array([[1.0, float("nan")], [float("inf"), 1.0]]), mx.array([[1.0, 0.0], [0.0, 1.0]])], mm)
case("matmul_err_int", "matmul", [arr((2, 3), mx.int32), arr((3, 2), mx.int32)], mm)
case("matmul_err_shape", "matmul", [arr((2, 3)), arr((4, 2))], mm)
case("matmul_err_scalar", "matmul", [mx.array(1.0), arr((3,))], mm)
case("matmul_err_batch", "matmul", [arr((2, 2, 3)), arr((5, 3, 4))], mm)

# ---- addmm
am = lambda args: (lambda c, a, b: mx.addmm(c, a, b, alpha=args["alpha"], beta=args["beta"]))
for name, shapes, args, dt in [
    ("addmm_vec_c", [(2,), (2, 3), (3, 2)], {"alpha": 2.0, "beta": 0.5}, mx.float32),
    ("addmm_full_c", [(2, 2), (2, 3), (3, 2)], {"alpha": 1.0, "beta": 1.0}, mx.float32),
    ("addmm_batched", [(2, 1, 4), (2, 3, 5), (5, 4)], {"alpha": -1.5, "beta": 2.0}, mx.float32),
    ("addmm_broadcast_ab", [(4,), (2, 3, 5), (2, 5, 4)], {"alpha": 0.5, "beta": 0.25}, mx.float32),
    ("addmm_vec_a", [(4,), (5,), (5, 4)], {"alpha": 1.0, "beta": 3.0}, mx.float32),
    ("addmm_vec_b", [(3,), (3, 5), (5,)], {"alpha": 1.0, "beta": 3.0}, mx.float32),
    ("addmm_beta0", [(2, 2), (2, 3), (3, 2)], {"alpha": 1.0, "beta": 0.0}, mx.float32),
    ("addmm_f16", [(2, 2), (2, 3), (3, 2)], {"alpha": 2.0, "beta": 0.5}, mx.float16),
    ("addmm_bf16", [(2, 2), (2, 3), (3, 2)], {"alpha": 2.0, "beta": 0.5}, mx.bfloat16),
]:
    case(name, "addmm", [arr(s, dt) for s in shapes], am(args), args)
case("addmm_err_c_shape", "addmm", [arr((2, 3)), arr((2, 3)), arr((3, 2))], am({"alpha": 1.0, "beta": 1.0}), {"alpha": 1.0, "beta": 1.0})
case("addmm_err_int", "addmm", [arr((2,), mx.int32), arr((2, 3), mx.int32), arr((3, 2), mx.int32)], am({"alpha": 1.0, "beta": 1.0}), {"alpha": 1.0, "beta": 1.0})

# ---- inner / outer / tensordot
case("inner_2d", "inner", [arr((2, 3)), arr((4, 3))], mx.inner)
case("inner_1d", "inner", [arr((3,)), arr((3,))], mx.inner)
case("inner_scalar", "inner", [mx.array(2.0), arr((3,))], mx.inner)
case("inner_err", "inner", [arr((2, 3)), arr((4,))], mx.inner)
case("outer_int", "outer", [arr((2, 3), mx.int32), arr((4,), mx.int32)], mx.outer)
case("outer_f32", "outer", [arr((3,)), arr((2, 2))], mx.outer)
case("tensordot_int_axes2", "tensordot", [arr((2, 3, 4)), arr((3, 4, 5))], lambda a, b: mx.tensordot(a, b, axes=2), {"axes": 2})
case("tensordot_axes0", "tensordot", [arr((2, 3)), arr((4,))], lambda a, b: mx.tensordot(a, b, axes=0), {"axes": 0})
case("tensordot_lists", "tensordot", [arr((3, 4, 5)), arr((4, 3, 2))], lambda a, b: mx.tensordot(a, b, axes=[[1, 0], [0, 1]]), {"axes_a": [1, 0], "axes_b": [0, 1]})
case("tensordot_neg_axes", "tensordot", [arr((3, 4)), arr((2, 4))], lambda a, b: mx.tensordot(a, b, axes=[[-1], [-1]]), {"axes_a": [-1], "axes_b": [-1]})
case("tensordot_err_mismatch", "tensordot", [arr((3, 4)), arr((3, 4))], lambda a, b: mx.tensordot(a, b, axes=[[0], [1]]), {"axes_a": [0], "axes_b": [1]})
case("tensordot_err_too_many", "tensordot", [arr((3,)), arr((3, 4))], lambda a, b: mx.tensordot(a, b, axes=2), {"axes": 2})

# ---- einsum
ein = lambda s: (lambda *xs: mx.einsum(s, *xs))
for name, s, shapes, dt in [
    ("einsum_matmul", "ij,jk->ik", [(2, 3), (3, 4)], mx.float32),
    ("einsum_implicit", "ij,jk", [(2, 3), (3, 4)], mx.float32),
    ("einsum_trace", "ii->", [(3, 3)], mx.float32),
    ("einsum_diag", "ii->i", [(3, 3)], mx.float32),
    ("einsum_transpose", "ij->ji", [(2, 3)], mx.float32),
    ("einsum_sum_axis", "ijk->ik", [(2, 3, 4)], mx.float32),
    ("einsum_batch_matmul", "bij,bjk->bik", [(2, 2, 3), (2, 3, 4)], mx.float32),
    ("einsum_ellipsis", "...ij,...jk->...ik", [(2, 2, 3), (3, 4)], mx.float32),
    ("einsum_ellipsis_implicit", "...ij,jk", [(2, 2, 3), (3, 4)], mx.float32),
    ("einsum_dot", "i,i", [(4,), (4,)], mx.float32),
    ("einsum_outer", "i,j->ij", [(3,), (4,)], mx.float32),
    ("einsum_hadamard", "ij,ij->ij", [(2, 3), (2, 3)], mx.float32),
    ("einsum_mixed", "ijk,jil->kl", [(2, 3, 4), (3, 2, 5)], mx.float32),
    ("einsum_three", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)], mx.float32),
    ("einsum_repeat_pair", "iij,jk->ik", [(3, 3, 2), (2, 4)], mx.float32),
    ("einsum_broadcast_one", "ij,jk->ik", [(2, 1), (3, 4)], mx.float32),
    ("einsum_attention", "bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)], mx.float32),
    ("einsum_int_outer", "i,j->ij", [(3,), (2,)], mx.int32),
    ("einsum_int_trace", "ii", [(3, 3)], mx.int32),
    ("einsum_f16", "ij,jk->ik", [(2, 3), (3, 4)], mx.float16),
    ("einsum_err_int_contract", "ij,jk->ik", [(2, 3), (3, 4)], mx.int32),
    ("einsum_err_repeat_out", "ij->ii", [(2, 3)], mx.float32),
    ("einsum_err_n_operands", "ij,jk->ik", [(2, 3)], mx.float32),
    ("einsum_err_subscripts", "ijk->i", [(2, 3)], mx.float32),
    ("einsum_err_repeat_dims", "ii->i", [(2, 3)], mx.float32),
    ("einsum_err_broadcast", "ij,jk->ik", [(2, 3), (4, 4)], mx.float32),
    ("einsum_err_letters", "i1,j->ij", [(2, 3), (3,)], mx.float32),
]:
    case(name, "einsum", [arr(sh, dt) for sh in shapes], ein(s), {"subscripts": s})

# ---- trace / kron
tr = lambda args: (lambda a: mx.trace(a, offset=args.get("offset", 0), axis1=args.get("axis1", 0), axis2=args.get("axis2", 1),
                                      **({"dtype": getattr(mx, args["dtype"])} if "dtype" in args else {})))
for name, shape, args, dt in [
    ("trace_square", (3, 3), {}, mx.float32),
    ("trace_offset", (3, 4), {"offset": 1}, mx.float32),
    ("trace_neg_offset", (4, 3), {"offset": -2}, mx.float32),
    ("trace_axes", (2, 3, 3), {"axis1": 1, "axis2": 2}, mx.float32),
    ("trace_neg_axes", (3, 2, 3), {"axis1": -1, "axis2": 0}, mx.float32),
    ("trace_int", (3, 3), {}, mx.int32),
    ("trace_dtype", (3, 3), {"dtype": "float16"}, mx.int32),
    ("trace_err_1d", (3,), {}, mx.float32),
    ("trace_err_same_axis", (3, 3), {"axis1": 1, "axis2": 1}, mx.float32),
    ("trace_err_axis", (3, 3), {"axis1": 3}, mx.float32),
]:
    case(name, "trace", [arr(shape, dt)], tr(args), args)
case("trace_bool", "trace", [mx.array([[True, False], [True, True]])], tr({}), {})
case("kron_2d", "kron", [arr((2, 2)), arr((2, 3))], mx.kron)
case("kron_int_ndim", "kron", [arr((2,), mx.int32), arr((2, 2), mx.int32)], mx.kron)
case("kron_3d", "kron", [arr((2, 1, 2)), arr((3, 2))], mx.kron)
case("kron_err_empty", "kron", [arr((0,)), arr((2,))], mx.kron)

# ---- convolution
def c1(args):
    return lambda x, w: mx.conv1d(x, w, stride=args.get("stride", 1), padding=args.get("padding", 0),
                                  dilation=args.get("dilation", 1), groups=args.get("groups", 1))


def c2(args):
    t = lambda k, d: tuple(args.get(k, d))
    return lambda x, w: mx.conv2d(x, w, stride=t("stride", [1, 1]), padding=t("padding", [0, 0]),
                                  dilation=t("dilation", [1, 1]), groups=args.get("groups", 1))


for name, xs, ws, args, dt in [
    ("conv1d_basic", (2, 7, 3), (4, 3, 3), {}, mx.float32),
    ("conv1d_stride_pad", (1, 9, 2), (3, 3, 2), {"stride": 2, "padding": 1}, mx.float32),
    ("conv1d_dilation", (1, 10, 2), (2, 3, 2), {"dilation": 2}, mx.float32),
    ("conv1d_groups", (2, 6, 4), (6, 3, 2), {"groups": 2}, mx.float32),
    ("conv1d_depthwise", (1, 6, 3), (3, 2, 1), {"groups": 3, "padding": 1}, mx.float32),
    ("conv1d_f16", (1, 7, 3), (2, 3, 3), {"padding": 1}, mx.float16),
    ("conv1d_bf16", (1, 7, 3), (2, 3, 3), {}, mx.bfloat16),
    ("conv1d_err_channels", (1, 7, 3), (2, 3, 2), {}, mx.float32),
    ("conv1d_err_too_small", (1, 2, 3), (2, 3, 3), {}, mx.float32),
    ("conv1d_err_groups", (1, 7, 3), (2, 3, 1), {"groups": 2}, mx.float32),
]:
    case(name, "conv1d", [arr(xs, dt), arr(ws, dt)], c1(args), args)
case("conv1d_err_int", "conv1d", [arr((1, 5, 2), mx.int32), arr((2, 3, 2), mx.int32)], c1({}), {})
case("conv1d_err_rank", "conv1d", [arr((5, 2)), arr((2, 3, 2))], c1({}), {})
for name, xs, ws, args, dt in [
    ("conv2d_basic", (2, 5, 6, 3), (4, 3, 3, 3), {}, mx.float32),
    ("conv2d_stride_pad", (1, 7, 6, 2), (3, 3, 2, 2), {"stride": [2, 1], "padding": [1, 2]}, mx.float32),
    ("conv2d_dilation", (1, 8, 8, 2), (2, 3, 3, 2), {"dilation": [2, 3]}, mx.float32),
    ("conv2d_groups", (1, 5, 5, 4), (4, 3, 3, 2), {"groups": 2, "padding": [1, 1]}, mx.float32),
    ("conv2d_1x1", (2, 4, 4, 8), (5, 1, 1, 8), {}, mx.float32),
    ("conv2d_f16", (1, 5, 5, 3), (2, 3, 3, 3), {"padding": [1, 1]}, mx.float16),
]:
    case(name, "conv2d", [arr(xs, dt), arr(ws, dt)], c2(args), args)
case("conv2d_transposed_input", "conv2d", [arr((3, 6, 5, 1)), arr((2, 3, 3, 3))], c2({}), {}, views=["T", None])


def cg(args):
    return lambda x, w: mx.conv_general(x, w, stride=args["stride"], padding=(args["pad_lo"], args["pad_hi"]),
                                        kernel_dilation=args["kdil"], input_dilation=args["idil"],
                                        groups=args["groups"], flip=args["flip"])


for name, xs, ws, args in [
    ("conv_general_flip", (1, 6, 2), (3, 3, 2), {"stride": [1], "pad_lo": [1], "pad_hi": [2], "kdil": [1], "idil": [1], "groups": 1, "flip": True}),
    ("conv_general_input_dilation", (1, 4, 2), (2, 3, 2), {"stride": [1], "pad_lo": [2], "pad_hi": [2], "kdil": [1], "idil": [2], "groups": 1, "flip": False}),
    ("conv_general_neg_pad", (1, 8, 1), (1, 3, 1), {"stride": [1], "pad_lo": [-2], "pad_hi": [-1], "kdil": [1], "idil": [1], "groups": 1, "flip": False}),
    ("conv_general_2d_flip_dil", (1, 5, 5, 2), (2, 2, 3, 2), {"stride": [2, 1], "pad_lo": [1, 0], "pad_hi": [0, 1], "kdil": [1, 2], "idil": [2, 1], "groups": 1, "flip": True}),
    ("conv_general_3d", (1, 4, 4, 4, 2), (2, 2, 2, 2, 2), {"stride": [1, 2, 1], "pad_lo": [0, 1, 0], "pad_hi": [0, 1, 1], "kdil": [1, 1, 1], "idil": [1, 1, 1], "groups": 1, "flip": False}),
]:
    case(name, "conv_general", [arr(xs), arr(ws)], cg(args), args)

# ---- linalg.norm
def nm(args):
    ord_ = args.get("ord")
    if isinstance(ord_, str) and ord_ in ("inf", "-inf"):
        ord_ = float(ord_)
    return lambda a: mx.linalg.norm(a, ord=ord_, axis=args.get("axis"), keepdims=args.get("keepdims", False))


X = mx.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.5]])
for name, a, args in [
    ("norm_default", X, {}),
    ("norm_default_keepdims", X, {"keepdims": True}),
    ("norm_axis", X, {"axis": [1]}),
    ("norm_axes_pair", arr((2, 3, 4)), {"axis": [0, 2]}),
    ("norm_vec_1", X, {"ord": 1.0, "axis": [1]}),
    ("norm_vec_inf", X, {"ord": "inf", "axis": [0]}),
    ("norm_vec_ninf", X, {"ord": "-inf", "axis": [1], "keepdims": True}),
    ("norm_vec_0", mx.array([1.0, 0.0, 3.0, 0.0]), {"ord": 0.0}),
    ("norm_vec_3", mx.array([1.0, -2.0, 3.0]), {"ord": 3.0}),
    ("norm_vec_half", mx.array([1.0, 4.0, 9.0]), {"ord": 0.5}),
    ("norm_vec_2_int", mx.array([3, 4], dtype=mx.int32), {"ord": 2.0}),
    ("norm_mat_fro", X, {"ord": "fro"}),
    ("norm_mat_1", X, {"ord": 1.0}),
    ("norm_mat_neg1", X, {"ord": -1.0}),
    ("norm_mat_inf", X, {"ord": "inf"}),
    ("norm_mat_ninf_keep", X, {"ord": "-inf", "keepdims": True}),
    ("norm_mat_1_axes_rev", arr((3, 2, 4)), {"ord": 1.0, "axis": [2, 0]}),
    ("norm_mat_inf_axes", arr((3, 2, 4)), {"ord": "inf", "axis": [0, 2], "keepdims": True}),
    ("norm_f16", X.astype(mx.float16), {"ord": 1.0}),
    ("norm_int_l1", mx.array([[1, -2], [3, 4]], dtype=mx.int32), {"ord": 1.0, "axis": [1]}),
    ("norm_complex", mx.array([3 + 4j, 1 - 1j]), {}),
    ("norm_mat_2", X, {"ord": 2.0}),
    ("norm_mat_neg2", X, {"ord": -2.0}),
    ("norm_mat_nuc", X, {"ord": "nuc"}),
    ("norm_mat_2_batched_keep", arr((3, 2, 4)), {"ord": 2.0, "axis": [2, 0], "keepdims": True}),
    ("norm_mat_nuc_axes", arr((3, 4, 2)), {"ord": "nuc", "axis": [0, 1]}),
    ("norm_mat_2_int", mx.array([[1, 2], [3, 4]], dtype=mx.int32), {"ord": 2.0}),
    ("norm_err_too_many_axes", arr((2, 2, 2)), {"ord": 2.0}),
    ("norm_err_mat_ord", X, {"ord": 3.0}),
    ("norm_err_fro_vec", mx.array([1.0, 2.0]), {"ord": "fro"}),
    ("norm_err_none_3axes", arr((2, 2, 2)), {"axis": [0, 1, 2]}),
]:
    case(name, "norm", [a], nm(args), args)

write(os.path.join(os.path.dirname(__file__), "linalg.json"), cases)
