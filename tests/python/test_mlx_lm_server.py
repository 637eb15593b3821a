"""``python -m mlx_lm server`` (mlx-lm 0.32.2, unchanged) serving the tiny Llama on mlx-arm's mlx.

One scripted session (golden/mlx_lm/server_session.py: text and chat completions, streaming, two
requests batched together, a prompt-cache hit, log-probabilities, a logit bias, a seeded sampled
request) runs against a server started in a subprocess on a free port. Each answer must equal
what real MLX 0.32.4 + mlx-lm answered to the same session (golden/mlx_lm/gen_server.py), and the
greedy texts must equal ``mlx_lm.generate`` on our package in this process.
"""
import json
import os
import sys

import numpy as np
import pytest

import mlx.core as mx
from mlx_lm_required import require_mlx_lm

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden", "mlx_lm")
MODEL = os.path.join(GOLDEN, "tiny_llama")

require_mlx_lm("the mlx-lm server test")

import mlx_lm  # noqa: E402

sys.path.insert(0, GOLDEN)
import server_session  # noqa: E402

with open(os.path.join(GOLDEN, "server_goldens.json")) as f:
    GOLD = json.load(f)


@pytest.fixture(scope="module")
def session():
    env = dict(os.environ)
    # The server must import the same mlx as this process (the source tree under
    # MLX_ARM_PY_SOURCE=1, else the installed package).
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    return server_session.run_session(MODEL, python=sys.executable, env=env)


def _top_sets(entries):
    """The top-k alternatives of each step, sorted by id. Their order is argpartition's, which
    MLX leaves undefined (CPU and GPU differ): docs/COMPAT.md, "Undefined behaviour"."""
    return [sorted(e["top"]) for e in entries]


@pytest.mark.parametrize("name", sorted(GOLD["results"]))
def test_answer_equals_real_mlx(session, name):
    ours, ref = session[name], GOLD["results"][name]
    assert ours["text"] == ref["text"]
    assert ours["finish_reason"] == ref["finish_reason"]
    for key in ("usage", "cached_tokens"):
        assert ours.get(key) == ref.get(key), key
    if "logprobs" in ref:
        a, b = _top_sets(ours["logprobs"]), _top_sets(ref["logprobs"])
        assert [[i for i, _ in s] for s in a] == [[i for i, _ in s] for s in b]
        np.testing.assert_allclose([[p for _, p in s] for s in a], [[p for _, p in s] for s in b],
                                   rtol=0, atol=1e-3)


def test_the_session_means_something():
    """The golden answers are not trivial: full-length greedy texts, a cache hit, a batch."""
    r = GOLD["results"]
    assert r["chat_again"]["cached_tokens"] > 0
    assert r["pair_long"]["text"] != r["pair_short"]["text"]
    assert r["text"]["usage"]["completion_tokens"] == server_session.MAX_TOKENS
    assert r["seeded"]["text"] != r["text"]["text"][:len(r["seeded"]["text"])]
    assert r["logit_bias"]["text"] != r["text"]["text"][:len(r["logit_bias"]["text"])]


def test_greedy_texts_equal_generate(session):
    model, tokenizer = mlx_lm.load(MODEL)
    n = server_session.MAX_TOKENS
    assert session["text"]["text"] == mlx_lm.generate(model, tokenizer, server_session.TEXT_PROMPT, max_tokens=n)
    assert session["text_stream"]["text"] == session["text"]["text"]
    prompt = tokenizer.apply_chat_template(server_session.CHAT, add_generation_prompt=True)
    assert session["chat"]["text"] == mlx_lm.generate(model, tokenizer, prompt, max_tokens=n)
    assert session["chat_stream"]["text"] == session["chat"]["text"]
