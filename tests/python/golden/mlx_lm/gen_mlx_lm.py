"""Builds the tiny MLX-format Llama that tests/python/test_mlx_lm.py loads through mlx-lm, and
records what real MLX + mlx-lm produce on it.

Run with real MLX and mlx-lm (the oracle), from this directory:

    python -m venv /tmp/mlxlm-oracle
    /tmp/mlxlm-oracle/bin/pip install "mlx[cpu]==0.32.4" "mlx-lm==0.32.2"
    /tmp/mlxlm-oracle/bin/python gen_mlx_lm.py

It writes (all committed):
- ``tiny_llama/``: config.json, model.safetensors (float32 random weights drawn from a numpy
  generator with a fixed seed), tokenizer.json / tokenizer_config.json (a byte-level BPE
  tokenizer trained here on a few sentences, with a chat template);
- ``tiny_llama_q4/``: the same model converted by ``mlx_lm.convert(..., quantize=True)``
  (4 bits, group size 64: real MLX's affine quantization);
- ``goldens.json``: per model and prompt, the prompt ids, mlx-lm's greedy tokens and text, the
  margin between the best and the second-best log-probability at every step (so a test can
  tell a real difference from a near tie), the sampled tokens of a seeded run with
  temperature/top-p/top-k/min-p, and the stdout text of ``python -m mlx_lm generate``;
- ``api_goldens.json``: real MLX's results for compile with state, ``mx.random.state`` and
  the one-process ``mx.distributed`` (``record_api``);
- ``goldens.npz``: the full-prompt logits (``<model>_<prompt>_logits``, float32) and the
  log-probabilities of every greedy step (``<model>_<prompt>_logprobs``).
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FP32_DIR = os.path.join(HERE, "tiny_llama")
Q4_DIR = os.path.join(HERE, "tiny_llama_q4")

SEED = 20
HIDDEN, INTERMEDIATE, LAYERS, HEADS, KV_HEADS = 64, 128, 2, 4, 2
VOCAB = 320
MAX_TOKENS = 24
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# The text the tokenizer is trained on (written for this test).
CORPUS = [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Arrays are evaluated lazily: operations record a graph and eval computes it.",
    "A small language model predicts the next token from the tokens before it.",
    "Quantized weights keep four bits per value with a scale and a bias per group.",
    "The cat sat on the mat and watched the birds in the garden all afternoon.",
    "Phones, boards and handhelds run the same arrays on their own processors.",
    "Greedy decoding always takes the most likely token; sampling draws one at random.",
    "Numbers like 12, 345 and 6789 appear in text too, as do symbols such as + - * /.",
]

PROMPTS = {
    "text": {"prompt": "The quick brown fox", "chat": False},
    "chat": {"prompt": "Tell me about arrays.", "chat": True},
}
SAMPLING = {"temp": 0.8, "top_p": 0.9, "top_k": 40, "min_p": 0.02, "seed": 7}
CLI_ARGS = ["--prompt", "Tell me about arrays.", "--max-tokens", "12"]
# More of `python -m mlx_lm generate` on the float32 model: a rotating KV cache, speculative
# decoding with the 4-bit model as draft (its path relative to this directory), XTC sampling.
CLI_EXTRA = {
    "rotating_cache": ["--max-kv-size", "16", "--max-tokens", "24"],
    "draft": ["--draft-model", "tiny_llama_q4", "--num-draft-tokens", "2", "--max-tokens", "12"],
    "xtc": ["--temp", "1.0", "--seed", "3", "--xtc-probability", "0.5", "--xtc-threshold", "0.1",
            "--max-tokens", "12"],
}


def make_tokenizer(out_dir):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL[1:],
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out_dir)
    return tok.token_to_id("<|endoftext|>")


def make_weights(rng):
    """Random float32 weights, scaled so that attention and MLP move the residual stream."""
    head_dim = HIDDEN // HEADS

    def lin(out_dim, in_dim, gain=1.0):
        return (rng.standard_normal((out_dim, in_dim)) * gain / np.sqrt(in_dim)).astype(np.float32)

    w = {"model.embed_tokens.weight": rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        w[p + "self_attn.q_proj.weight"] = lin(HEADS * head_dim, HIDDEN, 2.0)
        w[p + "self_attn.k_proj.weight"] = lin(KV_HEADS * head_dim, HIDDEN, 2.0)
        w[p + "self_attn.v_proj.weight"] = lin(KV_HEADS * head_dim, HIDDEN)
        w[p + "self_attn.o_proj.weight"] = lin(HIDDEN, HEADS * head_dim, 2.0)
        w[p + "mlp.gate_proj.weight"] = lin(INTERMEDIATE, HIDDEN)
        w[p + "mlp.up_proj.weight"] = lin(INTERMEDIATE, HIDDEN)
        w[p + "mlp.down_proj.weight"] = lin(HIDDEN, INTERMEDIATE, 3.0)
        for n in ("input_layernorm", "post_attention_layernorm"):
            w[p + n + ".weight"] = (1.0 + 0.2 * rng.standard_normal(HIDDEN)).astype(np.float32)
    w["model.norm.weight"] = (1.0 + 0.2 * rng.standard_normal(HIDDEN)).astype(np.float32)
    # An untied head: with tied embeddings the last token's own row dominates the logits and
    # a random model only repeats itself.
    w["lm_head.weight"] = rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32)
    return w


def make_fp32_model():
    import mlx.core as mx

    os.makedirs(FP32_DIR, exist_ok=True)
    eos = make_tokenizer(FP32_DIR)
    config = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": 1e-5,
        "vocab_size": VOCAB,
        "rope_theta": 10000.0,
        "max_position_embeddings": 512,
        "tie_word_embeddings": False,
        "eos_token_id": eos,
        "torch_dtype": "float32",
    }
    with open(os.path.join(FP32_DIR, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    weights = {k: mx.array(v) for k, v in make_weights(np.random.default_rng(SEED)).items()}
    mx.save_safetensors(os.path.join(FP32_DIR, "model.safetensors"), weights, metadata={"format": "mlx"})


def make_q4_model():
    import shutil

    from mlx_lm import convert

    if os.path.exists(Q4_DIR):
        shutil.rmtree(Q4_DIR)
    convert(FP32_DIR, mlx_path=Q4_DIR, quantize=True, q_bits=4, q_group_size=64)
    for junk in ("README.md",):  # the model card convert writes is not needed
        p = os.path.join(Q4_DIR, junk)
        if os.path.exists(p):
            os.remove(p)


def record(model_dir, name, goldens, arrays):
    import mlx.core as mx
    from mlx_lm import load, stream_generate
    from mlx_lm.sample_utils import make_sampler

    model, tokenizer = load(model_dir)
    out = {}
    for pname, spec in PROMPTS.items():
        prompt = spec["prompt"]
        if spec["chat"]:
            prompt = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            ids = tokenizer.encode(prompt, add_special_tokens=False)
        else:
            ids = tokenizer.encode(prompt)
        logits = model(mx.array([ids]))[0]
        arrays[f"{name}_{pname}_logits"] = np.array(logits.astype(mx.float32))

        tokens, steps, margins, text = [], [], [], ""
        for r in stream_generate(model, tokenizer, mx.array(ids), max_tokens=MAX_TOKENS):
            tokens.append(int(r.token))
            lp = np.array(r.logprobs.astype(mx.float32))
            steps.append(lp)
            top2 = np.sort(lp)[-2:]
            margins.append(float(top2[1] - top2[0]))
            text += r.text
        arrays[f"{name}_{pname}_logprobs"] = np.stack(steps)

        mx.random.seed(SAMPLING["seed"])
        sampler = make_sampler(SAMPLING["temp"], SAMPLING["top_p"], SAMPLING["min_p"], top_k=SAMPLING["top_k"])
        sampled = [int(r.token) for r in stream_generate(model, tokenizer, mx.array(ids), max_tokens=MAX_TOKENS,
                                                         sampler=sampler)]
        out[pname] = {
            "prompt": prompt,
            "prompt_ids": ids,
            "tokens": tokens,
            "text": text,
            "min_margin": min(margins),
            "margins": margins,
            "sampled_tokens": sampled,
        }
    cli = subprocess.run([sys.executable, "-m", "mlx_lm", "generate", "--model", model_dir] + CLI_ARGS,
                         capture_output=True, text=True, check=True)
    out["cli_stdout"] = cli.stdout
    if name == "fp32":
        out["cli_extra_stdout"] = {}
        for key, extra in CLI_EXTRA.items():
            cmd = [sys.executable, "-m", "mlx_lm", "generate", "--model", model_dir] + CLI_ARGS[:2] + extra
            cmd = [os.path.join(HERE, a) if a == "tiny_llama_q4" else a for a in cmd]
            out["cli_extra_stdout"][key] = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    goldens[name] = out


def _error(f):
    try:
        f()
    except Exception as e:  # the class and message MLX raises
        return [type(e).__name__, str(e)]
    return None


def record_api():
    """What real MLX does for the names mlx-lm needs beyond layers: compile with random
    state, a user state list in inputs/outputs, mx.random.state, the one-process
    mx.distributed group; written to api_goldens.json (plain lists)."""
    from functools import partial

    import mlx.core as mx

    out = {}
    mx.random.seed(0)
    out["state_after_seed"] = mx.random.state[0].tolist()
    mx.random.uniform()
    out["state_after_one_draw"] = mx.random.state[0].tolist()
    out["state_len"] = len(mx.random.state)

    logits = mx.array([[0.5, 1.5, -0.25, 2.0, 0.0, 1.0]])

    @partial(mx.compile, inputs=mx.random.state, outputs=mx.random.state)
    def sample(x, temp):
        return mx.random.categorical(x * (1.0 / temp))

    mx.random.seed(11)
    out["compiled_categorical"] = [sample(logits, 0.7).item() for _ in range(12)]
    mx.random.seed(11)
    out["plain_categorical"] = [mx.random.categorical(logits * (1.0 / 0.7)).item() for _ in range(12)]
    shapeless = mx.compile(lambda x: mx.exp(x) * 2, shapeless=True)
    out["compiled_shapeless"] = [shapeless(mx.array(v)).tolist() for v in ([0.5, 1.0], [0.5, 1.0, -1.0])]

    counter = [mx.array(1.0)]

    @partial(mx.compile, inputs=counter, outputs=counter)
    def step(x):
        counter[0] = counter[0] * x + 1
        return counter[0] * 2

    out["state_list_results"] = [step(mx.array(v)).item() for v in (2.0, 3.0, 0.5)]
    out["state_list_final"] = counter[0].item()
    out["compile_tree"] = mx.compile(lambda d, k: {"a": d["x"] * k, "b": [d["y"] + 1]})(
        {"x": mx.array([1, 2]), "y": mx.array(3.5)}, 3)
    out["compile_tree"] = {"a": out["compile_tree"]["a"].tolist(), "b": [out["compile_tree"]["b"][0].item()]}

    class Opaque:
        pass

    Opaque.__module__ = "golden"  # MLX names the class by module and name; keep it fixed
    out["compile_bad_arg"] = _error(lambda: mx.compile(lambda x: x)(Opaque()))
    out["compile_bad_arg_kw"] = _error(lambda: mx.compile(lambda x, y=None: x)(mx.array(1), y=Opaque()))

    g = mx.distributed.init()
    out["dist_rank_size"] = [g.rank(), g.size()]
    x = mx.array([1.0, -2.0, 3.0])
    out["dist_all_sum"] = mx.distributed.all_sum(x).tolist()
    out["dist_all_gather"] = mx.distributed.all_gather(x).tolist()
    out["dist_all_max"] = mx.distributed.all_max(x, group=g).tolist()
    out["dist_strict"] = _error(lambda: mx.distributed.init(strict=True))
    out["dist_send"] = _error(lambda: mx.distributed.send(x, 0))
    out["dist_recv_like"] = _error(lambda: mx.distributed.recv_like(x, 0))
    out["dist_split"] = _error(lambda: g.split(0))
    out["device_info_keys"] = sorted(mx.device_info())
    with open(os.path.join(HERE, "api_goldens.json"), "w") as f:
        json.dump(out, f, indent=1)


def main():
    import mlx.core as mx
    import mlx_lm

    record_api()

    make_fp32_model()
    make_q4_model()
    goldens = {
        "mlx_version": mx.__version__,
        "mlx_lm_version": mlx_lm.__version__,
        "max_tokens": MAX_TOKENS,
        "sampling": SAMPLING,
        "cli_args": CLI_ARGS,
        "cli_extra": CLI_EXTRA,
    }
    arrays = {}
    record(FP32_DIR, "fp32", goldens, arrays)
    record(Q4_DIR, "q4", goldens, arrays)
    with open(os.path.join(HERE, "goldens.json"), "w") as f:
        json.dump(goldens, f, indent=1)
    np.savez_compressed(os.path.join(HERE, "goldens.npz"), **arrays)
    for name in ("fp32", "q4"):
        for p in PROMPTS:
            g = goldens[name][p]
            print(name, p, "tokens", g["tokens"], "min margin %.4f" % g["min_margin"])
            print("   sampled", g["sampled_tokens"])


if __name__ == "__main__":
    main()
