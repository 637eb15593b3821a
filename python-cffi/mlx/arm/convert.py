"""GGUF Llama file → MLX model directory (what ``mlx_lm.load`` / ``mlx_lm.lora`` read):
config.json, model.safetensors with Hugging Face tensor names, tokenizer.json +
tokenizer_config.json (with the GGUF's chat template).

    python -m mlx.arm.convert [model.gguf] out_dir [--dtype float32|float16|bfloat16]

Without a file the default model is converted. Weights are dequantized exactly (ggml's blocks
→ float32, then cast to ``--dtype``); for an MLX-quantized directory (QLoRA) run
``mlx_lm.convert --hf-path out_dir -q`` on the result. The q/k projections are un-permuted:
llama.cpp's converter reorders their rows for adjacent-pair RoPE, MLX's Llama uses the
half-split layout of the Hugging Face weights. The tokenizer needs the ``tokenizers`` and
``transformers`` packages (mlx-lm needs them anyway); GGUF's byte-level BPE vocabularies
(``tokenizer.ggml.model == "gpt2"``) and SentencePiece BPE ones (``"llama"``, ``_spm.py``) are
converted, anything else raises NotImplementedError.
"""
import argparse
import json
import os

import numpy as np


# GGUF tensor name (after ``blk.N.``) → Hugging Face Llama name (after ``model.layers.N.``).
_LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
_TOP_NAMES = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
              "output.weight": "lm_head.weight"}
# GGUF pre-tokenizer names whose splitting is GPT-2's, optionally after splitting every digit.
_DIGITS_THEN_GPT2 = {"smollm", "starcoder", "refact"}
_GPT2 = {"gpt2", "gpt-2", "default"}


def _int(md, key, default=None):
    if key not in md:
        if default is None:
            raise ValueError(f"[convert] the GGUF file has no '{key}'")
        return default
    return int(np.asarray(md[key]))


def _float(md, key, default):
    return float(np.asarray(md[key])) if key in md else default


def hf_name(gguf_name):
    """The Hugging Face tensor name of a GGUF Llama tensor name."""
    if gguf_name in _TOP_NAMES:
        return _TOP_NAMES[gguf_name]
    parts = gguf_name.split(".", 2)
    if len(parts) == 3 and parts[0] == "blk" and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}"
    raise NotImplementedError(f"[convert] GGUF tensor '{gguf_name}' has no Llama counterpart here")


def unpermute_rows(w, n_heads):
    """Undoes llama.cpp's q/k row order (per head: pairs interleaved) back to the half-split
    order: rows of head h are [0, 2, 4, …, 1, 3, 5, …] in GGUF and [0..d/2, d/2..d] in HF."""
    rows = w.shape[0]
    d = rows // n_heads
    return w.reshape(n_heads, d // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def config_from(md, n_vocab, tied):
    """config.json of a GGUF Llama's metadata (refuses what MLX's Llama would compute otherwise)."""
    arch = md.get("general.architecture")
    if arch != "llama":
        raise NotImplementedError(f"[convert] only Llama GGUF files are converted, this one is '{arch}'")
    if "llama.rope.scaling.type" in md:
        raise NotImplementedError("[convert] RoPE scaling in a GGUF file is not converted")
    heads = _int(md, "llama.attention.head_count")
    hidden = _int(md, "llama.embedding_length")
    cfg = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": hidden,
        "intermediate_size": _int(md, "llama.feed_forward_length"),
        "num_hidden_layers": _int(md, "llama.block_count"),
        "num_attention_heads": heads,
        "num_key_value_heads": _int(md, "llama.attention.head_count_kv", heads),
        "head_dim": _int(md, "llama.rope.dimension_count", hidden // heads),
        "rms_norm_eps": _float(md, "llama.attention.layer_norm_rms_epsilon", 1e-5),
        "rope_theta": _float(md, "llama.rope.freq_base", 10000.0),
        "max_position_embeddings": _int(md, "llama.context_length", 2048),
        "vocab_size": n_vocab,
        "tie_word_embeddings": tied,
    }
    for key, name in (("tokenizer.ggml.bos_token_id", "bos_token_id"), ("tokenizer.ggml.eos_token_id", "eos_token_id")):
        if key in md:
            cfg[name] = _int(md, key)
    return cfg


def save_tokenizer(md, out_dir):
    """tokenizer.json / tokenizer_config.json from the GGUF vocabulary (byte-level or SentencePiece BPE)."""
    model = md.get("tokenizer.ggml.model")
    pre = md.get("tokenizer.ggml.pre", "default")
    if model == "llama":
        from . import _spm
        tok, add_bos = _spm.tokenizer(md)
        return _save(md, tok, out_dir, add_bos)
    if model != "gpt2" or (pre not in _GPT2 and pre not in _DIGITS_THEN_GPT2):
        raise NotImplementedError(f"[convert] tokenizer '{model}' / pre-tokenizer '{pre}' is not converted "
                                  "(byte-level BPE with the gpt2 or smollm split, SentencePiece BPE ('llama'))")
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tokens = md["tokenizer.ggml.tokens"]
    types = np.asarray(md.get("tokenizer.ggml.token_type", np.ones(len(tokens), np.int32)))
    merges = [tuple(m.split(" ", 1)) for m in md.get("tokenizer.ggml.merges", [])]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    split = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if pre in _DIGITS_THEN_GPT2:
        split.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(split)
    tok.decoder = decoders.ByteLevel()
    # Control tokens (GGUF type 3) and user-defined ones (4) are matched whole, as llama.cpp does.
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types) if int(ty) in (3, 4)])
    _save(md, tok, out_dir, None)


