"""Golden outputs of real MLX for the reduce family: reductions, arg-reductions, scans and the
statistics composed from them (mean, var, std, logsumexp, softmax, median, count_nonzero, minmax).
Run: /opt/oracle/bin/python gen_reduce.py  (writes reduce.json)

A case: {"name", "op", "inputs": [array], "view": null|"transpose"|"slice_step2", "args": {...},
"output"|"outputs"|"error"}. Views are built from inputs[0] the same way on both sides."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx
from golden import encode, run, view, write

mx.set_default_device(mx.cpu)
nan, inf = float("nan"), float("inf")
DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "float32", "float64", "bfloat16", "complex64"]
D = {n: getattr(mx, n if n != "bool" else "bool_") for n in DTYPES}


def values(dt):
    """A 2x3 array of dtype `dt` with distinct, sign-varied values."""
    if dt == "bool":
        return mx.array([[True, False, True], [True, True, True]])
    if dt.startswith("uint"):
        return mx.array([[3, 0, 7], [200, 1, 5]], dtype=D[dt])
    if dt.startswith("int"):
        return mx.array([[3, -4, 7], [-100, 1, 5]], dtype=D[dt])
    if dt == "complex64":
        return mx.array([[1 + 2j, -0.5 + 0j, 2 - 3j], [2 + 1j, 0j, -1 + 1j]])
    return mx.array([[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]], dtype=D[dt])


cases = []


def case(name, op, inputs, args, fn, v=None, gen=None):
    x = view(inputs[0], v)
    # Large inputs are described by `gen` (rebuilt by the test) instead of stored.
    enc = [gen] if gen is not None else [encode(i) for i in inputs]
    c = {"name": name, "op": op, "inputs": enc, "view": v, "args": args}  # post_slice: [start, stop, step] per output axis, applied after the op
    c.update(run(lambda: fn(x, *inputs[1:])))
    cases.append(c)


def axis_kw(args):
    return {"axis": args["axis"]} if "axis" in args else {}


A3 = mx.arange(24, dtype=mx.float32).reshape(2, 3, 4) * 0.5 - 5.0
A34 = mx.array([[1.0, -2.0, 3.5, 0.25], [4.0, 4.0, -1.0, 2.0], [0.0, -3.0, 7.0, 1.5]])
NANS = mx.array([[1.0, nan, 3.0, -inf], [2.0, 5.0, inf, 0.0], [nan, -1.0, nan, 4.0]])
INFS = mx.array([[inf, 1.0, -inf], [-inf, -inf, -inf], [inf, inf, 2.0]])
EMPTY03 = mx.zeros((0, 3))
EMPTY30 = mx.zeros((3, 0))
SCALAR = mx.array(2.5)

RED = ["sum", "prod", "max", "min", "all", "any", "mean", "var", "std", "logsumexp", "median", "count_nonzero"]

# Every reduction over every dtype, all axes and one axis.
for op in RED + ["argmax", "argmin", "minmax"]:
    for dt in DTYPES:
        x = values(dt)
        f = getattr(mx, op)
        case(f"{op}_{dt}_all", op, [x], {}, lambda a: f(a))
        case(f"{op}_{dt}_axis1", op, [x], {"axis": 1}, lambda a: f(a, axis=1))

# Axes: single, multiple, negative, keepdims, views, 0-d, empty, NaN/Inf, errors.
AXES = [None, 0, -1, [0, 2], [-1, 1], [0, 1, 2], []]
for op in RED + ["minmax"]:
    f = getattr(mx, op)
    for ax in AXES:
        for kd in (False, True):
            args = {"keepdims": kd}
            if ax is not None:
                args["axis"] = ax
            case(f"{op}_3d_axis{ax}_kd{kd}", op, [A3], args, lambda a: f(a, **axis_kw(args), keepdims=kd))
    for v in ("transpose", "slice_step2"):
        case(f"{op}_{v}_axis0", op, [A34], {"axis": 0}, lambda a: f(a, axis=0), v)
        case(f"{op}_{v}_all", op, [A34], {}, lambda a: f(a), v)
    case(f"{op}_nan_axis1", op, [NANS], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_nan_axis0", op, [NANS], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_inf_axis1", op, [INFS], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_scalar", op, [SCALAR], {}, lambda a: f(a))
    case(f"{op}_scalar_axis0", op, [SCALAR], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_empty03_all", op, [EMPTY03], {}, lambda a: f(a))
    case(f"{op}_empty03_axis0", op, [EMPTY03], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_empty03_axis1", op, [EMPTY03], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_empty30_axis1", op, [EMPTY30], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_bad_axis", op, [A34], {"axis": 2}, lambda a: f(a, axis=2))
    case(f"{op}_bad_neg_axis", op, [A34], {"axis": -3}, lambda a: f(a, axis=-3))
    case(f"{op}_dup_axis", op, [A34], {"axis": [0, -2]}, lambda a: f(a, axis=[0, -2]))

# Integer accumulation width and wrap-around.
case("sum_int8_wide", "sum", [mx.array([100, 100, 100], dtype=mx.int8)], {}, lambda a: mx.sum(a))
case("prod_int8_wide", "prod", [mx.array([100, 100, 100], dtype=mx.int8)], {}, lambda a: mx.prod(a))
case("sum_uint32_wraps", "sum", [mx.array([4000000000, 4000000000], dtype=mx.uint32)], {}, lambda a: mx.sum(a))
case("sum_int32_wraps", "sum", [mx.array([2147483647, 1], dtype=mx.int32)], {}, lambda a: mx.sum(a))
case("prod_int64_wraps", "prod", [mx.array([2**40, 2**40], dtype=mx.int64)], {}, lambda a: mx.prod(a))
case("all_neg_zero", "all", [mx.array([-0.0, 1.0])], {}, lambda a: mx.all(a))
case("any_neg_zero", "any", [mx.array([-0.0, 0.0])], {}, lambda a: mx.any(a))
case("any_nan", "any", [mx.array([0.0, nan])], {}, lambda a: mx.any(a))
case("all_complex_imag", "all", [mx.array([1j, 1 + 0j])], {}, lambda a: mx.all(a))
case("max_complex_lex", "max", [mx.array([1 + 5j, 2 + 0j, 2 + 1j, -3j])], {}, lambda a: mx.max(a))
case("min_complex_lex", "min", [mx.array([1 + 5j, 2 + 0j, 1 + 1j, 1 - 3j])], {}, lambda a: mx.min(a))
case("sum_f16_many", "sum", [mx.arange(1000, dtype=mx.float16) * 0.01], {}, lambda a: mx.sum(a))

# var / std with ddof.
for ddof in (1, 2, 5):
    for op in ("var", "std"):
        case(f"{op}_ddof{ddof}_axis1", op, [A34], {"axis": 1, "ddof": ddof}, lambda a: getattr(mx, op)(a, axis=1, ddof=ddof))
        case(f"{op}_ddof{ddof}_all", op, [A34], {"ddof": ddof}, lambda a: getattr(mx, op)(a, ddof=ddof))
case("var_complex_ddof1", "var", [values("complex64")], {"axis": 1, "ddof": 1}, lambda a: mx.var(a, axis=1, ddof=1))

# argmax / argmin: axes, keepdims, NaN, ties, views, errors.
for op in ("argmax", "argmin"):
    f = getattr(mx, op)
    for ax in (None, 0, 1, -1, 2):
        for kd in (False, True):
            args = {"keepdims": kd}
            if ax is not None:
                args["axis"] = ax
            case(f"{op}_3d_axis{ax}_kd{kd}", op, [A3], args, lambda a: f(a, **axis_kw(args), keepdims=kd))
    case(f"{op}_nan_axis1", op, [NANS], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_nan_axis0", op, [NANS], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_nan_first", op, [mx.array([nan, 1.0, 5.0, nan])], {}, lambda a: f(a))
    case(f"{op}_ties", op, [mx.array([[2, 7, 7, 2], [1, 1, 1, 1]])], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_inf", op, [INFS], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_transpose", op, [A34], {"axis": 1}, lambda a: f(a, axis=1), "transpose")
    case(f"{op}_slice_step2", op, [A34], {"axis": 0}, lambda a: f(a, axis=0), "slice_step2")
    case(f"{op}_scalar", op, [SCALAR], {}, lambda a: f(a))
    case(f"{op}_scalar_kd", op, [SCALAR], {"keepdims": True}, lambda a: f(a, keepdims=True))
    case(f"{op}_empty", op, [EMPTY03], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_empty_all", op, [EMPTY03], {}, lambda a: f(a))
    case(f"{op}_bad_axis", op, [A34], {"axis": 2}, lambda a: f(a, axis=2))

# softmax: axes, precise, dtypes, NaN/Inf, empty.
for ax in (None, -1, 0, [0, 1], [1, 2], [2]):
    args = {} if ax is None else {"axis": ax}
    case(f"softmax_3d_axis{ax}", "softmax", [A3], args, lambda a: mx.softmax(a, **axis_kw(args)))
for dt in ("float16", "bfloat16", "float32", "float64", "int32", "bool", "uint8"):
    x = values(dt)
    for precise in (False, True):
        case(f"softmax_{dt}_last_precise{precise}", "softmax", [x], {"axis": -1, "precise": precise},
             lambda a: mx.softmax(a, axis=-1, precise=precise))
        case(f"softmax_{dt}_axis0_precise{precise}", "softmax", [x], {"axis": 0, "precise": precise},
             lambda a: mx.softmax(a, axis=0, precise=precise))
case("softmax_complex_last", "softmax", [values("complex64")], {"axis": -1}, lambda a: mx.softmax(a, axis=-1))
case("softmax_nan", "softmax", [NANS], {"axis": -1}, lambda a: mx.softmax(a, axis=-1))
case("softmax_inf", "softmax", [INFS], {"axis": -1}, lambda a: mx.softmax(a, axis=-1))
case("softmax_inf_axis0", "softmax", [INFS], {"axis": 0}, lambda a: mx.softmax(a, axis=0))
case("softmax_empty", "softmax", [EMPTY03], {"axis": -1}, lambda a: mx.softmax(a, axis=-1))
case("softmax_scalar", "softmax", [SCALAR], {}, lambda a: mx.softmax(a))
case("softmax_scalar_axis", "softmax", [SCALAR], {"axis": 0}, lambda a: mx.softmax(a, axis=0))
case("softmax_transpose", "softmax", [A34], {"axis": -1}, lambda a: mx.softmax(a, axis=-1), "transpose")
case("softmax_bad_axis", "softmax", [A34], {"axis": 3}, lambda a: mx.softmax(a, axis=3))

# Scans: dtypes, axes, reverse, inclusive, views, NaN, errors.
SCANS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
for op in SCANS:
    f = getattr(mx, op)
    for dt in DTYPES:
        x = values(dt)
        case(f"{op}_{dt}_axis1", op, [x], {"axis": 1}, lambda a: f(a, axis=1))
    for ax in (None, 0, 1, -1, 2):
        for rev in (False, True):
            for inc in (True, False):
                args = {"reverse": rev, "inclusive": inc}
                if ax is not None:
                    args["axis"] = ax
                case(f"{op}_3d_axis{ax}_rev{rev}_inc{inc}", op, [A3 * 0.25], args,
                     lambda a: f(a, **axis_kw(args), reverse=rev, inclusive=inc))
    for dt in ("int32", "uint8", "float16", "bool"):
        case(f"{op}_{dt}_exclusive_rev", op, [values(dt)], {"axis": 1, "reverse": True, "inclusive": False},
             lambda a: f(a, axis=1, reverse=True, inclusive=False))
    case(f"{op}_nan", op, [NANS], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_inf", op, [INFS], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_transpose", op, [A34], {"axis": 1}, lambda a: f(a, axis=1), "transpose")
    case(f"{op}_slice_step2", op, [A34], {"axis": 0}, lambda a: f(a, axis=0), "slice_step2")
    case(f"{op}_scalar", op, [SCALAR], {}, lambda a: f(a))
    case(f"{op}_scalar_axis0", op, [SCALAR], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_empty", op, [EMPTY03], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_empty_axis1", op, [EMPTY30], {"axis": 1}, lambda a: f(a, axis=1))
    case(f"{op}_bad_axis", op, [A34], {"axis": -3}, lambda a: f(a, axis=-3))
case("cumsum_int8_wraps", "cumsum", [mx.array([100, 100, 100], dtype=mx.int8)], {}, lambda a: mx.cumsum(a))
case("cumsum_dtype_f32", "cumsum", [mx.array([1, 2, 3], dtype=mx.int8)], {"dtype": "float32"},
     lambda a: mx.cumsum(a, dtype=mx.float32))
case("cumprod_dtype_i64", "cumprod", [mx.array([100, 100, 100], dtype=mx.int8)], {"dtype": "int64"},
     lambda a: mx.cumprod(a, dtype=mx.int64))
case("cumsum_f16_rounds", "cumsum", [mx.full((300,), 0.1, dtype=mx.float16)], {}, lambda a: mx.cumsum(a))
case("cummax_complex_excl", "cummax", [mx.array([1 + 1j, 2 - 1j, 2 + 0j])], {"inclusive": False},
     lambda a: mx.cummax(a, inclusive=False))

# A reduction large enough to be split over threads.
# BIG[i, j] = ((i * cols + j) % 17) - 8, exact in float32.
BIG = (mx.arange(3 * 70000, dtype=mx.float32).reshape(3, 70000) % 17.0) - 8.0
BIG_GEN = {"gen": "arange_mod17", "shape": [3, 70000]}
for op in ("sum", "max", "mean", "argmax", "logsumexp"):
    case(f"{op}_big_axis1", op, [BIG], {"axis": 1}, lambda a: getattr(mx, op)(a, axis=1), gen=BIG_GEN)
    case(f"{op}_big_axis0", op, [BIG], {"axis": 0, "post_slice": [[0, 5000, 1]]}, lambda a: getattr(mx, op)(a, axis=0)[:5000], gen=BIG_GEN)
SMALL = (mx.arange(3 * 3000, dtype=mx.float32).reshape(3, 3000) % 17.0) - 8.0
case("cumsum_big_axis1", "cumsum", [SMALL], {"axis": 1, "post_slice": [[0, 3, 1], [0, 3000, 50]]}, lambda a: mx.cumsum(a, axis=1)[:, ::50],
     gen={"gen": "arange_mod17", "shape": [3, 3000]})

write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reduce.json"), cases)
