#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets: OUT/<target>/<file>.

Seeds are the committed test files (core/tests/data/io/golden, written by numpy, safetensors,
gguf-py and real MLX; core/tests/data/io/malformed, the hostile corpus; core/tests/data/
io_arrays/files; core/tests/data/io/fuzz_regressions, crashes found earlier) sorted by format, plus small valid files written here with the standard
library (one per safetensors dtype, GGUF v2/v3 with every metadata value type, .npy v1/v2/v3,
.npz stored/deflated/ZIP64) and JSON documents for the header parser. The `load` target gets
every file behind each of its selector bytes (buffer route and file route).

Run: python3 fuzz/make_seeds.py [OUT]   (default OUT: fuzz/corpus; existing files are kept)
"""
import hashlib
import io
import json
import os
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
DATA_DIRS = [
    os.path.join(ROOT, "core/tests/data/io/golden"),
    os.path.join(ROOT, "core/tests/data/io/malformed"),
    os.path.join(ROOT, "core/tests/data/io_arrays/files"),
    os.path.join(ROOT, "core/tests/data/io/fuzz_regressions"),
]
EXT_TARGET = {".safetensors": "safetensors", ".gguf": "gguf", ".npy": "npy", ".npz": "npz"}
# Selector byte of the `load` target for each format (see fuzz_targets/load.rs: FORMATS).
LOAD_SEL = {"safetensors": 0, "gguf": 1, "npy": 2, "npz": 3}
GGUF_NATIVE_SEL = 4


def put(target, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- small valid files
def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, bytes)] laid out in order."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, dt, shape, b in tensors:
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


ST_SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E8M0": 1, "U16": 2, "I16": 2, "F16": 2,
            "BF16": 2, "U32": 4, "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8, "C64": 8}


def small_safetensors():
    out = []
    for dt, size in ST_SIZES.items():
        out.append(safetensors([("x", dt, [2], bytes(range(1, 1 + 2 * size)))]))
    out.append(safetensors([("s", "F32", [], b"\0\0\x80?"), ("e", "F32", [0, 3], b"")], {"format": "mlx"}))
    return out


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


# (type id, struct format) of the GGUF scalar value types
GGUF_SCALARS = [(0, "<B", 7), (1, "<b", -7), (2, "<H", 700), (3, "<h", -700), (4, "<I", 70000),
                (5, "<i", -70000), (6, "<f", 1.5), (7, "<?", True), (10, "<Q", 2**40), (11, "<q", -2**40),
                (12, "<d", 2.25)]


def gguf(version, kv, tensors, alignment=32):
    """kv: [(key, type_id, payload_bytes)]; tensors: [(name, ne(list), type_id, bytes)]."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kv))
    for k, t, payload in kv:
        head += gguf_str(k) + struct.pack("<I", t) + payload
    off, blobs = 0, []
    for name, ne, t, b in tensors:
        head += gguf_str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        head += struct.pack("<IQ", t, off)
        pad = b + b"\0" * (-len(b) % alignment)
        blobs.append(pad)
        off += len(pad)
    head += b"\0" * (-len(head) % alignment)
    return head + b"".join(blobs)


def small_ggufs():
    kv = [(f"k.t{t}", t, struct.pack(fmt, v)) for t, fmt, v in GGUF_SCALARS]
    kv.append(("k.str", 8, gguf_str("héllo")))
    kv.append(("k.arr", 9, struct.pack("<IQ", 4, 3) + struct.pack("<3I", 1, 2, 3)))
    kv.append(("k.strs", 9, struct.pack("<IQ", 8, 2) + gguf_str("a") + gguf_str("bc")))
    nested = struct.pack("<IQ", 9, 2) + b"".join(struct.pack("<IQ", 0, 2) + b"\1\2" for _ in range(2))
    kv.append(("k.nested", 9, nested))
    q4_0 = struct.pack("<e", 0.5) + bytes(range(16))        # one Q4_0 block (32 weights)
    q8_0 = struct.pack("<e", 0.25) + bytes(range(256 - 32, 256))  # one Q8_0 block
    tensors = [("f32", [2, 2], 0, struct.pack("<4f", 1, 2, 3, 4)), ("f16", [3], 1, struct.pack("<3e", 1, -2, 0.5)),
               ("blk.0.q4", [32], 2, q4_0), ("blk.0.q8", [32, 1], 8, q8_0)]
    out = [gguf(3, kv, tensors), gguf(2, kv[:3], tensors[:2]), gguf(3, [], [])]
    out.append(gguf(3, [("general.alignment", 4, struct.pack("<I", 64))], tensors, alignment=64))
    return out


