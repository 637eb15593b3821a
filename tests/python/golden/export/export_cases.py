"""The export cases shared by gen_export.py (run with real MLX, writes export.json) and
tests/python/test_export.py (runs them with mlx-arm). Each case is a function of the module
``mx`` and a scratch directory: it exports a function, imports it and returns what the
imported function gives (a pytree of arrays and plain values); a case that raises records
the exception type and message."""
import os

import numpy as np

CASES = {}


def case(f):
    CASES[f.__name__] = f
    return f


def _x(mx, *shape, seed=0):
    """Fixed inputs (numpy's generator, so both libraries see the same values)."""
    return mx.array(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32))


def _round_trip(mx, d, fun, *args, shapeless=False, **kwargs):
    path = os.path.join(d, "f.mlxfn")
    mx.export_function(path, fun, *args, shapeless=shapeless, **kwargs)
    return mx.import_function(path)


@case
def elementwise_chain(mx, d):
    x, y = _x(mx, 3, 4), _x(mx, 4, seed=1)
    f = _round_trip(mx, d, lambda a, b: (mx.abs(mx.sin(a)) * b + 1, a > b), x, y)
    return f(x, y)


@case
def captured_constant_and_matmul(mx, d):
    w = _x(mx, 4, 2, seed=2)
    x = _x(mx, 3, 4)
    f = _round_trip(mx, d, lambda a: [a @ w + 0.5], x)
    return f(_x(mx, 3, 4, seed=5))


@case
def reductions_and_shapes(mx, d):
    x = _x(mx, 2, 3, 4)
    f = _round_trip(mx, d, lambda a: (a.sum(axis=1), mx.argmax(a, axis=2), mx.cumsum(a, axis=0),
                                      a.transpose(2, 0, 1).reshape(4, 6), a[:, ::-1, 1:3],
                                      mx.concatenate([a, a], axis=2)), x)
    return f(x)


@case
def sort_gather_scatter(mx, d):
    a = _x(mx, 4, 4)
    idx = mx.array([[0, 1, 2, 3], [1, 2, 0, 3]])
    f = _round_trip(mx, d, lambda a, b: (mx.take_along_axis(a, b, axis=0), mx.sort(a, axis=1),
                                         a.at[b[0]].add(1.0)), a, idx)
    return f(a, idx)


@case
def keywords(mx, d):
    x, z = mx.array([1, 2, 3]), mx.array([2, 2, 2])
    f = _round_trip(mx, d, lambda x, z=None: x * 2 + z, (x,), {"z": z})
    return [f(x, z=z), f((x,), {"z": z})]


@case
def exporter_signatures(mx, d):
    path = os.path.join(d, "m.mlxfn")
    with mx.exporter(path, lambda *a: sum(a)) as ex:
        ex(mx.array([1, 2]))
        ex(mx.array([1, 2]), mx.array([3, 4]))
        ex(mx.array([1.5]), mx.array([3.0]), mx.array([4.0]))
    f = mx.import_function(path)
    return [f(mx.array([5, 6])), f(mx.array([5, 6]), mx.array([1, 1])), f(mx.array([1.0]), mx.array([2.0]), mx.array([3.0]))]


@case
def shapeless_elementwise(mx, d):
    f = _round_trip(mx, d, lambda a, b: mx.exp(a) * b - a, _x(mx, 2, 3), _x(mx, 3), shapeless=True)
    return f(_x(mx, 4, 5, seed=3), _x(mx, 5, seed=4))


@case
def shapeless_matmul(mx, d):
    f = _round_trip(mx, d, lambda a, b: a @ b, _x(mx, 2, 3), _x(mx, 3, 4), shapeless=True)
    return f(_x(mx, 5, 6, seed=3), _x(mx, 6, 2, seed=4))


@case
def error_wrong_shape(mx, d):
    x, y = _x(mx, 2, 3), _x(mx, 3)
    f = _round_trip(mx, d, lambda a, b: a * 2 + b, x, y)
    return f(x, mx.ones((4,)))


@case
def error_wrong_dtype_keyword(mx, d):
    x = _x(mx, 2, 3)
    f = _round_trip(mx, d, lambda a, *, bias: [a + bias], x, bias=_x(mx, 3))
    return f(x, bias=mx.ones((3,), dtype=mx.int32))


@case
def error_mixed_inputs(mx, d):
    f = _round_trip(mx, d, lambda a, b: a + b, mx.array(1.0), mx.array(1.0))
    return f(mx.array(1.0), [mx.array(1.0)])


@case
def error_bad_export_input(mx, d):
    return _round_trip(mx, d, lambda a: a, mx.array(1.0), "hi")


@case
def error_bad_output(mx, d):
    return _round_trip(mx, d, lambda: (mx.zeros((3, 3)), 1))


