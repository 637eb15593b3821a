#!/usr/bin/env python3
"""Writes the io golden files with the reference implementations (numpy, safetensors, gguf-py,
real MLX) and a manifest (manifest.json) of what each file holds, as those libraries read it.

Run with the oracle venv:  /opt/oracle/bin/python core/tests/data/io/gen_io.py
The Rust tests (core/tests/io_golden.rs) parse every file and compare with the manifest.
"""
import json
import os
import struct

import gguf
import mlx.core as mx
import numpy as np
import safetensors.numpy
from gguf import GGMLQuantizationType as QT
from gguf import GGUFValueType as VT

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(1234)
manifest = {"npy": [], "npz": [], "safetensors": [], "gguf": []}

NP_TO_MLX = {
    "bool": "bool", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "float16": "float16",
    "float32": "float32", "float64": "float64", "complex64": "complex64",
}


def c_le_bytes(a):
    """Row-major little-endian bytes of a numpy array (what our readers must end up with)."""
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def rec(name, dtype, shape, data_hex, **extra):
    d = {"name": name, "dtype": dtype, "shape": list(shape), "hex": data_hex}
    d.update(extra)
    return d


# ---------------------------------------------------------------- .npy (numpy writes)
def npy_case(fname, arr, version=None, **extra):
    path = os.path.join(OUT, fname)
    if version is None:
        np.save(path, arr)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, arr, version=version)
    back = np.load(path)  # numpy's own reading is the oracle
    manifest["npy"].append({
        "file": fname,
        "dtype": NP_TO_MLX[back.dtype.name],
        "shape": list(back.shape),
        "fortran_order": bool(back.flags.f_contiguous and not back.flags.c_contiguous),
        "big_endian": back.dtype.byteorder == ">",
        "c_hex": c_le_bytes(back).hex(),
        "np_save_identical": version is None and back.dtype.byteorder != ">",
        **extra,
    })


