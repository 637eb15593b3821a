"""The binding's fast paths against numpy and hand-computed values: cffi's API-mode module (and
the ABI-mode fallback, in a subprocess), ``item()`` through ``mlx_array_item_<type>``,
``mx.array`` of a flat list packed straight into its dtype, and ``a[i]`` for a Python int."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import mlx.core as mx
from mlx.core import _ffi


def test_api_module_is_used_when_built():
    """A compiled module next to the package must load (a stale or broken one would silently
    cost the speed): ABI mode only when it is absent or MLX_ARM_CFFI=abi."""
    built = glob.glob(os.path.join(os.path.dirname(_ffi.__file__), "_mlx_api*.so"))
    if os.environ.get("MLX_ARM_CFFI", "").lower() == "abi":
        assert _ffi.MODE == "abi"
    elif built:
        assert _ffi.MODE == "api", built
    else:
        # CI installs the package with a C compiler at hand (scripts/test.sh): the module must be there.
        assert os.environ.get("CI") != "true" or os.environ.get("MLX_ARM_PY_SOURCE") == "1", "no _mlx_api module"
        assert _ffi.MODE == "abi"


def test_stale_api_module_is_refused():
    """The compiled module is used only for the declarations it was built from: one more
    declaration (a header changed since the build) means ABI mode."""
    if _ffi.MODE != "api":
        pytest.skip("no API-mode module in use")
    path = _ffi._library_path()
    assert _ffi._api_mode(_ffi.API, path) is not None
    assert _ffi._api_mode(_ffi.API + "int mlx_arm_not_built_yet(int x);\n", path) is None


_ABI_CHECK = """
import numpy as np
import mlx.core as mx
from mlx.core import _ffi
assert _ffi.MODE == "abi", _ffi.MODE
x = np.arange(6, dtype=np.float32).reshape(2, 3)
a = mx.array(x)
assert np.array_equal(np.array(a * a + 1), x * x + 1)
assert np.array_equal(np.array(a[1]), x[1]) and a[-1, 2].item() == 5.0
assert mx.array([1.5, 2.0]).tolist() == [1.5, 2.0] and mx.array(7).item() == 7
try:
    a.reshape(4)
except ValueError as e:
    assert "reshape" in str(e)
else:
    raise AssertionError("no error")