@case
def error_missing_file(mx, d):
    return mx.import_function(os.path.join(d, "nonexistent.mlxfn"))


@case
def error_write_after_close(mx, d):
    with mx.exporter(os.path.join(d, "c.mlxfn"), lambda a: a) as ex:
        ex(mx.array(1.0))
    return ex(mx.array(1.0))


def _quantized(mx, seed, n=64, k=128, **kw):
    """A quantized weight (fixed values) as mx.quantize gives it: (wq, scales, biases?)."""
    w = _x(mx, n, k, seed=seed)
    return mx.quantize(w, **kw)


@case
def quantized_matmul_affine(mx, d):
    wq, s, b = _quantized(mx, 6)
    x = _x(mx, 3, 128, seed=7)
    f = _round_trip(mx, d, lambda a: mx.quantized_matmul(a, wq, s, b, transpose=True) + 1, x)
    return [f(x), f(_x(mx, 3, 128, seed=8))]


@case
def quantized_matmul_shapeless_bits8(mx, d):
    wq, s, b = _quantized(mx, 6, n=128, k=64, bits=8, group_size=32)
    f = _round_trip(mx, d, lambda a: mx.quantized_matmul(a, wq, s, b, transpose=False, bits=8, group_size=32),
                    _x(mx, 2, 128), shapeless=True)
    return f(_x(mx, 5, 128, seed=9))


@case
def quantized_mxfp4_and_dequantize(mx, d):
    wq, s = _quantized(mx, 10, mode="mxfp4", group_size=32)
    x = _x(mx, 2, 128, seed=11)
    f = _round_trip(mx, d, lambda a: (mx.quantized_matmul(a, wq, s, mode="mxfp4", group_size=32),
                                      mx.dequantize(wq, s, mode="mxfp4", group_size=32, dtype=mx.float32) * 2), x)
    return f(x)


@case
def quantized_gather_qmm(mx, d):
    w = _x(mx, 3, 32, 64, seed=12)
    wq, s, b = mx.quantize(w, group_size=32)
    x = _x(mx, 2, 1, 64, seed=13)
    idx = mx.array([2, 0])
    f = _round_trip(mx, d, lambda a, i: mx.gather_qmm(a, wq, s, b, rhs_indices=i, group_size=32), x, idx)
    return f(x, mx.array([1, 1]))


@case
def quantize_inside(mx, d):
    f = _round_trip(mx, d, lambda a: mx.quantize(a, group_size=32, bits=4), _x(mx, 4, 64, seed=14))
    return f(_x(mx, 4, 64, seed=15))


@case
def metadata_round_trip(mx, d):
    path = os.path.join(d, "m.mlxfn")
    meta = '{"name": "model", "params": 7000000000, "lr": 0.1, "note": "ünïcode \\" quote"}'
    x = mx.array([1.0, -2.0, 3.0])
    mx.export_function(path, mx.abs, x, metadata=meta)
    f, m = mx.import_function(path, return_metadata=True)
    plain = mx.import_function(path)
    mx.export_function(path, mx.abs, x)
    _, none = mx.import_function(path, return_metadata=True)
    with mx.exporter(path, lambda a: a * 2, metadata="two traces") as ex:
        ex(mx.array([1.0]))
        ex(mx.array([1.0, 2.0]))
    g, m2 = mx.import_function(path, return_metadata=True)
    return [f(x), plain(x), m, none, g(mx.array([3.0, 4.0])), m2]


@case
def error_metadata_not_a_string(mx, d):
    return mx.export_function(os.path.join(d, "m.mlxfn"), lambda a: a, mx.array(1.0), metadata={"a": 1})


@case
def error_metadata_with_callback(mx, d):
    return mx.export_function(lambda e: None, mx.abs, mx.array(1.0), metadata="m")


def _events(mx, fun, *args, **kwargs):
    events = []
    mx.export_function(events.append, fun, *args, **kwargs)
    return events


@case
def callback_events(mx, d):
    return _events(mx, lambda x, y: mx.log(mx.abs(x - y)).astype(mx.int32), mx.array(1.0), y=mx.array(1.0))


@case
def callback_constants_reduce_transpose(mx, d):
    c = _x(mx, 3, 2, seed=16)

    def fun(x, *, y):
        return (mx.log2(mx.exp(x @ c)).T.astype(mx.float16), mx.sum(x, axis=1, keepdims=True) * y,
                mx.reshape(x, (3, 2)))

    return _events(mx, fun, _x(mx, 2, 3), y=_x(mx, 2, 1, seed=17))


@case
def error_exporter_metadata_not_a_string(mx, d):
    return mx.exporter(os.path.join(d, "m.mlxfn"), lambda a: a, metadata=3)


# ---- mx.fast.metal_kernel on a build without Metal (MLX's CPU wheel; mlx-arm has no Metal) ----
# The kernel object is made and exported; calling it is MLX's RuntimeError.

