"""Golden files for core/tests/io_arrays.rs: model files written by real MLX, numpy,
safetensors and gguf-py, and what real MLX's `mx.load` returns for each (keys, dtypes, shapes,
exact element bytes as hex, metadata) in manifest.json.

Run with the oracle venv: /opt/oracle/bin/python gen_io_arrays.py  (writes next to itself).
"""
import json
import os

import gguf
import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType as T, GGML_QUANT_SIZES
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "files")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(1234)


def p(name):
    return os.path.join(OUT, name)


def dt(a):
    return str(a.dtype).replace("mlx.core.", "")


def arr_bytes(a):
    # Row-major element bytes of an mx.array, exactly (bfloat16 through a uint16 view).
    if a.dtype == mx.bfloat16:
        return np.array(a.view(mx.uint16)).tobytes()
    return np.ascontiguousarray(np.array(a)).tobytes()


def describe(arrays):
    return {k: {"dtype": dt(v), "shape": list(v.shape), "hex": arr_bytes(v).hex()} for k, v in arrays.items()}


def meta_value(v):
    if isinstance(v, str):
        return {"kind": "string", "value": v}
    if isinstance(v, list):
        return {"kind": "strings", "value": v}
    a = v
    return {"kind": "array", "dtype": dt(a), "shape": list(a.shape), "value": np.array(a).reshape(-1).tolist()}


cases = []


def record(name, fmt, metadata_kind=None, error=None):
    entry = {"file": name, "format": fmt}
    path = p(name)
    if error is not None:
        try:
            mx.load(path)
            raise SystemExit(f"{name}: MLX loaded a file expected to fail")
        except Exception as e:  # noqa: BLE001 - the message is the oracle
            entry["error"] = f"{type(e).__name__}: {e}"
        cases.append(entry)
        return
    if metadata_kind is None:
        out = mx.load(path)
        if isinstance(out, mx.array):
            out = {"": out}
        entry["arrays"] = describe(out)
    else:
        out, meta = mx.load(path, return_metadata=True)
        entry["arrays"] = describe(out)
        entry["metadata"] = {k: meta_value(v) for k, v in meta.items()}
    cases.append(entry)


# ---- safetensors ------------------------------------------------------------------------
mixed = {
    "b": mx.array([True, False, True]),
    "u8": mx.array([0, 1, 255], dtype=mx.uint8),
    "u16": mx.array([[1, 65535]], dtype=mx.uint16),
    "u32": mx.array([7, 4000000000], dtype=mx.uint32),
    "u64": mx.array(np.array([2**63 + 5], dtype=np.uint64)),
    "i8": mx.array([-128, 5, 127], dtype=mx.int8),
    "i16": mx.array([-3, 30000], dtype=mx.int16),
    "i32": mx.array([[-1, 2], [3, -4]], dtype=mx.int32),
    "i64": mx.array([-(2**62), 9], dtype=mx.int64),
    "f16": mx.array([1.5, -0.0, float("inf"), 65504.0], dtype=mx.float16),
    "bf16": mx.array([1.0, -2.5, 3.0e38], dtype=mx.bfloat16),
    "f32": mx.array(rng.standard_normal((3, 5)).astype(np.float32)),
    "c64": mx.array(np.array([1 + 2j, -0.5 - 1j], dtype=np.complex64)),
    "scalar": mx.array(3.25, dtype=mx.float32),
    "empty": mx.zeros((0, 4), dtype=mx.float32),
}
mx.save_safetensors(p("mlx_mixed.safetensors"), mixed, metadata={"format": "mlx", "note": "héllo"})
record("mlx_mixed.safetensors", "safetensors", metadata_kind="strings")

save_file(
    {
        "w": rng.standard_normal((4, 8)).astype(np.float32),
        "h": rng.standard_normal((16,)).astype(np.float16),
        "idx": np.arange(6, dtype=np.int64).reshape(2, 3),
    },
    p("st_aligned.safetensors"),
    metadata={"source": "safetensors.numpy"},
)
record("st_aligned.safetensors", "safetensors", metadata_kind="strings")

