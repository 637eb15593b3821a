#!/usr/bin/env python3
"""Writes the malformed-file corpus (malformed/*) and malformed/expect.json, which maps each
file to a fragment its error message must contain. Every file must make our parser return an
error — never panic, never allocate from the hostile count. Only the standard library is used.

Run: python3 core/tests/data/io/gen_malformed.py
"""
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "malformed")
os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    os.remove(os.path.join(OUT, f))
expect = {}


def put(name, data, fragment):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    expect[name] = fragment


# ------------------------------------------------------------------ safetensors
def st(header, data=b"", raw_len=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(h) if raw_len is None else raw_len
    return struct.pack("<Q", n) + h + data


T = lambda dt, shape, b, e: {"dtype": dt, "shape": shape, "data_offsets": [b, e]}
put("st_empty.safetensors", b"", "truncated")
put("st_len_2e64.safetensors", struct.pack("<Q", 2**64 - 1) + b"{}", "exceeds")
put("st_len_past_end.safetensors", st(b"{}", raw_len=1000), "truncated")
put("st_not_object.safetensors", st(b"[1, 2]  "), "does not start")
put("st_bad_utf8.safetensors", st(b'{"\xff\xfe": 1}'), "utf-8")
put("st_deep_nesting.safetensors", st(b'{"a":' + b"[" * 200 + b"]" * 200 + b"}"), "nesting")
put("st_dup_key.safetensors", st(b'{"a":' + json.dumps(T("U8", [1], 0, 1)).encode() + b',"a":'
                                 + json.dumps(T("U8", [1], 1, 2)).encode() + b"}", b"\0\0"), "duplicate")
put("st_offsets_past_end.safetensors", st({"a": T("F32", [4], 0, 16)}, b"\0" * 8), "past")
put("st_overlap.safetensors", st({"a": T("F32", [2], 0, 8), "b": T("F32", [2], 4, 12)}, b"\0" * 12), "overlaps")
put("st_gap.safetensors", st({"a": T("F32", [1], 0, 4), "b": T("F32", [1], 8, 12)}, b"\0" * 12), "gap")
put("st_size_mismatch.safetensors", st({"a": T("F32", [2, 2], 0, 8)}, b"\0" * 8), "need")
put("st_reversed_offsets.safetensors", st({"a": T("U8", [0], 8, 0)}, b"\0" * 8), "need")
put("st_shape_overflow.safetensors", st({"a": T("F32", [2**32, 2**32, 16], 0, 4)}, b"\0" * 4), "overflows")
put("st_dim_2e64.safetensors", st(b'{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}}', b"\0"), "64 bits")
put("st_unknown_dtype.safetensors", st({"a": T("F4", [2], 0, 1)}, b"\0"), "unknown")
put("st_negative_dim.safetensors", st({"a": T("U8", [-1], 0, 1)}, b"\0"), "non-negative")
put("st_float_dim.safetensors", st({"a": T("U8", [1.0], 0, 1)}, b"\0"), "non-negative")
put("st_metadata_not_string.safetensors", st({"__metadata__": {"k": 1}}), "not a string")
put("st_trailing_json.safetensors", st(b'{} {}'), "trailing")
put("st_missing_dtype.safetensors", st({"a": {"shape": [1], "data_offsets": [0, 1]}}, b"\0"), "missing dtype")
put("st_extra_field.safetensors", st({"a": {**T("U8", [1], 0, 1), "x": 1}}, b"\0"), "unexpected field")
put("st_three_offsets.safetensors", st({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1, 2]}}, b"\0"), "2 entries")
put("st_control_char.safetensors", st(b'{"a\x01": {}}'), "control")
put("st_lone_surrogate.safetensors", st(b'{"\\ud800": {}}'), "surrogate")
# Trailing bytes after the last tensor are allowed: real MLX 0.32.4 loads such files (io_arrays.rs).


