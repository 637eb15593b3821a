"""Golden cases for the index family (core/tests/index_ops.rs) from real MLX 0.32.
Run: /opt/oracle/bin/python core/tests/data/index/gen_index.py
Index tuples are encoded as lists of {"int": i} | {"slice": [start, stop, step]} (null = None)
| {"none": 1} | {"ellipsis": 1} | {"array": <encoded array>}. Inputs may carry view "T"."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx  # noqa: E402
from golden import encode, run, write  # noqa: E402

cases = []


def enc_idx(idx):
    out = []
    for i in idx:
        if i is None:
            out.append({"none": 1})
        elif i is Ellipsis:
            out.append({"ellipsis": 1})
        elif isinstance(i, int):
            out.append({"int": i})
        elif isinstance(i, slice):
            out.append({"slice": [i.start, i.stop, i.step]})
        else:
            out.append({"array": encode(i)})
    return out


def case(name, op, inputs, fn, view=None, **args):
    c = {"name": name, "op": op, "inputs": [encode(x) for x in inputs], "args": args}
    ins = list(inputs)
    if view == "T":
        c["view"] = view
        ins[0] = mx.transpose(ins[0])
    c.update(run(lambda: fn(*ins)))
    cases.append(c)


A = mx.arange(24).reshape(2, 3, 4)
F = (mx.arange(12, dtype=mx.float32) * 0.5 - 2).reshape(3, 4)
I = mx.array([2, -1, 0, 2])
I2 = mx.array([[0, 1], [-2, 2]])
DT = [mx.bool_, mx.uint8, mx.int16, mx.int32, mx.int64, mx.float16, mx.bfloat16, mx.float32, mx.float64, mx.complex64]

# take
for dt in DT:
    x = (mx.arange(12) % 5).astype(dt).reshape(3, 4) if dt != mx.float64 else None
    if x is None:
        continue
    case(f"take_axis1_{dt}", "take", [x, I], lambda a, i: mx.take(a, i, axis=1), axis=1)
for idt in [mx.int8, mx.uint8, mx.int16, mx.uint32, mx.int64, mx.uint64]:
    case(f"take_index_dtype_{idt}", "take", [A, mx.array([1, 0, 1]).astype(idt)], lambda a, i: mx.take(a, i, axis=0), axis=0)
case("take_flat", "take", [A, I2 * 5], lambda a, i: mx.take(a, i), axis=None)
case("take_axis_neg", "take", [A, I2], lambda a, i: mx.take(a, i, axis=-1), axis=-1)
case("take_axis1_2d_idx", "take", [A, I2], lambda a, i: mx.take(a, i, axis=1), axis=1)
case("take_scalar_idx", "take", [A, mx.array(-1)], lambda a, i: mx.take(a, i, axis=1), axis=1)
case("take_empty_idx", "take", [A, mx.zeros((0,), mx.int32)], lambda a, i: mx.take(a, i, axis=2), axis=2)
case("take_from_scalar_flat", "take", [mx.array(3.5), mx.array([0, 0])], lambda a, i: mx.take(a, i), axis=None)
case("take_transposed", "take", [A, I2], lambda a, i: mx.take(a, i, axis=0), "T", axis=0)
case("take_float_idx", "take", [A, mx.array([0.0])], lambda a, i: mx.take(a, i, axis=0), axis=0)
case("take_bad_axis", "take", [A, I], lambda a, i: mx.take(a, i, axis=3), axis=3)
# take_along_axis / put_along_axis
case("take_along_last", "take_along_axis", [F, mx.array([[3, 0], [1, 1], [-1, 2]])], lambda a, i: mx.take_along_axis(a, i, axis=-1), axis=-1)
case("take_along_0_bcast", "take_along_axis", [A, mx.array([[[1], [0], [1]]])], lambda a, i: mx.take_along_axis(a, i, axis=0), axis=0)
case("take_along_none", "take_along_axis", [F, mx.array([11, 0, -1])], lambda a, i: mx.take_along_axis(a, i, axis=None), axis=None)
case("take_along_argsort", "take_along_axis", [F, mx.argsort(-F, axis=1)], lambda a, i: mx.take_along_axis(a, i, axis=1), axis=1)
case("take_along_ndim_mismatch", "take_along_axis", [F, I], lambda a, i: mx.take_along_axis(a, i, axis=0), axis=0)
case("take_along_T", "take_along_axis", [F, mx.array([[0, 2, 1]])], lambda a, i: mx.take_along_axis(a, i, axis=0), "T", axis=0)
case("put_along_axis1", "put_along_axis", [F, mx.array([[0], [3], [-1]]), mx.array([[10.0], [20.0], [30.0]])], lambda a, i, v: mx.put_along_axis(a, i, v, axis=1), axis=1)
case("put_along_axis0_bcast_val", "put_along_axis", [A, mx.array([[[1, 0, 1, 0]]]), mx.array(-5)], lambda a, i, v: mx.put_along_axis(a, i, v, axis=0), axis=0)
case("put_along_none", "put_along_axis", [F, mx.array([0, 5, -1]), mx.array([1.0, 2.0, 3.0])], lambda a, i, v: mx.put_along_axis(a, i, v, axis=None), axis=None)

# __getitem__
GET = [
    ("int", A, (1,)), ("neg_int", A, (-1,)), ("int_int", A, (1, -2)), ("slice", A, (slice(None, None, -1),)),
    ("slice_step", A, (slice(None), slice(None), slice(3, 0, -2))), ("slice_neg_bounds", A, (slice(-5, 10), slice(-2, None))),
    ("slice_empty", A, (slice(2, 1),)), ("newaxis", A, (None, 0, None)), ("ellipsis", A, (Ellipsis, 1)),
    ("ellipsis_mid", A, (0, Ellipsis, None, 2)), ("array", A, (mx.array([[0, 1], [-2, 1]]),)), ("array_axis1", A, (slice(None), I)),
    ("two_arrays", A, (mx.array([0, 1, 1]), mx.array([2, 0, -1]))), ("arrays_bcast", A, (mx.array([[0], [1]]), slice(None), mx.array([0, 3]))),
    ("int_slice_array", A, (0, slice(None), mx.array([1, 2]))), ("array_int_adjacent", A, (slice(None), mx.array([1, 2]), 0)),
    ("array_none_array", A, (mx.array([0, 1]), None, mx.array([1, 2]))), ("slice_array_none_int", A, (slice(None), mx.array([1, 2]), None, 0)),
    ("none_array", A, (None, mx.array([1, 0]))), ("array_2d_mid", A, (slice(None), I2, slice(1, 3))),
    ("scalar_array", A, (mx.array(1), slice(None, 2))), ("empty_array", A, (mx.zeros((0,), mx.int32),)),
    ("uint8_index", A, (slice(None), mx.array([2, 0], mx.uint8))), ("too_many", A, (0, 0, 0, 0)),
    ("two_ellipsis", A, (Ellipsis, Ellipsis)), ("bool_mask", A, (A > 3,)), ("scalar_src", mx.array(2.0), (0,)),
    ("float_T_slice", F, (slice(1, None), mx.array([0, 2]))),
    ("empty_src", mx.zeros((0, 3)), (slice(None), 1)),
]
for name, src, idx in GET:
    case(f"get_{name}", "index", [src], lambda a, idx=idx: a[idx if len(idx) != 1 else idx[0]], idx=enc_idx(idx))
case("get_T_arrays", "index", [A], lambda a: a[mx.array([3, 0]), 1], "T", idx=enc_idx((mx.array([3, 0]), 1)))

# __setitem__ and .at[] updates
def setter(idx, v):
    def f(a):
        b = mx.array(a)
        b[idx] = v
        return b
    return f


SET = [
    ("int", A, (1,), mx.array(-1)), ("slice_row", A, (slice(None), 1), mx.array([7, 8, 9, 10])),
    ("step_slice", A, (Ellipsis, slice(None, None, 2)), mx.array(0)), ("neg_step", F, (slice(None, None, -1), 0), mx.array([1.0, 2.0, 3.0])),
    ("array_dup", F, (mx.array([0, 0, 2]),), mx.array([[1.0], [2.0], [3.0]])), ("array_axis1", A, (slice(None), mx.array([2, 0])), mx.array(5)),
    ("two_arrays", A, (mx.array([0, 1]), slice(None), mx.array([3, -4])), mx.array([[100, 101, 102], [200, 201, 202]])),
    ("leading_ones", A, (0, 0), mx.array([[[1, 2, 3, 4]]])), ("float_into_int", A, (1,), mx.array(2.9)),
    ("newaxis", F, (None, 1), mx.array([9.0, 9.0, 9.0, 9.0])), ("bool_mask", A, (A > 20,), mx.array(0)),
    ("bool_mask_rows", F, (mx.array([True, False, True]),), mx.array([1.0, 2.0, 3.0, 4.0])),
    ("bad_broadcast", A, (0,), mx.array([1, 2])), ("empty_update", A, (mx.zeros((0,), mx.int32),), mx.array(1)),
]
for name, src, idx, v in SET:
    case(f"set_{name}", "index_update", [src, v], lambda a, v, idx=idx: setter(idx if len(idx) != 1 else idx[0], v)(a), idx=enc_idx(idx))
case("set_T", "index_update", [A, mx.array([1, 2])], lambda a, v: setter((mx.array([0, 3]), 2), v)(a), "T", idx=enc_idx((mx.array([0, 3]), 2)))

J = mx.array([0, 2, 0, 0, 1])
V = mx.array([1.5, -2.0, 4.0, 0.5, 3.0])
NANF = mx.array([1.0, float("nan"), 2.0, -1.0])
for mode in ["add", "subtract", "multiply", "divide", "maximum", "minimum"]:
    for dt in [mx.float32, mx.float16, mx.bfloat16, mx.int32, mx.uint8, mx.complex64]:
        src = (mx.arange(4) + 1).astype(dt)
        if mode == "subtract" and dt == mx.uint8:
            pass
        case(f"at_{mode}_{dt}", "at", [src, V.astype(dt) if dt != mx.uint8 else mx.array([1, 2, 3, 4, 5], mx.uint8)],
             lambda a, v, mode=mode: getattr(a.at[J], mode)(v), mode=mode, idx=enc_idx((J,)))
    case(f"at_{mode}_nan", "at", [NANF, mx.array([float("nan"), 3.0, 1.0, 5.0])],
         lambda a, v, mode=mode: getattr(a.at[mx.array([0, 1, 2, 3])], mode)(v), mode=mode, idx=enc_idx((mx.array([0, 1, 2, 3]),)))
    case(f"at_{mode}_2d_slice", "at", [F, mx.array([1.0, 2.0])],
         lambda a, v, mode=mode: getattr(a.at[mx.array([1, 1]), 1:3], mode)(v), mode=mode, idx=enc_idx((mx.array([1, 1]), slice(1, 3))))
    case(f"at_{mode}_basic", "at", [F, mx.array(3.0)],
         lambda a, v, mode=mode: getattr(a.at[1:, ::2], mode)(v), mode=mode, idx=enc_idx((slice(1, None), slice(None, None, 2))))
for mode in ["add", "multiply", "maximum", "minimum"]:
    case(f"at_{mode}_bool", "at", [mx.array([True, False, False, True]), mx.array([True, False, True, False, True])],
         lambda a, v, mode=mode: getattr(a.at[J], mode)(v), mode=mode, idx=enc_idx((J,)))

write(os.path.join(os.path.dirname(__file__), "index.json"), cases)
