#!/usr/bin/env python3
"""Tiny random-weight Gemma 2 and Gemma 3 (text) MLX model directories, the same weights as
GGUF files written with llama.cpp's conventions, and real mlx-lm's logits on them.

The oracle for mlx-arm's Gemma 2 / 3 support and Gemma GGUF files (lm/tests/gemma_reference.rs):

* gemma2/: mlx-lm's `gemma2` model — four norms per block, tanh-GELU feed-forward, attention
  and final logit soft-capping (small caps, so that they matter), query_pre_attn_scalar 48
  (not head_dim 32), and a sliding window of 4 positions on layer 0 (layers 0, 2, … slide, as
  in transformers and llama.cpp). mlx-lm 0.32.2's gemma2 attends to the whole context in
  every layer, so the oracle runs mlx-lm's own blocks with mlx-lm's window mask
  (`create_causal_mask(N, 0, window_size)`) on the sliding layers; its stock forward is
  checked equal on a prefix no longer than the window.
* gemma3/: mlx-lm's `gemma3_text` model unchanged — q/k norms, 6 layers with the last one
  global (sliding_window_pattern 6) and a 4-position window on the others, local rope base
  1e4 vs global 1e6 with linear rope scaling (factor 4) on the global layer, tied output.
* gguf/gemma-F32.gguf, gguf/gemma2-F32.gguf, gguf/gemma3-F32.gguf: the gemma/, gemma2/ and
  gemma3/ weights as llama.cpp's convert_hf_to_gguf.py writes them (norm weights + 1, tensor
  names blk.N.attn_q …, post_attention_norm, post_ffw_norm, attn_q_norm; the soft-cap and
  sliding-window keys; no output.weight: tied). llama.cpp implies settings GGUF does not
  store, so their goldens are mlx-lm run with those settings: attention scale 1/sqrt(head_dim)
  (Gemma 2: query_pre_attn_scalar = head_dim), tanh GELU for Gemma 1 (llama.cpp's ggml_gelu;
  mlx-lm's gemma uses the erf form), local rope base 1e4 and a pattern of 6 (Gemma 3: the
  directory already has these).

Every logits golden covers the prompt followed by its greedy continuation (28 positions, far
past the window), computed in one pass without a cache; the greedy ids come from re-running
the whole sequence each step.

Needs real MLX and mlx-lm (CPU wheels) and llama.cpp's gguf package:
    python3 -m venv /tmp/mlxvenv && /tmp/mlxvenv/bin/pip install mlx==0.32.4 mlx-lm==0.32.2 numpy gguf
    /tmp/mlxvenv/bin/python lm/tests/data/hf/gen_gemma23_mlx.py
"""
import json
from pathlib import Path

import numpy as np
import mlx.core as mx
import mlx.nn as nn
import mlx_lm
from mlx_lm.models import gemma, gemma2, gemma3_text
from mlx_lm.models.base import create_causal_mask
import gguf

HERE = Path(__file__).resolve().parent
IDS = [2, 17, 250, 3, 99, 128, 64, 31, 5, 42, 200, 7]
GREEDY = 16
WINDOW = 4

GEMMA2 = {
    "model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 128,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "rms_norm_eps": 1e-6,
    "vocab_size": 256, "rope_theta": 10000.0, "max_position_embeddings": 512,
    "query_pre_attn_scalar": 48, "attn_logit_softcapping": 5.0, "final_logit_softcapping": 15.0,
    "sliding_window": WINDOW,
}
GEMMA3 = {
    "model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 6, "intermediate_size": 64,
    "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "rms_norm_eps": 1e-6,
    "vocab_size": 256, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
    "query_pre_attn_scalar": 16, "sliding_window": WINDOW, "sliding_window_pattern": 6,
    "max_position_embeddings": 512, "rope_scaling": {"rope_type": "linear", "factor": 4.0},
}


def weights(c, rng, sandwich, qk_norm):
    h, f, hd = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    # Small embeddings (they are scaled by sqrt(hidden) = 8 and would otherwise dominate the
    # residual stream, so that the tied output just repeats the last token) and a final norm
    # of about 5 (so that logits are large enough for the final soft-cap to matter).
    w = {"model.embed_tokens.weight": rng.normal(0, 0.1, (c["vocab_size"], h)),
         "model.norm.weight": rng.normal(4, 0.3, (h,))}
    norms = ["input_layernorm", "post_attention_layernorm"]
    if sandwich:
        norms += ["pre_feedforward_layernorm", "post_feedforward_layernorm"]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for name, shape in [("self_attn.q_proj", (q, h)), ("self_attn.k_proj", (kv, h)), ("self_attn.v_proj", (kv, h)),
                            ("self_attn.o_proj", (h, q)), ("mlp.gate_proj", (f, h)), ("mlp.up_proj", (f, h)),
                            ("mlp.down_proj", (h, f))]:
            w[p + name + ".weight"] = rng.normal(0, 0.2, shape)
        # Norm weights away from 0, so that the (1 + weight) convention matters.
        for n in norms:
            w[p + n + ".weight"] = rng.normal(0, 0.3, (h,))
        if qk_norm:
            w[p + "self_attn.q_norm.weight"] = rng.normal(0, 0.3, (hd,))
            w[p + "self_attn.k_norm.weight"] = rng.normal(0, 0.3, (hd,))
    return {k: mx.array(v.astype(np.float32)) for k, v in w.items()}


