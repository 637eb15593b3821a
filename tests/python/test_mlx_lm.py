"""mlx-lm, unchanged from the package index, running on mlx-arm's ``mlx``.

The tiny Llama in golden/mlx_lm/ (float32, and 4-bit as ``mlx_lm.convert`` writes it) is loaded
with ``mlx_lm.load``; logits, greedy tokens and text, a seeded sampled run, and the output of
``python -m mlx_lm generate`` must equal what real MLX 0.32.4 + mlx-lm 0.32.2 produced
(golden/mlx_lm/gen_mlx_lm.py). scripts/setup.sh installs mlx-lm into the test venv; without it
these tests are skipped with a loud reason (a failure under CI=true).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mlx.core as mx
from mlx_lm_required import require_mlx_lm

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden", "mlx_lm")
MODELS = {"fp32": "tiny_llama", "q4": "tiny_llama_q4"}
PROMPTS = ("text", "chat")

require_mlx_lm("the mlx-lm tests")

# Imported for real: an error raised by mlx-lm on our package fails the tests, never skips.
import mlx_lm  # noqa: E402
from mlx_lm.sample_utils import make_sampler  # noqa: E402

with open(os.path.join(GOLDEN, "goldens.json")) as f:
    GOLD = json.load(f)
ARRAYS = np.load(os.path.join(GOLDEN, "goldens.npz"))


def test_versions_are_the_goldens():
    assert mlx_lm.__version__ == GOLD["mlx_lm_version"], (
        f"goldens were made with mlx-lm {GOLD['mlx_lm_version']}, this is {mlx_lm.__version__}")


@pytest.fixture(scope="module", params=list(MODELS))
def loaded(request):
    model, tokenizer = mlx_lm.load(os.path.join(GOLDEN, MODELS[request.param]))
    return request.param, model, tokenizer


def _close(ours, ref, what):
    # float32 sums in a different order: 1e-4 of the logits' scale (about 30 here).
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-4 * scale, err_msg=what)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_prompt_logits(loaded, prompt):
    name, model, tokenizer = loaded
    g = GOLD[name][prompt]
    if prompt == "text":
        assert tokenizer.encode(g["prompt"]) == g["prompt_ids"]
    logits = model(mx.array([g["prompt_ids"]]))[0]
    assert logits.dtype == mx.float32
    _close(np.array(logits), ARRAYS[f"{name}_{prompt}_logits"], f"{name} {prompt} logits")


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_tokens_and_logprobs(loaded, prompt):
    name, model, tokenizer = loaded
    g = GOLD[name][prompt]
    ref = ARRAYS[f"{name}_{prompt}_logprobs"]
    tokens, text = [], ""
    for i, r in enumerate(mlx_lm.stream_generate(model, tokenizer, mx.array(g["prompt_ids"]),
                                                 max_tokens=GOLD["max_tokens"])):
        tokens.append(r.token)
        text += r.text
        _close(np.array(r.logprobs), ref[i], f"{name} {prompt} step {i} logprobs")
    assert tokens == g["tokens"]
    assert text == g["text"]
    # The comparison means something: every greedy choice wins by far more than the error.
    assert g["min_margin"] > 1e-2


def test_generate_returns_the_text(loaded):
    name, model, tokenizer = loaded
    g = GOLD[name]["text"]
    out = mlx_lm.generate(model, tokenizer, g["prompt"], max_tokens=GOLD["max_tokens"])
    assert out == g["text"]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_chat_template_and_seeded_sampling(loaded, prompt):
    """temp/top-p/top-k/min-p go through mlx-lm's samplers, which are ``mx.compile``d with
    ``mx.random.state`` as state: the same seed must draw the same tokens as real MLX."""
    name, model, tokenizer = loaded
    g = GOLD[name][prompt]
    if prompt == "chat":
        rendered = tokenizer.apply_chat_template(
            [{"role": "user", "content": "Tell me about arrays."}], tokenize=False, add_generation_prompt=True)
        assert rendered == g["prompt"]
        assert tokenizer.encode(rendered, add_special_tokens=False) == g["prompt_ids"]
    s = GOLD["sampling"]
    mx.random.seed(s["seed"])
    sampler = make_sampler(s["temp"], s["top_p"], s["min_p"], top_k=s["top_k"])
    tokens = [r.token for r in mlx_lm.stream_generate(model, tokenizer, mx.array(g["prompt_ids"]),
                                                      max_tokens=GOLD["max_tokens"], sampler=sampler)]
    assert tokens == g["sampled_tokens"]


def _generated_text(stdout):
    """The text ``python -m mlx_lm generate`` prints between its ``==========`` lines (the
    speed lines after them differ from run to run)."""
    parts = stdout.split("==========\n")
    assert len(parts) >= 3, stdout
    return parts[1]


def _run_cli(args):
    env = dict(os.environ)
    # The subprocess must import the same mlx as this process (the source tree under
    # MLX_ARM_PY_SOURCE=1, else the installed package).
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", "mlx_lm", "generate"] + args, capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.parametrize("name", list(MODELS))
def test_command_line_generate(name):
    stdout = _run_cli(["--model", os.path.join(GOLDEN, MODELS[name])] + GOLD["cli_args"])
    assert _generated_text(stdout) == _generated_text(GOLD[name]["cli_stdout"])
    assert "Prompt: 32 tokens" in stdout and "Generation: 12 tokens" in stdout


@pytest.mark.parametrize("case", sorted(GOLD["cli_extra"]))
def test_command_line_options(case):
    """A rotating KV cache (--max-kv-size), speculative decoding (--draft-model) and XTC
    sampling, on the float32 model."""
    extra = [os.path.join(GOLDEN, a) if a == MODELS["q4"] else a for a in GOLD["cli_extra"][case]]
    stdout = _run_cli(["--model", os.path.join(GOLDEN, MODELS["fp32"])] + GOLD["cli_args"][:2] + extra)
    assert _generated_text(stdout) == _generated_text(GOLD["fp32"]["cli_extra_stdout"][case])


def test_convert_quantizes_as_real_mlx(tmp_path):
    """``mlx_lm.convert(..., quantize=True)`` on our mlx writes the very files real MLX wrote
    (tiny_llama_q4/: same tensors bit for bit, same config)."""
    out = tmp_path / "q4"
    mlx_lm.convert(os.path.join(GOLDEN, MODELS["fp32"]), mlx_path=str(out), quantize=True, q_bits=4,
                   q_group_size=64)
    ours = mx.load(str(out / "model.safetensors"))
    ref = mx.load(os.path.join(GOLDEN, MODELS["q4"], "model.safetensors"))
    assert sorted(ours) == sorted(ref)
    for k in ref:
        assert ours[k].dtype == ref[k].dtype, k
        np.testing.assert_array_equal(np.array(ours[k]), np.array(ref[k]), err_msg=k)
    with open(out / "config.json") as f, open(os.path.join(GOLDEN, MODELS["q4"], "config.json")) as g:
        assert json.load(f) == json.load(g)
