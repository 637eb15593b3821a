#!/usr/bin/env python3
"""Tiny random-weight Llama-family models and their reference outputs, for lm/tests/hf_reference.rs.

Oracles: Hugging Face transformers (fp32, eager attention) for the HF directories and the GGUF
conversions made from them (llama.cpp's convert_hf_to_gguf.py + llama-quantize); real mlx-lm for
the MLX 4-bit directory made by mlx_lm.convert.

Setup (one venv; torch from PyPI runs on the CPU):
    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install torch transformers safetensors numpy sentencepiece mlx mlx-cpu mlx-lm
    /tmp/hfvenv/bin/pip install -e $LLAMA_SRC/gguf-py          # llama.cpp's own gguf package
Run (from anywhere; writes next to this file):
    LLAMA_SRC=/tmp/llama/src /tmp/hfvenv/bin/python lm/tests/data/hf/gen_hf_models.py

Writes, per variant V in {llama, tied, llama3, qwen2}:
    V/config.json, V/model.safetensors       the HF directory (fp32), saved by save_pretrained
    V/logits.npy                             transformers' logits for IDS, float32 (len(IDS), vocab)
and, for the Mistral check, mistral/config.json (variant llama's weights as MistralForCausalLM).
    gguf/llama-{F32,F16,Q8_0,Q4_0}.gguf, gguf/llama3-F32.gguf, gguf/qwen2-F32.gguf
    gguf/llama-{F16,Q8_0,Q4_0}.logits.npy    transformers' logits with the weights each file stores
                                             (dequantized by gguf-py, q/k un-permuted)
    mlx-llama-4bit/{config.json,model.safetensors}, mlx-llama-4bit/logits.npy (mlx-lm's logits)
    goldens.json                             ids, greedy continuations, top-2 margins, seeds
Everything is seeded: rerunning reproduces the same weights and outputs on the same versions.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import random
from pathlib import Path

import numpy as np
import torch
from transformers import (LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM, Qwen2Config,
                          Qwen2ForCausalLM)

HERE = Path(__file__).resolve().parent
LLAMA_SRC = Path(os.environ.get("LLAMA_SRC", "/tmp/llama/src"))
VOCAB = 320
# Twelve fixed token ids (all < VOCAB); the greedy continuation is taken after them.
IDS = [1, 17, 250, 3, 99, 128, 64, 311, 5, 42, 200, 7]
GREEDY_TOKENS = 16
# Weights are drawn with std INIT (HF's initializer_range) rather than HF's 0.02 so that the
# attention scores are O(1) and positions (RoPE) change the logits visibly, and so the logits
# spread over several units and the greedy choices are not near-ties.
INIT = 0.2

COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-5, initializer_range=INIT,
              bos_token_id=1, eos_token_id=2, hidden_act="silu")

VARIANTS = {
    # name: (model class, config)
    "llama": (LlamaForCausalLM, LlamaConfig(**COMMON, rope_theta=10000.0, tie_word_embeddings=False)),
    "tied": (LlamaForCausalLM, LlamaConfig(**COMMON, rope_theta=10000.0, tie_word_embeddings=True)),
    # Llama 3.1 frequency scaling with an original context of 64 positions and head_dim 32
    # (q_proj 128x64): wavelengths 2*pi*10000^(2i/32) fall below 16 (kept), between 16 and 64
    # (smoothly interpolated) and above 64 (divided by 8), so all three branches matter.
    "llama3": (LlamaForCausalLM, LlamaConfig(**COMMON, rope_theta=10000.0, tie_word_embeddings=False, head_dim=32,
                                             rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                                           "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                           "original_max_position_embeddings": 64})),
    "qwen2": (Qwen2ForCausalLM, Qwen2Config(**COMMON, rope_theta=1000000.0, tie_word_embeddings=False,
                                            use_sliding_window=False)),
}


# transformers 5 writes the rotary settings as "rope_parameters": {"rope_theta", "rope_type", ...};
# older files (most on the Hub) have top-level "rope_theta" and "rope_scaling". These variants'
# config.json is rewritten in the older form so both are exercised.
LEGACY_ROPE_CONFIG = {"qwen2"}


def legacy_rope_config(path: Path):
    cfg = json.loads(path.read_text())
    rp = cfg.pop("rope_parameters")
    cfg["rope_theta"] = rp.pop("rope_theta")
    if rp.get("rope_type", "default") != "default":
        cfg["rope_scaling"] = rp
    path.write_text(json.dumps(cfg, indent=2) + "\n")


def seed(s):
    torch.manual_seed(s)
    np.random.seed(s)
    random.seed(s)


def init_all(model):
    """Every parameter random (HF leaves norms at 1 and biases at 0): norms 1 + N(0, 0.1),
    biases N(0, INIT), matrices N(0, INIT)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(INIT * torch.randn_like(p))