def gemma2_windowed(model):
    """mlx-lm's gemma2 forward with transformers' / llama.cpp's sliding window on even layers."""
    inner, a = model.model, model.args
    window = GEMMA2["sliding_window"]

    def forward(x):
        n = x.shape[1]
        h = inner.embed_tokens(x) * (a.hidden_size ** 0.5)
        for i, layer in enumerate(inner.layers):
            h = layer(h, create_causal_mask(n, 0, window_size=window if i % 2 == 0 else None), None)
        out = inner.embed_tokens.as_linear(inner.norm(h))
        return mx.tanh(out / a.final_logit_softcapping) * a.final_logit_softcapping
    return forward


def run(forward):
    """Greedy continuation of IDS (whole sequence re-run each step) and the logits of it all."""
    seq, margins = list(IDS), []
    for _ in range(GREEDY):
        last = np.array(forward(mx.array([seq]))[0, -1].astype(mx.float32))
        top = np.sort(last)[-2:]
        margins.append(float(top[1] - top[0]))
        seq.append(int(last.argmax()))
    logits = np.array(forward(mx.array([seq]))[0].astype(mx.float32))
    return {"greedy": seq[len(IDS):], "greedy_top2_margins": margins}, logits


def load(module, config, path):
    model = module.Model(module.ModelArgs.from_dict(config))
    w = mx.load(str(path))
    if hasattr(model, "sanitize"):
        w = model.sanitize(w)
    model.load_weights(list(w.items()))
    mx.eval(model.parameters())
    return model


# A Gemma-style SentencePiece vocabulary for gemma3-F32.gguf, as llama.cpp's converter writes
# Gemma's (tokenizer.ggml.model "llama", add_space_prefix false, <0xXX> byte fallback,
# <start_of_turn>/<end_of_turn> control tokens, the chat template), small enough that the
# expected encodings can be worked out by hand from llama.cpp's rule (merge the adjacent pair
# whose merged piece has the highest score).
GEMMA_TEMPLATE = ("{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\\n' + "
                  "message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
                  "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}")


def add_gemma_vocab(g, n):
    T = gguf.TokenType
    toks = [("<pad>", 0.0, T.CONTROL), ("<eos>", 0.0, T.CONTROL), ("<bos>", 0.0, T.CONTROL), ("<unk>", 0.0, T.UNKNOWN),
            ("<start_of_turn>", 0.0, T.CONTROL), ("<end_of_turn>", 0.0, T.CONTROL), ("<0x0A>", 0.0, T.BYTE)]
    toks += [(c, 0.0, T.NORMAL) for c in ["\u2581", "H", "e", "l", "o", "w", "r", "d", "u", "s", "m"]]
    for i, piece in enumerate(["ll", "He", "llo", "Hello", "or", "\u2581w", "\u2581wor", "\u2581worl", "\u2581world",
                               "us", "use", "user"]):
        toks.append((piece, -1.0 - i, T.NORMAL))
    toks += [(f"<unused{i}>", 0.0, T.UNUSED) for i in range(n - len(toks))]
    g.add_tokenizer_model("llama")
    g.add_token_list([t for t, _, _ in toks])
    g.add_token_scores([s for _, s, _ in toks])
    g.add_token_types([k for _, _, k in toks])
    g.add_bos_token_id(2)
    g.add_eos_token_id(1)
    g.add_unk_token_id(3)
    g.add_pad_token_id(0)
    g.add_add_bos_token(True)
    g.add_add_eos_token(False)
    g.add_add_space_prefix(False)
    g.add_chat_template(GEMMA_TEMPLATE)


