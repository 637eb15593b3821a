"""Writes tests/c/ops_golden.inc: one C test per case, expected values computed by real MLX.

Run: /opt/oracle/bin/python tests/c/gen_ops_golden.py

Each case gives numpy inputs (bound to C handles and Python names a, b, c), the C statements
that compute `res` through the C API (scratch handles t1, t2 are available), and the MLX
expression for the same result. A case whose MLX expression raises becomes an error case: the
C call must return non-zero and send one message to the error handler.
"""
import math
import os
import sys

import mlx.core as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from golden_emit import *  # noqa: F401,F403 (dtype aliases, C_TYPES, MLX_ENUM, emit)

rng = np.random.default_rng(7)
x23 = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]], dtype=f32)
pos23 = np.array([[0.5, 1.0, 2.0], [3.0, 0.25, 9.0]], dtype=f32)
unit23 = np.array([[-0.9, -0.5, 0.0], [0.25, 0.5, 0.75]], dtype=f32)
big23 = np.array([[1.5, 2.0, 3.25], [1.25, 4.0, 7.0]], dtype=f32)
i23 = np.array([[1, -2, 3], [4, 5, -6]], dtype=i32)
u23 = np.array([[1, 2, 3], [12, 5, 6]], dtype=u8)
b23 = np.array([[True, False, True], [False, False, True]])
r234 = rng.standard_normal((2, 3, 4)).astype(f32)
special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], dtype=f32)
row3 = np.array([10.0, 20.0, 30.0], dtype=f32)
col2 = np.array([[1.0], [2.0]], dtype=f32)
idx = np.array([2, 0, 1, 2], dtype=i32)
sortme = np.array([[3.0, 1.0, 2.0, 5.0], [0.5, -1.0, 4.0, 4.0]], dtype=f32)

cases = []


def case(name, inputs, c_code, py):
    cases.append((name, inputs, c_code, py))


# Unary ops: every one of core's table through its mlx-c name, on a suitable domain.
UNARY = {
    "abs": x23, "negative": x23, "sign": x23, "square": x23, "floor": x23, "ceil": x23, "trunc": x23,
    "conjugate": x23, "real": x23, "imag": x23, "sqrt": pos23, "rsqrt": pos23, "reciprocal": pos23,
    "exp": x23, "expm1": x23, "log": pos23, "log1p": pos23, "log2": pos23, "log10": pos23, "sin": x23,
    "cos": x23, "tan": x23, "arcsin": unit23, "arccos": unit23, "arctan": x23, "sinh": x23, "cosh": x23,
    "tanh": x23, "arcsinh": x23, "arccosh": big23, "arctanh": unit23, "erf": x23, "erfinv": unit23,
    "sigmoid": x23, "degrees": x23, "radians": x23, "isnan": special, "isinf": special, "isposinf": special,
    "isneginf": special, "isfinite": special, "logical_not": b23, "bitwise_invert": i23,
}
C_NAME = {"trunc": "mlx_arm_trunc"}
PY = {"trunc": lambda a: mx.where(a < 0, mx.ceil(a), mx.floor(a))}
for op, x in UNARY.items():
    cname = C_NAME.get(op, "mlx_" + op)
    fn = PY.get(op, getattr(mx, op, None))
    case(f"unary_{op}", {"a": x}, f"{cname}(&res, a, s)", lambda a, fn=fn: fn(a))
# integer input to a float op (promotes to float32), a transposed (non-contiguous) input
case("unary_exp_int", {"a": i23}, "mlx_exp(&res, a, s)", lambda a: mx.exp(a))
case("unary_sqrt_transposed", {"a": pos23}, "mlx_transpose(&t1, a, s); mlx_sqrt(&res, t1, s)", lambda a: mx.sqrt(a.T))
case("round_decimals", {"a": np.array([1.256, -2.5, 3.14159], dtype=f32)}, "mlx_round(&res, a, 2, s)", lambda a: mx.round(a, 2))
case("round_zero", {"a": np.array([1.5, 2.5, -0.5], dtype=f32)}, "mlx_round(&res, a, 0, s)", lambda a: mx.round(a))
case("negative_bool_error", {"a": b23}, "mlx_negative(&res, a, s)", lambda a: mx.negative(a))
case("bitwise_invert_float_error", {"a": x23}, "mlx_bitwise_invert(&res, a, s)", lambda a: mx.bitwise_invert(a))

BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "maximum", "minimum",
          "arctan2", "logaddexp", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or"]
for op in BINARY:
    a, bb = (pos23, big23) if op == "power" else (x23, big23)
    case(f"binary_{op}", {"a": a, "b": bb}, f"mlx_{op}(&res, a, b, s)", lambda a, b, op=op: getattr(mx, op)(a, b))
