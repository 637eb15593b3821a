"""mx.export_function / import_function / exporter (docs/EXPORT.md): the imported function
gives real MLX's values and errors (golden/export/export.json, written by
golden/export/gen_export.py under the oracle), round trips equal calling the function, and
unexportable ops, foreign and corrupt files are clear errors."""
import json
import os
import sys

import pytest

import mlx.core as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "golden", "export"))

from export_cases import CASES  # noqa: E402
from test_grad import _compare  # noqa: E402  (one pytree comparison for every golden file)

with open(os.path.join(HERE, "golden", "export", "export.json")) as f:
    GOLDEN = json.load(f)["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_real_mlx(name, tmp_path):
    want = GOLDEN[name]
    d = str(tmp_path)
    if "error" in want:
        with pytest.raises(Exception) as info:
            CASES[name](mx, d)
        assert type(info.value).__name__ == want["error"], f"raised {info.value!r}"
        assert str(info.value).replace(d, "<dir>") == want["message"]
        return
    _compare(CASES[name](mx, d), want)


def test_every_golden_case_exists():
    assert sorted(GOLDEN) == sorted(CASES)


def test_round_trip_equals_calling(tmp_path):
    w = mx.arange(12, dtype=mx.float32).reshape(3, 4) / 7

    def fun(x, y, *, scale):
        h = mx.maximum(x @ w, 0) * scale
        return h.sum(axis=-1), mx.softmax(h + y, axis=-1), mx.cumprod(x, axis=0)

    args = (mx.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]), mx.array([0.5, 1.0, -1.0, 2.0]))
    kw = {"scale": mx.array(1.5)}
    path = str(tmp_path / "f.bin")
    mx.export_function(path, fun, *args, **kw)
    got = mx.import_function(path)(*args, **kw)
    want = fun(*args, **kw)
    assert len(got) == len(want)
    for g, e in zip(got, want):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert mx.array_equal(g, e).item()


def test_unexportable_primitive_is_refused_at_export(tmp_path):
    path = tmp_path / "r.mlxfn"
    with pytest.raises(NotImplementedError, match="is not supported yet"):
        mx.export_function(str(path), lambda x: mx.linalg.inv(x), mx.eye(3), )
    assert not path.exists()


def test_apple_and_corrupt_files_are_refused(tmp_path):
    apple = tmp_path / "apple.mlxfn"
    apple.write_bytes((6).to_bytes(8, "little") + b"0.32.4" + bytes(16))
    with pytest.raises(NotImplementedError, match="Apple's MLX 0.32.4"):
        mx.import_function(str(apple))
    path = tmp_path / "f.mlxfn"
    mx.export_function(str(path), lambda a: a * 2, mx.ones((3,)))
    good = path.read_bytes()
    for n in (0, 8, 12, len(good) // 2, len(good) - 1):
        path.write_bytes(good[:n])
        with pytest.raises(ValueError):
            mx.import_function(str(path))


def test_exception_in_function_propagates(tmp_path):
    def boom(x):
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        mx.export_function(str(tmp_path / "b.mlxfn"), boom, mx.ones((2,)))


def _metal_kernel_fun():
    k = mx.fast.metal_kernel(name="copy", input_names=["a"], output_names=["out"],
                             source="uint e = thread_position_in_grid.x; out[e] = a[e];")
    return lambda a: k(inputs=[a], grid=(a.size, 1, 1), threadgroup=(a.size, 1, 1), output_shapes=[a.shape],
                       output_dtypes=[a.dtype])[0]


@pytest.mark.parametrize("shapeless", [False, True])
def test_metal_kernel_files_are_written_and_refused_on_import(tmp_path, shapeless):
    """Real MLX's CPU build writes the file and refuses its first import (golden case
    error_metal_kernel_import); every import is refused here (no Metal, no stream cache)."""
    path = str(tmp_path / "k.mlxfn")
    mx.export_function(path, _metal_kernel_fun(), mx.zeros((4,)), shapeless=shapeless)
    for _ in range(2):
        with pytest.raises(ValueError, match="Cannot make gpu stream"):
            mx.import_function(path)


def test_metal_kernel_is_a_node_only_inside_an_export_trace():
    fun = _metal_kernel_fun()
    with pytest.raises(RuntimeError, match="No Metal back-end"):
        fun(mx.zeros((4,)))
    events = []
    mx.export_function(events.append, lambda a: fun(a) + 1, mx.zeros((4,)))
    assert [e["name"] for e in events if e["type"] == "primitive"] == ["CustomKernel", "Add"]
    # Other transforms do not export: the call is refused there too (as MLX).
    with pytest.raises(RuntimeError, match="No Metal back-end"):
        mx.grad(lambda a: fun(a).sum())(mx.zeros((4,)))