# ---- npy / npz ----------------------------------------------------------------------------
mx.save(p("mlx_f32.npy"), mx.array(rng.standard_normal((2, 3)).astype(np.float32)))
record("mlx_f32.npy", "npy")
mx.save(p("mlx_1d_i32.npy"), mx.array([1, -2, 3], dtype=mx.int32))  # MLX writes fortran_order True
record("mlx_1d_i32.npy", "npy")
mx.save(p("mlx_bf16.npy"), mx.array([1.0, -2.0, 0.5], dtype=mx.bfloat16))
record("mlx_bf16.npy", "npy")
mx.save(p("mlx_bool.npy"), mx.array([[True, False], [False, True]]))
record("mlx_bool.npy", "npy")
np.save(p("np_fortran.npy"), np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4)))
record("np_fortran.npy", "npy")
np.save(p("np_bigendian.npy"), np.arange(5, dtype=">i4"))
record("np_bigendian.npy", "npy")
np.save(p("np_scalar_f64.npy"), np.float64(2.5))
record("np_scalar_f64.npy", "npy")

npz_arrays = {
    "a": mx.array(rng.standard_normal((3, 4)).astype(np.float32)),
    "b": mx.array([1, 2, 3], dtype=mx.int16),
    "c": mx.array([True, False]),
}
mx.savez(p("mlx.npz"), **npz_arrays)
record("mlx.npz", "npz")
mx.savez_compressed(p("mlx_compressed.npz"), **npz_arrays)
record("mlx_compressed.npz", "npz")
np.savez(p("np_stored.npz"), x=np.arange(12, dtype=np.float64).reshape(3, 4), y=np.array([7], dtype=np.uint8))
record("np_stored.npz", "npz")

# ---- GGUF -----------------------------------------------------------------------------------
# Offsets of the f16 scale fields inside each block type (random bytes elsewhere).
F16_FIELDS = {T.Q4_0: [0], T.Q4_1: [0, 2], T.Q8_0: [0], T.Q2_K: [80, 82], T.Q4_K: [0, 2], T.Q6_K: [208], T.Q5_0: [0]}