for op in ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]:
    case(f"binary_{op}", {"a": u23, "b": np.array([1, 2, 3], dtype=u8)}, f"mlx_{op}(&res, a, b, s)",
         lambda a, b, op=op: getattr(mx, op)(a, b))
case("add_broadcast_row_col", {"a": row3, "b": col2}, "mlx_add(&res, a, b, s)", lambda a, b: a + b)
case("add_int_float_promotes", {"a": i23, "b": x23}, "mlx_add(&res, a, b, s)", lambda a, b: a + b)
case("add_uint8_int32_promotes", {"a": u23, "b": i23}, "mlx_add(&res, a, b, s)", lambda a, b: a + b)
case("divide_ints_float", {"a": i23, "b": np.array([2, 4, -3], dtype=i32)}, "mlx_divide(&res, a, b, s)", lambda a, b: a / b)
case("add_shape_mismatch_error", {"a": x23, "b": np.ones((4,), dtype=f32)}, "mlx_add(&res, a, b, s)", lambda a, b: a + b)
case("bitwise_and_float_error", {"a": x23, "b": x23}, "mlx_bitwise_and(&res, a, b, s)", lambda a, b: mx.bitwise_and(a, b))
case("where", {"a": b23, "b": x23, "c": row3}, "mlx_where(&res, a, b, c, s)", lambda a, b, c: mx.where(a, b, c))

# casts and views
case("astype_int", {"a": x23}, "mlx_astype(&res, a, MLX_INT32, s)", lambda a: a.astype(mx.int32))
case("astype_float16", {"a": x23}, "mlx_astype(&res, a, MLX_FLOAT16, s)", lambda a: a.astype(mx.float16))
case("astype_bfloat16", {"a": x23}, "mlx_astype(&res, a, MLX_BFLOAT16, s)", lambda a: a.astype(mx.bfloat16))
case("view_int32_as_uint8", {"a": np.array([1, 256], dtype=i32)}, "mlx_view(&res, a, MLX_UINT8, s)", lambda a: a.view(mx.uint8))
case("view_bad_size_error", {"a": np.array([1, 2, 3], dtype=u8)}, "mlx_view(&res, a, MLX_INT32, s)", lambda a: a.view(mx.int32))

# creation
case("zeros", {}, "mlx_zeros(&res, (int[]){2, 3}, 2, MLX_FLOAT32, s)", lambda: mx.zeros((2, 3)))
case("ones_int", {}, "mlx_ones(&res, (int[]){4}, 1, MLX_INT32, s)", lambda: mx.ones((4,), dtype=mx.int32))
case("full", {"a": np.array(2.5, dtype=f32)}, "mlx_full(&res, (int[]){2, 2}, 2, a, MLX_FLOAT32, s)", lambda a: mx.full((2, 2), a))
# C++ full(shape, vals, dtype) casts to dtype (what mlx-c calls); the Python binding ignores
# dtype when vals is an array, so the oracle spells the C++ semantics out.
case("full_row", {"a": row3}, "mlx_full(&res, (int[]){2, 3}, 2, a, MLX_INT32, s)",
     lambda a: mx.broadcast_to(a, (2, 3)).astype(mx.int32))
case("zeros_like", {"a": i23}, "mlx_zeros_like(&res, a, s)", lambda a: mx.zeros_like(a))
case("ones_like", {"a": x23}, "mlx_ones_like(&res, a, s)", lambda a: mx.ones_like(a))
case("full_like", {"a": x23, "b": np.array(7, dtype=i32)}, "mlx_full_like(&res, a, b, MLX_INT32, s)",
     lambda a, b: mx.full(a.shape, b, dtype=mx.int32))
case("full_like_broadcasts_both", {"a": row3, "b": col2}, "mlx_full_like(&res, a, b, MLX_FLOAT32, s)",
     lambda a, b: mx.broadcast_to(b, (2, 3)).astype(mx.float32))
case("arange", {}, "mlx_arange(&res, 0, 3, 0.5, MLX_FLOAT32, s)", lambda: mx.arange(0, 3, 0.5))
case("arange_int_negative_step", {}, "mlx_arange(&res, 5, -3, -2, MLX_INT32, s)", lambda: mx.arange(5, -3, -2, dtype=mx.int32))
case("arange_zero_step_error", {}, "mlx_arange(&res, 0, 3, 0, MLX_FLOAT32, s)", lambda: mx.arange(0, 3, 0))
case("linspace", {}, "mlx_linspace(&res, 0, 1, 5, MLX_FLOAT32, s)", lambda: mx.linspace(0, 1, 5))
case("eye", {}, "mlx_eye(&res, 3, 4, 1, MLX_FLOAT32, s)", lambda: mx.eye(3, 4, 1))
case("identity", {}, "mlx_identity(&res, 3, MLX_INT32, s)", lambda: mx.identity(3, dtype=mx.int32))
case("tri", {}, "mlx_tri(&res, 3, 3, 0, MLX_FLOAT32, s)", lambda: mx.tri(3, 3, 0))
case("zeros_negative_shape_error", {}, "mlx_zeros(&res, (int[]){2, -1}, 2, MLX_FLOAT32, s)", None)

