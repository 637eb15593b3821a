#!/usr/bin/env python3
"""Writes the tokenizer goldens of lm/tests/tokenizer_goldens.rs.

Run with a Python that has `tokenizers`, `transformers`, `gguf` and numpy, and with llama.cpp's
`llama-tokenize` built (path in $LLAMA_TOKENIZE, default /tmp/llama/src/build/bin/llama-tokenize):

    /work/oracle-venv/bin/python lm/tests/data/tokenizer/gen_tokenizer_goldens.py

Everything is made offline. Oracles:
  * GGUF vocabularies (`tokenizer.ggml.*`): llama.cpp's `llama-tokenize` (vocab-only load).
    - the real SmolLM2-135M-Instruct GGUF (gpt2 BPE, pre `smollm`), not committed: only its ids;
    - a byte-level BPE vocab trained here with `tokenizers`, written as a small GGUF once and
      tokenized under several `tokenizer.ggml.pre` names (gpt-2, llama-bpe, qwen2, smollm, default);
    - a SentencePiece-style (`llama`) GGUF: byte-fallback vocab trained here, scores = -rank,
      `<0xXX>` byte tokens.
  * Hugging Face tokenizer.json files built here with `tokenizers` (ByteLevel BPE with the
    GPT-2 / Llama 3 / Qwen2 / SmolLM pre-tokenizers; Llama-2-style byte-fallback BPE with the
    Prepend+Replace normalizer and with the older Metaspace pre-tokenizer): the `tokenizers`
    library itself encodes and decodes.
Outputs (all committed): bpe_vocab.gguf, spm_vocab.gguf, hf_*.json (tokenizer.json files),
hf_*_config.json (tokenizer_config.json), goldens.json (texts and expected ids/decodes).
"""
import json
import os
import subprocess
import sys
import tempfile

import gguf
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers, Regex

HERE = os.path.dirname(os.path.abspath(__file__))
LLAMA_TOKENIZE = os.environ.get("LLAMA_TOKENIZE", "/tmp/llama/src/build/bin/llama-tokenize")
MODEL_DIR = os.environ.get("MLX_ARM_MODEL_DIR", os.path.expanduser("~/.cache/mlx-arm/models"))
SMOLLM = os.path.join(MODEL_DIR, "SmolLM2-135M-Instruct.Q4_1.gguf")

# The fixed text set: every case the splitters and merge loops must agree on.
TEXTS = [
    "",
    "Hello world",
    " Hello world",
    "Hello, world! How are you doing today?",
    "I'm sure they'll say it's fine, we've done what you'd do. DON'T SHOUT, I'D SAY",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < 10; ++i) { x[i] = y[i] * 2; }  // loop",
    "Numbers: 1 12 123 1234 12345 3.14159 -42 1,000,000 0x1F 2024-11-25",
    "Whitespace   runs\t\ttabs\n\n\nnewlines \n \r\n end   ",
    "   leading spaces and trailing   ",
    "\n",
    " ",
    "    ",
    "Emoji: 🦀🚀 👍🏽 👨‍👩‍👧 ❤️ done",
    "中文测试：你好，世界！日本語のテキスト、カタカナ。한국어 문장입니다.",
    "Русский текст: Привет, мир! Ёлка и ещё.",
    "Accents: café naïve résumé Ångström Ærø façade Zürich São Paulo ñandú",
    "Mixed: αβγ δ ε → ∑x² ≤ ∞ ½ ⅓ ℃ Ⅻ ٣٤٥ १२३",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "Text with <|endoftext|> in the middle and <|im_end|>",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "URL https://example.com/path?q=1&r=2#frag and email a.b@c.org",
    "Tabs\tand\u00a0non-breaking\u2003spaces\u3000ideographic",
    "Combining: e\u0301 a\u0308 n\u0303 and Devanagari: नमस्ते दुनिया",
    "'s 's 'S 't 're 've 'm 'll 'd ''",
    "line1\r\nline2\rline3\n\n  \n\tindent",
    "$$$ ^^^ ~~~ ||| <<< >>> +++ === ... !!! ??? @@@",
]

# Training corpus for the small vocabularies: the texts above plus a few paragraphs, repeated.
CORPUS = TEXTS + [
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away.",
    "Tokenizers split text into pieces: words, numbers, punctuation and whitespace.",
    "In 2024 there were 365 days, 12 months and 52 weeks; 1000 grams make a kilogram.",
    "import numpy as np\nx = np.arange(10)\nprint(x.sum(), x.mean())\n",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "我们的模型可以理解中文和英文。今天天气很好。",
    "Les élèves étudient à l'école; où est la bibliothèque? Très bien, merci.",
    "She said: \"it's a beautiful day\", and they've agreed that we'll go outside.",
] * 3

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

