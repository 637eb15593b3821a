"""Writes the small files tests/python/test_io.py loads with mlx-arm: .npy/.npz written by
numpy, .safetensors/.gguf written by REAL MLX, and expected.json with their contents as
real MLX loads them (values, dtypes, metadata).

Run: /opt/oracle/bin/python tests/python/golden/io/gen_io.py
"""
import json
import os

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
                 {"name": "tiny", "n": mx.array(7, mx.int32), "v": mx.array([1.0, 2.0])})
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
            e["metadata"] = {k: (v if isinstance(v, str) else {"dtype": str(v.dtype), "values": v.tolist()}) for k, v in meta.items()}
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
        json.dump({"mlx_version": mx.__version__, "files": expected, "errors": errors}, fh, indent=1)


if __name__ == "__main__":
    main()