def random_blocks(t, rows, cols, scale=0.05, extreme=False):
    bl, bb = GGML_QUANT_SIZES[t]
    nb = rows * cols // bl
    b = rng.integers(0, 256, size=(nb, bb), dtype=np.uint8)
    for off in F16_FIELDS[t]:
        d = (rng.standard_normal(nb) * scale).astype(np.float16)
        if extreme:
            # Large scales overflow -8*d / -128*d in float16, tiny ones are subnormal.
            d[: nb // 2] = np.float16(9000.0) * np.sign(d[: nb // 2] + np.float16(1e-3))
            d[nb // 2:] = np.float16(3e-7)
        b[:, off:off + 2] = d.view(np.uint8).reshape(nb, 2)
    return b.reshape(rows, cols // bl * bb)


w = gguf.GGUFWriter(p("gguf_quant.gguf"), "llama")
w.add_string("general.name", "io_arrays test")
w.add_uint32("llama.block_count", 2)
w.add_int32("test.i32", -7)
w.add_float32("test.f32", 0.125)
w.add_bool("test.flag", True)
w.add_uint8("test.u8", 200)
w.add_int64("test.i64", -(2**40))
w.add_uint64("test.u64", 2**40)
w.add_array("test.ints", [1, 2, 3])
w.add_array("test.strs", ["a", "bc", ""])
w.add_array("test.floats", [0.5, -1.5])
x = rng.standard_normal((4, 64)).astype(np.float32)
w.add_tensor("blk.0.attn_q.weight", gguf.quants.quantize(x, T.Q4_0), raw_dtype=T.Q4_0)
w.add_tensor("blk.0.attn_k.weight", gguf.quants.quantize(x, T.Q4_1), raw_dtype=T.Q4_1)
w.add_tensor("blk.0.attn_v.weight", gguf.quants.quantize(x, T.Q8_0), raw_dtype=T.Q8_0)
w.add_tensor("blk.1.q40_rand.weight", random_blocks(T.Q4_0, 3, 64), raw_dtype=T.Q4_0)
w.add_tensor("blk.1.q41_rand.weight", random_blocks(T.Q4_1, 2, 96), raw_dtype=T.Q4_1)
w.add_tensor("blk.1.q80_rand.weight", random_blocks(T.Q8_0, 2, 64), raw_dtype=T.Q8_0)
w.add_tensor("blk.1.q40_ext.weight", random_blocks(T.Q4_0, 2, 64, extreme=True), raw_dtype=T.Q4_0)
w.add_tensor("blk.1.q80_ext.weight", random_blocks(T.Q8_0, 2, 64, extreme=True), raw_dtype=T.Q8_0)
w.add_tensor("blk.2.cube.weight", random_blocks(T.Q4_0, 6, 32).reshape(2, 3, 18), raw_dtype=T.Q4_0)
w.add_tensor("abc", random_blocks(T.Q8_0, 1, 32), raw_dtype=T.Q8_0)  # shorter than ".weight"
w.add_tensor("layer.bias", random_blocks(T.Q4_1, 1, 32), raw_dtype=T.Q4_1)  # prefix = "lay"
w.add_tensor("norm.weight", rng.standard_normal((64,)).astype(np.float32))
w.add_tensor("f16.weight", rng.standard_normal((2, 8)).astype(np.float16))
w.add_tensor("i8.weight", np.arange(-4, 4, dtype=np.int8))
w.add_tensor("i16.weight", np.arange(6, dtype=np.int16).reshape(2, 3))
w.add_tensor("i32.weight", np.array([[-5, 6]], dtype=np.int32))
w.add_tensor("bf16.weight", gguf.quants.quantize(rng.standard_normal((2, 16)).astype(np.float32), T.BF16), raw_dtype=T.BF16)
w.add_tensor("q2k.weight", random_blocks(T.Q2_K, 2, 256), raw_dtype=T.Q2_K)
w.add_tensor("q4k.weight", random_blocks(T.Q4_K, 2, 256), raw_dtype=T.Q4_K)
w.add_tensor("q6k.weight", random_blocks(T.Q6_K, 2, 256), raw_dtype=T.Q6_K)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
record("gguf_quant.gguf", "gguf", metadata_kind="gguf")
# MLX's Q4_K dequantization (gguf-tools' gguf_q4_k_to_float at MLX's pinned commit) applies
# sub-block 2k's scale and min to sub-block 2k+1 as well, so half of every Q4_K super-block
# comes out wrong. We follow ggml instead; the oracle for that tensor is gguf-py's reference
# dequantization (rounded to float16), and the test checks MLX still differs only there.
for t in gguf.GGUFReader(p("gguf_quant.gguf")).tensors:
    if t.name == "q4k.weight":
        ref = gguf.quants.dequantize(np.asarray(t.data), T.Q4_K).astype(np.float16)
        entry = cases[-1]["arrays"]["q4k.weight"]
        entry["mlx_bug"] = "gguf-tools q4_k: odd sub-blocks use the even sub-block's scale/min"
        entry["reference_hex"] = ref.tobytes().hex()

# What gguf-py's GGUFReader sees: every tensor's type, row-major shape and raw block bytes
# (the oracle for load_gguf_native).
native = []
for t in gguf.GGUFReader(p("gguf_quant.gguf")).tensors:
    native.append({"name": t.name, "type": int(t.tensor_type), "shape": [int(d) for d in reversed(t.shape.tolist())],
                   "hex": np.asarray(t.data).tobytes().hex()})

mx.save_gguf(
    p("mlx_saved.gguf"),
    {"w": mx.array(rng.standard_normal((3, 4)).astype(np.float32)), "h": mx.array([1.0, 2.0], dtype=mx.float16),
     "n": mx.array([[1, -2, 3]], dtype=mx.int32)},
    {"name": "mlx", "tags": ["x", "y"], "v": mx.array([1, 2], dtype=mx.uint32), "s": mx.array(1.5)},
)
record("mlx_saved.gguf", "gguf", metadata_kind="gguf")

# Types MLX's loader cannot convert: loading fails.
w = gguf.GGUFWriter(p("gguf_q5_0.gguf"), "llama")
w.add_tensor("a.weight", random_blocks(T.Q5_0, 1, 32), raw_dtype=T.Q5_0)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
record("gguf_q5_0.gguf", "gguf", error=True)

# Saver refusals: real MLX's messages for dtypes it will not write.
saver_errors = []
for fn, dts in (("save_gguf", ["bfloat16", "float64", "bool", "uint32", "int64", "complex64"]),
                ("save_safetensors", ["float64"])):
    for d in dts:
        try:
            getattr(mx, fn)(os.path.join("/tmp", "io_arrays_refused"), {"a": mx.zeros((2,), dtype=getattr(mx, d if d != "bool" else "bool_"))})
            raise SystemExit(f"{fn} accepted {d}")
        except (RuntimeError, ValueError) as e:
            saver_errors.append({"fn": fn, "dtype": d, "error": f"{type(e).__name__}: {e}"})

with open(os.path.join(HERE, "manifest.json"), "w") as f:
    json.dump({"mlx_version": mx.__version__, "cases": cases, "gguf_native": native, "saver_errors": saver_errors}, f, indent=1, ensure_ascii=False)
print("wrote", len(cases), "cases")