# shapes and views
case("reshape", {"a": r234}, "mlx_reshape(&res, a, (int[]){4, -1}, 2, s)", lambda a: a.reshape(4, -1))
case("reshape_error", {"a": x23}, "mlx_reshape(&res, a, (int[]){4}, 1, s)", lambda a: a.reshape(4))
case("transpose", {"a": r234}, "mlx_transpose(&res, a, s)", lambda a: a.T)
case("transpose_axes", {"a": r234}, "mlx_transpose_axes(&res, a, (int[]){1, 2, 0}, 3, s)", lambda a: mx.transpose(a, (1, 2, 0)))
case("transpose_axes_repeated_error", {"a": r234}, "mlx_transpose_axes(&res, a, (int[]){1, 1, 0}, 3, s)",
     lambda a: mx.transpose(a, (1, 1, 0)))
case("swapaxes", {"a": r234}, "mlx_swapaxes(&res, a, 0, -1, s)", lambda a: mx.swapaxes(a, 0, -1))
case("moveaxis", {"a": r234}, "mlx_moveaxis(&res, a, 0, 2, s)", lambda a: mx.moveaxis(a, 0, 2))
case("broadcast_to", {"a": row3}, "mlx_broadcast_to(&res, a, (int[]){2, 3}, 2, s)", lambda a: mx.broadcast_to(a, (2, 3)))
case("broadcast_to_error", {"a": row3}, "mlx_broadcast_to(&res, a, (int[]){2, 4}, 2, s)", lambda a: mx.broadcast_to(a, (2, 4)))
case("expand_dims", {"a": x23}, "mlx_expand_dims(&res, a, 1, s)", lambda a: mx.expand_dims(a, 1))
case("expand_dims_axes", {"a": x23}, "mlx_expand_dims_axes(&res, a, (int[]){0, -1}, 2, s)", lambda a: mx.expand_dims(a, (0, -1)))
case("squeeze", {"a": np.ones((1, 3, 1), dtype=f32)}, "mlx_squeeze(&res, a, s)", lambda a: mx.squeeze(a))
case("squeeze_axis", {"a": np.ones((1, 3, 1), dtype=f32)}, "mlx_squeeze_axis(&res, a, -1, s)", lambda a: mx.squeeze(a, -1))
case("squeeze_axes", {"a": np.ones((1, 3, 1), dtype=f32)}, "mlx_squeeze_axes(&res, a, (int[]){0, 2}, 2, s)",
     lambda a: mx.squeeze(a, (0, 2)))
case("squeeze_error", {"a": x23}, "mlx_squeeze_axis(&res, a, 0, s)", lambda a: mx.squeeze(a, 0))
case("flatten", {"a": r234}, "mlx_flatten(&res, a, 1, 2, s)", lambda a: mx.flatten(a, 1, 2))
case("slice", {"a": r234}, "mlx_slice(&res, a, (int[]){0, 2, 3}, 3, (int[]){2, -4, 0}, 3, (int[]){1, -1, -2}, 3, s)",
     lambda a: a[0:2, 2:-4:-1, 3:0:-2])
case("slice_zero_step_error", {"a": x23}, "mlx_slice(&res, a, (int[]){0, 0}, 2, (int[]){2, 3}, 2, (int[]){1, 0}, 2, s)", None)
case("as_strided", {"a": np.arange(10, dtype=f32)}, "mlx_as_strided(&res, a, (int[]){3, 3}, 2, (int64_t[]){2, 1}, 2, 1, s)",
     lambda a: mx.as_strided(a, (3, 3), (2, 1), 1))
case("contiguous_of_transpose", {"a": x23}, "mlx_transpose(&t1, a, s); mlx_contiguous(&res, t1, false, s)", lambda a: a.T)

# reductions
for red in ["sum", "prod", "max", "min", "all", "any", "mean", "logsumexp"]:
    src = b23 if red in ("all", "any") else x23
    case(f"{red}_all", {"a": src}, f"mlx_{red}(&res, a, false, s)", lambda a, r=red: getattr(mx, r)(a))
    case(f"{red}_axis_keepdims", {"a": src}, f"mlx_{red}_axis(&res, a, -1, true, s)", lambda a, r=red: getattr(mx, r)(a, -1, keepdims=True))
    case(f"{red}_axes", {"a": r234 if src is x23 else b23}, f"mlx_{red}_axes(&res, a, (int[]){{0, -1}}, 2, false, s)",
         lambda a, r=red: getattr(mx, r)(a, (0, -1)))
