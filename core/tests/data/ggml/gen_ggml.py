#!/opt/oracle/bin/python
"""Golden data for core/tests/ggml_quant.rs (GGML/GGUF block formats).

Oracles:
  * gguf-py (`gguf.quants.quantize` / `dequantize`, /opt/oracle): quantizes BF16, Q4_0, Q4_1,
    Q5_0, Q5_1, Q8_0, TQ1_0, TQ2_0, MXFP4; dequantizes those plus Q2_K..Q6_K, IQ4_NL, IQ4_XS.
  * ggml's own C (`quantize_row_*_ref`, `dequantize_row_*`, `ggml_vec_dot_*_generic`) from the
    llama.cpp the team anchors on, built by build_ggml_ref.sh into /tmp/ggml-ref/libggmlref.so
    and loaded with ctypes. It is the only oracle for quantizing the K-quants, IQ4_NL, IQ4_XS,
    Q8_1 and Q8_K and for the dot products. Where both oracles quantize, this script asserts they agree.
  * numpy for F16 (astype(float16) rounds to nearest even, like ggml).

Writes (all little-endian):
  inputs.bin            ROWS x N float32 test rows (see make_inputs)
  q_<type>.bin          the oracle's quantized bytes of every row, concatenated
  dq_<type>.bin         ggml C's dequantization of those bytes (float32)
  rnd_<type>.bin        random bytes, RND_BLOCKS blocks (NaN/Inf scales included)
  rnd_dq_<type>.bin     gguf-py's (else ggml C's) dequantization of them (float32)
  bulk.bin              8192 float32 (32 super-blocks); bulk_<type>.bin: ggml C's bytes for it
  nonfinite.bin         one row with NaN and +-Inf; nonfinite_<type>.bin: ggml C's bytes for it
  manifest.json         sizes, oracles per type, golden dot products (as f32 bit patterns) and
                        gguf-py's GGML_QUANT_SIZES table

Run: bash build_ggml_ref.sh && /opt/oracle/bin/python gen_ggml.py
"""
import ctypes
import json
import os
import sys

import numpy as np
import gguf
from gguf.constants import GGMLQuantizationType as T
import gguf.quants as gq

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GGML_REF_LIB", "/tmp/ggml-ref/libggmlref.so")
N = 512          # elements per row: two 256-element super-blocks, sixteen 32-element blocks
RND_BLOCKS = 6

# (name, gguf-py type, block_len, block_bytes, C suffix, gguf-py can quantize, gguf-py can dequantize)
TYPES = [
    ("f16", T.F16, 1, 2, None, False, True),
    ("bf16", T.BF16, 1, 2, None, True, True),
    ("q4_0", T.Q4_0, 32, 18, "q4_0", True, True),
    ("q4_1", T.Q4_1, 32, 20, "q4_1", True, True),
    ("q5_0", T.Q5_0, 32, 22, "q5_0", True, True),
    ("q5_1", T.Q5_1, 32, 24, "q5_1", True, True),
    ("q8_0", T.Q8_0, 32, 34, "q8_0", True, True),
    ("q8_1", T.Q8_1, 32, 36, "q8_1", False, False),
    ("q2_K", T.Q2_K, 256, 84, "q2_K", False, True),
    ("q3_K", T.Q3_K, 256, 110, "q3_K", False, True),
    ("q4_K", T.Q4_K, 256, 144, "q4_K", False, True),
    ("q5_K", T.Q5_K, 256, 176, "q5_K", False, True),
    ("q6_K", T.Q6_K, 256, 210, "q6_K", False, True),
    ("q8_K", T.Q8_K, 256, 292, "q8_K", False, False),
    ("tq1_0", T.TQ1_0, 256, 54, "tq1_0", True, True),
    ("tq2_0", T.TQ2_0, 256, 66, "tq2_0", True, True),
    ("mxfp4", T.MXFP4, 32, 17, "mxfp4", True, True),
    ("iq4_nl", T.IQ4_NL, 32, 18, "iq4_nl", False, True),
    ("iq4_xs", T.IQ4_XS, 256, 136, "iq4_xs", False, True),
]
# weight type -> (activation type, C dot kernel)
DOTS = {
    "q4_0": ("q8_0", "ggml_vec_dot_q4_0_q8_0_generic"),
    "q4_1": ("q8_1", "ggml_vec_dot_q4_1_q8_1_generic"),
    "q5_0": ("q8_0", "ggml_vec_dot_q5_0_q8_0_generic"),
    "q5_1": ("q8_1", "ggml_vec_dot_q5_1_q8_1_generic"),
    "q8_0": ("q8_0", "ggml_vec_dot_q8_0_q8_0_generic"),
    "q2_K": ("q8_K", "ggml_vec_dot_q2_K_q8_K_generic"),
    "q3_K": ("q8_K", "ggml_vec_dot_q3_K_q8_K_generic"),
    "q4_K": ("q8_K", "ggml_vec_dot_q4_K_q8_K_generic"),
    "q5_K": ("q8_K", "ggml_vec_dot_q5_K_q8_K_generic"),
    "q6_K": ("q8_K", "ggml_vec_dot_q6_K_q8_K_generic"),
    "tq1_0": ("q8_K", "ggml_vec_dot_tq1_0_q8_K_generic"),
    "tq2_0": ("q8_K", "ggml_vec_dot_tq2_0_q8_K_generic"),
    "mxfp4": ("q8_0", "ggml_vec_dot_mxfp4_q8_0_generic"),
    "iq4_nl": ("q8_0", "ggml_vec_dot_iq4_nl_q8_0_generic"),
    "iq4_xs": ("q8_K", "ggml_vec_dot_iq4_xs_q8_K_generic"),
}


