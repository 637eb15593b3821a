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
            if isinstance(w, (str, list)):  # a string, or a list of strings
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


def test_save_gguf_list_of_strings_and_mixed_metadata(tmp_path):
    """MLX's test_save_and_load_gguf_metadata_mixed: strings, lists of strings and arrays
    together round-trip with their Python types."""
    _need("save_gguf", "load")
    meta = {"meta1": ["data1", "data2", "data345"], "meta2": mx.array([1, 2, 3, 4]), "meta3": "data",
            "meta4": mx.array(1.5), "empty_list": [], "uni": ["\u00fc", ""]}
    f = str(tmp_path / "m.gguf")
    mx.save_gguf(f, {"test": mx.ones((4, 4), dtype=mx.int32)}, meta)
    _, got = mx.load(f, return_metadata=True)
    assert sorted(got) == sorted(meta)
    for k, v in meta.items():
        if isinstance(v, mx.array):
            assert got[k].dtype == v.dtype and got[k].tolist() == v.tolist()
        else:
            assert got[k] == v and type(got[k]) is type(v)


def test_load_gguf_float64_scalar_as_float32(tmp_path):
    """GGUF float64 metadata loads as float32, as MLX's loader converts it (hand-written file:
    real MLX 0.32.4 itself segfaults on a float64 scalar, so there is no oracle file)."""
    _need("load")
    import struct

    def s(x):
        b = x.encode()
        return struct.pack("<Q", len(b)) + b
    # GGUF v3: magic, version, 0 tensors, 1 kv; key "x", type 12 (float64), value 1/3
    blob = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + s("x") + struct.pack("<Id", 12, 1.0 / 3.0)
    f = tmp_path / "f64.gguf"
    f.write_bytes(blob)
    arrays, meta = mx.load(str(f), return_metadata=True)
    assert arrays == {} and meta["x"].dtype == mx.float32 and meta["x"].item() == np.float32(1.0 / 3.0)


def test_arm_load_gguf_keeps_blocks_and_types():
    """mlx.arm.load_gguf: gguf-py's Q4_0 blocks byte for byte, and gguf-py's dequantization
    through mlx.arm.ggml_dequantize / ggml_matmul; metadata keeps its GGUF types."""
    import mlx.arm

    want = EXPECTED["native"]["gguf_py_q4.gguf"]["w"]
    tensors, meta = mlx.arm.load_gguf(os.path.join(HERE, "gguf_py_q4.gguf"))
    t = tensors["w"]
    assert t.type == want["type"] and list(t.shape) == want["shape"] and t.blocks.dtype == mx.uint8
    assert bytes(np.asarray(t.blocks).tobytes()).hex() == want["blocks_hex"]
    deq = np.array(want["dequantized"], dtype=np.float32)
    got = mlx.arm.ggml_dequantize(t.blocks, t.type, 64)
    assert np.array_equal(np.asarray(got), deq)
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(np.float32)
    y = mlx.arm.ggml_matmul(mx.array(x), t.blocks, t.type, 64)
    # As llama.cpp's vec_dot_q4_0_q8_0: each row of x is quantized to Q8_0 first.
    xq = np.asarray(mlx.arm.ggml_dequantize(mlx.arm.ggml_quantize(mx.array(x), "q8_0"), "q8_0", 64))
    assert np.allclose(np.asarray(y), xq @ deq.T, rtol=1e-5, atol=1e-5)
    assert np.abs(np.asarray(y) - x @ deq.T).max() < 0.05
    assert meta["general.architecture"] == "tiny"
    # float64 stays float64 on the native path (mx.load gives float32, as MLX does)
    _, m2 = mlx.arm.load_gguf(os.path.join(HERE, "gguf_py_f64.gguf"))
    assert m2["f64s"].dtype == mx.float64 and m2["f64s"].tolist() == [0.1, 2.5]
    _, m3 = mlx.arm.load_gguf(os.path.join(HERE, "gguf_py_meta.gguf"))
    assert m3["words"] == ["x", "yz", ""] and m3["u64"].dtype == mx.uint64
    with pytest.raises(ValueError):
        mlx.arm.ggml_dequantize(t.blocks, "q9_9", 64)


def test_npy_load_is_counted_and_donated(tmp_path):
    """Real MLX (0.32.4, /tmp/don.py-style run): after reset_peak_memory, `load(f)` peaks at
    the live arrays + the loaded 4 KiB, and `load(f) * scale` at exactly the same figure,
    because the loaded buffer is donated to the product."""
    x = mx.random.normal((1024,))
    mx.eval(x)
    f = str(tmp_path / "d.npy")
    mx.save(f, x)
    mx.reset_peak_memory()
    base = mx.get_active_memory()
    scale = mx.array(2.0)
    y = mx.load(f)
    mx.eval(y)
    load_only = mx.get_peak_memory()
    assert load_only >= base + 4096  # the data live in allocator memory, as in MLX
    y = mx.load(f) * scale
    mx.eval(y)
    assert mx.get_peak_memory() == load_only
    assert np.array_equal(np.array(y), np.array(x) * 2)
