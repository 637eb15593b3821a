"""The C array type (``mlx/core/_carray.c``) and its fast calls, against numpy and against the
Python path they stand in front of (the compiled op functions, ``_operators``): same values,
dtypes (MLX's weak typing of Python scalars), errors, streams and threads. The tests hold for
the pure-Python class too (MLX_ARM_CARRAY=0 or ABI mode); the first one checks which is in use."""
import gc
import glob
import os
import threading
import weakref

import numpy as np
import pytest

import mlx.core as mx
from mlx.core import _array, _ffi
from mlx.core._ffi import ffi, lib


def test_c_type_is_used_when_built():
    """A built, current extension must be used (a silent fallback would cost the speed)."""
    built = glob.glob(os.path.join(os.path.dirname(_ffi.__file__), "_mlx_carray*.so"))
    if _ffi.MODE == "api" and built and os.environ.get("MLX_ARM_CARRAY", "") != "0":
        assert _array._C is not None, built
        assert type(mx.add).__name__ == "_FastOp"
        assert type(mx.array(1.0)) is mx.array
    else:
        assert _array._C is None
        assert type(mx.add).__name__ == "function"


def test_fast_ops_are_chosen_from_the_tables():
    """Exactly the ops bound to one C function of one or two arrays and the stream get the C call:
    each of them returns what its Python function returns."""
    if _array._C is None:
        pytest.skip("pure-Python array class")
    fast = {n for n in dir(mx) if type(getattr(mx, n)).__name__ == "_FastOp"}
    assert {"add", "multiply", "subtract", "divide", "exp", "matmul", "maximum", "sqrt"} <= fast
    assert not {"where", "clip", "concatenate", "take"} & fast  # other signatures
    # (the ops of one array and int/bool/dtype parameters: test_args_ops)
    fast = {n for n in fast if getattr(mx, n)._op.fixed is not None
            and all(s[1] is None or s[1].__name__ == "_conv_array" for s in getattr(mx, n)._op.fixed.steps)}
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, (3, 3)).astype(np.float32)
    y = rng.uniform(0.5, 2.0, (3, 3)).astype(np.float32)
    a, b = mx.array(x), mx.array(y)
    for n in sorted(fast):
        f = getattr(mx, n)
        arity = 2 if list(f._op.weak) or len([s for s in f._op.fixed.steps if s[1] is not None]) == 2 else 1
        args = (a, b) if arity == 2 else (a,)
        try:
            want = f.__wrapped__(*args)
        except Exception as e:  # (bitwise ops on floats...): the same error from the fast call
            with pytest.raises(type(e)):
                mx.eval(f(*args))
            continue
        got = f(*args)
        assert got.dtype == want.dtype and got.shape == want.shape, n
        np.testing.assert_array_equal(np.array(got), np.array(want), err_msg=n)


@pytest.mark.parametrize("dtype,scalar,want_dtype", [
    (mx.float32, 2.5, mx.float32), (mx.float32, 3, mx.float32), (mx.float32, 2 ** 25, mx.float32),
    (mx.int32, 3, mx.int32), (mx.int32, 2.5, mx.float32), (mx.int32, -7, mx.int32),
    (mx.float16, 1.5, mx.float16), (mx.int8, 5, mx.int8), (mx.float32, True, mx.float32),
    (mx.float32, float("inf"), mx.float32), (mx.float32, 1e300, mx.float32),
])
def test_weak_scalars(dtype, scalar, want_dtype):
    """A Python scalar beside an array takes MLX's weak type, in both operand orders, for the
    operators and the functions (the C path's cases and the ones it leaves to Python)."""
    x = np.array([[1, 2], [3, 4]], dtype=np.float32)
    a = mx.array(x).astype(dtype)
    xs = np.array(a.astype(mx.float32))
    s = float(scalar)
    with np.errstate(over="ignore", invalid="ignore"):
        for got, want in ((a + scalar, xs + s), (scalar + a, s + xs), (a * scalar, xs * s), (scalar - a, s - xs),
                          (mx.add(a, scalar), xs + s), (mx.subtract(scalar, a), s - xs),
                          (mx.multiply(a, scalar), xs * s), (mx.maximum(a, scalar), np.maximum(xs, s))):
            assert got.dtype == want_dtype
            np.testing.assert_allclose(np.array(got.astype(mx.float32)), want.astype(np.float32), rtol=1e-3)