_KSRC = """
    uint elem = thread_position_in_grid.x;
    out[elem] = metal::exp(a[elem]) + a_shape[0] + s;
"""


def _kernel(mx, **kw):
    args = dict(name="k", input_names=["a", "s"], output_names=["out", "aux"], source=_KSRC)
    args.update(kw)
    return mx.fast.metal_kernel(**args)


def _kcall(mx, k, a, s, **kw):
    args = dict(inputs=[a, s], grid=(a.size, 1, 1), threadgroup=(min(a.size, 256), 1, 1),
                output_shapes=[a.shape, (3,)], output_dtypes=[a.dtype, mx.int32])
    args.update(kw)
    return k(**args)


@case
def metal_kernel_callback_events(mx, d):
    """The exported CustomKernel node: MLX's generated name and source, grid, threadgroup,
    shape flags, math mode (template of each kind; an int8 scalar input)."""
    k = _kernel(mx, header="#define ONE 1\n", compile_options={"math_mode": "relaxed"})
    return _events(mx, lambda a, s: _kcall(mx, k, a, s, template=[("T", mx.float16), ("N", -3), ("B", False)],
                                           init_value=0.5, stream=mx.gpu),
                   _x(mx, 3, 4), mx.array(2, mx.int8))


@case
def metal_kernel_callback_events_atomic_big_inputs(mx, d):
    # (A thread attribute is named: without one, MLX's signature closes after each output when an
    # input's shape is passed and there are two outputs — broken Metal that mlx-arm does not copy.)
    k = _kernel(mx, atomic_outputs=True, ensure_row_contiguous=False,
                source="out[thread_index_in_simdgroup] = a_strides[0] + a_ndim;")
    return _events(mx, lambda a, s: _kcall(mx, k, a, s), _x(mx, 2, 8), _x(mx, 9))


@case
def error_metal_kernel_import(mx, d):
    """Exported on the GPU stream: importing the file (without Metal, without a GPU) is MLX's
    ValueError, shapeless or not — for the first such import in a process: MLX then keeps the
    stream it failed to make, and a later import succeeds (a shapeless one's call is then
    "CustomKernel cannot infer output shapes", a plain one's call a graph that cannot run).
    Only the first is golden here (gen_export runs every case in one process); mlx-arm refuses
    every import."""
    k = _kernel(mx)
    return _round_trip(mx, d, lambda a, s: _kcall(mx, k, a, s, stream=mx.gpu), _x(mx, 4), mx.array(1.0))


@case
def error_metal_kernel_call_without_metal(mx, d):
    return _kcall(mx, _kernel(mx), _x(mx, 4), mx.array(1.0), stream=mx.gpu)


@case
def error_metal_kernel_compiled_call(mx, d):
    k = _kernel(mx)
    return mx.compile(lambda a, s: _kcall(mx, k, a, s))(_x(mx, 4), mx.array(1.0))


@case
def error_metal_kernel_export_on_cpu_stream(mx, d):
    k = _kernel(mx)
    return _events(mx, lambda a, s: _kcall(mx, k, a, s, stream=mx.cpu), _x(mx, 4), mx.array(1.0))


@case
def error_metal_kernel_input_count(mx, d):
    return _kcall(mx, _kernel(mx), _x(mx, 4), mx.array(1.0), inputs=[_x(mx, 4)])


@case
def error_metal_kernel_output_dtypes_count(mx, d):
    k = _kernel(mx)
    return _events(mx, lambda a, s: _kcall(mx, k, a, s, output_dtypes=[mx.float32]), _x(mx, 4), mx.array(1.0))


@case
def error_metal_kernel_template_argument(mx, d):
    k = _kernel(mx)
    return _events(mx, lambda a, s: _kcall(mx, k, a, s, template=[("T", 1.5)]), _x(mx, 4), mx.array(1.0))


@case
def error_metal_kernel_no_outputs(mx, d):
    return _kernel(mx, output_names=[])


@case
def error_metal_kernel_unknown_compile_option(mx, d):
    return _kernel(mx, compile_options={"fast_math": True})


@case
def error_metal_kernel_compile_options_not_a_dict(mx, d):
    return _kernel(mx, compile_options=["safe"])


@case
def error_metal_kernel_bad_math_mode(mx, d):
    return _kernel(mx, compile_options={"math_mode": "exact"})


@case
def keywords_fill_positional_inputs(mx, d):
    # MLX matches a call by its number of inputs in all: keyword arrays (in name order) fill
    # the inputs after the positional ones, whatever the names (mlx-c's example-export.c).
    x, y = _x(mx, 3), _x(mx, 3, seed=1)
    f = _round_trip(mx, d, lambda a, b: a * b + a, x, y)
    return f(x, zz=y), f(b=x, a=y), f(q=x, p=y)