assert mx.grad(lambda v: (v * v).sum())(mx.array([3.0])).item() == 6.0  # a cffi callback
print("ok")
"""


def test_abi_mode_fallback():
    env = dict(os.environ, MLX_ARM_CFFI="abi")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the same mlx.core (source or installed)
    out = subprocess.run([sys.executable, "-c", _ABI_CHECK], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("dtype,value,want", [
    (mx.bool_, True, True), (mx.uint8, 250, 250), (mx.uint16, 65535, 65535), (mx.uint32, 4000000000, 4000000000),
    (mx.uint64, 2 ** 40 + 3, 2 ** 40 + 3), (mx.int8, -128, -128), (mx.int16, -300, -300), (mx.int32, -7, -7),
    (mx.int64, -(2 ** 40), -(2 ** 40)), (mx.float32, 0.1, float(np.float32(0.1))), (mx.float64, 0.1, 0.1),
    (mx.float16, 0.1, float(np.float16(0.1))), (mx.bfloat16, 1.5, 1.5), (mx.complex64, 1 + 2j, 1 + 2j),
])
def test_item_every_dtype(dtype, value, want):
    a = mx.array(value, dtype)
    got = a.item()
    assert got == want and type(got) is type(want)
    assert (a + 0).item() == want  # a lazy array: item() evaluates


def test_item_refuses_size_other_than_one():
    with pytest.raises(ValueError, match="Only length-1 arrays"):
        mx.array([1.0, 2.0]).item()
    assert mx.array([[3]]).item() == 3


@pytest.mark.parametrize("value,dtype", [
    ([0.1, -2.5, 3.0], mx.float32), ([1, -2, 2 ** 31 - 1, -(2 ** 31)], mx.int32),
    ([2 ** 31, 1], mx.int64), ([1, 2.5], mx.float32), ([True, False], mx.bool_), ([True, 2], mx.int32),
    ([1e39, -1e39, 1.0], mx.float32), ([float("nan"), float("inf")], mx.float32), ([1.0, 1j], mx.complex64),
])
def test_array_from_flat_list(value, dtype):
    a = mx.array(value)
    assert a.dtype == dtype and a.shape == (len(value),)
    with np.errstate(over="ignore"):  # 1e39 becomes inf in float32, as in MLX
        want = np.array(value, dtype={mx.float32: np.float32, mx.int32: np.int32, mx.int64: np.int64,
                                      mx.bool_: np.bool_, mx.complex64: np.complex64}[dtype])
    np.testing.assert_array_equal(np.array(a), want)


def test_array_from_list_with_dtype():
    a = mx.array([1, 2], mx.float16)
    assert a.dtype == mx.float16 and a.tolist() == [1.0, 2.0]


X = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("i", [0, 1, -1, -2])
def test_int_index(i):
    a = mx.array(X)
    got = a[i]
    assert got.shape == X[i].shape and np.array_equal(np.array(got), X[i])
    assert np.array_equal(np.array(a[i][i + 1]), X[i][i + 1])  # twice: a 2-d, then a 1-d array
    assert mx.array([4, 5, 6])[i].item() == [4, 5, 6][i]


def test_int_index_errors():
    with pytest.raises(IndexError):
        mx.array(X)[2]
    with pytest.raises(IndexError):
        mx.array(X)[-3]
    with pytest.raises(ValueError):
        mx.array(1.0)[0]


def test_gil_policy_of_the_api_module():
    """The API-mode module keeps the GIL for graph building (as MLX's binding) and releases it
    for what may run long: the preamble it is compiled with wraps exactly the latter."""
    import importlib.util

    from mlx.core import _cdef

    spec = importlib.util.spec_from_file_location("apimod", os.path.join(os.path.dirname(_ffi.__file__), "_api_module.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    include = os.environ.get("MLX_ARM_INCLUDE") or os.path.join(os.path.dirname(__file__), "..", "..", "include")
    if not os.path.exists(os.path.join(include, "mlx", "c", "ops.h")):
        pytest.skip("no C headers at hand")
    pre = m.gil_preamble(_cdef.cdef_from_headers(include), include)
    released = {line.split()[1].split("(")[0] for line in pre.splitlines() if "PyEval_SaveThread" in line}
    for name in ("mlx_eval", "mlx_async_eval", "mlx_array_item_float32", "mlx_array_eval", "mlx_load_safetensors"):
        assert name in released, name
    for name in ("mlx_add", "mlx_reshape", "mlx_fft_fft", "mlx_random_normal", "mlx_fast_rms_norm",
                 "mlx_array_free", "mlx_array_shape", "mlx_array_dtype", "mlx_arm_index_basic"):
        assert name not in released, name
    assert "#define Py_BEGIN_ALLOW_THREADS {" in pre


def test_eval_lets_other_python_threads_run():
    """mx.eval releases the GIL (as in MLX): a Python thread runs while the main thread is
    inside the C call evaluating a graph of a few hundred ms (had the call kept the GIL, no
    bytecode of the other thread could run between its start and its end)."""
    import threading
    import time

    stop, stamps = threading.Event(), [0.0]

    def spin():
        while not stop.is_set():
            t = time.perf_counter()
            if t - stamps[-1] > 1e-3:
                stamps.append(t)

    x = mx.random.normal((384, 384))
    mx.eval(x)
    y = x
    for _ in range(40):
        y = mx.matmul(y, x) * 1e-3
    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.02)
        t0 = time.perf_counter()
        mx.eval(y)
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join()
    inside = [s for s in stamps if t0 < s < t1]
    assert inside, (t1 - t0, len(stamps))