def test_weak_scalar_overflow_errors():
    """An int the array's dtype cannot hold is MLX's error, through the C path's fallback."""
    i32 = mx.array([1, 2], dtype=mx.int32)
    assert (mx.zeros((1,), dtype=mx.int32) + (2 ** 31 - 1)).item() == 2 ** 31 - 1  # the edges fit
    assert mx.add(mx.zeros((1,), dtype=mx.int32), -(2 ** 31)).item() == -(2 ** 31)
    with pytest.raises(ValueError, match="overflow"):
        i32 + 2 ** 31
    with pytest.raises(ValueError, match="overflow"):
        mx.add(i32, 2 ** 40)
    with pytest.raises(ValueError, match="overflow"):
        mx.array([1], dtype=mx.int8) * 300


def test_c_errors_become_exceptions():
    """A failing C op raises the library's error from the fast call (shapes that do not broadcast)."""
    a, b = mx.ones((2, 3)), mx.ones((4, 5))
    for f in (lambda: a + b, lambda: mx.add(a, b), lambda: mx.matmul(a, b), lambda: a * b):
        with pytest.raises(ValueError):
            f()


def test_other_arguments_take_the_python_path():
    """Keywords, a stream, a numpy operand or a list go through the Python function, with its
    results and errors."""
    a = mx.array([1.0, 2.0])
    np.testing.assert_array_equal(np.array(mx.add(a=a, b=a)), [2.0, 4.0])
    np.testing.assert_array_equal(np.array(mx.add(a, a, stream=mx.cpu)), [2.0, 4.0])
    np.testing.assert_array_equal(np.array(mx.add(a, np.float32(3.0))), [4.0, 5.0])
    np.testing.assert_array_equal(np.array(a + np.array([1.0, 1.0], dtype=np.float32)), [2.0, 3.0])
    np.testing.assert_array_equal(np.array(mx.exp(mx.array(0.0))), 1.0)
    with pytest.raises(ValueError):
        a + [1.0, 2.0]  # MLX: "Cannot perform addition on an mlx.core.array and list"
    with pytest.raises(ValueError):
        a + "x"
    with pytest.raises(TypeError):
        a + object()
    with pytest.raises(TypeError):
        mx.add(a)


def test_fast_op_stands_for_its_function():
    """``mx.add`` keeps its name, doc, signature and the binder's attributes."""
    import inspect

    assert mx.add.__name__ == "add"
    assert str(inspect.signature(mx.add)) == "(a, b, stream=None)"
    assert "mlx_add" in mx.add.__doc__
    assert mx.add._op.pyname == "add"


def _pending_streams(a):
    res = ffi.new("mlx_vector_int*", lib.mlx_vector_int_new())
    vec = lib.mlx_vector_array_new_data(ffi.new("mlx_array[]", [a._p[0]]), 1)
    try:
        _ffi.check(lib.mlx_arm_pending_streams(res, vec))
        out = ffi.new("int*")
        found = set()
        for i in range(lib.mlx_vector_int_size(res[0])):
            _ffi.check(lib.mlx_vector_int_get(out, res[0], i))
            found.add(int(out[0]))
        return found
    finally:
        lib.mlx_vector_array_free(vec)
        lib.mlx_vector_int_free(res[0])


def test_fast_calls_record_on_the_current_stream():
    """Inside ``with mx.stream(s)`` the fast calls record on that stream, and on the default one
    again afterwards."""
    a, b = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    mx.eval(a, b)
    s = mx.new_stream(mx.cpu)
    with mx.stream(s):
        for r in (a + b, mx.add(a, b), mx.exp(a), a * 2.0):
            assert _pending_streams(r) == {s.index}
    for r in (a + b, mx.add(a, b)):
        assert s.index not in _pending_streams(r)


def test_other_threads_record_on_their_own_stream():
    """A thread that did not import mlx records on its own stream (the Python path decides it),
    and its result evaluates there."""
    a, b = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    mx.eval(a, b)
    main = _pending_streams(a + b)
    out = {}

    def work():
        r = mx.add(a, b) * 2.0
        out["streams"] = _pending_streams(r)
        out["value"] = np.array(r)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert out["streams"] and not (out["streams"] & main)
    np.testing.assert_array_equal(out["value"], [8.0, 12.0])


def test_arrays_are_freed_when_dropped():
    """Dropping an array (made by the fast calls, the cffi callers or the constructor) frees its
    memory; a weak reference sees it go."""
    gc.collect()
    mx.eval(mx.zeros((1,)))
    base = mx.get_active_memory()
    a = mx.zeros((1 << 18,))
    for make in (lambda: a + a, lambda: mx.add(a, 1.0), lambda: mx.sum(a, axis=0, keepdims=True) + a,
                 lambda: mx.array(np.ones(1 << 18, dtype=np.float32))):
        r = make()
        mx.eval(r)
        ref = weakref.ref(r)
        assert mx.get_active_memory() >= base + (1 << 20)
        del r
        assert ref() is None
    del a
    gc.collect()
    assert mx.get_active_memory() <= base + 64  # (cached scalar constants stay)


