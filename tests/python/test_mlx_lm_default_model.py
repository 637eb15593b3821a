"""The default model (SmolLM2-135M-Instruct Q4_1 GGUF) through unchanged mlx-lm on this package,
token for token against real MLX 0.32.4 + mlx-lm 0.32.2 (golden/smol/gen_smol.py).

``python -m mlx.arm.convert`` writes the GGUF as a float16 MLX directory (conftest's
``smol_f16_dir``); ``mlx_lm.convert(..., quantize=True)`` running on this package makes the 4-bit
directory from it, as real MLX made its own. For each model and prompt, mlx-lm's greedy tokens
must be real MLX's for as long as real MLX's choice is clear (its best log-probability beats the
second by more than MARGIN: float16 sums in another order may flip a near tie, and after a flip
the texts differ for good), and the top-5 log-probabilities must agree on those steps. The text
``python -m mlx_lm generate`` prints must be real MLX's. Needs the default model (loud skip
without it, a failure under CI=true) and mlx-lm.
"""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mlx.core as mx
from mlx_lm_required import require_mlx_lm

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "golden", "smol", "goldens.json")) as f:
    GOLD = json.load(f)
MODELS = tuple(m for m in ("f16", "q4") if m in GOLD)  # gen_smol.py --f16-only: no "q4"
PROMPTS = [k for k in GOLD["f16"] if k != "cli_stdout"]
# Log-probability gap below which real MLX's greedy choice counts as a near tie.
MARGIN = 0.1
# How far a top-5 log-probability may move: float16 weights and activations, summed in
# another order (measured: see docs/PYTHON.md).
LOGPROB_ATOL = 0.05

require_mlx_lm("the default model through mlx-lm")
import mlx_lm  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "golden", "smol"))
import gen_smol  # noqa: E402  (its prompt table; it imports no mlx at module level)


@pytest.fixture(scope="module")
def model_dirs(smol_f16_dir, default_model_path, tmp_path_factory):
    h = hashlib.sha256()
    with open(default_model_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    assert h.hexdigest() == GOLD["gguf_sha256"], "the default model is not the file the goldens were made from"
    dirs = {"f16": str(smol_f16_dir)}
    if "q4" in MODELS:
        dirs["q4"] = str(tmp_path_factory.mktemp("smol") / "q4")
        mlx_lm.convert(dirs["f16"], mlx_path=dirs["q4"], quantize=True)
    return dirs


@pytest.fixture(scope="module", params=MODELS)
def loaded(request, model_dirs):
    return request.param, mlx_lm.load(model_dirs[request.param])


def test_versions_are_the_goldens():
    assert mlx_lm.__version__ == GOLD["mlx_lm_version"]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_tokens_match_real_mlx(loaded, prompt):
    name, (model, tok) = loaded
    g = GOLD[name][prompt]
    clear = 0
    for lps in g["top_logprobs"]:
        if lps[0] - lps[1] <= MARGIN:
            break
        clear += 1
    # The comparison means something: most steps are clear choices.
    assert clear >= 8, f"only {clear} clear steps in the golden"
    tokens = []
    for i, r in enumerate(mlx_lm.stream_generate(model, tok, mx.array(g["prompt_ids"]), max_tokens=clear)):
        tokens.append(r.token)
        lp = np.array(r.logprobs.astype(mx.float32))
        np.testing.assert_allclose(lp[g["top_ids"][i]], g["top_logprobs"][i], rtol=0, atol=LOGPROB_ATOL,
                                   err_msg=f"{name} {prompt} step {i}")
    assert tokens == g["tokens"][:clear]


def test_prompts_tokenize_as_real_mlx(loaded):
    # The generator's prompt table, encoded (chat template or plain) as it did under real MLX.
    name, (_, tok) = loaded
    for key, p in gen_smol.PROMPTS.items():
        if p["chat"]:
            ids = tok.apply_chat_template([{"role": "user", "content": p["prompt"]}], add_generation_prompt=True)
        else:
            ids = tok.encode(p["prompt"])
        assert list(ids) == GOLD[name][key]["prompt_ids"], key


@pytest.mark.parametrize("name", MODELS)
def test_command_line_generate(model_dirs, name):
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", "mlx_lm", "generate", "--model", model_dirs[name]] + GOLD["cli_args"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout.split("==========\n")
    want = GOLD[name]["cli_stdout"].split("==========\n")
    assert len(text) >= 3 and len(want) >= 3, out.stdout
    assert text[1] == want[1]
