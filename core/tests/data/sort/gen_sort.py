"""Golden outputs of real MLX for the sort family: sort, argsort, partition, argpartition,
topk, searchsorted. Run: /opt/oracle/bin/python gen_sort.py  (writes sort.json)

A case: {"name", "op", "inputs": [array, ...], "view", "args", "output"|"error"}.
partition/argpartition/topk leave the order inside each side unspecified, so the test
compares them by property (kth element exact, each side as a multiset; topk sorted)."""
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
    """A 3x5 array with ties, of dtype `dt`."""
    if dt == "bool":
        return mx.array([[True, False, True, False, False], [True, True, False, True, True], [False] * 5])
    if dt.startswith("uint"):
        return mx.array([[3, 0, 7, 3, 1], [200, 1, 5, 5, 0], [9, 8, 7, 6, 5]], dtype=D[dt])
    if dt.startswith("int"):
        return mx.array([[3, -4, 7, 3, 0], [-100, 1, 5, 5, -4], [9, 8, 7, 6, 5]], dtype=D[dt])
    if dt == "complex64":
        return mx.array([[1 + 2j, -0.5 + 0j, 1 - 3j, 1 + 2j, 0j], [2 + 1j, 0j, -1 + 1j, 2 - 1j, 2 + 0j],
                         [5j, -5j, 1 + 0j, 0j, -1 + 0j]])
    return mx.array([[1.5, -2.25, 3.0, 1.5, 0.0], [0.5, 4.0, -1.0, -0.0, 4.0], [9.0, 8.0, 7.0, 6.0, 5.0]],
                    dtype=D[dt])


cases = []


def case(name, op, inputs, args, fn, v=None, gen=None):
    x = view(inputs[0], v)
    # Large inputs are described by `gen` (rebuilt by the test) instead of stored.
    enc = [gen] if gen is not None else [encode(i) for i in inputs]
    c = {"name": name, "op": op, "inputs": enc, "view": v, "args": args}
    out_fn = lambda: fn(x, *inputs[1:])
    # Partition-like results are compared row by row along their axis: move it last
    # (the test moves ours the same way).
    ax = args.get("axis")
    if op in ("partition", "argpartition", "topk") and ax is not None and x.ndim > 1:
        ax = ax % x.ndim
        if ax != x.ndim - 1:
            args["move_axis"] = ax
            out_fn = lambda: mx.moveaxis(fn(x, *inputs[1:]), ax, -1)
    c.update(run(out_fn))
    cases.append(c)


def akw(args):
    return {"axis": args["axis"]} if "axis" in args else {}


NANS = mx.array([[3.0, nan, 1.0, -inf, nan, 0.0, 1.0], [nan, inf, -0.0, 0.0, 2.0, nan, -1.0]])
A3 = (mx.arange(60, dtype=mx.int32).reshape(3, 4, 5) * 7) % 11
EMPTY = mx.zeros((0, 4))