def test_handle_moves_and_rebinding():
    """In-place operators and assignment rebind the object's handle (its cached shape and dtype
    follow); pickling round-trips; ``__setstate__`` replaces the handle."""
    import pickle

    a = mx.array([1, 2, 3])
    assert a.dtype == mx.int32 and a.shape == (3,)
    a += 1.5
    assert a.dtype == mx.float32
    np.testing.assert_array_equal(np.array(a), [2.5, 3.5, 4.5])
    a[1] = 0.0
    np.testing.assert_array_equal(np.array(a), [2.5, 0.0, 4.5])
    b = mx.ones((2, 1))
    b += mx.zeros((2, 3))
    assert b.shape == (2, 3) and b.ndim == 2 and b.size == 6
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(np.array(c), np.array(a))
    c.__setstate__((np.arange(4, dtype=np.int16), mx.int16.code if hasattr(mx.int16, "code") else 3))
    assert c.shape == (4,)


def test_matmul_operator():
    """``a @ b`` (the C slot when the C type is in use) against numpy; a Python scalar operand is
    still refused (matmul takes no weak scalars), reflected ``@`` keeps its order."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    a, b = mx.array(x), mx.array(y)
    np.testing.assert_allclose(np.array(a @ b), x @ y, rtol=1e-6)
    np.testing.assert_allclose(np.array(x @ b), x @ y, rtol=1e-6)  # numpy on the left: __rmatmul__ or numpy's
    with pytest.raises((ValueError, TypeError)):
        a @ 2.0
    with pytest.raises(ValueError):
        b @ a  # (3, 4) @ (2, 3)
    c = mx.array(x)
    c @= mx.ones((3, 3))
    np.testing.assert_allclose(np.array(c), x @ np.ones((3, 3), dtype=np.float32))


@pytest.mark.parametrize("idx", [0, -1, (1, 2), (slice(None), 1), (Ellipsis, slice(1, 3)), (None, 0),
                                 (slice(None, None, -1),), (0, Ellipsis, None, slice(0, 4, 2)), (1, -2, 3),
                                 (slice(5, None),), (slice(-100, 100, 3),)])
def test_basic_index(idx):
    """``a[idx]`` for ints, slices, None and ... (the C slot when in use) against numpy."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.array(mx.array(x)[idx]), x[idx])


