#!/usr/bin/env python3
"""Times real MLX + mlx-lm (CPU) on a Llama GGUF: pp128 and tg64 tok/s, as `mlx-arm bench` reports them.

mlx-lm cannot load GGUF (its gguf.py only writes it), but `mx.load` reads GGUF tensors: Q4_0, Q4_1
and Q8_0 come back as MLX affine-quantized weights (group 32, with scales and biases), other types
(F16, and the q6_K / q4_K tensors of a Q4_K_M file) as float16. This script maps the llama.cpp
tensor names onto mlx-lm's Llama module, quantizes the layers that came quantized, and times
`model(prompt)` over 128 random token ids and 64 single-token decode steps with mlx-lm's KV cache.

Run it with real MLX (not our mlx.core): /work/oracle-venv/bin/python scripts/bench_mlx_gguf.py M.gguf
Threads: MLX's CPU backend reads no thread setting of its own; OMP/OpenBLAS variables are set to
the -t value for the BLAS calls it makes.
Usage: bench_mlx_gguf.py MODEL.gguf [-t 2] [-r 3]
"""
import argparse
import os
import statistics
import sys
import time


def parse():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-r", "--reps", type=int, default=3)
    return ap.parse_args()


ARGS = parse()
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import mlx.core as mx  # noqa: E402  (after the thread variables)
import mlx.nn as nn  # noqa: E402
from mlx_lm.models import llama  # noqa: E402
from mlx_lm.models.cache import make_prompt_cache  # noqa: E402

LAYER_NAMES = {
    "attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}
TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}


def mlx_name(name):
    base, _, leaf = name.rpartition(".")
    parts = base.split(".")
    if parts[0] == "blk":
        return f"model.layers.{parts[1]}.{LAYER_NAMES[parts[2]]}.{leaf}"
    return f"{TOP_NAMES[base]}.{leaf}"


def load(path):
    tensors, meta = mx.load(path, return_metadata=True)
    g = lambda k: meta[f"llama.{k}"].item()  # noqa: E731
    weights = {mlx_name(k): v for k, v in tensors.items()}
    hidden, heads = int(g("embedding_length")), int(g("attention.head_count"))
    args = llama.ModelArgs(
        model_type="llama", hidden_size=hidden, num_hidden_layers=int(g("block_count")),
        intermediate_size=int(g("feed_forward_length")), num_attention_heads=heads,
        num_key_value_heads=int(g("attention.head_count_kv")), rms_norm_eps=float(g("attention.layer_norm_rms_epsilon")),
        vocab_size=weights["model.embed_tokens.weight"].shape[0] if "model.embed_tokens.scales" not in weights
        else weights["model.embed_tokens.scales"].shape[0],
        rope_theta=float(g("rope.freq_base")),
        # llama.cpp's converter permutes q/k rows for the adjacent-pair ("traditional") RoPE.
        rope_traditional=True, tie_word_embeddings="lm_head.weight" not in weights,
    )
    model = llama.Model(args)

    def quant(path, module):
        if f"{path}.scales" not in weights:
            return False
        in_features = weights[f"{path}.scales"].shape[-1] * 32
        return {"group_size": 32, "bits": weights[f"{path}.weight"].shape[-1] * 32 // in_features}

    nn.quantize(model, class_predicate=quant)
    model.load_weights(list(weights.items()))
    mx.eval(model.parameters())
    return model, args.vocab_size


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    model, vocab = load(ARGS.model)
    prompt = mx.random.randint(0, vocab, (1, 128), key=mx.random.key(0))

    def prefill():
        cache = make_prompt_cache(model)
        mx.eval(model(prompt, cache=cache))
        return cache

    def decode(n=64):
        cache = make_prompt_cache(model)
        tok = prompt[:, :1]
        for _ in range(n):
            tok = mx.argmax(model(tok, cache=cache)[:, -1, :], axis=-1, keepdims=True)
            mx.eval(tok)

    prefill(), decode(4)  # warm-up
    pp = [128 / timed(prefill) for _ in range(ARGS.reps)]
    tg = [64 / timed(decode) for _ in range(ARGS.reps)]
    print(f"mlx {mx.__version__} {os.path.basename(ARGS.model)} t={ARGS.threads}: "
          f"pp128 {statistics.median(pp):.1f} tok/s, tg64 {statistics.median(tg):.1f} tok/s (median of {ARGS.reps})")


if __name__ == "__main__":
    sys.exit(main())
