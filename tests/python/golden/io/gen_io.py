"""Writes the small files tests/python/test_io.py loads with mlx-arm: .npy/.npz written by
numpy, .safetensors/.gguf written by REAL MLX (and one .gguf by gguf-py), and expected.json with their contents as
real MLX loads them (values, dtypes, metadata).

Run: /opt/oracle/bin/python tests/python/golden/io/gen_io.py
"""
import json
import os

import gguf
from gguf import quants
import mlx.core as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = lambda n: os.path.join(HERE, n)  # noqa: E731
    np.save(p("np_a.npy"), np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
    np.save(p("np_i64.npy"), np.array([[-3, 2**40], [7, 0]], dtype=np.int64))
    np.savez(p("np_b.npz"), x=np.arange(5, dtype=np.int32), y=np.array([1.5, -2.25], dtype=np.float16))
    np.savez_compressed(p("np_c.npz"), np.arange(4, dtype=np.uint8), z=np.ones((2, 2), dtype=np.bool_))
    mx.save_safetensors(p("mlx_d.safetensors"), {"w": mx.arange(6.0).reshape(3, 2), "b": mx.array([1, -1], mx.int16)},
                        metadata={"format": "mlx", "note": "hello"})
    mx.save_gguf(p("mlx_e.gguf"), {"t32": mx.arange(4.0) / 3, "t16": mx.array([[1.0, 2.5]], mx.float16)},
                 {"name": "tiny", "n": mx.array(7, mx.int32), "v": mx.array([1.0, 2.0]),
                  "tokens": ["a", "b\"c", "\u00fcn\u00ef"]})
    # gguf-py's writer with value types MLX converts on load (float64 lists -> float32) or
    # keeps (uint64, bool, lists of strings). A float64 *scalar* is left out (test_io.py
    # checks ours by hand).
    w = gguf.GGUFWriter(p("gguf_py_meta.gguf"), "tiny")
    w.add_uint64("u64", 2**40 + 1)
    w.add_bool("flag", True)
    w.add_array("words", ["x", "yz", ""])
    w.add_tensor("t", np.arange(6, dtype=np.float32).reshape(2, 3))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    # A float64 list, alone and last in a file without tensors: after a float64 value real MLX
    # advances by the float32 size, so whatever follows (keys, tensor infos) is misread and it
    # segfaults.
    w = gguf.GGUFWriter(p("gguf_py_f64.gguf"), "tiny")
    w.add_key_value("f64s", [0.1, 2.5], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.FLOAT64)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    # gguf-py's Q4_0 blocks and its reference dequantization: the oracle for mlx.arm.load_gguf
    # (blocks as stored) and mlx.arm.ggml_dequantize / ggml_matmul.
    wq = np.random.default_rng(11).standard_normal((2, 64)).astype(np.float32)
    blocks = quants.quantize(wq, gguf.GGMLQuantizationType.Q4_0)
    w = gguf.GGUFWriter(p("gguf_py_q4.gguf"), "tiny")
    w.add_tensor("w", blocks, raw_shape=blocks.shape, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    native = {"gguf_py_q4.gguf": {"w": {"type": "q4_0", "shape": [2, 64], "blocks_hex": blocks.tobytes().hex(),
                                        "dequantized": quants.dequantize(blocks, gguf.GGMLQuantizationType.Q4_0).tolist()}}}
    expected = {}
    for f in sorted(os.listdir(HERE)):
        if f.endswith((".py", ".json")):
            continue
        got = mx.load(p(f), return_metadata=f.endswith((".safetensors", ".gguf")))
        meta = None
        if isinstance(got, tuple):
            got, meta = got
        arrs = {"": got} if isinstance(got, mx.array) else got
        e = {"arrays": {k: {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.tolist()} for k, a in arrs.items()}}
        if meta is not None:
            e["metadata"] = {k: (v if isinstance(v, (str, list)) else {"dtype": str(v.dtype), "values": v.tolist()})
                             for k, v in meta.items()}
        expected[f] = e
    errors = {}
    for expr in ["mx.load(p('np_a.npy'), return_metadata=True)", "mx.load(p('np_b.npz'), return_metadata=True)",
                 "mx.load(p('nope.npy'))", "mx.load(p('np_a.npy'), format='xyz')", "mx.load(p('gen_io'))"]:
        try:
            eval(expr, {"mx": mx, "p": p})
            errors[expr] = None
        except Exception as ex:
            errors[expr] = type(ex).__name__
    with open(p("expected.json"), "w") as fh:
        json.dump({"mlx_version": mx.__version__, "files": expected, "errors": errors, "native": native}, fh, indent=1)


if __name__ == "__main__":
    main()