def test_other_indices_take_the_python_path():
    """Array, list and numpy indices, and MLX's errors for a bad index, come from Python."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.array(x)
    np.testing.assert_array_equal(np.array(a[mx.array([1, 0])]), x[[1, 0]])
    np.testing.assert_array_equal(np.array(a[np.int64(1), 2]), x[1, 2])
    with pytest.raises(IndexError):
        a[5]
    with pytest.raises(ValueError):
        a[0, 0, 0, 0]
    with pytest.raises(ValueError):
        a[2 ** 70]


def test_null_handle_pointers_are_refused():
    """``wrap`` / ``._p =`` of a null pointer raise instead of reading through it."""
    if _array._C is None:
        pytest.skip("pure-Python array class")
    with pytest.raises(TypeError):
        _array.wrap(ffi.NULL)
    a = mx.array([1.0])
    with pytest.raises(TypeError):
        a._p = ffi.NULL
    assert a.item() == 1.0


# Calls of the ops with int / int-sequence / bool / dtype parameters (_fastpath.args_plan): the
# fast call (or, for the forms it leaves alone, the Python path) against the compiled Python
# function and numpy. (name, args after the array, kwargs, numpy of x)
_ARGS_CASES = [
    ("reshape", ((6, 4),), {}, lambda x: x.reshape(6, 4)),
    ("reshape", ([24],), {}, lambda x: x.reshape(24)),
    ("reshape", (), {"shape": (4, -1)}, lambda x: x.reshape(4, -1)),
    ("reshape", (np.array([2, 12]),), {}, lambda x: x.reshape(2, 12)),  # (Python path)
    ("transpose", (), {}, lambda x: x.transpose()),
    ("transpose", ((2, 0, 1),), {}, lambda x: x.transpose(2, 0, 1)),
    ("transpose", (), {"axes": [1, 0, 2]}, lambda x: x.transpose(1, 0, 2)),
    ("sum", (), {}, lambda x: x.sum()),
    ("sum", (-1,), {}, lambda x: x.sum(-1)),
    ("sum", (), {"axis": -1, "keepdims": True}, lambda x: x.sum(-1, keepdims=True)),
    ("sum", ((0, 2),), {}, lambda x: x.sum((0, 2))),
    ("sum", ([1],), {"keepdims": False}, lambda x: x.sum(1)),
    ("sum", (np.int64(1),), {}, lambda x: x.sum(1)),  # (Python path)
    ("sum", (1, 1), {}, lambda x: x.sum(1, keepdims=True)),  # (keepdims an int: Python path)
    ("mean", ((1, 2),), {}, lambda x: x.mean((1, 2))),
    ("max", (0,), {"keepdims": True}, lambda x: x.max(0, keepdims=True)),
    ("argmax", (), {"axis": 2}, lambda x: x.argmax(2)),
    ("expand_dims", (0,), {}, lambda x: np.expand_dims(x, 0)),
    ("expand_dims", ((0, 4),), {}, lambda x: np.expand_dims(x, (0, 4))),
    ("squeeze", (), {}, lambda x: x.squeeze()),
    ("swapaxes", (0, 2), {}, lambda x: x.swapaxes(0, 2)),
    ("moveaxis", (0, -1), {}, lambda x: np.moveaxis(x, 0, -1)),
    ("flatten", (), {"start_axis": 1}, lambda x: x.reshape(2, 12)),
    ("astype", (mx.int32,), {}, lambda x: x.astype(np.int32)),
    ("astype", (mx.float16,), {}, lambda x: x.astype(np.float16)),
    ("sum", (), {"axis": 1, "stream": mx.cpu}, lambda x: x.sum(1)),  # (Python path: a stream)
    ("softmax", (-1,), {"precise": True}, None),
    ("sort", (), {"axis": None}, lambda x: np.sort(x.reshape(-1))),
    ("topk", (2,), {}, None),
]


@pytest.mark.parametrize("name,args,kwargs,ref", _ARGS_CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(_ARGS_CASES)])
def test_args_ops(name, args, kwargs, ref):
    x = np.random.default_rng(1).uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    f = getattr(mx, name)
    got = f(mx.array(x), *args, **kwargs)
    if _array._C is not None:
        assert type(f).__name__ == "_FastOp", name
        want = f.__wrapped__(mx.array(x), *args, **kwargs)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.array(got), np.array(want))
    if ref is not None:
        r = ref(x)
        assert got.shape == r.shape
        np.testing.assert_allclose(np.array(got).astype(np.float64), r.astype(np.float64), rtol=1e-6, atol=1e-6)


def test_args_ops_defaults_equal_their_python_function():
    """Every op with a fast call of this kind, called with the array alone where its other
    parameters have defaults, returns what its Python function returns."""
    if _array._C is None:
        pytest.skip("pure-Python array class")
    from mlx.core import _fastpath

    ops = [n for n in dir(mx) if type(getattr(mx, n)).__name__ == "_FastOp" and _fastpath.args_plan(getattr(mx, n)._op)]
    assert {"reshape", "transpose", "sum", "mean", "max", "astype", "expand_dims", "squeeze"} <= set(ops)
    x = mx.array(np.random.default_rng(2).uniform(0.5, 2, (1, 3, 4)).astype(np.float32))
    checked = 0
    for n in ops:
        f = getattr(mx, n)
        plan = _fastpath.args_plan(f._op)
        if any(d == () for d in plan[1]):
            continue
        try:
            want = f.__wrapped__(x)
            mx.eval(want)
        except Exception as e:
            with pytest.raises(type(e)):
                mx.eval(f(x))
            continue
        got = f(x)
        assert got.dtype == want.dtype and got.shape == want.shape, n
        np.testing.assert_array_equal(np.array(got), np.array(want), err_msg=n)
        checked += 1
    assert checked >= 20


def test_args_ops_errors_are_the_python_paths():
    """Bad arguments give the Python path's errors (the fast call either refuses the form and
    lets Python raise, or the C function's error is raised the same way)."""
    a = mx.array(np.ones((2, 3), np.float32))
    for call in (lambda f: f(a, axis=5), lambda f: f(a, axis=True), lambda f: f(a, axis=(0, 0)),
                 lambda f: f(a, 0, False, 1), lambda f: f(a, bogus=1), lambda f: f(a, 0, axis=0)):
        errs = []
        for f in (mx.sum, getattr(mx.sum, "__wrapped__", mx.sum)):
            try:
                mx.eval(call(f))
                errs.append(None)
            except Exception as e:
                errs.append((type(e), str(e)))
        assert errs[0] is not None and errs[0] == errs[1]
    for bad in ((7,), (2, 2**40), ("a", 1)):
        with pytest.raises((ValueError, TypeError, OverflowError)):  # (the Python path's errors)
            mx.eval(a.reshape(*bad))
    with pytest.raises(TypeError):
        a.astype("float32")


