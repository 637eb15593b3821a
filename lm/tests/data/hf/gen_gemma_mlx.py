#!/usr/bin/env python3
"""A tiny random-weight Gemma as an MLX model directory, and real mlx-lm's logits on it.

The oracle for mlx-arm's Gemma support (lm/tests/hf_reference.rs): mlx-lm's `gemma` model is
what `mlx_lm.load` runs on such a directory — RMSNorm with (1 + weight), the embeddings scaled
by sqrt(hidden), a GELU (erf) gated feed-forward, half-split RoPE, the embedding as the output
layer, and a head dimension other than hidden / heads.

Needs real MLX and mlx-lm (CPU wheels are enough):
    python3 -m venv /tmp/mlxvenv && /tmp/mlxvenv/bin/pip install mlx==0.32.4 mlx-lm==0.32.2 numpy
    /tmp/mlxvenv/bin/python lm/tests/data/hf/gen_gemma_mlx.py
Writes gemma/{config.json, model.safetensors, logits.npy, goldens.json} beside this script.
"""
import json
from pathlib import Path

import numpy as np
import mlx.core as mx
import mlx_lm
from mlx_lm.models import gemma

HERE = Path(__file__).resolve().parent
OUT = HERE / "gemma"
IDS = json.loads((HERE / "goldens.json").read_text())["ids"]
CONFIG = {
    "model_type": "gemma",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 32,
    "rms_norm_eps": 1e-6,
    "vocab_size": 512,
    "rope_theta": 10000.0,
    "max_position_embeddings": 512,
}
GREEDY = 16


def weights(rng):
    c = CONFIG
    h, f, hd = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    w = {"model.embed_tokens.weight": rng.normal(0, 0.5, (c["vocab_size"], h)),
         "model.norm.weight": rng.normal(0, 0.3, (h,))}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for name, shape in [("self_attn.q_proj", (q, h)), ("self_attn.k_proj", (kv, h)), ("self_attn.v_proj", (kv, h)),
                            ("self_attn.o_proj", (h, q)), ("mlp.gate_proj", (f, h)), ("mlp.up_proj", (f, h)),
                            ("mlp.down_proj", (h, f))]:
            w[p + name + ".weight"] = rng.normal(0, 0.15, shape)
        # Norm weights away from 0, so that the (1 + weight) convention matters.
        w[p + "input_layernorm.weight"] = rng.normal(0, 0.3, (h,))
        w[p + "post_attention_layernorm.weight"] = rng.normal(0, 0.3, (h,))
    return {k: mx.array(v.astype(np.float32)) for k, v in w.items()}


def main():
    OUT.mkdir(exist_ok=True)
    w = weights(np.random.default_rng(20261126))
    (OUT / "config.json").write_text(json.dumps(CONFIG, indent=1) + "\n")
    mx.save_safetensors(str(OUT / "model.safetensors"), w)
    model = gemma.Model(gemma.ModelArgs.from_dict(CONFIG))
    model.load_weights(str(OUT / "model.safetensors"))
    mx.eval(model.parameters())
    logits = model(mx.array([IDS]))[0].astype(mx.float32)
    np.save(OUT / "logits.npy", np.array(logits))
    # Greedy continuation, re-running the whole sequence each step (no cache to disagree with).
    seq, margins = list(IDS), []
    for _ in range(GREEDY):
        last = np.array(model(mx.array([seq]))[0, -1].astype(mx.float32))
        top = np.sort(last)[-2:]
        margins.append(float(top[1] - top[0]))
        seq.append(int(last.argmax()))
    goldens = {"ids": IDS, "greedy": seq[len(IDS):], "greedy_top2_margins": margins,
               "versions": {"mlx": mx.__version__, "mlx_lm": mlx_lm.__version__}}
    (OUT / "goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print("min greedy margin", min(margins), "max |logit|", float(np.abs(np.array(logits)).max()))


if __name__ == "__main__":
    main()