# ------------------------------------------------------------------ GGUF
def gs(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf(kvs=b"", n_kv=0, tensors=b"", n_t=0, version=3, data=b"", magic=b"GGUF", pad_to=32):
    head = magic + struct.pack("<IQQ", version, n_t, n_kv) + kvs + tensors
    if pad_to:
        head += b"\0" * (-len(head) % pad_to)
    return head + data


def kv(key, vtype, payload):
    return gs(key) + struct.pack("<I", vtype) + payload


def tinfo(name, dims, ggml, off):
    return gs(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ggml, off)


put("gguf_empty.gguf", b"", "truncated")
put("gguf_bad_magic.gguf", gguf(magic=b"GGML"), "magic")
put("gguf_v1.gguf", gguf(version=1), "version 1")
put("gguf_v99.gguf", gguf(version=99), "version 99")
put("gguf_big_endian.gguf", b"GGUF" + struct.pack(">IQQ", 3, 0, 0), "big-endian")
put("gguf_kv_count_2e64.gguf", gguf(n_kv=2**64 - 1), "cannot fit")
put("gguf_tensor_count_2e63.gguf", gguf(n_t=2**63), "cannot fit")
put("gguf_key_len_2e64.gguf", gguf(struct.pack("<Q", 2**64 - 1) + b"abc", 1), "exceeds")
put("gguf_key_bad_utf8.gguf", gguf(kv(b"\xc3\x28", 0, b"\x01"), 1), "utf-8")
put("gguf_unknown_value_type.gguf", gguf(kv("k", 13, b"\0" * 8), 1), "unknown metadata value type 13")
put("gguf_array_count_2e62.gguf", gguf(kv("k", 9, struct.pack("<IQ", 10, 2**62)), 1), "cannot fit")
put("gguf_string_array_huge.gguf", gguf(kv("k", 9, struct.pack("<IQ", 8, 2**40) + gs("a")), 1), "cannot fit")
nested = b""
for _ in range(20):
    nested += struct.pack("<IQ", 9, 1)
nested += struct.pack("<IQ", 0, 0)
put("gguf_nested_depth_20.gguf", gguf(kv("k", 9, nested), 1), "deeper")
put("gguf_bool_2.gguf", gguf(kv("k", 7, b"\x02"), 1), "neither 0 nor 1")
put("gguf_dup_key.gguf", gguf(kv("k", 0, b"\1") + kv("k", 0, b"\2"), 2), "duplicate metadata key")
put("gguf_align_0.gguf", gguf(kv("general.alignment", 4, struct.pack("<I", 0)), 1), "power of two")
put("gguf_align_3.gguf", gguf(kv("general.alignment", 4, struct.pack("<I", 3)), 1), "power of two")
put("gguf_align_string.gguf", gguf(kv("general.alignment", 8, gs("32")), 1), "expected u32")
put("gguf_truncated_value.gguf", gguf(kv("k", 10, b"\1\2"), 1, pad_to=0), "truncated")
put("gguf_unknown_ggml_type.gguf", gguf(tensors=tinfo("t", [4], 4, 0), n_t=1, data=b"\0" * 32), "unknown ggml type 4")
put("gguf_too_many_dims.gguf", gguf(tensors=tinfo("t", [1] * 9, 0, 0), n_t=1, data=b"\0" * 32), "dimensions")
put("gguf_dims_overflow.gguf", gguf(tensors=tinfo("t", [2**32, 2**32, 2**32], 0, 0), n_t=1, data=b"\0" * 32), "overflows")
# Found by the gguf fuzz target: an empty tensor (0 bytes) whose row size overflows.
put("gguf_empty_row_bytes_overflow.gguf", gguf(tensors=tinfo("t", [2**62, 0], 0, 0), n_t=1, data=b""), "row size")
put("gguf_dim_negative.gguf", gguf(tensors=tinfo("t", [2**63], 0, 0), n_t=1, data=b"\0" * 32), "negative")
put("gguf_misaligned_offset.gguf", gguf(tensors=tinfo("t", [1], 0, 4), n_t=1, data=b"\0" * 64), "not a multiple of the alignment")
put("gguf_offset_past_end.gguf", gguf(tensors=tinfo("t", [4], 0, 2**20), n_t=1, data=b"\0" * 32), "past the end")
put("gguf_offset_2e64.gguf", gguf(tensors=tinfo("t", [4], 0, 2**64 - 32), n_t=1, data=b"\0" * 32), "overflows")
put("gguf_overlap.gguf", gguf(tensors=tinfo("a", [8], 0, 0) + tinfo("b", [8], 0, 0), n_t=2, data=b"\0" * 32), "overlap")
put("gguf_dup_tensor.gguf", gguf(tensors=tinfo("a", [8], 0, 0) + tinfo("a", [8], 0, 32), n_t=2, data=b"\0" * 64), "duplicate tensor name")
put("gguf_q4_bad_row.gguf", gguf(tensors=tinfo("q", [33], 2, 0), n_t=1, data=b"\0" * 64), "block length")
put("gguf_truncated_tensor_info.gguf", gguf(tensors=tinfo("t", [4], 0, 0)[:-5], n_t=1, pad_to=0), "truncated")


# ------------------------------------------------------------------ .npy
def npy(header, data=b"", version=1, raw_len=None):
    h = header.encode("latin1") if isinstance(header, str) else header
    if version == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h) if raw_len is None else raw_len)
    else:
        pre = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h) if raw_len is None else raw_len)
    return pre + h + data