def test_args_methods():
    """The method forms (a.reshape(2, 3), a.transpose(1, 0), a.T, a.sum(axis=...), a.astype
    with a positional stream) against numpy."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.array(x)
    np.testing.assert_array_equal(np.array(a.reshape(4, 6)), x.reshape(4, 6))
    np.testing.assert_array_equal(np.array(a.reshape((6, 4))), x.reshape(6, 4))
    np.testing.assert_array_equal(np.array(a.reshape(24)), x.reshape(24))
    np.testing.assert_array_equal(np.array(a.reshape(shape=[4, 6])), x.reshape(4, 6))
    np.testing.assert_array_equal(np.array(a.transpose()), x.transpose())
    np.testing.assert_array_equal(np.array(a.transpose(2, 0, 1)), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(np.array(a.transpose([1, 0, 2])), x.transpose(1, 0, 2))
    np.testing.assert_array_equal(np.array(a.T), x.T)
    np.testing.assert_array_equal(np.array(a.sum(axis=-1)), x.sum(-1))
    np.testing.assert_array_equal(np.array(a.sum(1, True)), x.sum(1, keepdims=True))
    np.testing.assert_array_equal(np.array(a.mean((0, 1))), x.mean((0, 1)))
    np.testing.assert_array_equal(np.array(a.max()), x.max())
    np.testing.assert_array_equal(np.array(a.squeeze()), x)
    np.testing.assert_allclose(np.array(a.exp()), np.exp(x), rtol=1e-6)
    b = a.astype(mx.int32)
    assert b.dtype == mx.int32
    np.testing.assert_array_equal(np.array(b), x.astype(np.int32))
    c = a.astype(mx.float16, mx.cpu)
    assert c.dtype == mx.float16
    m = mx.array.sum
    np.testing.assert_array_equal(np.array(m(a, 0)), x.sum(0))


@pytest.mark.parametrize("value,dtype,np_dtype", [
    (1.5, mx.float32, np.float32), (-7, mx.int32, np.int32), (True, mx.bool_, np.bool_), (2**40, mx.int64, np.int64),
    (2**63 + 5, mx.uint64, np.uint64), (200, mx.uint8, np.uint8), (-3, mx.int8, np.int8), (60000, mx.uint16, np.uint16),
    (-300, mx.int16, np.int16), (2**32 - 1, mx.uint32, np.uint32), (0.1, mx.float64, np.float64),
    (1.5, mx.float16, np.float16), (1.25, mx.bfloat16, None), (1 + 2j, mx.complex64, np.complex64)])
def test_item(value, dtype, np_dtype):
    """a.item() (C for bool, ints, float32/64) gives numpy's value and Python type."""
    a = mx.array(value, dtype=dtype)
    got = a.item()
    if np_dtype is not None:
        want = np.array(value, dtype=np_dtype).item()
        assert type(got) is type(want) and got == want
    else:
        assert type(got) is float and got == value
    b = mx.array(value, dtype=dtype) * 1 if dtype != mx.bool_ else mx.logical_not(mx.array(not value))
    assert b.item() == a.item()  # (an unevaluated node: item() evaluates)


def test_item_errors():
    with pytest.raises(ValueError, match="Only length-1 arrays"):
        mx.array([1.0, 2.0]).item()
    with pytest.raises(ValueError, match="Only length-1 arrays"):
        mx.array(np.zeros((0,), np.float32)).item()
    assert mx.array([[3]]).item() == 3


def test_item_after_the_dtype_changes_in_place():
    """item() reads the dtype through the object's cache: an in-place op that changes the dtype
    (``a += 1.5`` on ints) must give the new value and type."""
    a = mx.array(1, mx.int32)
    assert a.dtype == mx.int32 and a.item() == 1
    a += 1.5
    assert a.dtype == mx.float32
    got = a.item()
    assert type(got) is float and got == 2.5
    b = mx.array([7], mx.uint8)
    b.item()
    b[0] = 9
    assert b.item() == 9 and type(b.item()) is int


