#!/usr/bin/env python3
"""Writes the ~1.1B random-weight Llama of the llama.cpp anchor as an F16 GGUF, with numpy and `gguf` only.

The anchor (/work/shared/anchors/llamacpp, make_models.py + convert.sh) builds the same model through
torch + transformers + llama.cpp's converter, which needs GBs of wheels. This script writes the GGUF
directly: TinyLlama-1.1B's shape (hidden 2048, 22 layers, 32 heads, 4 KV heads, ffn 5632, vocab 32000,
untied lm_head, rope_theta 1e4, eps 1e-5), weights normal(0, 0.02) from a fixed seed, norms 1.
The bytes differ from the anchor's files (another generator), the shapes, types and metadata do not,
so speed figures are comparable. Quantize the output with llama-quantize (Q8_0, Q4_0, Q4_K_M).

Tokenizer: a generated `llama` (SentencePiece) vocabulary of 32000 pieces: <unk>/<s>/</s> controls,
the 256 byte tokens <0x00>..<0xFF> (type BYTE), then filler pieces. Text through it means nothing;
it exists so that llama.cpp and mlx-arm both load the file.

Usage: python scripts/make_bench_models.py [--out /tmp/llama/models/medium-F16.gguf] [--seed 0]
Needs: pip install numpy gguf
"""
import argparse
import os

import numpy as np
import gguf

# TinyLlama-1.1B shape, as the anchor's medium model.
HIDDEN, LAYERS, HEADS, KV_HEADS, FFN, VOCAB, CTX = 2048, 22, 32, 4, 5632, 32000, 2048
ROPE_THETA, RMS_EPS, STD = 1e4, 1e-5, 0.02
HEAD_DIM = HIDDEN // HEADS


def vocabulary():
    """Pieces, scores and token types of a SentencePiece-style vocabulary (llama.cpp's type codes)."""
    T = gguf.TokenType
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [T.UNKNOWN, T.CONTROL, T.CONTROL] + [T.BYTE] * 256
    scores = [0.0] * len(pieces)
    # Filler pieces: distinct words; scores falling with the id like a trained model's.
    for i in range(VOCAB - len(pieces)):
        pieces.append(f"\u2581w{i}")
        types.append(T.NORMAL)
        scores.append(-float(i))
    return pieces, scores, [int(t) for t in types]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/llama/models/medium-F16.gguf")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    rng = np.random.default_rng(args.seed)

    def weight(rows, cols):
        # numpy (out, in) row-major, as a Hugging Face Linear; gguf writes the dims reversed (ne0 = in).
        return (rng.standard_normal((rows, cols), dtype=np.float32) * STD).astype(np.float16)

    def norm():
        # llama.cpp's converter keeps 1-D tensors in F32 in an F16 file.
        return np.ones(HIDDEN, dtype=np.float32)

    w = gguf.GGUFWriter(args.out, "llama")
    w.add_name("random-llama-1.1b")
    w.add_context_length(CTX)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_rope_freq_base(ROPE_THETA)
    w.add_layer_norm_rms_eps(RMS_EPS)
    w.add_vocab_size(VOCAB)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    pieces, scores, types = vocabulary()
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(pieces)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    # Random weights need no q/k rope permutation (llama.cpp's converter permutes HF's q/k rows;
    # a permuted random matrix is another random matrix of the same shape).
    w.add_tensor("token_embd.weight", weight(VOCAB, HIDDEN))
    kv = KV_HEADS * HEAD_DIM
    for i in range(LAYERS):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", norm())
        w.add_tensor(p + "attn_q.weight", weight(HIDDEN, HIDDEN))
        w.add_tensor(p + "attn_k.weight", weight(kv, HIDDEN))
        w.add_tensor(p + "attn_v.weight", weight(kv, HIDDEN))
        w.add_tensor(p + "attn_output.weight", weight(HIDDEN, HIDDEN))
        w.add_tensor(p + "ffn_norm.weight", norm())
        w.add_tensor(p + "ffn_gate.weight", weight(FFN, HIDDEN))
        w.add_tensor(p + "ffn_up.weight", weight(FFN, HIDDEN))
        w.add_tensor(p + "ffn_down.weight", weight(HIDDEN, FFN))
    w.add_tensor("output_norm.weight", norm())
    w.add_tensor("output.weight", weight(VOCAB, HIDDEN))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {args.out} ({os.path.getsize(args.out) / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
