"""mx.compile over the C API's mlx_compile: values equal to the uncompiled function (and to
numpy), one trace per argument signature (Python side effects run at trace time only, as in
MLX), new constants and shapes retrace, inputs/outputs state (lists and mx.random.state),
shapeless, disable_compile / MLX_DISABLE_COMPILE, and the function's own exception."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mlx.core as mx


def _chain(x, row, s):
    return mx.exp(-(x * row + s)) * 0.5 - x


def test_values_match_uncompiled_and_numpy():
    xn = np.linspace(-2, 2, 60, dtype=np.float32).reshape(6, 10)
    rn = np.linspace(0.5, 1.5, 10, dtype=np.float32)
    x, r = mx.array(xn), mx.array(rn)
    got = mx.compile(_chain)(x, r, 0.25)
    assert np.array_equal(np.array(got), np.array(_chain(x, r, 0.25)))  # bit-identical
    # exp is within 1 ulp of libm (docs/CPU-KERNELS.md); `e·0.5 − x` cancels, so bound the
    # error by the terms' size (≤ 4.5 here), not by the small result.
    np.testing.assert_allclose(np.array(got), np.exp(-(xn * rn + 0.25)) * 0.5 - xn, rtol=1e-6, atol=1e-6)


def test_traced_once_per_signature():
    calls = []

    def f(x, k):
        calls.append(1)  # a Python side effect: runs when tracing only
        return mx.sqrt(mx.abs(x)) + k

    c = mx.compile(f)
    a = mx.array([1.0, 4.0, 9.0])
    assert c(a, 1).tolist() == [2.0, 3.0, 4.0]
    assert c(mx.array([16.0, 0.0, 1.0]), 1).tolist() == [5.0, 1.0, 2.0]
    assert len(calls) == 1
    assert c(a, 2).tolist() == [3.0, 4.0, 5.0]  # a new constant traces again
    assert c(mx.array([1.0, 4.0]), 2).tolist() == [3.0, 4.0]  # so does a new shape
    assert len(calls) == 3


def test_state_inputs_outputs():
    state = [mx.array(1.0)]

    def step(x):
        state[0] = state[0] + x
        return state[0] * 2

    c = mx.compile(step, inputs=state, outputs=state)
    assert c(mx.array(3.0)).item() == 8.0
    assert c(mx.array(3.0)).item() == 14.0  # replayed with the updated state
    assert state[0].item() == 7.0


def test_random_state_advances():
    rnd = mx.compile(lambda: mx.random.uniform(shape=(8,)), inputs=mx.random.state, outputs=mx.random.state)
    a, b = rnd(), rnd()
    assert not np.array_equal(np.array(a), np.array(b))


def test_shapeless():
    calls = []

    def f(x):
        calls.append(1)
        return mx.tanh(x) * x

    c = mx.compile(f, shapeless=True)
    for n in (3, 7, 11):
        x = mx.arange(n, dtype=mx.float32) / n
        assert np.array_equal(np.array(c(x)), np.array(f(x)))
    assert len(calls) == 4  # one trace for every length, plus the three plain calls


# Traced first where the op is a no-op (size-1 reduced axes, a full slice, a reshape or
# broadcast to the same shape), then called where it is not: a shapeless trace must keep the
# op. Real MLX 0.32.4 crashes (segfault) on the reductions here and returns the unsliced
# input for the slices; numpy is the oracle.
_NO_OP_AT_FIRST_SHAPE = [
    ("sum keepdims", lambda x: x.sum(0, keepdims=True), lambda x: x.sum(0, keepdims=True), [(1, 3), (4, 3)]),
    ("sum", lambda x: x.sum(0), lambda x: x.sum(0), [(1, 3), (4, 3)]),
    ("mean keepdims", lambda x: x.mean(0, keepdims=True), lambda x: x.mean(0, keepdims=True), [(1, 3), (4, 3)]),
    ("mean all", lambda x: mx.mean(x, keepdims=True), lambda x: np.mean(x, keepdims=True), [(1,), (4,), (7,)]),
    ("max", lambda x: x.max(0, keepdims=True), lambda x: x.max(0, keepdims=True), [(1, 3), (4, 3)]),
    ("prod", lambda x: x.prod(-1, keepdims=True), lambda x: x.prod(-1, keepdims=True), [(3, 1), (3, 4)]),
    ("all", lambda x: mx.all(x > 2, 0, keepdims=True), lambda x: np.all(x > 2, 0, keepdims=True), [(1, 3), (4, 3)]),
    ("x * x.sum(-1)", lambda x: x * x.sum(-1, keepdims=True), lambda x: x * x.sum(-1, keepdims=True), [(3, 1), (3, 4)]),
    ("var", lambda x: mx.var(x, 0, ddof=1), lambda x: np.var(x, 0, ddof=1), [(1, 3), (4, 3)]),
    ("softmax", lambda x: mx.softmax(x, 0), lambda x: np.exp(x) / np.exp(x).sum(0), [(1, 3), (4, 3)]),
    ("slice rows", lambda x: x[0:1], lambda x: x[0:1], [(1, 3), (4, 3)]),
    ("slice columns", lambda x: x[:, 0:3], lambda x: x[:, 0:3], [(1, 3), (4, 5)]),
]


@pytest.mark.parametrize("name,f,ref,shapes", _NO_OP_AT_FIRST_SHAPE, ids=[c[0] for c in _NO_OP_AT_FIRST_SHAPE])
def test_shapeless_keeps_ops_that_are_no_ops_at_the_first_shape(name, f, ref, shapes):
    c = mx.compile(f, shapeless=True)
    for shape in shapes:
        xn = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape) / 4
        got = np.array(c(mx.array(xn)))
        want = ref(xn)
        assert got.shape == want.shape, (name, shape)
        assert np.allclose(got, want, rtol=1e-5, equal_nan=True), (name, shape, got, want)


def test_shapeless_reshape_and_broadcast_to_the_first_shape_refuse_others():
    # As the plain function (and MLX): ValueError, not the input handed back.
    for f in (lambda x: x.reshape(1, 3), lambda x: mx.broadcast_to(x, (1, 3))):
        c = mx.compile(f, shapeless=True)
        assert c(mx.ones((1, 3))).shape == (1, 3)
        with pytest.raises(ValueError):
            c(mx.ones((4, 3)))


def test_shapeless_reshape_keeps_the_inferred_axis():
    # As real MLX 0.32.4 (checked by hand with the oracle; numpy gives the values): the traced
    # reshape keeps its -1, so one trace serves every size the fixed 6 divides, and a size it
    # does not divide is reshape's ValueError — not a new trace.
    calls = []

    def f(x):
        calls.append(1)
        return x.reshape(x.shape[0] * x.shape[1], -1) * 2

    c = mx.compile(f, shapeless=True)
    for shape in [(2, 3, 4), (2, 3, 8), (1, 6, 5), (3, 2, 2)]:
        x = mx.arange(int(np.prod(shape)), dtype=mx.float32).reshape(shape)
        got = np.array(c(x))
        np.testing.assert_array_equal(got, np.array(x).reshape(6, -1) * 2)
    assert len(calls) == 1
    with pytest.raises(ValueError, match="size 125"):  # (MLX words it "into shape (6,20)")
        c(mx.zeros((5, 5, 5)))
    g = mx.compile(lambda x: x.reshape(-1, 2), shapeless=True)
    assert g(mx.zeros((2, 2))).shape == (2, 2) and g(mx.zeros((4, 3))).shape == (6, 2)


def test_shapeless_mean_one_trace():
    calls = []

    def f(x):
        calls.append(1)
        return mx.mean(x, keepdims=True)

    c = mx.compile(f, shapeless=True)
    for n in (2, 4, 7, 1):
        assert c(mx.ones(n)).item() == 1.0
    assert len(calls) == 1  # the count is read at run time, as MLX's NumberOfElements


def test_function_exception_is_raised():
    def bad(x):
        raise KeyError("from the function")

    with pytest.raises(KeyError, match="from the function"):
        mx.compile(bad)(mx.array(1.0))


def test_disable_enable():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    c = mx.compile(f)
    mx.disable_compile()
    try:
        c(mx.array(1.0))
        c(mx.array(1.0))
        assert len(calls) == 2
    finally:
        mx.enable_compile()
    c(mx.array(1.0))
    c(mx.array(1.0))
    assert len(calls) == 3


def test_env_disables_compile():
    code = "import mlx.core as mx\nn=[]\nc=mx.compile(lambda x: (n.append(1), x)[1])\nc(mx.array(1));c(mx.array(1))\nprint(len(n))"
    env = dict(os.environ, MLX_DISABLE_COMPILE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2"


def test_module_argument_keeps_its_type():
    import mlx.nn as nn

    lin = nn.Linear(3, 2)
    x = mx.array([[1.0, 2.0, 3.0]])
    c = mx.compile(lambda m, v: m(v))
    assert np.array_equal(np.array(c(lin, x)), np.array(lin(x)))
    assert isinstance(lin.weight, mx.array) and lin.weight.shape == (2, 3)  # the caller's values are back


def test_export_to_dot(tmp_path):
    """mx.export_to_dot: keyword names name their arrays, the rest are A, B, ...; written to a
    file object or a path (hand-written expectation of a*b + a)."""
    import io

    a, b = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    mx.eval(a, b)  # evaluated: graph sources
    c = a * b + a
    want = (
        "digraph {\n"
        '{ rank=source; "a"; }\n'
        '{ rank=source; "b"; }\n'
        '{ P0 [label="Multiply", shape=rectangle]; }\n'
        '"a" -> P0\n'
        '"b" -> P0\n'
        '{ "D"; }\n'  # three names are set: the next generated one is the 4th letter
        'P0 -> "D"\n'
        '{ P1 [label="Add", shape=rectangle]; }\n'
        '"D" -> P1\n'
        '"a" -> P1\n'
        '{ rank=sink; "out"; }\n'
        'P1 -> "out"\n'
        "}\n"
    )
    f = io.StringIO()
    mx.export_to_dot(f, a=a, b=b, out=c)
    assert f.getvalue() == want
    p = tmp_path / "g.dot"
    mx.export_to_dot(str(p), a=a, b=b, out=c)
    assert p.read_text() == want
    # Positional outputs in a tree; unnamed arrays get letters.
    f = io.StringIO()
    mx.export_to_dot(f, [c])
    text = f.getvalue()
    assert text.count("shape=rectangle") == 2 and text.count(" -> ") == 6
    assert '{ rank=sink; "D"; }' in text
    with pytest.raises(ValueError):
        mx.export_to_dot(3, c)


def test_output_tree_and_state_per_dtype():
    """Each argument signature keeps its own output tree and state updates: a float call and
    an int call of one compiled function (MLX's test_compile_changing_outputs_with_state)."""
    state = [mx.array(1.0)]

    def fun(y):
        x = state[0]
        if y.dtype == mx.float32:
            state[0] = 2 * y
            return [x, y, x + y]
        state[0] = state[0] * 2
        return x + y

    cfun = mx.compile(fun, inputs=state, outputs=state)
    for _ in range(3):
        out = cfun(mx.array(1.0))  # state 2·1 = 2
        assert isinstance(out, list) and len(out) == 3 and state[0].item() == 2.0
        out = cfun(mx.array(1))  # state 2·2 = 4, out = 2 + 1
        assert isinstance(out, mx.array) and out.item() == 3.0 and state[0].item() == 4.0


def _data_ptr(a):
    return np.asarray(a, copy=False).__array_interface__["data"][0]


def test_compiled_elementwise_writes_into_a_donated_input():
    # Nothing holds `x` but the call: the fused kernel writes its result into x's buffer (as
    # MLX's compiled kernels do); values as numpy's.
    f = mx.compile(lambda x: mx.sin(x) + 1)
    xn = np.linspace(-3, 3, 1000, dtype=np.float32)
    x = mx.array(xn)
    mx.eval(x)
    ptr = _data_ptr(x)
    out = f(x)
    del x
    mx.eval(out)
    assert _data_ptr(out) == ptr
    np.testing.assert_allclose(np.array(out), np.sin(xn) + 1, rtol=1e-6, atol=1e-6)


def test_compiled_elementwise_keeps_an_input_still_held():
    f = mx.compile(lambda x, y: mx.exp(x) * y - x)
    xn = np.linspace(-2, 2, 257, dtype=np.float32).reshape(1, 257)
    yn = np.linspace(1, 3, 3 * 257, dtype=np.float32).reshape(3, 257)
    x, y = mx.array(xn), mx.array(yn)
    mx.eval(x, y)
    ptrs = (_data_ptr(x), _data_ptr(y))
    out = f(x, y)
    mx.eval(out)
    # Both inputs are still held here: the output is a buffer of its own and they are intact.
    assert _data_ptr(out) not in ptrs
    np.testing.assert_array_equal(np.array(x), xn)
    np.testing.assert_array_equal(np.array(y), yn)
    np.testing.assert_allclose(np.array(out), np.exp(xn) * yn - xn, rtol=1e-6, atol=1e-6)
    # A y nothing else holds (the input with the output's shape) carries the result, while x
    # is broadcast into it block by block.
    y2 = mx.array(yn)
    mx.eval(y2)
    ptr = _data_ptr(y2)
    out2 = f(x, y2)
    del y2
    mx.eval(out2)
    assert _data_ptr(out2) == ptr
    np.testing.assert_allclose(np.array(out2), np.exp(xn) * yn - xn, rtol=1e-6, atol=1e-6)