@pytest.mark.parametrize("v", [[1.0, 2.5, -3.0], [1, -2, 2**31 - 1], [1, 2.5], [2**31], [1e39, -1e39], [True, False],
                               [[1, 2], [3, 4]], list(range(100)), [float(i) / 7 for i in range(70)], [0.1], [-(2**31)]])
def test_array_from_list(v):
    """mx.array(list) (C for flat lists of only floats / only int32 ints) against numpy with
    MLX's dtype rule."""
    a = mx.array(v)
    flat = [x for r in v for x in r] if isinstance(v[0], list) else v
    if all(type(x) is bool for x in flat):
        want = np.array(v, np.bool_)
    elif all(type(x) is int for x in flat):
        want = np.array(v, np.int32 if all(-(2**31) <= x < 2**31 for x in flat) else np.int64)
    else:
        with np.errstate(over="ignore"):
            want = np.array(v, np.float64).astype(np.float32)
    assert a.dtype == {np.dtype(np.bool_): mx.bool_, np.dtype(np.int32): mx.int32, np.dtype(np.int64): mx.int64,
                       np.dtype(np.float32): mx.float32}[want.dtype]
    np.testing.assert_array_equal(np.array(a), want)


_NESTED = [
    [[1, 2], [3, 4]], [[1.0, 2], [3, 4]], [[True, False], [False, True]], [True, 1], [True, 2.5], [False, True, False],
    [[[1, 2, 3]], [[4, 5, 6]]], ((1, 2), (3, 4)), [(1.5, 2), [3, 4]], [[2**31, 1]], [[-(2**63), 2**63 - 1]],
    [[1e39, 2], [3, -1e39]], [[0.1] * 9] * 9, [[[[[[7]]]]]], [[1, 2**40], [True, 0.5]], [[float("nan"), float("inf")]],
    [[1, 2], [3, 4.0]], [[1] * 70, [2] * 70],
]
_NESTED_PYTHON = [
    [[1, 2], [3]], [[1, 2], 3], [1, [2, 3]], [[], []], [[1, 2], [3, [4]]], [[2**64, 1]], [[2**63, 1]],
    [[1 + 2j, 2]], [[mx.array(1.0), 2.0]], [[np.float32(1), 2.0]], [[None, 1]], [[1, "a"]], [[1, 2], (3, 4, 5)],
]


def _python_reference(v):
    """The Python path's result (the reference), or the exception it raises."""
    try:
        return _array._from_list(v, None)
    except Exception as e:  # noqa: BLE001 - compared below
        return e


@pytest.mark.parametrize("v", _NESTED + _NESTED_PYTHON)
def test_array_from_nested_list_equals_the_python_path(v):
    """mx.array(nested list) (C for regular lists of bools / ints / floats) gives exactly what
    the Python path gives: values, shape, dtype (bools -> bool, ints -> int32 or int64, any
    float -> float32), and the same exception class and message otherwise."""
    want = _python_reference(v)
    if isinstance(want, Exception):
        with pytest.raises(type(want)) as info:
            mx.array(v)
        assert str(info.value) == str(want)
        return
    got = mx.array(v)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.array(got), np.array(want))


def test_regular_nested_lists_stay_in_c(monkeypatch):
    """With the C type the regular lists never reach the Python path; the others do."""
    if _array._C is None:
        pytest.skip("pure-Python array class")
    calls, inner = [], _array._from_list

    def recorded(v, dtype):
        calls.append(v)
        return inner(v, dtype)

    monkeypatch.setattr(_array, "_from_list", recorded)
    for v in _NESTED:
        if isinstance(v, list):
            mx.array(v)
    assert calls == []
    mx.array([[1, 2], [3, 4]], mx.float32)  # a dtype
    mx.array([[2**63, 1]])  # beyond int64
    mx.array([[1 + 2j]])  # complex
    assert len(calls) == 3


def test_array_from_list_other_forms():
    assert mx.array([1.0, 2.0], mx.int32).dtype == mx.int32
    assert mx.array([1, 2], dtype=mx.float16).dtype == mx.float16
    a = mx.array([1.0, 2.0])
    a.__init__([3.0, 4.0])
    np.testing.assert_array_equal(np.array(a), [3.0, 4.0])

    class Sub(mx.array):
        pass

    s = Sub([1.0, 2.0])
    assert type(s) is Sub and s.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        mx.array([[1.0], [2.0, 3.0]])