def make_inputs():
    """Rows of N floats covering ggml's corner cases."""
    rng = np.random.default_rng(20240607)
    rows = {
        "zeros": np.zeros(N),
        "tiny": rng.standard_normal(N) * 1e-6,
        "subnormal_mix": np.where(rng.random(N) < 0.5, rng.standard_normal(N) * 1e-39, rng.standard_normal(N) * 1e-20),
        "huge": rng.standard_normal(N) * 3.0e4,
        "negative_only": -np.abs(rng.standard_normal(N)) - 0.01,
        "positive_only": np.abs(rng.standard_normal(N)) + 0.5,
        "normal": rng.standard_normal(N),
        "ggml_cos": 0.1 + 2.0 * np.cos(np.arange(N, dtype=np.float32)),   # test-quantize-fns data
        "mixed_scales": rng.standard_normal(N) * 10.0 ** rng.uniform(-3, 3, N // 16).repeat(16),
        "constant": np.full(N, 1.5),
        "ternary": rng.integers(-1, 2, N) * 0.7,
        "outliers": rng.standard_normal(N) * np.where(rng.random(N) < 0.02, 50.0, 1.0),
        "half_ties": (rng.integers(-16, 17, N) + 0.5) / 16.0,
    }
    names = list(rows)
    data = np.stack([rows[k] for k in names]).astype(np.float32)
    return names, data


def load_lib():
    if not os.path.exists(LIB):
        sys.exit(f"{LIB} missing: run build_ggml_ref.sh first")
    lib = ctypes.CDLL(LIB)
    lib.ggmlref_init()
    return lib


def ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def c_quantize(lib, suffix, x, bb, bl):
    out = np.zeros(x.size // bl * bb, np.uint8)
    if suffix == "iq4_nl":
        # quantize_row_iq4_nl_ref skips the scale search and leaves all-zero blocks with stale
        # (for the first block: uninitialized) indices; the oracle is what ggml_quantize_chunk and
        # llama-quantize run: quantize_iq4_nl without importance weights.
        lib.quantize_iq4_nl(ptr(x), ptr(out), ctypes.c_int64(1), ctypes.c_int64(x.size), ctypes.c_void_p(0))
    else:
        getattr(lib, f"quantize_row_{suffix}_ref")(ptr(x), ptr(out), ctypes.c_int64(x.size))
    return out


def c_dequantize(lib, suffix, q, n):
    out = np.zeros(n, np.float32)
    getattr(lib, f"dequantize_row_{suffix}")(ptr(q), ptr(out), ctypes.c_int64(n))
    return out


def c_dot(lib, fn, n, wq, aq):
    s = np.zeros(1, np.float32)
    getattr(lib, fn)(ctypes.c_int(n), ptr(s), ctypes.c_size_t(0), ptr(wq), ctypes.c_size_t(0),
                     ptr(aq), ctypes.c_size_t(0), ctypes.c_int(1))
    return s


def main():
    lib = load_lib()
    names, inputs = make_inputs()
    inputs.tofile(os.path.join(HERE, "inputs.bin"))
    manifest = {"n": N, "rows": names, "rnd_blocks": RND_BLOCKS, "gguf_py": gguf.__version__ if hasattr(gguf, "__version__") else "0.19.0",
                "types": {}, "dots": {}}
    quantized = {}
    rng = np.random.default_rng(7)
    for name, gt, bl, bb, suffix, py_q, py_dq in TYPES:
        rows_q = []
        for r in inputs:
            if suffix is not None:
                c = c_quantize(lib, suffix, r, bb, bl)
                if py_q:
                    p = gq.quantize(r.reshape(1, -1), gt).reshape(-1)
                    assert np.array_equal(p, c), f"gguf-py and ggml C disagree on {name}"
                rows_q.append(c)
            elif name == "f16":
                rows_q.append(r.astype(np.float16).view(np.uint8))
            else:
                rows_q.append(gq.quantize(r.reshape(1, -1), gt).reshape(-1).view(np.uint8))
        q = np.concatenate(rows_q).astype(np.uint8)
        quantized[name] = rows_q
        q.tofile(os.path.join(HERE, f"q_{name}.bin"))
        # Dequantization oracle for the golden bytes: ggml C where it has one, else gguf-py.
        if suffix is not None and name != "q8_1":
            dq = np.concatenate([c_dequantize(lib, suffix, rq, N) for rq in rows_q])
            dq_oracle = "ggml-c"
            if py_dq:
                pdq = gq.dequantize(q, gt).reshape(-1).astype(np.float32)
                assert np.array_equal(pdq.view(np.uint32), dq.view(np.uint32)), f"dequant disagree {name}"
                dq_oracle = "ggml-c+gguf-py"
        elif name == "q8_1":
            # ggml has no Q8_1 to_float; x = d*q (f16 d at bytes 0..2).
            blocks = q.reshape(-1, 36)
            d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
            dq = (blocks[:, 4:].view(np.int8).astype(np.float32) * d).reshape(-1)
            dq_oracle = "numpy"
        else:
            dq = gq.dequantize(q, gt).reshape(-1).astype(np.float32)
            dq_oracle = "gguf-py"
        dq.astype(np.float32).tofile(os.path.join(HERE, f"dq_{name}.bin"))

        # Random blocks: every byte random, so scales may be NaN/Inf/subnormal.
        rnd = rng.integers(0, 256, RND_BLOCKS * bb, dtype=np.uint8)
        if name == "q8_K":
            # Keep d finite-ish half the time so the values are not all NaN.
            blk = rnd.reshape(RND_BLOCKS, bb)
            blk[::2, 0:4] = np.frombuffer(np.array([0.013, -2.5, 1e-3], np.float32)[: len(blk[::2])].tobytes(), np.uint8).reshape(-1, 4)
            rnd = blk.reshape(-1)
        rnd.tofile(os.path.join(HERE, f"rnd_{name}.bin"))
        n_rnd = RND_BLOCKS * bl
        if py_dq:
            rdq = gq.dequantize(rnd, gt).reshape(-1).astype(np.float32)
            rnd_oracle = "gguf-py"
        elif name == "q8_K":
            rdq = c_dequantize(lib, "q8_K", rnd, n_rnd)
            rnd_oracle = "ggml-c"
        else:  # q8_1
            blocks = rnd.reshape(-1, 36)
            d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
            rdq = (blocks[:, 4:].view(np.int8).astype(np.float32) * d).reshape(-1)
            rnd_oracle = "numpy"
        rdq.tofile(os.path.join(HERE, f"rnd_dq_{name}.bin"))
        manifest["types"][name] = {
            "id": int(gt), "block_len": bl, "block_bytes": bb,
            "quant_oracle": ("ggml-c+gguf-py" if py_q and suffix else "ggml-c" if suffix else "gguf-py" if py_q else "numpy"),
            "dequant_oracle": dq_oracle, "rnd_dequant_oracle": rnd_oracle,
        }

    # Golden dot products: weight row i (type t) · activation row j (vec_dot_type), ggml generic C.
    for wname, (aname, fn) in DOTS.items():
        res = []
        for i in range(len(names)):
            for j in (i, (i + 3) % len(names), (i + 7) % len(names)):
                s = c_dot(lib, fn, N, quantized[wname][i], quantized[aname][j])
                res.append([i, j, int(s.view(np.uint32)[0])])
        manifest["dots"][wname] = res

    # Non-finite inputs (NaN, ±Inf among normal values): ggml C only (C leaves float->int casts of
    # NaN implementation-defined; this records what x86-64 gcc code does, which ours mimics).
    nf = inputs[names.index("normal")].copy()
    nf[3] = np.nan
    nf[40] = np.inf
    nf[300] = -np.inf
    nf[301] = np.nan
    nf.tofile(os.path.join(HERE, "nonfinite.bin"))
    for name, gt, bl, bb, suffix, py_q, py_dq in TYPES:
        if suffix is not None:
            c_quantize(lib, suffix, nf, bb, bl).tofile(os.path.join(HERE, f"nonfinite_{name}.bin"))

    # Bulk rows: 32 super-blocks from several distributions, quantized by ggml C only. Many blocks
    # make the search paths of the K-quant quantizers (every candidate scale) show up in the bytes.
    brng = np.random.default_rng(99)
    parts = [brng.standard_normal(2048), brng.laplace(size=2048), brng.uniform(-1, 1, 2048),
             brng.standard_t(3, 2048) * brng.uniform(0.01, 10, 8).repeat(256)]
    bulk = np.concatenate(parts).astype(np.float32)
    bulk.tofile(os.path.join(HERE, "bulk.bin"))
    for name, gt, bl, bb, suffix, py_q, py_dq in TYPES:
        if suffix is not None:
            c_quantize(lib, suffix, bulk, bb, bl).tofile(os.path.join(HERE, f"bulk_{name}.bin"))

    # gguf-py's type table, to check core's GgmlType rows against.
    manifest["gguf_quant_sizes"] = {t.name: [int(t), bl, bb] for t, (bl, bb) in gguf.constants.GGML_QUANT_SIZES.items()}

    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    total = sum(os.path.getsize(os.path.join(HERE, p)) for p in os.listdir(HERE))
    print(f"wrote {len(os.listdir(HERE))} files, {total} bytes")


if __name__ == "__main__":
    main()
