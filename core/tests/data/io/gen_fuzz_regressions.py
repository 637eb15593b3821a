#!/usr/bin/env python3
"""Writes minimal reproducers of crashes the fuzz targets (fuzz/) found, next to the raw
crash inputs (*.crash.*, copied from libFuzzer's artifacts). core/tests/io_fuzz_regressions.rs
loads every file here through every loader: none may panic, abort or allocate unboundedly.
Only the standard library is used.

Run: python3 core/tests/data/io/gen_fuzz_regressions.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_regressions")
os.makedirs(OUT, exist_ok=True)


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_one_tensor(ne, type_id):
    """GGUF v3, no metadata, one tensor 't' of GGML type `type_id` with dims `ne` at offset 0."""
    h = b"GGUF" + struct.pack("<IQQ", 3, 1, 0)
    h += gguf_str("t") + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
    h += struct.pack("<IQ", type_id, 0)
    return h + b"\0" * (-len(h) % 32)


# gguf target, 2026-11: load_gguf (MLX conversion to float16) allocated its row scratch from
# the innermost dimension before noticing the tensor is empty: BF16 (type 30) with
# ne = [2^40, 0] (row-major shape (0, 2^40), 0 bytes) asked for 4 TiB.
with open(os.path.join(OUT, "gguf_empty_bf16_row_2e40.gguf"), "wb") as f:
    f.write(gguf_one_tensor([2**40, 0], 30))
