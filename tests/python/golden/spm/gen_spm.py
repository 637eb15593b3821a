"""Records llama.cpp's token ids for a small SentencePiece BPE (``llama``) vocabulary, the oracle of
tests/python/test_convert.py's ``test_spm_tokenizer_matches_llama_cpp``.

Run from this directory with gguf-py and llama.cpp's llama-tokenize (paths of the dev VM):

    PYTHONPATH=/tmp/llama/src/gguf-py python3 gen_spm.py /tmp/llama/src/build/bin/llama-tokenize

The vocabulary (written for this test): <unk>/<s>/</s>, the 256 byte tokens, single characters,
then pieces joined from them with falling scores, so that merges decide the split; pieces that
need byte fallback (non-ASCII letters outside the vocabulary) appear in the texts too. The GGUF
holds only the vocabulary and Llama hyper-parameters (llama-tokenize loads it vocab-only).
Writes spm_goldens.json (committed): the vocabulary and, per text, llama.cpp's ids.
"""
import json
import os
import subprocess
import sys
import tempfile

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
SP = "\u2581"
CHARS = list("abcdefghijklmnopqrstuvwxyzTHA.,!?'0123456789") + [SP, "é"]
WORDS = ["the", "he", "th", "in", "an", "and", "ing", "er", "re", "on", "at", "is", "it", "or",
         "quick", "brown", "fox", "jump", "jumps", "over", "lazy", "dog", "hello", "world", "token",
         "tokens", "arrays", "array", "café", "12", "345", "ll", "llo", "wor", "orld"]
TEXTS = ["The quick brown fox jumps over the lazy dog.", "hello world", " hello  world ",
         "tokens and arrays, 12345!", "café naïve über", "Hello\nworld\ttab", "a",
         "<s> not special", "the thethe inin andand"]


def vocabulary():
    T = gguf.TokenType
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [T.UNKNOWN, T.CONTROL, T.CONTROL] + [T.BYTE] * 256
    scores = [0.0] * len(pieces)
    extra = []
    for w in WORDS:
        # Every prefix of the word and of its ▁-form, so that words are joined step by step.
        extra += [w[:k] for k in range(2, len(w) + 1)] + [(SP + w)[:k] for k in range(2, len(w) + 2)]
    for c in CHARS:
        extra.append(c)
    seen = set(pieces)
    for p in extra:
        if p not in seen:
            seen.add(p)
            pieces.append(p)
            types.append(T.NORMAL)
            # Longer pieces score higher (joined first), as in trained vocabularies; distinct scores.
            scores.append(float(len(p)) * 10.0 - len(pieces) * 0.01)
    return pieces, scores, [int(t) for t in types]


def main():
    tool = sys.argv[1]
    pieces, scores, types = vocabulary()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "spm.gguf")
        w = gguf.GGUFWriter(path, "llama")
        w.add_context_length(64)
        w.add_embedding_length(8)
        w.add_block_count(1)
        w.add_feed_forward_length(16)
        w.add_head_count(2)
        w.add_head_count_kv(2)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_tokenizer_model("llama")
        w.add_token_list(pieces)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_unk_token_id(0)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        ids = {}
        for t in TEXTS:
            out = subprocess.run([tool, "-m", path, "-p", t, "--ids", "--log-disable"], check=True,
                                 capture_output=True, text=True).stdout.strip().splitlines()[-1]
            ids[t] = json.loads(out)
    with open(os.path.join(HERE, "spm_goldens.json"), "w") as f:
        json.dump({"tokens": pieces, "scores": scores, "types": types, "unk": 0, "bos": 1, "eos": 2,
                   "ids": ids}, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