def test_getitem_is_not_a_python_function_on_the_type():
    """CPython 3.11+ turns `a[i]` in a hot loop into a direct call of the type's __getitem__
    when that is a Python function, bypassing the C slot; with the C type it must be a C
    method (which gives the same results)."""
    if _array._C is None:
        pytest.skip("pure-Python array class")
    import types

    assert not isinstance(mx.array.__dict__["__getitem__"], types.FunctionType)
    a = mx.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(50):  # (specialized after a few runs)
        np.testing.assert_array_equal(np.array(a[1]), [3, 4, 5])
        np.testing.assert_array_equal(np.array(a[..., 1:3]), [[1, 2], [4, 5]])
        np.testing.assert_array_equal(np.array(a[mx.array([1])]), [[3, 4, 5]])
    np.testing.assert_array_equal(np.array(a.__getitem__((0, 2))), 2)


# ---- a[idx] = v (py27: the C slot for basic indices; _operators._setitem is the Python path) ----

_SET_CASES = [  # (index, value shape or None for a Python scalar)
    (0, None), (-1, (4,)), ((1, 2), (1,)), ((slice(None), 1), (2, 4)), ((Ellipsis, slice(1, 3)), (1, 1, 2)),
    ((None, 0), (3, 4)), ((slice(None, None, -1),), (3, 4)), ((0, Ellipsis, slice(0, 4, 2)), (2,)),
    ((1, -2, 3), ()), ((slice(5, None),), (4,)), ((slice(-100, 100, 3),), (3, 1)), ((Ellipsis, slice(2, 3), slice(None)), (1, 2, 1, 4)),
    ((0, None, slice(1, 2)), (1, 1, 4)), (Ellipsis, (2, 3, 4)), ((), None)]


def _python_setitem(a, idx, v):
    from mlx.core import _operators

    _operators._setitem(a, idx, v)


