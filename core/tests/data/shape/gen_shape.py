"""Golden cases for the shape family (core/tests/shape_ops.rs) from real MLX 0.32.
Run: /opt/oracle/bin/python core/tests/data/shape/gen_shape.py
Each case: {name, op, inputs: [encoded arrays], view: optional "T"|"step2" applied to input 0
on both sides, args: {...}, and the oracle's output(s) or error}."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx  # noqa: E402
from golden import encode, run, write  # noqa: E402

cases = []


def view(a, v):
    if v == "T":
        return mx.transpose(a)
    if v == "step2":
        return a[..., ::2]
    return a


def case(name, op, inputs, fn, view_=None, **args):
    c = {"name": name, "op": op, "inputs": [encode(x) for x in inputs], "args": args}
    if view_:
        c["view"] = view_
    ins = list(inputs)
    if ins:
        ins[0] = view(ins[0], view_)
    c.update(run(lambda: fn(*ins)))
    cases.append(c)


A = mx.arange(24).reshape(2, 3, 4)
F = (mx.arange(12, dtype=mx.float32) * 0.5 - 2).reshape(3, 4)
B = mx.array([[True, False, True], [False, False, True]])
E = mx.zeros((2, 0, 3))
S = mx.array(7.5)
DT = [mx.bool_, mx.uint8, mx.int16, mx.int32, mx.int64, mx.float16, mx.bfloat16, mx.float32, mx.complex64]

for dt in DT:
    x = (mx.arange(12) % 5).astype(dt).reshape(3, 4)
    case(f"concatenate_{dt}", "concatenate", [x, x[:1]], lambda a, b: mx.concatenate([a, b], axis=0), axis=0)
    case(f"pad_constant_{dt}", "pad", [x], lambda a: mx.pad(a, [(1, 0), (0, 2)], constant_values=1), widths=[[1, 0], [0, 2]], mode="constant", value=1)
    case(f"flip_{dt}", "flip", [x], lambda a: mx.flip(a, 1), axes=[1])
    case(f"tril_{dt}", "tril", [x], lambda a: mx.tril(a, 1), k=1)

for v in [None, "T", "step2"]:
    sfx = v or "dense"
    case(f"reshape_{sfx}", "reshape", [A], lambda a: mx.reshape(a, (-1, 2)), v, shape=[-1, 2])
    case(f"flatten_{sfx}", "flatten", [A], lambda a: mx.flatten(a, 1, 2), v, start=1, end=2)
    case(f"concatenate_{sfx}", "concatenate", [A, A], lambda a, b: mx.concatenate([a, mx.transpose(b) if v == "T" else (b[..., ::2] if v == "step2" else b)], axis=-1), v, axis=-1, view_all=True)
    case(f"tile_{sfx}", "tile", [A], lambda a: mx.tile(a, (2, 1, 2)), v, reps=[2, 1, 2])
    case(f"repeat_{sfx}", "repeat", [A], lambda a: mx.repeat(a, 2, axis=1), v, repeats=2, axis=1)
    case(f"roll_{sfx}", "roll", [A], lambda a: mx.roll(a, (1, -2), (0, 2)), v, shift=[1, -2], axes=[0, 2])
    case(f"pad_edge_{sfx}", "pad", [A], lambda a: mx.pad(a, [(0, 1), (2, 1), (1, 0)], mode="edge"), v, widths=[[0, 1], [2, 1], [1, 0]], mode="edge")
    case(f"diagonal_{sfx}", "diagonal", [A], lambda a: mx.diagonal(a, 1, 2, 0), v, offset=1, axis1=2, axis2=0)
    case(f"split_{sfx}", "split", [A], lambda a: mx.split(a, 2, axis=0), v, sections=2, axis=0)
    case(f"triu_{sfx}", "triu", [A], lambda a: mx.triu(a, -1), v, k=-1)
    case(f"contiguous_{sfx}", "contiguous", [A], lambda a: mx.contiguous(a), v)
    case(f"swapaxes_{sfx}", "swapaxes", [A], lambda a: mx.swapaxes(a, 0, -1), v, axis1=0, axis2=-1)
    case(f"moveaxis_{sfx}", "moveaxis", [A], lambda a: mx.moveaxis(a, 0, -1), v, source=0, destination=-1)

# concatenate
case("concatenate_axis_none", "concatenate", [A, F], lambda a, b: mx.concatenate([a, b], axis=None), axis=None)
case("concatenate_promote", "concatenate", [F, mx.ones((3, 1), mx.int32)], lambda a, b: mx.concatenate([a, b], axis=1), axis=1)
case("concatenate_empty_piece", "concatenate", [A, mx.zeros((2, 3, 0), mx.int32)], lambda a, b: mx.concatenate([a, b], axis=2), axis=2)
case("concatenate_mismatch", "concatenate", [A, F], lambda a, b: mx.concatenate([a, b], axis=0), axis=0)
case("concatenate_bad_axis", "concatenate", [F, F], lambda a, b: mx.concatenate([a, b], axis=2), axis=2)
case("concat_scalars", "concatenate", [S, S], lambda a, b: mx.concatenate([a, b], axis=0), axis=0)
# stack / unstack
case("stack_axis0", "stack", [F, F * 2], lambda a, b: mx.stack([a, b]), axis=0)
case("stack_axis_neg1", "stack", [F, F * 2], lambda a, b: mx.stack([a, b], axis=-1), axis=-1)
case("stack_scalars", "stack", [S, S], lambda a, b: mx.stack([a, b]), axis=0)
case("stack_shape_mismatch", "stack", [F, A], lambda a, b: mx.stack([a, b]), axis=0)
case("unstack_axis1", "unstack", [A], lambda a: mx.unstack(a, axis=1), axis=1)
case("unstack_neg", "unstack", [F], lambda a: mx.unstack(a, axis=-1), axis=-1)
# split
case("split_sections", "split", [F], lambda a: mx.split(a, 2, axis=1), sections=2, axis=1)
case("split_indices", "split", [A], lambda a: mx.split(a, [1, 3], axis=2), indices=[1, 3], axis=2)
case("split_indices_neg", "split", [A], lambda a: mx.split(a, [-3, 10], axis=-1), indices=[-3, 10], axis=-1)
case("split_uneven", "split", [F], lambda a: mx.split(a, 3, axis=1), sections=3, axis=1)
case("split_empty_axis", "split", [E], lambda a: mx.split(a, 2, axis=1), sections=2, axis=1)
# reshape family
case("reshape_infer_error", "reshape", [A], lambda a: mx.reshape(a, (5, -1)), shape=[5, -1])
case("reshape_scalar", "reshape", [S], lambda a: mx.reshape(a, (1, 1)), shape=[1, 1])
case("reshape_empty", "reshape", [E], lambda a: mx.reshape(a, (0, 5)), shape=[0, 5])
case("flatten_scalar", "flatten", [S], lambda a: mx.flatten(a), start=0, end=-1)
case("flatten_bad", "flatten", [A], lambda a: mx.flatten(a, 2, 1), start=2, end=1)
case("unflatten", "unflatten", [A], lambda a: mx.unflatten(a, -1, (2, -1)), axis=-1, shape=[2, -1])
case("unflatten_bad", "unflatten", [A], lambda a: mx.unflatten(a, 1, (2, 2)), axis=1, shape=[2, 2])
case("squeeze_all", "squeeze", [mx.zeros((1, 3, 1))], lambda a: mx.squeeze(a), axes=None)
case("squeeze_axis", "squeeze", [mx.zeros((1, 3, 1))], lambda a: mx.squeeze(a, -1), axes=[-1])
case("squeeze_bad", "squeeze", [mx.zeros((1, 3, 1))], lambda a: mx.squeeze(a, 1), axes=[1])
case("expand_dims", "expand_dims", [F], lambda a: mx.expand_dims(a, (0, -1)), axes=[0, -1])
case("expand_dims_scalar", "expand_dims", [S], lambda a: mx.expand_dims(a, 0), axes=[0])
case("expand_dims_bad", "expand_dims", [F], lambda a: mx.expand_dims(a, 3), axes=[3])
case("transpose_axes", "transpose", [A], lambda a: mx.transpose(a, (1, 2, 0)), axes=[1, 2, 0])
case("transpose_rev", "transpose", [A], lambda a: mx.transpose(a), axes=None)
case("transpose_bad", "transpose", [A], lambda a: mx.transpose(a, (0, 0, 1)), axes=[0, 0, 1])
case("permute_dims", "transpose", [A], lambda a: mx.permute_dims(a, (2, 0, 1)), axes=[2, 0, 1])
case("matrix_transpose", "matrix_transpose", [A], lambda a: mx.matrix_transpose(a))
case("broadcast_to", "broadcast_to", [F[:1]], lambda a: mx.broadcast_to(a, (2, 3, 4)), shape=[2, 3, 4])
case("broadcast_to_bad", "broadcast_to", [F], lambda a: mx.broadcast_to(a, (4, 4)), shape=[4, 4])
case("broadcast_arrays", "broadcast_arrays", [F[:, :1], A[:1]], lambda a, b: mx.broadcast_arrays(a, b))
case("atleast_1d", "atleast_1d", [S], lambda a: mx.atleast_1d(a))
case("atleast_2d", "atleast_2d", [F[0]], lambda a: mx.atleast_2d(a))
case("atleast_3d_1d", "atleast_3d", [F[0]], lambda a: mx.atleast_3d(a))
case("atleast_3d_2d", "atleast_3d", [F], lambda a: mx.atleast_3d(a))
# tile / repeat
case("tile_int", "tile", [F[0]], lambda a: mx.tile(a, 3), reps=[3])
case("tile_short_reps", "tile", [A], lambda a: mx.tile(a, (2,)), reps=[2])
case("tile_scalar", "tile", [S], lambda a: mx.tile(a, (2, 2)), reps=[2, 2])
case("tile_zero", "tile", [F], lambda a: mx.tile(a, (0, 1)), reps=[0, 1])
case("repeat_flat", "repeat", [F], lambda a: mx.repeat(a, 2), repeats=2, axis=None)
case("repeat_zero", "repeat", [F], lambda a: mx.repeat(a, 0, axis=0), repeats=0, axis=0)
case("repeat_neg_axis", "repeat", [A], lambda a: mx.repeat(a, 3, axis=-1), repeats=3, axis=-1)
case("repeat_scalar", "repeat", [S], lambda a: mx.repeat(a, 3), repeats=3, axis=None)
case("repeat_negative", "repeat", [F], lambda a: mx.repeat(a, -1, axis=0), repeats=-1, axis=0)
# roll / flip
case("roll_flat", "roll", [F], lambda a: mx.roll(a, 5), shift=[5], axes=None)
case("roll_neg_big", "roll", [F], lambda a: mx.roll(a, -13, 1), shift=[-13], axes=[1])
case("roll_one_shift_two_axes", "roll", [A], lambda a: mx.roll(a, 1, (1, 2)), shift=[1], axes=[1, 2])
case("roll_empty", "roll", [E], lambda a: mx.roll(a, 1, 1), shift=[1], axes=[1])
case("flip_all", "flip", [A], lambda a: mx.flip(a), axes=None)
case("flip_axes", "flip", [A], lambda a: mx.flip(a, (0, -1)), axes=[0, -1])
case("flip_scalar", "flip", [S], lambda a: mx.flip(a), axes=None)
case("flip_bad_axis", "flip", [F], lambda a: mx.flip(a, 2), axes=[2])
# pad
case("pad_constant_float", "pad", [F], lambda a: mx.pad(a, 1, constant_values=-1.5), widths=[[1, 1]], mode="constant", value=-1.5)
case("pad_constant_int_value_float", "pad", [A], lambda a: mx.pad(a, (1, 2), constant_values=2.7), widths=[[1, 2]], mode="constant", value=2.7)
case("pad_reflect", "pad", [F], lambda a: mx.pad(a, [(2, 1), (3, 3)], mode="reflect"), widths=[[2, 1], [3, 3]], mode="reflect")
case("pad_symmetric", "pad", [F], lambda a: mx.pad(a, [(2, 1), (3, 4)], mode="symmetric"), widths=[[2, 1], [3, 4]], mode="symmetric")
case("pad_empty_constant", "pad", [E], lambda a: mx.pad(a, 1), widths=[[1, 1]], mode="constant", value=0)
case("pad_bad_len", "pad", [A], lambda a: mx.pad(a, [(1, 1), (1, 1)]), widths=[[1, 1], [1, 1]], mode="constant", value=0)
# diag / diagonal / tri
case("diag_vec", "diag", [F[0]], lambda a: mx.diag(a), k=0)
case("diag_vec_k2", "diag", [F[0]], lambda a: mx.diag(a, 2), k=2)
case("diag_vec_kneg", "diag", [F[0]], lambda a: mx.diag(a, -1), k=-1)
case("diag_mat_k1", "diag", [F], lambda a: mx.diag(a, 1), k=1)
case("diag_mat_kneg", "diag", [F], lambda a: mx.diag(a, -2), k=-2)
case("diag_mat_far", "diag", [F], lambda a: mx.diag(a, 7), k=7)
case("diag_3d", "diag", [A], lambda a: mx.diag(a), k=0)
case("diagonal_default", "diagonal", [A], lambda a: mx.diagonal(a), offset=0, axis1=0, axis2=1)
case("diagonal_neg", "diagonal", [A], lambda a: mx.diagonal(a, -1, -1, 1), offset=-1, axis1=-1, axis2=1)
case("diagonal_same_axis", "diagonal", [A], lambda a: mx.diagonal(a, 0, 1, 1), offset=0, axis1=1, axis2=1)
case("diagonal_1d", "diagonal", [F[0]], lambda a: mx.diagonal(a), offset=0, axis1=0, axis2=1)
case("tril_batched", "tril", [A], lambda a: mx.tril(a), k=0)
case("triu_k2", "triu", [F], lambda a: mx.triu(a, 2), k=2)
case("tril_1d", "tril", [F[0]], lambda a: mx.tril(a), k=0)
# slice / slice_update (dynamic forms with static starts) and as_strided
case("slice_dyn", "slice_dynamic", [A], lambda a: mx.slice(a, mx.array([1, 2]), [1, 2], [2, 2, 2]), start=[1, 2], axes=[1, 2], size=[2, 2, 2])
case("slice_dyn_neg_axis", "slice_dynamic", [A], lambda a: mx.slice(a, mx.array([1]), [-1], [2, 3, 3]), start=[1], axes=[-1], size=[2, 3, 3])
case("slice_update_dyn", "slice_update_dynamic", [A, mx.full((1, 2), -1, mx.int32)], lambda a, u: mx.slice_update(a, u, mx.array([1, 2]), [1, 2]), start=[1, 2], axes=[1, 2])
case("slice_update_dyn_float_into_int", "slice_update_dynamic", [F, mx.array([[9.7, 8.2]])], lambda a, u: mx.slice_update(a, u, mx.array([2, 0]), [0, 1]), start=[2, 0], axes=[0, 1])
case("slice_dyn_clamped", "slice_dynamic", [A], lambda a: mx.slice(a, mx.array([0]), [2], [1, 2, 4]), start=[0], axes=[2], size=[1, 2, 4])
case("as_strided", "as_strided", [A], lambda a: mx.as_strided(a, (3, 3), (4, 1), 2), shape=[3, 3], strides=[4, 1], offset=2)
case("as_strided_T", "as_strided", [A], lambda a: mx.as_strided(a, (4, 2), (1, 6), 0), "T", shape=[4, 2], strides=[1, 6], offset=0)

# mx.slice / mx.slice_update with the start indices as an array (read at evaluation time).
# Only in-range starts: MLX 0.32 reads/writes out of bounds (or segfaults) otherwise.
for dt in DT:
    x = (mx.arange(12) % 5).astype(dt).reshape(3, 4)
    case(f"slice_at_{dt}", "slice_at", [x, mx.array([1, 2])], lambda a, s: mx.slice(a, s, [0, 1], [2, 2]), axes=[0, 1], size=[2, 2])
    case(f"slice_update_at_{dt}", "slice_update_at", [x, mx.ones((1, 2), dt), mx.array([2, 1])],
         lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
for v in [None, "T", "step2"]:
    sfx = v or "dense"
    case(f"slice_at_{sfx}", "slice_at", [A, mx.array([1])], lambda a, s: mx.slice(a, s, [1], [1, 2, 2]), v, axes=[1], size=[1, 2, 2])
    case(f"slice_update_at_{sfx}", "slice_update_at", [A, mx.array([[-1], [-2]]), mx.array([1])],
         lambda a, u, s: mx.slice_update(a, u, s, [1]), v, axes=[1])
case("slice_at_scalar_start", "slice_at", [F, mx.array(1)], lambda a, s: mx.slice(a, s, [0], [1, 4]), axes=[0], size=[1, 4])
case("slice_at_uint8_neg_axes", "slice_at", [F, mx.array([1, 2], mx.uint8)], lambda a, s: mx.slice(a, s, [-2, -1], [2, 2]), axes=[-2, -1], size=[2, 2])
case("slice_at_int64", "slice_at", [A, mx.array([1, 0, 3], mx.int64)], lambda a, s: mx.slice(a, s, [0, 1, 2], [1, 3, 1]), axes=[0, 1, 2], size=[1, 3, 1])
case("slice_at_no_axes", "slice_at", [F, mx.array([], mx.int32)], lambda a, s: mx.slice(a, s, [], [2, 2]), axes=[], size=[2, 2])
case("slice_at_zero_size", "slice_at", [F, mx.array([1])], lambda a, s: mx.slice(a, s, [0], [0, 2]), axes=[0], size=[0, 2])
case("slice_at_float_start", "slice_at", [F, mx.array([1.0, 2.0])], lambda a, s: mx.slice(a, s, [0, 1], [2, 2]), axes=[0, 1], size=[2, 2])
case("slice_at_bool_start", "slice_at", [F, mx.array([True])], lambda a, s: mx.slice(a, s, [0], [2, 2]), axes=[0], size=[2, 2])
case("slice_at_2d_start", "slice_at", [F, mx.array([[1, 2]])], lambda a, s: mx.slice(a, s, [0, 1], [2, 2]), axes=[0, 1], size=[2, 2])
case("slice_at_count_mismatch", "slice_at", [F, mx.array([1])], lambda a, s: mx.slice(a, s, [0, 1], [2, 2]), axes=[0, 1], size=[2, 2])
case("slice_at_repeat_axes", "slice_at", [F, mx.array([1, 1])], lambda a, s: mx.slice(a, s, [0, 0], [2, 2]), axes=[0, 0], size=[2, 2])
case("slice_at_bad_axis", "slice_at", [F, mx.array([1])], lambda a, s: mx.slice(a, s, [2], [2, 2]), axes=[2], size=[2, 2])
case("slice_at_size_too_large", "slice_at", [F, mx.array([1, 2])], lambda a, s: mx.slice(a, s, [0, 1], [4, 2]), axes=[0, 1], size=[4, 2])
case("slice_at_size_wrong_rank", "slice_at", [F, mx.array([1, 2])], lambda a, s: mx.slice(a, s, [0, 1], [2]), axes=[0, 1], size=[2])
case("slice_update_at_1d_update", "slice_update_at", [F, mx.array([100.0, 101.0]), mx.array([1, 2])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
case("slice_update_at_scalar_update", "slice_update_at", [F, mx.array(7.0), mx.array([1, 2])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
case("slice_update_at_partial_rows", "slice_update_at", [F, mx.array([[100.0], [101.0]]), mx.array(1)], lambda a, u, s: mx.slice_update(a, u, s, [1]), axes=[1])
case("slice_update_at_lead_broadcast", "slice_update_at", [A, mx.array([100, 101]), mx.array([1], mx.uint32)], lambda a, u, s: mx.slice_update(a, u, s, [2]), axes=[2])
case("slice_update_at_row_over_lead", "slice_update_at", [F, mx.array([100.0]), mx.array(1)], lambda a, u, s: mx.slice_update(a, u, s, [1]), axes=[1])
case("slice_update_at_scalar_fills_row", "slice_update_at", [F, mx.array(7.0), mx.array([1])], lambda a, u, s: mx.slice_update(a, u, s, [0]), axes=[0])
case("slice_update_dyn_partial_rows", "slice_update_dynamic", [F, mx.array([[100.0], [101.0]])], lambda a, u: mx.slice_update(a, u, mx.array(1), [1]), start=[1], axes=[1])
case("slice_update_at_float_into_int", "slice_update_at", [A, mx.array([[9.7, -8.2]]), mx.array([1, 2])], lambda a, u, s: mx.slice_update(a, u, s, [1, 2]), axes=[1, 2])
case("slice_update_at_no_axes", "slice_update_at", [F, mx.array([[100.0, 101.0]]), mx.array([], mx.int32)], lambda a, u, s: mx.slice_update(a, u, s, []), axes=[])
case("slice_update_at_zero_size", "slice_update_at", [F, mx.zeros((0, 2)), mx.array([1, 2])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
case("slice_update_at_float_start", "slice_update_at", [F, mx.array([[1.0]]), mx.array([1.0, 2.0])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
case("slice_update_at_count_mismatch", "slice_update_at", [F, mx.array([[1.0]]), mx.array([1])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
case("slice_update_at_repeat_axes", "slice_update_at", [F, mx.array([[1.0]]), mx.array([1, 2])], lambda a, u, s: mx.slice_update(a, u, s, [0, 0]), axes=[0, 0])
case("slice_update_at_2d_start", "slice_update_at", [F, mx.array([[1.0]]), mx.array([[1, 2]])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
case("slice_update_at_no_broadcast", "slice_update_at", [F, mx.zeros((2, 5)), mx.array([0, 0])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])
case("slice_update_at_too_tall", "slice_update_at", [F, mx.zeros((4, 1)), mx.array([0, 0])], lambda a, u, s: mx.slice_update(a, u, s, [0, 1]), axes=[0, 1])

write(os.path.join(os.path.dirname(__file__), "shape.json"), cases)