def reference(model, ids):
    """transformers' fp32 logits for ids, its greedy continuation (use_cache) and, at every
    generated step, the margin between its two best logits."""
    x = torch.tensor([ids])
    with torch.no_grad():
        logits = model(x).logits[0].float().numpy()
        out = model.generate(x, max_new_tokens=GREEDY_TOKENS, do_sample=False, use_cache=True, eos_token_id=None,
                             pad_token_id=0, output_scores=True, return_dict_in_generate=True)
    greedy = out.sequences[0, len(ids):].tolist()
    margins = []
    for s in out.scores:
        top = torch.topk(s[0].float(), 2).values
        margins.append(float(top[0] - top[1]))
    return logits.astype(np.float32), greedy, margins


def make_tokenizer(path: Path):
    """A sentencepiece BPE model of VOCAB pieces (byte fallback) trained on a seeded synthetic
    corpus: the GGUF converter needs a vocabulary; the tests never tokenize text."""
    import sentencepiece as spm
    rng = random.Random(0)
    syl = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "en", "an", "the", "ing", "er", "st", "qu", "ve"]
    words = ["".join(rng.choice(syl) for _ in range(rng.randint(1, 4))) for _ in range(500)]
    corpus = path.parent / "corpus.txt"
    with open(corpus, "w") as f:
        for _ in range(3000):
            f.write(" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + ".\n")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(path.with_suffix("")), vocab_size=VOCAB, model_type="bpe",
        byte_fallback=True, character_coverage=1.0, num_threads=1, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
        minloglevel=2)


def gguf_convert(src: Path, tok: Path, out: Path, outtype: str):
    with tempfile.TemporaryDirectory() as t:
        d = Path(t) / "m"
        shutil.copytree(src, d)
        shutil.copy(tok, d / "tokenizer.model")
        env = dict(os.environ, PYTHONPATH=str(LLAMA_SRC / "gguf-py"), NO_LOCAL_GGUF="")
        subprocess.run([sys.executable, str(LLAMA_SRC / "convert_hf_to_gguf.py"), str(d), "--outtype", outtype,
                        "--outfile", str(out)], check=True, env=env, stdout=subprocess.DEVNULL)