def npy(descr, shape, data, version=(1, 0), fortran=False):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, repr(tuple(shape)))
    hl = 4 if version[0] >= 2 else 2
    pad = -(6 + 2 + hl + len(d) + 1) % 64
    h = (d + " " * pad + "\n").encode()
    return b"\x93NUMPY" + bytes(version) + struct.pack("<I" if hl == 4 else "<H", len(h)) + h + data


def small_npys():
    return [npy("|b1", [3], b"\0\1\2"), npy("<f4", [2, 2], struct.pack("<4f", 1, 2, 3, 4), (2, 0)),
            npy(">i2", [2, 3], struct.pack(">6h", *range(6)), (3, 0), fortran=True),
            npy("<c8", [], struct.pack("<2f", 1, -1)), npy("<V2", [0, 5], b""), npy("<u8", [1, 1, 2], bytes(16))]


def npz(members, compress, zip64=False):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, data in members:
            with z.open(name, "w", force_zip64=zip64) as f:
                f.write(data)
    return b.getvalue()


def small_npzs():
    ms = [("a.npy", small_npys()[1]), ("dir/b.npy", small_npys()[2]), ("c.npy", small_npys()[0])]
    return [npz(ms, False), npz(ms, True), npz(ms[:1], False, zip64=True), npz([], False)]


JSON_DOCS = [b'{}', b'{"a": [1, 2.5e-3, -0, true, false, null, "x\\u00e9\\ud83d\\ude00\\n"]}',
             b'{"__metadata__": {"k": "v"}, "t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}',
             b' [ [ [ ] ] , { } ] ', b'18446744073709551615', b'"\\"\\\\\\/\\b\\f\\n\\r\\t"']


def exported_function():
    """A small exported function (docs/EXPORT.md, "File format"): f(x) = exp(x) + c, with x
    of shape [3] and a captured constant c, both float32."""
    f32, u32, u64 = 10, (lambda v: struct.pack("<I", v)), (lambda v: struct.pack("<Q", v))
    meta = bytes([f32]) + u32(1) + u64(3)
    name = lambda s: u32(len(s)) + s
    const = meta + u64(12) + struct.pack("<3f", 1, 2, 3)
    exp = bytes([1]) + name(b"exp") + u32(1) + bytes([0]) + u32(0) + u32(1) + meta
    add = bytes([2]) + name(b"add") + u32(2) + bytes([2]) + u32(0) + u32(0) + bytes([1]) + u32(0) + u32(1) + meta
    trace = (bytes([0]) + u32(1) + u32(0) + u32(1) + meta + u32(1) + u32(0) + u32(2) + exp + add
             + u32(1) + bytes([2]) + u32(1) + u32(0))
    return b"MLXARMFN" + u32(1) + u32(1) + const + u32(1) + trace


def main():
    files = {t: [] for t in EXT_TARGET.values()}
    for d in DATA_DIRS:
        for f in sorted(os.listdir(d)):
            t = EXT_TARGET.get(os.path.splitext(f)[1])
            if t:
                with open(os.path.join(d, f), "rb") as fh:
                    files[t].append(fh.read())
    files["safetensors"] += small_safetensors()
    files["gguf"] += small_ggufs()
    files["npy"] += small_npys()
    files["npz"] += small_npzs()
    for t, blobs in files.items():
        for b in blobs:
            put(t, b)
            sel = LOAD_SEL[t]
            put("load", bytes([sel]) + b)
            put("load", bytes([sel | 0x80]) + b)
            if t == "gguf":
                put("load", bytes([GGUF_NATIVE_SEL]) + b)
    put("export", exported_function())
    put("npz", b"")  # zip layer on npy members too: npy seeds inside npz are above
    for b in files["safetensors"]:
        if len(b) >= 8:
            n = struct.unpack("<Q", b[:8])[0]
            if 0 < n <= len(b) - 8:
                put("json", b[8:8 + n])
    for doc in JSON_DOCS:
        put("json", doc)
    for t in sorted(os.listdir(OUT)):
        print(f"{t}: {len(os.listdir(os.path.join(OUT, t)))} seeds")


if __name__ == "__main__":
    main()