case("sum_int8_to_int32", {"a": np.array([100, 100, 100], dtype=np.int8)}, "mlx_sum(&res, a, false, s)", lambda a: mx.sum(a))
case("sum_bad_axis_error", {"a": x23}, "mlx_sum_axis(&res, a, 2, false, s)", lambda a: mx.sum(a, 2))
case("max_empty_error", {"a": np.zeros((0,), dtype=f32)}, "mlx_max(&res, a, false, s)", lambda a: mx.max(a))
case("var_ddof", {"a": x23}, "mlx_var_axis(&res, a, 1, false, 1, s)", lambda a: mx.var(a, 1, ddof=1))
case("std_all", {"a": x23}, "mlx_std(&res, a, false, 0, s)", lambda a: mx.std(a))
case("median", {"a": sortme}, "mlx_median(&res, a, (int[]){1}, 1, false, s)", lambda a: mx.median(a, 1))
case("softmax_axis", {"a": x23}, "mlx_softmax_axis(&res, a, 1, false, s)", lambda a: mx.softmax(a, 1))
case("argmax", {"a": sortme}, "mlx_argmax_axis(&res, a, 1, false, s)", lambda a: mx.argmax(a, 1))
case("argmin_all", {"a": sortme}, "mlx_argmin(&res, a, false, s)", lambda a: mx.argmin(a))
for scan in ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]:
    case(f"{scan}_reverse", {"a": x23}, f"mlx_{scan}(&res, a, 1, true, true, s)", lambda a, sc=scan: getattr(mx, sc)(a, 1, reverse=True))
    case(f"{scan}_exclusive", {"a": x23}, f"mlx_{scan}(&res, a, 0, false, false, s)",
         lambda a, sc=scan: getattr(mx, sc)(a, 0, inclusive=False))

# sorting
# mlx-c's axis-less overloads call C++ sort(a)/topk(a, k), which flatten (Python defaults to axis=-1).
case("sort", {"a": sortme}, "mlx_sort(&res, a, s)", lambda a: mx.sort(a, axis=None))
case("sort_axis0", {"a": sortme}, "mlx_sort_axis(&res, a, 0, s)", lambda a: mx.sort(a, 0))
case("argsort", {"a": np.array([3.0, 1.0, 2.0, 5.0], dtype=f32)}, "mlx_argsort(&res, a, s)", lambda a: mx.argsort(a))
case("topk", {"a": sortme}, "mlx_topk(&res, a, 2, s); mlx_sort(&res, res, s)", lambda a: mx.sort(mx.topk(a, 2, axis=None)))
case("partition", {"a": np.array([3.0, 1.0, 2.0, 5.0, 4.0], dtype=f32)},
     "mlx_partition(&t1, a, 2, s); mlx_slice(&res, t1, (int[]){2}, 1, (int[]){3}, 1, (int[]){1}, 1, s)",
     lambda a: mx.partition(a, 2)[2:3])

# indexing
case("take", {"a": x23, "b": idx}, "mlx_take(&res, a, b, s)", lambda a, b: mx.take(a, b))
case("take_axis", {"a": x23, "b": idx}, "mlx_take_axis(&res, a, b, 1, s)", lambda a, b: mx.take(a, b, 1))
case("take_along_axis", {"a": sortme, "b": np.array([[0, 3], [1, 2]], dtype=i32)}, "mlx_take_along_axis(&res, a, b, 1, s)",
     lambda a, b: mx.take_along_axis(a, b, 1))
case("put_along_axis", {"a": sortme, "b": np.array([[0], [2]], dtype=i32), "c": np.array([[9.0], [8.0]], dtype=f32)},
     "mlx_put_along_axis(&res, a, b, c, 1, s)", lambda a, b, c: mx.put_along_axis(a, b, c, 1))
case("gather_single", {"a": x23, "b": np.array([1, 0], dtype=i32)}, "mlx_gather_single(&res, a, b, 0, (int[]){1, 3}, 2, s)",
     lambda a, b: a[b][:, None, :])
case("scatter_add_single", {"a": np.zeros((4,), dtype=f32), "b": np.array([1, 1, 3], dtype=i32),
                            "c": np.array([[1.0], [2.0], [5.0]], dtype=f32)},
     "mlx_scatter_add_single(&res, a, b, c, 0, s)", lambda a, b, c: a.at[b].add(c[:, 0]))


emit(cases, os.path.join(HERE, "ops_golden.inc"), "gen_ops_golden.py")