def quantize(src: Path, out: Path, ty: str):
    subprocess.run([str(LLAMA_SRC / "build/bin/llama-quantize"), str(src), str(out), ty, "1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


GGUF_TO_HF = {"token_embd.weight": "model.embed_tokens.weight", "output.weight": "lm_head.weight",
              "output_norm.weight": "model.norm.weight", "attn_norm.weight": "input_layernorm.weight",
              "ffn_norm.weight": "post_attention_layernorm.weight", "attn_q.weight": "self_attn.q_proj.weight",
              "attn_k.weight": "self_attn.k_proj.weight", "attn_v.weight": "self_attn.v_proj.weight",
              "attn_output.weight": "self_attn.o_proj.weight", "ffn_gate.weight": "mlp.gate_proj.weight",
              "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight"}


def unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undoes convert_hf_to_gguf's Llama q/k row permutation (pairs -> halves within each head)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def dequantized_logits(path: Path, model, cfg) -> np.ndarray:
    """transformers' fp32 logits with the weights a (quantized) Llama GGUF file stores, expanded
    by gguf-py's reference dequantizer: what the file means, without any activation rounding."""
    sys.path.insert(0, str(LLAMA_SRC / "gguf-py"))
    from gguf import GGUFReader
    from gguf.quants import dequantize
    state = {}
    for t in GGUFReader(str(path)).tensors:
        w = dequantize(t.data, t.tensor_type).astype(np.float32).reshape([int(d) for d in reversed(t.shape)])
        if t.name.startswith("blk."):
            _, i, rest = t.name.split(".", 2)
            if rest == "attn_q.weight":
                w = unpermute(w, cfg.num_attention_heads)
            elif rest == "attn_k.weight":
                w = unpermute(w, cfg.num_key_value_heads)
            state[f"model.layers.{i}.{GGUF_TO_HF[rest]}"] = torch.from_numpy(w.copy())
        else:
            state[GGUF_TO_HF[t.name]] = torch.from_numpy(w.copy())
    m = type(model)(cfg).eval()
    m.load_state_dict(state, strict=True)
    with torch.no_grad():
        return m(torch.tensor([IDS])).logits[0].float().numpy().astype(np.float32)


def main():
    goldens = {"ids": IDS, "init_std": INIT, "variants": {}}
    torch.set_num_threads(1)
    for i, (name, (cls, cfg)) in enumerate(VARIANTS.items()):
        cfg._attn_implementation = "eager"
        seed(1000 + i)
        model = cls(cfg).eval()
        init_all(model)
        if cfg.tie_word_embeddings:
            assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
        d = HERE / name
        if d.exists():
            shutil.rmtree(d)
        model.save_pretrained(d, safe_serialization=True)
        (d / "generation_config.json").unlink(missing_ok=True)
        if name in LEGACY_ROPE_CONFIG:
            legacy_rope_config(d / "config.json")
        # The oracle is the model as transformers reads the committed directory back.
        before = model
        model = cls.from_pretrained(d, attn_implementation="eager", dtype=torch.float32).eval()
        with torch.no_grad():
            x = torch.tensor([IDS])
            assert torch.equal(before(x).logits, model(x).logits), name
        logits, greedy, margins = reference(model, IDS)
        np.save(d / "logits.npy", logits)
        goldens["variants"][name] = {"greedy": greedy, "greedy_top2_margins": margins,
                                     "max_abs_logit": float(np.abs(logits).max()),
                                     "top1": logits.argmax(-1).tolist()}
        print(name, "greedy", greedy, "min margin %.4f" % min(margins), "max|logit| %.2f" % np.abs(logits).max())
        if name == "llama":
            llama_model, llama_logits = model, logits

    # Mistral: the same weights under MistralForCausalLM (no sliding window) give the same
    # logits; only its config.json is kept and the test pairs it with llama's weights.
    mcfg = MistralConfig(**COMMON, rope_theta=10000.0, tie_word_embeddings=False, sliding_window=None)
    mcfg._attn_implementation = "eager"
    mistral = MistralForCausalLM(mcfg).eval()
    mistral.load_state_dict(llama_model.state_dict())
    with torch.no_grad():
        mlogits = mistral(torch.tensor([IDS])).logits[0].float().numpy()
    diff = float(np.abs(mlogits - llama_logits).max())
    assert diff < 1e-6, diff
    md = HERE / "mistral"
    if md.exists():
        shutil.rmtree(md)
    mistral.save_pretrained(md, safe_serialization=True)
    for f in md.iterdir():
        if f.name != "config.json":
            f.unlink()
    goldens["mistral_vs_llama_max_abs_diff"] = diff

    # GGUF conversions with llama.cpp's converter and quantizer.
    g = HERE / "gguf"
    g.mkdir(exist_ok=True)
    tmp = tempfile.TemporaryDirectory()
    tok = Path(tmp.name) / "tokenizer.model"
    make_tokenizer(tok)
    gguf_convert(HERE / "llama", tok, g / "llama-F32.gguf", "f32")
    gguf_convert(HERE / "llama", tok, g / "llama-F16.gguf", "f16")
    for q in ("Q8_0", "Q4_0"):
        quantize(g / "llama-F32.gguf", g / f"llama-{q}.gguf", q)
    goldens["gguf_llama_vs_hf_fp32"] = {}
    for q in ("F32", "F16", "Q8_0", "Q4_0"):
        dl = dequantized_logits(g / f"llama-{q}.gguf", llama_model, llama_model.config)
        if q != "F32":
            np.save(g / f"llama-{q}.logits.npy", dl)
        goldens["gguf_llama_vs_hf_fp32"][q] = {
            "rel": float(np.abs(dl - llama_logits).max() / np.abs(llama_logits).max()),
            "top1_agree": int((dl.argmax(-1) == llama_logits.argmax(-1)).sum())}
    assert goldens["gguf_llama_vs_hf_fp32"]["F32"]["rel"] < 1e-6  # the unpermutation is right
    gguf_convert(HERE / "llama3", tok, g / "llama3-F32.gguf", "f32")
    gguf_convert(HERE / "qwen2", tok, g / "qwen2-F32.gguf", "f32")

    # MLX: mlx_lm.convert's 4-bit, group-32 quantization of variant llama (fp32 scales), and
    # mlx-lm's own logits on it.
    mx_dir = HERE / "mlx-llama-4bit"
    if mx_dir.exists():
        shutil.rmtree(mx_dir)
    src = Path(tmp.name) / "llama"  # mlx_lm.convert wants a tokenizer beside the weights
    shutil.copytree(HERE / "llama", src)
    shutil.copy(tok, src / "tokenizer.model")
    (src / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "LlamaTokenizer"}))
    subprocess.run([sys.executable, "-m", "mlx_lm", "convert", "--hf-path", str(src), "--mlx-path",
                    str(mx_dir), "-q", "--q-bits", "4", "--q-group-size", "32", "--dtype", "float32"], check=True)
    import mlx.core as mx
    from mlx_lm import load as mlx_load
    mmodel, _ = mlx_load(str(mx_dir))
    mlog = np.array(mmodel(mx.array([IDS]))[0].astype(mx.float32))
    for f in mx_dir.iterdir():
        if f.name not in ("config.json", "model.safetensors"):
            f.unlink()
    np.save(mx_dir / "logits.npy", mlog.astype(np.float32))
    tmp.cleanup()
    goldens["mlx_4bit_vs_hf_max_abs_diff"] = float(np.abs(mlog - llama_logits).max())
    goldens["mlx_4bit_top1_agreement_with_hf"] = int((mlog.argmax(-1) == llama_logits.argmax(-1)).sum())

    import transformers, mlx_lm
    goldens["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                           "mlx_lm": mlx_lm.__version__}
    (HERE / "goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print(json.dumps({k: v for k, v in goldens.items() if k != "variants"}, indent=1))


if __name__ == "__main__":
    main()
