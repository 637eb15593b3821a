#!/usr/bin/env python3
"""Reads files written by our Rust writers (core/tests/io_writers_python.rs) with the
reference readers — numpy, safetensors, gguf-py, and real MLX when importable — and checks
them against spec.json in the same directory. Exits non-zero with a message on any mismatch.

Usage: python check_written.py <dir>
"""
import json
import os
import sys

import numpy as np

d = sys.argv[1]
spec = json.load(open(os.path.join(d, "spec.json")))
try:
    import mlx.core as mx
except Exception:  # optional second oracle
    mx = None

NP = {"bool": "bool", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
      "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "float16": "float16",
      "float32": "float32", "float64": "float64", "complex64": "complex64"}
checked = []


def check_np(where, a, w):
    assert a.dtype.name == NP[w["dtype"]], (where, a.dtype, w["dtype"])
    assert list(a.shape) == w["shape"], (where, a.shape, w["shape"])
    got = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes().hex()
    assert got == w["hex"], (where, got, w["hex"])


for f in spec["files"]:
    path = os.path.join(d, f["file"])
    kind = f["kind"]
    if kind == "npy":
        w = f["arrays"][0]
        check_np(f["file"], np.load(path), w)
        if mx is not None:
            assert list(mx.load(path).shape) == w["shape"]
    elif kind == "npz":
        with np.load(path) as z:
            assert sorted(z.files) == sorted(w["name"] for w in f["arrays"]), (z.files,)
            for w in f["arrays"]:
                check_np(f["file"] + "/" + w["name"], z[w["name"]], w)
        if mx is not None:
            assert sorted(mx.load(path)) == sorted(w["name"] for w in f["arrays"])
    elif kind == "safetensors":
        import safetensors
        import safetensors.numpy
        t = safetensors.numpy.load_file(path)
        assert sorted(t) == sorted(w["name"] for w in f["arrays"]), sorted(t)
        for w in f["arrays"]:
            check_np(f["file"] + "/" + w["name"], t[w["name"]], w)
        with safetensors.safe_open(path, "numpy") as so:
            assert so.metadata() == f["metadata"], so.metadata()
        if mx is not None and not any(w["dtype"] == "float64" for w in f["arrays"]):
            arrays, meta = mx.load(path, return_metadata=True)
            assert meta == f["metadata"], meta
    elif kind == "gguf":
        import gguf
        r = gguf.GGUFReader(path)
        names = [t.name for t in r.tensors]
        assert names == [w["name"] for w in f["arrays"]], names
        for t, w in zip(r.tensors, f["arrays"]):
            assert t.tensor_type.name.lower() == w["ggml_type"], (t.name, t.tensor_type)
            assert [int(x) for x in t.shape][::-1] == w["shape"], (t.name, t.shape)
            with open(path, "rb") as fh:
                fh.seek(t.data_offset)
                assert fh.read(t.n_bytes).hex() == w["hex"], t.name
        for k, want in f["metadata"].items():
            field = r.fields[k]
            vt = gguf.GGUFValueType(field.types[0])
            assert vt.name == want["type"], (k, vt, want)
            if vt == gguf.GGUFValueType.STRING:
                assert bytes(field.parts[-1]).decode() == want["value"], k
            elif vt == gguf.GGUFValueType.ARRAY:
                # parts: key length, key, value type, element type, element count, ...
                assert int(field.parts[4][0]) == want["len"], (k, field.parts[4])
            else:
                assert field.parts[-1][0] == want["value"], (k, field.parts[-1][0], want)
        if mx is not None and f.get("mlx_loadable"):
            assert sorted(mx.load(path)) == sorted(w["name"] for w in f["arrays"])
    else:
        raise SystemExit(f"unknown kind {kind}")
    checked.append(f["file"])

print("checked", ", ".join(checked), "(mlx too)" if mx is not None else "(mlx absent)")
