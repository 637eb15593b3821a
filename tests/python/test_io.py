"""mx.load / save / savez / savez_compressed / save_safetensors / save_gguf: files written by
numpy and by REAL MLX (golden/io/, gen_io.py) load as real MLX loads them (expected.json),
and files mlx-arm writes read back with numpy and with mlx-arm itself."""
import json
import math
import os

import numpy as np
import pytest

import mlx.core as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "io")
with open(os.path.join(HERE, "expected.json")) as _f:
    EXPECTED = json.load(_f)


def _need(*names):
    for n in names:
        try:
            getattr(mx, n)
        except NotImplementedError:
            pytest.skip(f"this library build lacks mx.{n}")


def _same(a, want):
    assert str(a.dtype) == want["dtype"]
    if "shape" in want:
        assert list(a.shape) == want["shape"]
    got, exp = np.array(a.tolist(), dtype=np.float64), np.array(want["values"], dtype=np.float64)
    assert got.shape == exp.shape and np.allclose(got, exp, rtol=0, atol=0), (a.tolist(), want["values"])


@pytest.mark.parametrize("name", sorted(EXPECTED["files"]))
def test_load_files_written_by_numpy_and_real_mlx(name):
    _need("load")
    want = EXPECTED["files"][name]
    got = mx.load(os.path.join(HERE, name), return_metadata="metadata" in want)
    meta = None
    if "metadata" in want:
        assert isinstance(got, tuple) and len(got) == 2
        got, meta = got
    arrays = {"": got} if isinstance(got, mx.array) else got
    assert isinstance(arrays, dict) and sorted(arrays) == sorted(want["arrays"])
    for k, w in want["arrays"].items():
        _same(arrays[k], w)
    if meta is not None:
        assert sorted(meta) == sorted(want["metadata"])
        for k, w in want["metadata"].items():
            if isinstance(w, str):
                assert meta[k] == w
            else:
                _same(meta[k], w)


@pytest.mark.parametrize("expr", sorted(EXPECTED["errors"]))
def test_load_errors_as_real_mlx(expr):
    _need("load")
    want = EXPECTED["errors"][expr]
    p = lambda n: os.path.join(HERE, n)  # noqa: E731
    with pytest.raises({"ValueError": ValueError, "RuntimeError": RuntimeError}[want]):
        eval(expr, {"mx": mx, "p": p})


def test_save_npy_reads_back_with_numpy(tmp_path):
    _need("save", "load")
    a = mx.arange(12, dtype=mx.int16).reshape(3, 4) - 5
    mx.save(str(tmp_path / "a"), a)  # ".npy" appended, as MLX
    n = np.load(tmp_path / "a.npy")
    assert n.dtype == np.int16 and (n == np.arange(12, dtype=np.int16).reshape(3, 4) - 5).all()
    b = mx.load(tmp_path / "a.npy")
    assert b.dtype == mx.int16 and b.tolist() == a.tolist()


@pytest.mark.parametrize("fn", ["savez", "savez_compressed"])
def test_savez_reads_back_with_numpy(tmp_path, fn):
    _need(fn, "load")
    x = mx.array([[1.5, -2.0]], mx.float32)
    y = mx.array([True, False, True])
    getattr(mx, fn)(str(tmp_path / "z"), x, y=y)
    with np.load(tmp_path / "z.npz") as z:
        assert sorted(z.files) == ["arr_0", "y"]
        assert z["arr_0"].dtype == np.float32 and z["arr_0"].tolist() == [[1.5, -2.0]]
        assert z["y"].dtype == np.bool_ and z["y"].tolist() == [True, False, True]
    back = mx.load(str(tmp_path / "z.npz"))
    assert back["arr_0"].tolist() == [[1.5, -2.0]] and back["y"].tolist() == [True, False, True]


def test_save_safetensors_round_trip_with_metadata(tmp_path):
    _need("save_safetensors", "load")
    arrays = {"w": mx.arange(6.0).reshape(2, 3) / 8, "i": mx.array([1, 2**20], mx.int32), "h": mx.array([0.5], mx.float16)}
    mx.save_safetensors(str(tmp_path / "m"), arrays, metadata={"a": "b"})
    got, meta = mx.load(str(tmp_path / "m.safetensors"), return_metadata=True)
    assert meta == {"a": "b"}
    for k, a in arrays.items():
        assert got[k].dtype == a.dtype and got[k].tolist() == a.tolist()
    raw = (tmp_path / "m.safetensors").read_bytes()  # the format itself: u64 header length + JSON
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    assert header["__metadata__"] == {"a": "b"} and header["w"]["dtype"] == "F32" and header["w"]["shape"] == [2, 3]


def test_save_gguf_round_trip(tmp_path):
    _need("save_gguf", "load")
    arrays = {"a": mx.arange(8.0).reshape(2, 4) / 3, "b": mx.array([1.0, -0.5], mx.float16)}
    mx.save_gguf(str(tmp_path / "g.gguf"), arrays, {"s": "text", "n": mx.array(3, mx.int32), "v": mx.array([1.5, 2.5])})
    got, meta = mx.load(str(tmp_path / "g.gguf"), return_metadata=True)
    for k, a in arrays.items():
        assert got[k].dtype == a.dtype and got[k].shape == a.shape
        assert all(math.isclose(x, y, rel_tol=0, abs_tol=0) for x, y in zip(np.ravel(got[k].tolist()), np.ravel(a.tolist())))
    assert meta["s"] == "text" and meta["n"].item() == 3 and meta["v"].tolist() == [1.5, 2.5]


def test_file_objects(tmp_path):
    _need("save", "load", "save_safetensors")
    with open(tmp_path / "f.npy", "wb") as fh:
        mx.save(fh, mx.array([1, 2], mx.int32))
    assert np.load(tmp_path / "f.npy").tolist() == [1, 2]
    with open(tmp_path / "f.npy", "rb") as fh:
        assert mx.load(fh).tolist() == [1, 2]
    with open(tmp_path / "s.safetensors", "wb") as fh:
        mx.save_safetensors(fh, {"x": mx.array([0.5])})
    with open(tmp_path / "s.safetensors", "rb") as fh:
        assert mx.load(fh)["x"].tolist() == [0.5]
    with open(os.path.join(HERE, "np_b.npz"), "rb") as fh:  # written by numpy
        assert mx.load(fh, format="npz")["x"].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(TypeError):
        mx.save(3, mx.array([1]))