PRE_PATTERNS = {
    # The Split regexes the Hugging Face files of these model families carry.
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


def train_bytelevel():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1200, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def train_bytefallback():
    """A Llama-2-style BPE: <unk> <s> </s>, the 256 <0xXX> byte tokens, then trained pieces."""
    byte_tokens = ["<0x%02X>" % b for b in range(256)]
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=900, special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens,
                                  show_progress=False, max_token_length=16)
    # Train on the text with spaces already turned into the metaspace, like sentencepiece.
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def gguf_write(path, model, tokens, types, merges=None, scores=None, pre=None, add_bos=False,
               add_space_prefix=None, bos=None, eos=None, eot=None, template=None):
    w = gguf.GGUFWriter(path, "llama")
    # llama.cpp's vocab-only load still reads the architecture's hyper-parameters.
    w.add_context_length(512)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    if scores is not None:
        w.add_token_scores(scores)
    if merges is not None:
        w.add_token_merges(merges)
    if bos is not None:
        w.add_bos_token_id(bos)
    if eos is not None:
        w.add_eos_token_id(eos)
    if eot is not None:
        w.add_eot_token_id(eot)
    w.add_add_bos_token(add_bos)
    if add_space_prefix is not None:
        w.add_add_space_prefix(add_space_prefix)
    if template is not None:
        w.add_chat_template(template)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llama_tokenize(model_path, text, add_bos, parse_special):
    args = [LLAMA_TOKENIZE, "-m", model_path, "--stdin", "--no-escape", "--ids", "--log-disable"]
    if not add_bos:
        args.append("--no-bos")
    if not parse_special:
        args.append("--no-parse-special")
    r = subprocess.run(args, input=text.encode("utf-8"), capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"llama-tokenize failed on {text!r}: {r.stderr.decode()[-2000:]}")
    line = [l for l in r.stdout.decode().splitlines() if l.startswith("[")][-1]
    return json.loads(line)


def gguf_cases(model_path):
    out = []
    for i, t in enumerate(TEXTS):
        for add_bos, parse_special in [(True, True), (False, True), (False, False)]:
            out.append({"text": i, "add_bos": add_bos, "parse_special": parse_special,
                        "ids": llama_tokenize(model_path, t, add_bos, parse_special)})
    return out


def hf_cases(tok):
    out = []
    for i, t in enumerate(TEXTS):
        for add_bos in [True, False]:
            enc = tok.encode(t, add_special_tokens=add_bos)
            out.append({"text": i, "add_bos": add_bos, "parse_special": True, "ids": enc.ids,
                        "decode": tok.decode(enc.ids, skip_special_tokens=False),
                        "decode_skip": tok.decode(enc.ids, skip_special_tokens=True)})
    return out


