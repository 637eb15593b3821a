"""Golden cases for the ops3 family (core/tests/ops3.rs) from real MLX 0.32: window
functions, diff, flip, unstack, count_nonzero, logical_xor, searchsorted, vecdot,
linalg.cross, hadamard_transform, depends.
Run: /opt/oracle/bin/python core/tests/data/ops3/gen_ops3.py
Each case: {name, op, inputs: [encoded arrays], args: {...}, and the oracle's output(s) or
error}. MLX 0.32 raises IndexError for some out-of-range axes where later MLX (whose
upstream tests this project runs) raises ValueError; the Rust test accepts either there."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx  # noqa: E402
import numpy as np  # noqa: E402
from golden import encode, run, write  # noqa: E402

cases = []


def case(name, op, inputs, fn, **args):
    c = {"name": name, "op": op, "inputs": [encode(x) for x in inputs], "args": args}
    c.update(run(lambda: fn(*inputs)))
    cases.append(c)


for w in ("hanning", "hamming", "blackman", "bartlett"):
    for m in (-2, 0, 1, 2, 3, 10, 51):
        case(f"{w}_{m}", w, [], lambda m=m, w=w: getattr(mx, w)(m), m=m)

DT = [mx.bool_, mx.uint8, mx.int32, mx.int64, mx.float16, mx.bfloat16, mx.float32, mx.complex64]
I = mx.array([[1, 3, 6, 10], [0, 5, 6, -2], [4, 4, 1, 9]])
for dt in DT:
    x = I.astype(dt)
    case(f"diff_{dt}", "diff", [x], lambda a: mx.diff(a), n=1, axis=-1)
    case(f"flip_all_{dt}", "flip", [x], lambda a: mx.flip(a), axes=None)
    case(f"count_nonzero_{dt}", "count_nonzero", [x], lambda a: mx.count_nonzero(a, axis=0), axes=[0], keepdims=False)
    case(f"logical_xor_{dt}", "logical_xor", [x, x.T[:3, :1]], lambda a, b: mx.logical_xor(a, b))
    if dt != mx.bool_:
        case(f"vecdot_{dt}", "vecdot", [x, x[:1]], lambda a, b: mx.vecdot(a, b), axis=-1)
for n in (0, 2, 3, 4, 6):
    case(f"diff_n{n}_axis0", "diff", [I], lambda a, n=n: mx.diff(a, n=n, axis=0), n=n, axis=0)
case("diff_empty", "diff", [mx.zeros((0, 3))], lambda a: mx.diff(a, axis=0), n=1, axis=0)
case("diff_bad_axis", "diff", [I], lambda a: mx.diff(a, axis=2), n=1, axis=2)
case("diff_neg_n", "diff", [I], lambda a: mx.diff(a, n=-1), n=-1, axis=-1)
case("diff_scalar", "diff", [mx.array(3)], lambda a: mx.diff(a), n=1, axis=-1)

A = mx.arange(24).reshape(2, 3, 4)
for axes in ([0], [1], [-1], [0, 2], [2, 2]):
    case(f"flip_{axes}", "flip", [A], lambda a, axes=axes: mx.flip(a, axis=axes), axes=axes)
case("flip_T", "flip", [A.transpose(2, 0, 1)], lambda a: mx.flip(a, axis=[0]), axes=[0])
case("flip_scalar", "flip", [mx.array(4.5)], lambda a: mx.flip(a), axes=None)
case("flip_bad_axis", "flip", [A], lambda a: mx.flip(a, axis=3), axes=[3])

for ax in (0, 1, -1, 2):
    case(f"unstack_{ax}", "unstack", [A], lambda a, ax=ax: mx.unstack(a, axis=ax), axis=ax)
case("unstack_empty", "unstack", [mx.zeros((0, 2))], lambda a: mx.unstack(a, axis=0), axis=0)
case("unstack_bad_axis", "unstack", [A], lambda a: mx.unstack(a, axis=3), axis=3)

case("count_nonzero_all", "count_nonzero", [A % 3], lambda a: mx.count_nonzero(a), axes=None, keepdims=False)
case("count_nonzero_keep", "count_nonzero", [A % 3], lambda a: mx.count_nonzero(a, axis=[0, 2], keepdims=True), axes=[0, 2], keepdims=True)
case("count_nonzero_nan", "count_nonzero", [mx.array([0.0, float("nan"), -0.0, 2.0])], lambda a: mx.count_nonzero(a), axes=None, keepdims=False)

S = mx.array([1.0, 2.0, 2.0, 4.0])
V = mx.array([[0.0, 1.0, 2.0], [3.0, 5.0, -1.0]])
for side in ("left", "right"):
    case(f"searchsorted_{side}", "searchsorted", [S, V], lambda a, b, side=side: mx.searchsorted(a, b, side=side), side=side)
case("searchsorted_int", "searchsorted", [mx.array([1, 3, 5]), mx.array(4)], lambda a, b: mx.searchsorted(a, b), side="left")
case("searchsorted_bad_side", "searchsorted", [S, V], lambda a, b: mx.searchsorted(a, b, side="middle"), side="middle")
case("searchsorted_2d", "searchsorted", [V, S], lambda a, b: mx.searchsorted(a, b), side="left")

F = mx.array(np.random.RandomState(0).randn(3, 4).astype(np.float32))
case("vecdot_axis0", "vecdot", [F, F[:, :1]], lambda a, b: mx.vecdot(a, b, axis=0), axis=0)
case("vecdot_complex", "vecdot", [mx.array([1 + 2j, 3j]), mx.array([1j, 2])], lambda a, b: mx.vecdot(a, b), axis=-1)
case("vecdot_mismatch", "vecdot", [F, mx.zeros((3, 3))], lambda a, b: mx.vecdot(a, b), axis=-1)
case("vecdot_scalar", "vecdot", [mx.array(1.0), F], lambda a, b: mx.vecdot(a, b), axis=-1)
case("vecdot_bad_axis", "vecdot", [F, F], lambda a, b: mx.vecdot(a, b, axis=2), axis=2)

C3 = mx.array(np.random.RandomState(1).randn(4, 3).astype(np.float32))
C2 = mx.array(np.random.RandomState(2).randn(4, 2).astype(np.float32))
case("cross_33", "cross", [C3, C3[::-1]], lambda a, b: mx.linalg.cross(a, b), axis=-1)
case("cross_23", "cross", [C2, C3], lambda a, b: mx.linalg.cross(a, b), axis=-1)
case("cross_32", "cross", [C3, C2], lambda a, b: mx.linalg.cross(a, b), axis=-1)
case("cross_22", "cross", [C2, C2[::-1]], lambda a, b: mx.linalg.cross(a, b), axis=-1)
case("cross_bcast", "cross", [C3[:1], C3], lambda a, b: mx.linalg.cross(a, b), axis=1)
case("cross_axis0", "cross", [C3.T, mx.array([1, 2, 3]).reshape(3, 1)], lambda a, b: mx.linalg.cross(a, b, axis=0), axis=0)
case("cross_int", "cross", [mx.array([1, 2, 3]), mx.array([4, 5, 6])], lambda a, b: mx.linalg.cross(a, b), axis=-1)
case("cross_bad_size", "cross", [F, F], lambda a, b: mx.linalg.cross(a, b), axis=-1)
case("cross_bad_axis", "cross", [C3, C3], lambda a, b: mx.linalg.cross(a, b, axis=2), axis=2)

R = np.random.RandomState(3)
for n in (2, 8, 64, 12, 24, 20, 40, 28, 112):
    x = mx.array(R.randn(3, n).astype(np.float32))
    case(f"hadamard_{n}", "hadamard", [x], lambda a: mx.hadamard_transform(a), scale=None)
x = mx.array(R.randn(2, 3, 16).astype(np.float32))
case("hadamard_3d_scale", "hadamard", [x], lambda a: mx.hadamard_transform(a, scale=0.25), scale=0.25)
case("hadamard_int", "hadamard", [mx.arange(8)], lambda a: mx.hadamard_transform(a), scale=None)
case("hadamard_f16", "hadamard", [x.astype(mx.float16)], lambda a: mx.hadamard_transform(a), scale=None)
case("hadamard_bf16", "hadamard", [x.astype(mx.bfloat16)], lambda a: mx.hadamard_transform(a, scale=1.0), scale=1.0)
case("hadamard_scalar", "hadamard", [mx.array(5.0)], lambda a: mx.hadamard_transform(a, scale=0.2), scale=0.2)
case("hadamard_n1", "hadamard", [mx.ones((3, 1))], lambda a: mx.hadamard_transform(a), scale=None)
case("hadamard_empty", "hadamard", [mx.zeros((0,))], lambda a: mx.hadamard_transform(a), scale=None)
case("hadamard_bad_n", "hadamard", [mx.zeros((6,))], lambda a: mx.hadamard_transform(a), scale=None)

case("depends", "depends", [mx.array([1.0, 2.0]), mx.arange(3)], lambda a, b: mx.depends([mx.exp(a), b], [mx.log(a)]))

write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops3.json"), cases)
