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