npy_case("f32_2x3.npy", rng.standard_normal((2, 3)).astype(np.float32))
npy_case("i64_5.npy", np.arange(-2, 3, dtype=np.int64))
npy_case("bool_2x2.npy", np.array([[True, False], [False, True]]))
npy_case("f16_4.npy", np.array([1.0, -2.5, 65504.0, np.inf], dtype=np.float16))
npy_case("u8_scalar.npy", np.array(7, dtype=np.uint8))
npy_case("c64_3.npy", np.array([1 + 2j, -3.5j, 0.25], dtype=np.complex64))
npy_case("f64_empty_0x3.npy", np.zeros((0, 3), dtype=np.float64))
npy_case("u16_2x2x2.npy", np.arange(8, dtype=np.uint16).reshape(2, 2, 2))
npy_case("i8_7.npy", np.array([-128, -1, 0, 1, 2, 3, 127], dtype=np.int8))
npy_case("be_i4_3.npy", np.array([1, -2, 0x01020304], dtype=">i4"))
npy_case("be_f8_2x2.npy", np.array([[1.5, -2.0], [3.25, 1e300]], dtype=">f8"))
npy_case("be_c8_2.npy", np.array([1 + 2j, -0.5j], dtype=">c8"))
npy_case("fortran_f32_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
npy_case("fortran_i16_2x3x4.npy", np.asfortranarray(np.arange(24, dtype=np.int16).reshape(2, 3, 4)))
npy_case("v2_u32_4.npy", np.array([1, 2, 3, 0xFFFFFFFF], dtype=np.uint32), version=(2, 0))
npy_case("v3_i32_3.npy", np.array([-1, 0, 1], dtype=np.int32), version=(3, 0))
npy_case("big_shape_1x1x1x1x1x2.npy", np.ones((1, 1, 1, 1, 1, 2), dtype=np.float32))
npy_case("long_dim_100000.npy", np.zeros((100000, 0), dtype=np.int32))

# .npy written by real MLX (bfloat16 as '<V2', 1-D with fortran_order True).
bf = mx.array([1.0, -2.0, 0.5, 3.140625], dtype=mx.bfloat16)
mx.save(os.path.join(OUT, "mlx_bf16_4.npy"), bf)
manifest["npy"].append({
    "file": "mlx_bf16_4.npy", "dtype": "bfloat16", "shape": [4],
    "fortran_order": None, "big_endian": False,
    "c_hex": np.array(bf.view(mx.uint16)).astype("<u2").tobytes().hex(),
    "np_save_identical": False,
})
m2 = mx.arange(6, dtype=mx.int32).reshape(2, 3)
mx.save(os.path.join(OUT, "mlx_i32_2x3.npy"), m2)
manifest["npy"].append({
    "file": "mlx_i32_2x3.npy", "dtype": "int32", "shape": [2, 3],
    "fortran_order": None, "big_endian": False,
    "c_hex": c_le_bytes(np.array(m2)).hex(), "np_save_identical": False,
})


# ---------------------------------------------------------------- .npz
def npz_case(fname, writer, arrays, reader=None):
    path = os.path.join(OUT, fname)
    writer(path, **arrays)
    with np.load(path) as z:
        recs = [rec(k, NP_TO_MLX[z[k].dtype.name], z[k].shape, c_le_bytes(z[k]).hex()) for k in z.files]
    if reader is not None:  # real MLX reading the archive must agree with numpy
        loaded = mx.load(path)
        assert sorted(loaded) == sorted(r["name"] for r in recs), (loaded.keys(), recs)
    manifest["npz"].append({"file": fname, "arrays": recs})


arrs = {
    "weight": rng.standard_normal((3, 4)).astype(np.float32),
    "bias": np.arange(4, dtype=np.int64),
    "mask": np.array([True, False, True]),
    "nested/name": np.array([1.5], dtype=np.float16),
}
npz_case("savez.npz", np.savez, arrs, reader=mx.load)
npz_case("savez_compressed.npz", np.savez_compressed, arrs, reader=mx.load)
npz_case("savez_compressed_zeros.npz", np.savez_compressed, {"z": np.zeros((64, 64), dtype=np.float32)})
mx.savez(os.path.join(OUT, "mlx_savez.npz"), a=mx.array([1, 2, 3], dtype=mx.int32), b=mx.ones((2, 2)))
with np.load(os.path.join(OUT, "mlx_savez.npz")) as z:
    manifest["npz"].append({"file": "mlx_savez.npz", "arrays": [
        rec(k, NP_TO_MLX[z[k].dtype.name], z[k].shape, c_le_bytes(z[k]).hex()) for k in z.files]})


# ---------------------------------------------------------------- safetensors
def st_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return n, json.loads(f.read(n))


def st_case(fname, tensors_np, metadata, mlx_dtypes=None):
    """Records names/dtypes/shapes/absolute data offsets (from Python's json of the header)
    and the bytes (from safetensors' own loader)."""
    path = os.path.join(OUT, fname)
    n, header = st_header(path)
    loaded = safetensors.numpy.load_file(path) if tensors_np is None else tensors_np
    recs = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        with open(path, "rb") as f:
            f.seek(8 + n + b)
            raw = f.read(e - b)
        if name in loaded:
            assert raw == c_le_bytes(loaded[name]), name
        dt = (mlx_dtypes or {}).get(name) or NP_TO_MLX[loaded[name].dtype.name]
        recs.append(rec(name, dt, info["shape"], raw.hex(), file_dtype=info["dtype"],
                        start=8 + n + b, end=8 + n + e))
    manifest["safetensors"].append({"file": fname, "metadata": header.get("__metadata__", {}),
                                    "tensors": recs})


st = {
    "a.f32": rng.standard_normal((2, 3)).astype(np.float32),
    "b.f64": np.array([1.0, -1.0], dtype=np.float64),
    "c.i8": np.array([[-1, 2], [3, -4]], dtype=np.int8),
    "d.u16": np.arange(5, dtype=np.uint16),
    "e.bool": np.array([True, False]),
    "f.i64_scalar": np.array(-42, dtype=np.int64),
    "g.f16_empty": np.zeros((0, 2), dtype=np.float16),
    "h.u64": np.array([2**64 - 1], dtype=np.uint64),
}
safetensors.numpy.save_file(st, os.path.join(OUT, "st_numpy.safetensors"),
                            metadata={"format": "np", "note": "é \"quoted\" \\ tab\t"})
st_case("st_numpy.safetensors", None, None)

mx.save_safetensors(os.path.join(OUT, "st_mlx.safetensors"), {
    "w": mx.array([[1.0, 2.0], [3.0, 4.5]], dtype=mx.bfloat16),
    "x": mx.arange(3, dtype=mx.uint32),
    "z": mx.array([1 + 1j, 2 - 0.5j], dtype=mx.complex64),
}, metadata={"format": "mlx"})
st_case("st_mlx.safetensors", {}, None,
        mlx_dtypes={"w": "bfloat16", "x": "uint32", "z": "complex64"})

# F8 tensors, written by hand (numpy has no fp8): MLX loads them as uint8.
hdr = json.dumps({"q8": {"dtype": "F8_E4M3", "shape": [2, 2], "data_offsets": [0, 4]},
                  "s": {"dtype": "F8_E8M0", "shape": [2], "data_offsets": [4, 6]}}).encode()
with open(os.path.join(OUT, "st_fp8.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(hdr)) + hdr + bytes([0x38, 0xB8, 0x00, 0x7E, 127, 130]))
ml = mx.load(os.path.join(OUT, "st_fp8.safetensors"))
assert ml["q8"].dtype == mx.uint8 and ml["s"].dtype == mx.uint8
st_case("st_fp8.safetensors", {k: np.array(v) for k, v in ml.items()}, None)


# ---------------------------------------------------------------- GGUF
def gguf_value_json(field):
    """A ReaderField as {type, value} (arrays: {type: ARRAY, elem, value: [...]}) — read by
    gguf-py, so the expectation does not come from our parser."""
    return field


def reader_fields(path):
    r = gguf.GGUFReader(path)
    out = []
    for k, f in r.fields.items():
        if k.startswith("GGUF."):
            continue
        out.append({"key": k, **decode_field(f)})
    tensors = []
    for t in r.tensors:
        with open(path, "rb") as fh:
            fh.seek(t.data_offset)
            raw = fh.read(t.n_bytes)
        tensors.append({"name": t.name, "ggml_type": t.tensor_type.name.lower(),
                        "ne": [int(x) for x in t.shape], "start": int(t.data_offset),
                        "end": int(t.data_offset) + int(t.n_bytes), "hex": raw.hex()})
    return out, tensors


def scalar_json(vt, parts):
    v = parts[0][0] if len(parts[0]) else None
    if vt == VT.STRING:
        return bytes(parts[0]).decode("utf-8")
    if vt == VT.BOOL:
        return bool(v)
    if vt in (VT.FLOAT32, VT.FLOAT64):
        return float(v)
    return int(v)


def decode_field(f):
    """Decodes a gguf-py ReaderField by walking its raw parts (handles nested arrays)."""
    vt = VT(f.types[0])
    if vt != VT.ARRAY:
        return {"type": vt.name, "value": scalar_json(vt, [f.parts[-1]])}
    return decode_array_parts(f.parts, 3)[0]


def decode_array_parts(parts, i):
    """parts[i] is the element type, parts[i+1] the count; returns (json, next index)."""
    et = VT(int(parts[i][0]))
    n = int(parts[i + 1][0])
    i += 2
    vals = []
    for _ in range(n):
        if et == VT.STRING:
            vals.append(bytes(parts[i + 1]).decode("utf-8"))
            i += 2
        elif et == VT.ARRAY:
            v, i = decode_array_parts(parts, i)
            vals.append(v)
        else:
            vals.append(scalar_json(et, [parts[i]]))
            i += 1
    return {"type": "ARRAY", "elem": et.name, "value": vals}, i


def gguf_case(fname, build, mlx_load=False):
    path = os.path.join(OUT, fname)
    build(path)
    meta, tensors = reader_fields(path)
    entry = {"file": fname, "metadata": meta, "tensors": tensors}
    if mlx_load:
        arrays, mmeta = mx.load(path, return_metadata=True)
        entry["mlx_names"] = sorted(arrays)
    manifest["gguf"].append(entry)


def build_all_types(path):
    w = gguf.GGUFWriter(path, "testarch")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_float32("t.f32", 0.15625)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "héllo ✓")
    w.add_uint64("t.u64", 2**64 - 1)
    w.add_int64("t.i64", -(2**63))
    w.add_float64("t.f64", -1.0e-300)
    w.add_key_value("t.arr_i32", [1, -2, 3], VT.ARRAY, sub_type=VT.INT32)
    w.add_key_value("t.arr_f32", [0.5, -0.25], VT.ARRAY, sub_type=VT.FLOAT32)
    w.add_key_value("t.arr_u8", [0, 255], VT.ARRAY, sub_type=VT.UINT8)
    w.add_key_value("t.arr_u64", [1, 2**63], VT.ARRAY, sub_type=VT.UINT64)
    w.add_key_value("t.arr_f64", [2.5], VT.ARRAY, sub_type=VT.FLOAT64)
    w.add_key_value("t.arr_i16", [-5, 5], VT.ARRAY, sub_type=VT.INT16)
    w.add_key_value("t.arr_u16", [7], VT.ARRAY, sub_type=VT.UINT16)
    w.add_key_value("t.arr_i8", [-7, 7], VT.ARRAY, sub_type=VT.INT8)
    w.add_key_value("t.arr_u32", [9, 10], VT.ARRAY, sub_type=VT.UINT32)
    w.add_key_value("t.arr_i64", [-9], VT.ARRAY, sub_type=VT.INT64)
    w.add_array("t.arr_bool", [True, False, True])
    w.add_array("t.arr_str", ["a", "", "ünï"])
    w.add_array("t.arr_nested", [["x", "y"], ["z"]])
    x = rng.standard_normal((2, 64)).astype(np.float32)
    w.add_tensor("f32", np.arange(6, dtype=np.float32).reshape(2, 3))
    w.add_tensor("f16", np.array([[1, 2], [3, 4]], dtype=np.float16))
    w.add_tensor("i32", np.array([-1, 7, 9], dtype=np.int32))
    q4 = gguf.quants.quantize(x, QT.Q4_0)
    w.add_tensor("q4_0", q4, raw_dtype=QT.Q4_0)
    q8 = gguf.quants.quantize(x, QT.Q8_0)
    w.add_tensor("q8_0", q8, raw_dtype=QT.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def build_aligned(path):
    w = gguf.GGUFWriter(path, "al")
    w.add_custom_alignment(64)
    w.add_tensor("a", np.arange(3, dtype=np.float32))
    w.add_tensor("b", np.arange(5, dtype=np.int8))
    w.add_tensor("c", np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def build_mlx(path):
    mx.save_gguf(path, {"w": mx.arange(8, dtype=mx.float32).reshape(2, 4),
                        "h": mx.array([0.5, 1.5], dtype=mx.float16),
                        "i": mx.array([3], dtype=mx.int32)},
                 {"name": "mlx-model", "ints": mx.array([1, 2, 3], dtype=mx.int32),
                  "strs": ["p", "q"]})


def build_q_simple(path):
    w = gguf.GGUFWriter(path, "q")
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(2, 64)
    w.add_tensor("blk.0.q4.weight", gguf.quants.quantize(x, QT.Q4_0), raw_dtype=QT.Q4_0)
    w.add_tensor("blk.0.q8.weight", gguf.quants.quantize(x, QT.Q8_0), raw_dtype=QT.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# Real MLX 0.32.4 cannot load gguf_all_types.gguf: a float64 metadata scalar makes mx.load
# segfault, and nested arrays raise "[load_gguf] Only supports loading 1-layer of nested
# arrays." So MLX only reads the simpler files below.
gguf_case("gguf_all_types.gguf", build_all_types)
gguf_case("gguf_q_mlx.gguf", build_q_simple, mlx_load=True)
gguf_case("gguf_align64.gguf", build_aligned)
gguf_case("gguf_mlx.gguf", build_mlx, mlx_load=True)

with open(os.path.join(HERE, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1, ensure_ascii=False)
    f.write("\n")
total = sum(os.path.getsize(os.path.join(OUT, p)) for p in os.listdir(OUT))
print(f"wrote {len(os.listdir(OUT))} files, {total} bytes")