@pytest.mark.parametrize("idx,vshape", _SET_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_setitem_basic(idx, vshape, dtype):
    """``a[idx] = v`` (the C slot when in use) equals the Python __setitem__ and numpy, with the
    value an array (broadcast by MLX's rule: leading 1s beyond ``a[idx]``'s rank dropped) or a
    Python scalar."""
    x = np.arange(24, dtype=dtype).reshape(2, 3, 4)
    if vshape is None:
        v_np = v = 100 if dtype == np.int32 else 2.5
    else:
        v_np = (np.arange(int(np.prod(vshape)), dtype=dtype).reshape(vshape) + 50)
        v = mx.array(v_np)
    want = x.copy()
    want[idx] = v_np  # (numpy also drops the update's extra leading 1s)
    a, b = mx.array(x), mx.array(x)
    a[idx] = v
    _python_setitem(b, idx, v)
    assert a.dtype == b.dtype == mx.array(x).dtype and a.shape == b.shape == x.shape
    np.testing.assert_array_equal(np.array(a), np.array(b))
    np.testing.assert_array_equal(np.array(a), want)


@pytest.fixture
def python_setitem_calls(monkeypatch):
    """The indices that reached the Python __setitem__'s own work (recorded, then done)."""
    from mlx.core import _operators

    calls, inner = [], _operators._fast_setitem

    def recorded(a, idx, value):
        calls.append(idx)
        return inner(a, idx, value)

    monkeypatch.setattr(_operators, "_fast_setitem", recorded)
    return calls


def test_setitem_fast_cases_stay_in_c(python_setitem_calls):
    """With the C type the basic cases never reach Python; the others do, with their results."""
    a = mx.zeros((2, 3, 4))
    a[..., 1:2, :] = mx.ones((1, 2, 1, 4))
    a[0, 0, 0] = 5.0
    a[1] = 3
    fast = python_setitem_calls[:]
    a[mx.array([0])] = 7.0  # an array index
    a[np.int64(1), 0, 0] = 9.0  # a numpy int
    a[0, 2, 3] = np.float32(4.0)  # a numpy scalar value
    x = np.zeros((2, 3, 4), np.float32)
    x[:, 1, :] = 1
    x[0, 0, 0] = 5
    x[1] = 3
    x[[0]] = 7
    x[1, 0, 0] = 9
    x[0, 2, 3] = 4
    np.testing.assert_array_equal(np.array(a), x)
    if _array._C is not None:
        assert fast == []
        assert len(python_setitem_calls) == 3
    else:
        assert len(fast) == 3


@pytest.mark.parametrize("dtype,value,want", [
    (mx.int32, 7.9, 7), (mx.int8, -3.5, -3), (mx.float32, 2**30 + 1, 2.0**30), (mx.float32, True, 1.0),
    (mx.bool_, 2, True), (mx.float16, 0.5, 0.5), (mx.uint8, 255, 255), (mx.int64, 2**40, 2**40)])
def test_setitem_scalar_casts(dtype, value, want):
    """A Python scalar is weakly typed next to the array, then cast to its dtype (as MLX)."""
    a = mx.zeros((3,), dtype)
    a[1] = value
    assert a.dtype == dtype and a.tolist() == [0, want, 0]


def test_setitem_array_values_are_cast():
    a = mx.zeros((2, 2), mx.int32)
    a[0] = mx.array([1.7, -2.7])
    a[1, :] = mx.array([True, False])
    assert a.dtype == mx.int32 and a.tolist() == [[1, -2], [1, 0]]
    h = mx.zeros((3,), mx.float16)
    h[1:] = mx.array([0.25, 1e6])
    assert h.dtype == mx.float16 and h.tolist() == [0.0, 0.25, float("inf")]


def test_setitem_errors_are_the_python_paths():
    """The failures the C call refuses reach the Python __setitem__, which raises its errors
    (MLX's, except ``a[0, 5] = v``, which real MLX 0.32.4 accepts silently); the array is left
    as it was."""
    from mlx.core import _operators

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = [((0, 5), 1.0), ((0, 0, 0), 1.0), (0, mx.ones((2, 1, 3))), (0, mx.ones((2,))), (5, 1.0), (2 ** 70, 1.0)]
    for idx, v in cases:
        a, b = mx.array(x), mx.array(x)
        with pytest.raises(Exception) as got:
            a[idx] = v
        with pytest.raises(type(got.value)) as want:
            _operators._setitem(b, idx, v)
        assert str(got.value) == str(want.value), idx
        np.testing.assert_array_equal(np.array(a), x)
    with pytest.raises(ValueError, match="overflow"):
        mx.zeros((2,), mx.uint8)[0] = 300
    with pytest.raises(AttributeError):
        del mx.zeros((2,))[0]  # (MLX: arrays have no __delitem__)


def test_setitem_aliasing():
    """MLX's semantics: assignment rebinds the array object in place (every name for it sees
    the update); arrays taken from it before, and the value, are unchanged."""
    a = mx.array(np.arange(5, dtype=np.float32))
    alias = a
    before = a[1:3]
    whole = mx.array(a)
    u = mx.array([10.0, 11.0])
    a[1:3] = u
    assert alias is a and alias.tolist() == [0, 10, 11, 3, 4]
    assert before.tolist() == [1, 2] and whole.tolist() == [0, 1, 2, 3, 4]
    u[0] = -1.0
    assert a.tolist() == [0, 10, 11, 3, 4]
    a[1:4] = a[0:3]  # overlapping: the right side is read before the write
    assert a.tolist() == [0, 0, 10, 11, 4]
    a[:] = a * 2
    assert a.tolist() == [0, 0, 20, 22, 8]


def test_setitem_in_loops_on_other_threads_and_subclasses():
    """A warm loop (the interpreter's specialization), another thread, a subclass instance and a
    direct __setitem__ call all give numpy's values."""
    import types

    if _array._C is not None:
        assert not isinstance(mx.array.__dict__["__setitem__"], types.FunctionType)
    x = mx.zeros((1, 2, 16, 4))
    for i in range(16):
        x[..., i:i + 1, :] = mx.full((1, 2, 1, 4), float(i))
    np.testing.assert_array_equal(np.array(x)[0, 1, :, 0], np.arange(16, dtype=np.float32))
    out = {}

    def work():
        y = mx.zeros((3,))
        y[1] = 2.0
        out["y"] = np.array(y)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    np.testing.assert_array_equal(out["y"], [0, 2, 0])

    class Sub(mx.array):
        pass

    s = Sub([1.0, 2.0])
    s[0] = 5.0
    assert type(s) is Sub and s.tolist() == [5.0, 2.0]
    z = mx.zeros((2,))
    z.__setitem__(1, 3.0)
    assert z.tolist() == [0.0, 3.0]
    with pytest.raises(TypeError):
        z.__setitem__(1)


def test_setitem_in_a_shapeless_trace_keeps_the_update():
    """An update that is empty at the traced shape must still be in the graph for other shapes."""
    def f(x):
        y = x * 1
        y[2:3] = 0.0
        return y

    c = mx.compile(f, shapeless=True)
    np.testing.assert_array_equal(np.array(c(mx.array([1.0, 2.0]))), [1.0, 2.0])
    np.testing.assert_array_equal(np.array(c(mx.array([1.0, 2.0, 3.0, 4.0]))), [1.0, 2.0, 0.0, 4.0])