H = lambda d, f="False", s="(2,)": "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }\n" % (d, f, s)
put("npy_empty.npy", b"", "truncated")
put("npy_bad_magic.npy", b"\x93NUMPZ\x01\x00" + b"\0" * 8, "magic")
put("npy_v4.npy", b"\x93NUMPY\x04\x00" + b"\0" * 8, "version 4")
put("npy_header_past_end.npy", npy(H("<f4"), raw_len=5000), "truncated")
put("npy_header_huge.npy", npy(H("<f4") + " " * 70000, version=2), "limit")
put("npy_non_ascii.npy", npy("{'descr': '<f4\xe9', 'fortran_order': False, 'shape': (2,), }\n"), "non-ascii")
put("npy_object.npy", npy(H("|O"), b"\x80\x04N."), "pickle")
put("npy_structured.npy", npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n"), "structured")
put("npy_unicode.npy", npy(H("<U5")), "unsupported dtype")
put("npy_complex128.npy", npy(H("<c16")), "unsupported dtype")
put("npy_shape_overflow.npy", npy(H("<f4", s="(1099511627776, 1099511627776)")), "overflows")
put("npy_shape_2e64.npy", npy(H("<f4", s="(18446744073709551616,)")), "does not fit")
put("npy_data_truncated.npy", npy(H("<f8", s="(4,)"), b"\0" * 31), "truncated")
put("npy_missing_shape.npy", npy("{'descr': '<f4', 'fortran_order': False, }\n"), "lacks 'shape'")
put("npy_extra_key.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }\n", b"\0" * 4), "unexpected header key")
put("npy_dup_key.npy", npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", b"\0" * 4), "duplicate key")
put("npy_fortran_maybe.npy", npy(H("<f4", f="maybe")), "true/false")
put("npy_shape_not_tuple.npy", npy(H("<f4", s="(3)"), b"\0" * 12), "trailing comma")
put("npy_negative_dim.npy", npy(H("<f4", s="(-1,)")), "non-negative")
put("npy_native_order.npy", npy(H("=f4"), b"\0" * 8), "native byte order")
put("npy_unterminated.npy", npy("{'descr': '<f4"), "unterminated")
put("npy_garbage_after.npy", npy(H("<f4")[:-1] + " junk\n", b"\0" * 8), "trailing characters")
put("npy_too_many_dims.npy", npy(H("|u1", s="(" + "1, " * 70 + ")"), b"\0"), "more than 64")


# ------------------------------------------------------------------ .npz / zip
def npy_bytes(descr="<i4", shape="(2,)", data=struct.pack("<2i", 1, 2)):
    return npy(H(descr, s=shape), data)


def zipfile_bytes(members, cd_count=None, eocd_cd_off=None):
    """members: dicts with name, data (stored bytes), size, crc, method, flags, offset_override."""
    out = b""
    central = b""
    offsets = []
    for m in members:
        name = m["name"].encode() if isinstance(m["name"], str) else m["name"]
        body = m["data"]
        size = m.get("size", len(body))
        crc = m.get("crc", zlib.crc32(m.get("plain", body)) & 0xFFFFFFFF)
        method = m.get("method", 0)
        flags = m.get("flags", 0)
        off = len(out) if "offset" not in m else m["offset"]
        if "offset" not in m:
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc, len(body), size, len(name), 0) + name + body
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags, method, 0, 0x21, crc, len(body), size,
                               len(name), 0, 0, 0, 0, 0, off) + name
        offsets.append(off)
    cd_off = len(out) if eocd_cd_off is None else eocd_cd_off
    n = len(members) if cd_count is None else cd_count
    return out + central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), cd_off, 0)