for op in ("sort", "argsort"):
    f = getattr(mx, op)
    for dt in DTYPES:
        case(f"{op}_{dt}", op, [values(dt)], {"axis": -1}, lambda a: f(a, axis=-1))
        case(f"{op}_{dt}_axis0", op, [values(dt)], {"axis": 0}, lambda a: f(a, axis=0))
    for ax in (None, 0, 1, 2, -1, -2):
        args = {"axis": ax}
        case(f"{op}_3d_axis{ax}", op, [A3], args, lambda a: f(a, axis=ax))
    case(f"{op}_nan", op, [NANS], {"axis": -1}, lambda a: f(a, axis=-1))
    case(f"{op}_nan_axis0", op, [NANS], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_nan_flat", op, [NANS], {"axis": None}, lambda a: f(a, axis=None))
    case(f"{op}_transpose", op, [values("float32")], {"axis": -1}, lambda a: f(a, axis=-1), "transpose")
    case(f"{op}_slice_step2", op, [values("int32")], {"axis": 0}, lambda a: f(a, axis=0), "slice_step2")
    case(f"{op}_empty", op, [EMPTY], {"axis": -1}, lambda a: f(a, axis=-1))
    case(f"{op}_empty_axis0", op, [EMPTY], {"axis": 0}, lambda a: f(a, axis=0))
    case(f"{op}_scalar", op, [mx.array(2.0)], {"axis": -1}, lambda a: f(a, axis=-1))
    case(f"{op}_scalar_flat", op, [mx.array(2.0)], {"axis": None}, lambda a: f(a, axis=None))
    case(f"{op}_bad_axis", op, [values("float32")], {"axis": 2}, lambda a: f(a, axis=2))
# Stability: many ties.
TIES = mx.array([2, 1, 2, 1, 0, 2, 1, 0, 0, 2, 1, 1, 2, 0, 2, 1] * 4, dtype=mx.int8)
case("argsort_stable_ties", "argsort", [TIES], {"axis": -1}, lambda a: mx.argsort(a))
case("argsort_stable_f16", "argsort", [TIES.astype(mx.float16)], {"axis": -1}, lambda a: mx.argsort(a))

for op in ("partition", "argpartition"):
    f = getattr(mx, op)
    for dt in ("int32", "float32", "uint8", "float16", "bool", "int64"):
        for kth in (0, 2, -1):
            case(f"{op}_{dt}_kth{kth}", op, [values(dt)], {"kth": kth, "axis": -1}, lambda a: f(a, kth, axis=-1))
    for ax in (None, 0, 1, -1):
        case(f"{op}_3d_axis{ax}", op, [A3], {"kth": 1, "axis": ax}, lambda a: f(a, 1, axis=ax))
    case(f"{op}_nan", op, [NANS], {"kth": 3, "axis": -1}, lambda a: f(a, 3, axis=-1))
    case(f"{op}_nan_last", op, [NANS], {"kth": -1, "axis": -1}, lambda a: f(a, -1, axis=-1))
    case(f"{op}_transpose", op, [values("float32")], {"kth": 1, "axis": -1}, lambda a: f(a, 1, axis=-1), "transpose")
    case(f"{op}_bad_kth", op, [values("float32")], {"kth": 5, "axis": -1}, lambda a: f(a, 5, axis=-1))
    case(f"{op}_bad_neg_kth", op, [values("float32")], {"kth": -6, "axis": -1}, lambda a: f(a, -6, axis=-1))
    case(f"{op}_bad_axis", op, [values("float32")], {"kth": 0, "axis": -3}, lambda a: f(a, 0, axis=-3))

for dt in ("int32", "float32", "float16", "uint8", "bool", "bfloat16", "int64"):
    for k in (1, 3):
        case(f"topk_{dt}_k{k}", "topk", [values(dt)], {"k": k, "axis": -1}, lambda a: mx.topk(a, k, axis=-1))
for ax in (None, 0, 1, 2, -1):
    case(f"topk_3d_axis{ax}", "topk", [A3], {"k": 2, "axis": ax}, lambda a: mx.topk(a, 2, axis=ax))
case("topk_nan", "topk", [NANS], {"k": 3, "axis": -1}, lambda a: mx.topk(a, 3, axis=-1))
case("topk_k0", "topk", [values("float32")], {"k": 0, "axis": -1}, lambda a: mx.topk(a, 0, axis=-1))
case("topk_k_all", "topk", [values("float32")], {"k": 5, "axis": -1}, lambda a: mx.topk(a, 5, axis=-1))
case("topk_k_big", "topk", [values("float32")], {"k": 6, "axis": -1}, lambda a: mx.topk(a, 6, axis=-1))
case("topk_k_neg", "topk", [values("float32")], {"k": -1, "axis": -1}, lambda a: mx.topk(a, -1, axis=-1))
case("topk_transpose", "topk", [values("float32")], {"k": 2, "axis": -1}, lambda a: mx.topk(a, 2, axis=-1), "transpose")

SEQ = mx.array([-inf, -1.0, 0.0, 2.0, 2.0, 2.0, 5.5, inf, nan])
VALS = mx.array([[2.0, -5.0, 0.0], [5.5, nan, inf], [-inf, 2.5, 100.0]])
for side in ("left", "right"):
    case(f"searchsorted_{side}", "searchsorted", [SEQ, VALS], {"side": side}, lambda s, v: mx.searchsorted(s, v, side=side))
    case(f"searchsorted_int_{side}", "searchsorted", [mx.array([1, 2, 2, 3, 7], dtype=mx.int32),
                                                      mx.array([0, 2, 3, 8, 7], dtype=mx.int32)],
         {"side": side}, lambda s, v: mx.searchsorted(s, v, side=side))
    case(f"searchsorted_promote_{side}", "searchsorted", [mx.array([1, 2, 2, 3], dtype=mx.uint8),
                                                          mx.array([1.5, 2.0, -1.0])],
         {"side": side}, lambda s, v: mx.searchsorted(s, v, side=side))
    case(f"searchsorted_empty_seq_{side}", "searchsorted", [mx.zeros((0,)), mx.array([1.0, 2.0])],
         {"side": side}, lambda s, v: mx.searchsorted(s, v, side=side))
case("searchsorted_scalar_value", "searchsorted", [SEQ, mx.array(2.0)], {"side": "left"},
     lambda s, v: mx.searchsorted(s, v))
case("searchsorted_empty_values", "searchsorted", [SEQ, mx.zeros((2, 0))], {"side": "left"},
     lambda s, v: mx.searchsorted(s, v))
case("searchsorted_bad_side", "searchsorted", [SEQ, VALS], {"side": "middle"}, lambda s, v: mx.searchsorted(s, v, side="middle"))
case("searchsorted_2d_seq", "searchsorted", [VALS, SEQ], {"side": "left"}, lambda s, v: mx.searchsorted(s, v))

# Rows long enough to be split over threads.
LONG = (mx.arange(4 * 20000, dtype=mx.int32).reshape(4, 20000) * 7919) % 10007
# LONG[i, j] = ((i * 20000 + j) * 7919) % 10007 (int32); post_slice is applied after the op.
case("argsort_long", "argsort", [LONG], {"axis": -1, "post_slice": [[0, 4, 1], [0, 20000, 97]]},
     lambda a: mx.argsort(a, axis=-1)[:, ::97], gen={"gen": "mul7919_mod10007", "shape": [4, 20000]})
case("sort_long_axis0", "sort", [LONG], {"axis": 0, "post_slice": [[0, 4, 1], [0, 20000, 97]]},
     lambda a: mx.sort(a, axis=0)[:, ::97], gen={"gen": "mul7919_mod10007", "shape": [4, 20000]})

write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sort.json"), cases)