def main():
    goldens = {"texts": TEXTS, "gguf": [], "hf": []}

    # (a) SmolLM2 GGUF: ids only (the file is not committed).
    if os.path.exists(SMOLLM):
        goldens["smollm_gguf"] = gguf_cases(SMOLLM)
    else:
        sys.exit(f"missing {SMOLLM}")

    # (b) the trained byte-level vocab as a GGUF, one oracle run per pre-tokenizer name.
    bl = train_bytelevel()
    bl_json = json.loads(bl.to_str())
    vocab = bl_json["model"]["vocab"]
    tokens = [None] * len(vocab)
    for s, i in vocab.items():
        tokens[i] = s
    for a in bl_json["added_tokens"]:
        assert tokens[a["id"]] == a["content"]
    types = [gguf.TokenType.CONTROL if t in SPECIALS else gguf.TokenType.NORMAL for t in tokens]
    merges = [m if isinstance(m, str) else " ".join(m) for m in bl_json["model"]["merges"]]
    bpe_path = os.path.join(HERE, "bpe_vocab.gguf")
    template = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    gguf_write(bpe_path, "gpt2", tokens, types, merges=merges, pre="gpt-2", add_bos=False,
               bos=tokens.index("<|im_start|>"), eos=tokens.index("<|im_end|>"),
               eot=tokens.index("<|endoftext|>"), template=template)
    with tempfile.TemporaryDirectory() as tmp:
        for pre in ["gpt-2", "llama-bpe", "qwen2", "smollm", "default"]:
            for add_bos in [False, True]:
                p = os.path.join(tmp, f"{pre}-{add_bos}.gguf")
                gguf_write(p, "gpt2", tokens, types, merges=merges, pre=pre, add_bos=add_bos,
                           bos=tokens.index("<|im_start|>"), eos=tokens.index("<|im_end|>"),
                           eot=tokens.index("<|endoftext|>"), template=template)
                goldens["gguf"].append({"file": "bpe_vocab.gguf", "pre": pre, "add_bos_token": add_bos,
                                        "cases": gguf_cases(p)})

    # SentencePiece-style `llama` vocab: byte-fallback pieces, scores = -rank.
    bf = train_bytefallback()
    bf_json = json.loads(bf.to_str())
    vocab = bf_json["model"]["vocab"]
    stoks = [None] * len(vocab)
    for s, i in vocab.items():
        stoks[i] = s
    stypes, scores = [], []
    for i, t in enumerate(stoks):
        if t == "<unk>":
            stypes.append(gguf.TokenType.UNKNOWN)
        elif t in ("<s>", "</s>"):
            stypes.append(gguf.TokenType.CONTROL)
        elif len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            stypes.append(gguf.TokenType.BYTE)
        else:
            stypes.append(gguf.TokenType.NORMAL)
        scores.append(0.0 if stypes[-1] != gguf.TokenType.NORMAL else -float(i))
    spm_path = os.path.join(HERE, "spm_vocab.gguf")
    gguf_write(spm_path, "llama", stoks, stypes, scores=scores, add_bos=True, add_space_prefix=True,
               bos=stoks.index("<s>"), eos=stoks.index("</s>"))
    goldens["gguf"].append({"file": "spm_vocab.gguf", "pre": None, "add_bos_token": True,
                            "cases": gguf_cases(spm_path)})

    # (c) Hugging Face tokenizer.json files.
    base = bl.to_str()
    variants = {
        "gpt2": (pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True), False),
        "llama3": (pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(PRE_PATTERNS["llama3"]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), True),
        "qwen2": (pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(PRE_PATTERNS["qwen2"]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), False),
        "smollm": (pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]), False),
    }
    for name, (pre, ignore_merges) in variants.items():
        t = Tokenizer.from_str(base)
        t.pre_tokenizer = pre
        d = json.loads(t.to_str())
        d["model"]["ignore_merges"] = ignore_merges
        t = Tokenizer.from_str(json.dumps(d))
        if name == "llama3":
            # Llama 3 prepends <|begin_of_text|> through a TemplateProcessing post-processor.
            from tokenizers import processors
            t.post_processor = processors.TemplateProcessing(
                single="<|im_start|> $A", pair="<|im_start|> $A <|im_start|> $B",
                special_tokens=[("<|im_start|>", t.token_to_id("<|im_start|>"))])
        fname = f"hf_bytelevel_{name}.json"
        with open(os.path.join(HERE, fname), "w", encoding="utf-8") as f:
            f.write(t.to_str())
        cfg = {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "chat_template": template,
               "add_bos_token": name == "llama3"}
        cfg_name = f"hf_bytelevel_{name}_config.json"
        with open(os.path.join(HERE, cfg_name), "w", encoding="utf-8") as f:
            json.dump(cfg, f, ensure_ascii=False, indent=1)
        goldens["hf"].append({"file": fname, "config": cfg_name, "cases": hf_cases(t)})

    # Byte-fallback BPE, Llama 2 / TinyLlama style (normalizer) and the older Metaspace style.
    from tokenizers import processors
    bf.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bf.token_to_id("<s>"))])
    for name in ["normalizer", "metaspace"]:
        t = Tokenizer.from_str(bf.to_str())
        if name == "metaspace":
            t.normalizer = None
            t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
            t.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
        fname = f"hf_bytefallback_{name}.json"
        with open(os.path.join(HERE, fname), "w", encoding="utf-8") as f:
            f.write(t.to_str())
        cfg = {"bos_token": {"content": "<s>", "special": True}, "eos_token": "</s>", "add_bos_token": True,
               "chat_template": "{{ bos_token }}{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}"}
        cfg_name = f"hf_bytefallback_{name}_config.json"
        with open(os.path.join(HERE, cfg_name), "w", encoding="utf-8") as f:
            json.dump(cfg, f, ensure_ascii=False, indent=1)
        goldens["hf"].append({"file": fname, "config": cfg_name, "cases": hf_cases(t)})

    with open(os.path.join(HERE, "goldens.json"), "w", encoding="utf-8") as f:
        json.dump(goldens, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("wrote goldens:", sum(len(g["cases"]) for g in goldens["gguf"] + goldens["hf"]) + len(goldens["smollm_gguf"]), "cases")


if __name__ == "__main__":
    main()