def write_gguf(path, arch, c, w, extra):
    """The directory's weights as llama.cpp's converter writes them (F32)."""
    g = gguf.GGUFWriter(str(path), arch)
    g.add_context_length(c["max_position_embeddings"])
    g.add_embedding_length(c["hidden_size"])
    g.add_block_count(c["num_hidden_layers"])
    g.add_feed_forward_length(c["intermediate_size"])
    g.add_head_count(c["num_attention_heads"])
    g.add_head_count_kv(c["num_key_value_heads"])
    g.add_layer_norm_rms_eps(c["rms_norm_eps"])
    g.add_key_length(c["head_dim"])
    g.add_value_length(c["head_dim"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    extra(g)
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "self_attn.q_norm": "attn_q_norm",
             "self_attn.k_norm": "attn_k_norm", "post_feedforward_layernorm": "post_ffw_norm"}
    sandwich = any("pre_feedforward_layernorm" in k for k in w)
    # Gemma 2/3's post_attention_layernorm follows attention; Gemma 1's feeds the feed-forward.
    names["post_attention_layernorm"] = "post_attention_norm" if sandwich else "ffn_norm"
    names["pre_feedforward_layernorm"] = "ffn_norm"
    for k, v in w.items():
        a = np.array(v, dtype=np.float32)
        if k.endswith("norm.weight"):
            a = a + 1.0  # convert_hf_to_gguf.py: Gemma's RMSNorm multiplies by (1 + weight)
        if k == "model.embed_tokens.weight":
            name = "token_embd.weight"
        elif k == "model.norm.weight":
            name = "output_norm.weight"
        else:
            parts = k.split(".")
            name = f"blk.{parts[2]}.{names['.'.join(parts[3:-1])]}.weight"
        g.add_tensor(name, a)
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()


def save(out, config, w):
    out.mkdir(exist_ok=True)
    (out / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    mx.save_safetensors(str(out / "model.safetensors"), w)


def main():
    (HERE / "gguf").mkdir(exist_ok=True)
    all_goldens = {"ids": IDS}

    # ---- Gemma 2 ----
    out = HERE / "gemma2"
    w2 = weights(GEMMA2, np.random.default_rng(20261127), sandwich=True, qk_norm=False)
    save(out, GEMMA2, w2)
    model = load(gemma2, GEMMA2, out / "model.safetensors")
    fwd = gemma2_windowed(model)
    prefix = mx.array([IDS[:WINDOW]])
    assert np.allclose(np.array(fwd(prefix)), np.array(model(prefix)), atol=1e-6), "window-free prefix differs"
    g2, l2 = run(fwd)
    np.save(out / "logits.npy", l2)
    # llama.cpp's Gemma 2 (not 27B) scales attention by 1/sqrt(head_dim).
    gg = dict(GEMMA2, query_pre_attn_scalar=GEMMA2["head_dim"])
    g2["gguf"], lg = run(gemma2_windowed(load(gemma2, gg, out / "model.safetensors")))
    np.save(out / "gguf_logits.npy", lg)
    write_gguf(HERE / "gguf/gemma2-F32.gguf", "gemma2", GEMMA2, w2, lambda g: (
        g.add_attn_logit_softcapping(GEMMA2["attn_logit_softcapping"]),
        g.add_final_logit_softcapping(GEMMA2["final_logit_softcapping"]),
        g.add_sliding_window(GEMMA2["sliding_window"])))
    all_goldens["gemma2"] = g2

    # ---- Gemma 3 ----
    out = HERE / "gemma3"
    w3 = weights(GEMMA3, np.random.default_rng(20261128), sandwich=True, qk_norm=True)
    save(out, GEMMA3, w3)
    model = load(gemma3_text, GEMMA3, out / "model.safetensors")
    g3, l3 = run(model)
    np.save(out / "logits.npy", l3)
    write_gguf(HERE / "gguf/gemma3-F32.gguf", "gemma3", GEMMA3, w3, lambda g: (
        g.add_rope_freq_base(GEMMA3["rope_theta"]),
        g.add_sliding_window(GEMMA3["sliding_window"]),
        g.add_rope_scaling_type(gguf.RopeScalingType.LINEAR),
        g.add_rope_scaling_factor(GEMMA3["rope_scaling"]["factor"]),
        add_gemma_vocab(g, GEMMA3["vocab_size"])))
    all_goldens["gemma3"] = g3

    # ---- Gemma 1 as GGUF: the existing gemma/ directory, tanh GELU as llama.cpp runs it ----
    c1 = json.loads((HERE / "gemma/config.json").read_text())
    w1 = mx.load(str(HERE / "gemma/model.safetensors"))
    model = load(gemma, c1, HERE / "gemma/model.safetensors")
    for layer in model.model.layers:
        mlp = layer.mlp
        mlp.__class__ = type("TanhGeluMLP", (gemma.MLP,), {
            "__call__": lambda self, x: self.down_proj(nn.gelu_approx(self.gate_proj(x)) * self.up_proj(x))})
    all_goldens["gemma_gguf"], l1 = run(model)
    np.save(HERE / "gguf/gemma-F32.logits.npy", l1)
    write_gguf(HERE / "gguf/gemma-F32.gguf", "gemma", c1, w1, lambda g: g.add_rope_freq_base(c1["rope_theta"]))

    all_goldens["versions"] = {"mlx": mx.__version__, "mlx_lm": mlx_lm.__version__}
    (HERE / "gemma23_goldens.json").write_text(json.dumps(all_goldens, indent=1) + "\n")
    for k in ["gemma2", "gemma3", "gemma_gguf"]:
        print(k, "greedy", all_goldens[k]["greedy"], "min margin", min(all_goldens[k]["greedy_top2_margins"]))
    print("gemma2 gguf greedy", g2["gguf"]["greedy"], "min margin", min(g2["gguf"]["greedy_top2_margins"]))


if __name__ == "__main__":
    main()