def _save(md, tok, out_dir, add_bos):
    """Writes ``tok`` with the GGUF's special tokens and chat template as a transformers tokenizer."""
    from transformers import PreTrainedTokenizerFast

    tokens = md["tokenizer.ggml.tokens"]

    def token(key):
        return tokens[_int(md, key)] if key in md else None

    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=token("tokenizer.ggml.bos_token_id"),
                                   eos_token=token("tokenizer.ggml.eos_token_id"),
                                   unk_token=token("tokenizer.ggml.unknown_token_id"),
                                   pad_token=token("tokenizer.ggml.padding_token_id"))
    if add_bos is not None:
        # tokenizer.json's post-processor adds BOS; transformers' config says so as well.
        fast.init_kwargs["add_bos_token"] = add_bos
    if "tokenizer.chat_template" in md:
        fast.chat_template = md["tokenizer.chat_template"]
    fast.save_pretrained(out_dir)


def convert(gguf_path, out_dir, dtype="float32"):
    """Writes the MLX model directory of ``gguf_path`` into ``out_dir``; returns its config."""
    import mlx.core as mx
    from . import ggml_dequantize, load_gguf

    if dtype not in ("float32", "float16", "bfloat16"):
        raise ValueError(f"[convert] dtype must be float32, float16 or bfloat16, got '{dtype}'")
    tensors, md = load_gguf(gguf_path)
    tied = "output.weight" not in tensors
    cfg = config_from(md, len(md["tokenizer.ggml.tokens"]), tied)
    heads = {"attn_q.weight": cfg["num_attention_heads"], "attn_k.weight": cfg["num_key_value_heads"]}
    weights = {}
    for name, t in tensors.items():
        if t.type in ("f32", "f16", "bf16"):
            w = mx.array(t.blocks).view({"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16}[t.type])
            w = w.reshape(t.shape).astype(mx.float32)
        else:
            w = ggml_dequantize(t.blocks, t.type, t.shape[-1]).reshape(t.shape)
        suffix = name.split(".", 2)[-1]
        if suffix in heads:
            w = unpermute_rows(w, heads[suffix])
        weights[hf_name(name)] = w.astype(getattr(mx, dtype))
    os.makedirs(out_dir, exist_ok=True)
    mx.save_safetensors(os.path.join(out_dir, "model.safetensors"), weights, metadata={"format": "mlx"})
    cfg["torch_dtype"] = dtype
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    save_tokenizer(md, out_dir)
    return cfg


def main(argv=None):
    from ._model import default_model_path

    p = argparse.ArgumentParser(prog="python -m mlx.arm.convert", description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", help="[model.gguf] out_dir (the default model when only out_dir is given)")
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    a = p.parse_args(argv)
    if len(a.paths) > 2:
        p.error("at most two paths: [model.gguf] out_dir")
    gguf, out = (a.paths if len(a.paths) == 2 else [default_model_path(), a.paths[0]])
    cfg = convert(gguf, out, a.dtype)
    print(f"wrote {out}: {cfg['num_hidden_layers']} layers, hidden {cfg['hidden_size']}, vocab {cfg['vocab_size']}")


if __name__ == "__main__":
    main()