good = npy_bytes()
put("npz_not_zip.npz", b"PK\x03\x04 this is not a zip", "end-of-central-directory")
put("npz_traversal.npz", zipfile_bytes([{"name": "../evil.npy", "data": good}]), "unsafe member name")
put("npz_absolute.npz", zipfile_bytes([{"name": "/etc/evil.npy", "data": good}]), "unsafe member name")
put("npz_backslash.npz", zipfile_bytes([{"name": "a\\..\\b.npy", "data": good}]), "unsafe member name")
put("npz_drive.npz", zipfile_bytes([{"name": "C:evil.npy", "data": good}]), "unsafe member name")
bomb_plain = b"\0" * (1 << 20)
co = zlib.compressobj(9, zlib.DEFLATED, -15)
bomb = co.compress(bomb_plain) + co.flush()
put("npz_bomb_lying_size.npz", zipfile_bytes([{"name": "a.npy", "data": bomb, "size": 100, "method": 8,
                                                "plain": bomb_plain}]), "larger than declared")
put("npz_bomb_declared_4g.npz", zipfile_bytes([{"name": "a.npy", "data": bomb, "size": 0xFFFFFFFE, "method": 8,
                                                 "plain": bomb_plain}]), "limit")
two = zipfile_bytes([{"name": "a.npy", "data": good}, {"name": "a.npy", "data": b"", "offset": 0}])
put("npz_overlapping_entries.npz", two, "overlap")
put("npz_bad_crc.npz", zipfile_bytes([{"name": "a.npy", "data": good, "crc": 0x12345678}]), "crc-32")
put("npz_encrypted.npz", zipfile_bytes([{"name": "a.npy", "data": good, "flags": 1}]), "encrypted")
put("npz_bzip2.npz", zipfile_bytes([{"name": "a.npy", "data": good, "method": 12}]), "method 12")
put("npz_not_npy_member.npz", zipfile_bytes([{"name": "readme.txt", "data": b"hi"}]), "not a .npy")
put("npz_pickle_member.npz", zipfile_bytes([{"name": "a.npy", "data": npy(H("|O"), b"\x80\x04N.")}]), "pickle")
put("npz_entry_count_ffff.npz", zipfile_bytes([{"name": "a.npy", "data": good}], cd_count=0xFFFF), "zip64")
put("npz_cd_past_end.npz", zipfile_bytes([{"name": "a.npy", "data": good}], eocd_cd_off=10**6), "past the end")
put("npz_count_too_big.npz", zipfile_bytes([{"name": "a.npy", "data": good}], cd_count=1000), "cannot fit")
put("npz_stored_size_lie.npz", zipfile_bytes([{"name": "a.npy", "data": good, "size": 5}]), "compressed size")
put("npz_dup_names.npz", zipfile_bytes([{"name": "a.npy", "data": good}, {"name": "a.npy", "data": good}]), "duplicate member")
put("npz_bad_deflate.npz", zipfile_bytes([{"name": "a.npy", "data": b"\xff" * 16, "size": 64, "method": 8,
                                           "plain": b""}]), "corrupt")
put("npz_truncated_member.npz", zipfile_bytes([{"name": "a.npy", "data": npy_bytes(data=b"\0\0")}]), "truncated")

with open(os.path.join(OUT, "expect.json"), "w") as f:
    json.dump(expect, f, indent=1, sort_keys=True)
    f.write("\n")
print(f"wrote {len(expect)} malformed files")
