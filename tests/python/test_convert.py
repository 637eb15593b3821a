"""``python -m mlx.arm.convert``: the default GGUF model as an MLX model directory, loaded by
mlx-lm (unchanged) on our package, against llama.cpp's tokenization and greedy tokens of the
same file (lm/tests/data/llamacpp/llamacpp_goldens.json). Needs the default model that
scripts/setup.sh installs (skipped loudly without it, a failure under CI=true) and mlx-lm."""
import importlib.util
import json
import os

import numpy as np
import pytest

import mlx.core as mx
from mlx.arm import convert

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
with open(os.path.join(ROOT, "lm", "tests", "data", "llamacpp", "llamacpp_goldens.json")) as f:
    LLAMACPP = json.load(f)


def llamacpp_permute(w, n_head):
    """llama.cpp's convert_hf_to_gguf q/k row order, written from its definition."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


@pytest.mark.parametrize("n_head", [1, 3, 9])
def test_unpermute_undoes_llamacpp_permute(n_head):
    w = np.arange(n_head * 8 * 5, dtype=np.float32).reshape(n_head * 8, 5)
    back = convert.unpermute_rows(mx.array(llamacpp_permute(w, n_head)), n_head)
    np.testing.assert_array_equal(np.array(back), w)
    assert not np.array_equal(llamacpp_permute(w, n_head), w)


def test_names_and_refusals():
    assert convert.hf_name("blk.12.attn_k.weight") == "model.layers.12.self_attn.k_proj.weight"
    assert convert.hf_name("token_embd.weight") == "model.embed_tokens.weight"
    with pytest.raises(NotImplementedError, match="no Llama counterpart"):
        convert.hf_name("blk.0.ssm_a")
    with pytest.raises(NotImplementedError, match="only Llama"):
        convert.config_from({"general.architecture": "gemma"}, 10, True)


@pytest.fixture(scope="module")
def converted(smol_f16_dir):
    if importlib.util.find_spec("mlx_lm") is None:
        pytest.skip("mlx-lm is not installed")
    import mlx_lm
    return smol_f16_dir, mlx_lm.load(str(smol_f16_dir))


def test_config(converted):
    out, _ = converted
    with open(out / "config.json") as f:
        cfg = json.load(f)
    assert (cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
            cfg["vocab_size"], cfg["tie_word_embeddings"]) == (30, 576, 9, 3, 49152, True)


@pytest.mark.parametrize("case", range(len(LLAMACPP["cases"])))
def test_tokenizer_and_greedy_tokens_match_llamacpp(converted, case):
    import mlx_lm
    _, (model, tokenizer) = converted
    c = LLAMACPP["cases"][case]
    assert tokenizer.encode(c["prompt"], add_special_tokens=False) == c["ids"]
    # llama.cpp ran the Q4_1 weights with 8-bit activations, we run their exact float16
    # values: greedy tokens agree while llama.cpp's top-1 wins clearly (margin > 0.5).
    n = next((i for i, m in enumerate(c["step_margin"]) if m < 0.5), len(c["step_margin"]))
    n = min(n, 8)
    assert n >= 1, "the case has no clear greedy first step to compare"
    toks = [r.token for r in mlx_lm.stream_generate(model, tokenizer, mx.array(c["ids"]), max_tokens=n)]
    assert toks == c["greedy"][:n]


with open(os.path.join(HERE, "golden", "spm", "spm_goldens.json")) as f:
    SPM = json.load(f)


@pytest.fixture(scope="module")
def spm_tokenizer(tmp_path_factory):
    """The SentencePiece BPE vocabulary of golden/spm as convert writes it, loaded by transformers."""
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed (scripts/setup.sh installs it)")
    from transformers import AutoTokenizer
    md = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": SPM["tokens"],
          "tokenizer.ggml.scores": np.array(SPM["scores"], np.float32),
          "tokenizer.ggml.token_type": np.array(SPM["types"], np.int32),
          "tokenizer.ggml.unknown_token_id": SPM["unk"], "tokenizer.ggml.bos_token_id": SPM["bos"],
          "tokenizer.ggml.eos_token_id": SPM["eos"]}
    out = tmp_path_factory.mktemp("spm")
    convert.save_tokenizer(md, str(out))
    return AutoTokenizer.from_pretrained(str(out))


@pytest.mark.parametrize("text", list(SPM["ids"]))
def test_spm_tokenizer_matches_llama_cpp(spm_tokenizer, text):
    # llama.cpp's ids (golden/spm/gen_spm.py: llama-tokenize, BOS added, specials parsed).
    ids = spm_tokenizer.encode(text)
    assert ids == SPM["ids"][text]
    # Decoding the text's tokens (after BOS) gives the text back: the prefix space is stripped.
    # Not for text holding "<s>": llama.cpp puts a prefix space after it too, which stays.
    if "<s>" not in text:
        assert spm_tokenizer.decode(ids[1:]) == text


def test_spm_merges_follow_scores():
    # Hand-checked: every split of a piece into two pieces is a merge, ranked by the joined
    # piece's score (bc 9, abc 7 twice: the shorter left half first, ab 5).
    toks = ["a", "b", "c", "ab", "bc", "abc"]
    merges = convert_spm().merges_by_score(toks, [0, 0, 0, 5, 9, 7], [1] * 6)
    assert merges == [("b", "c"), ("a", "bc"), ("ab", "c"), ("a", "b")]


def convert_spm():
    from mlx.arm import _spm
    return _spm
