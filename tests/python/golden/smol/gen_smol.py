"""Real MLX 0.32.4 + mlx-lm 0.32.2 on the default model (SmolLM2-135M-Instruct Q4_1 GGUF) as
mlx-arm's converter writes it: the goldens of tests/python/test_mlx_lm_default_model.py.

Run with real MLX and mlx-lm (the oracle venv of golden/mlx_lm/gen_mlx_lm.py), from the
repository root, naming a Python that imports mlx-arm's package (for ``python -m mlx.arm.convert``):

    OURS="env PYTHONPATH=python-cffi MLX_ARM_LIBRARY=target/release/libmlx_arm.so .venv/bin/python" \
      /tmp/mlxlm-oracle/bin/python tests/python/golden/smol/gen_smol.py [--f16-only]

Steps: our converter writes the GGUF as a float16 MLX directory (the same command the test
runs); real mlx-lm quantizes it (``mlx_lm convert -q``: 4 bits, group 64) and
loads both. Per model and prompt it records the prompt ids, the greedy tokens and text of
``mlx_lm.stream_generate``, and per step the top-5 ids and log-probabilities (so the test can
tell a real difference from a near tie); once per model the stdout text of ``python -m mlx_lm
generate``. Writes goldens.json here (committed), with the GGUF's SHA-256 (the test's model
must be this file).
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.expanduser("~/.cache/mlx-arm/models/SmolLM2-135M-Instruct.Q4_1.gguf")
MAX_TOKENS = 16
TOP = 5
PROMPTS = {
    "text": {"prompt": "The capital of France is", "chat": False},
    "chat": {"prompt": "Write a haiku about the sea.", "chat": True},
    "code": {"prompt": "def fibonacci(n):", "chat": False},
}
CLI_ARGS = ["--prompt", "Name three colours.", "--max-tokens", "12"]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record(model_dir):
    import mlx.core as mx
    import mlx_lm

    model, tok = mlx_lm.load(model_dir)
    out = {}
    for name, p in PROMPTS.items():
        if p["chat"]:
            ids = tok.apply_chat_template([{"role": "user", "content": p["prompt"]}], add_generation_prompt=True)
        else:
            ids = tok.encode(p["prompt"])
        tokens, text, top_ids, top_lp = [], "", [], []
        for r in mlx_lm.stream_generate(model, tok, mx.array(ids), max_tokens=MAX_TOKENS):
            lp = np.array(r.logprobs.astype(mx.float32))
            order = np.argsort(-lp, kind="stable")[:TOP]
            tokens.append(r.token)
            text += r.text
            top_ids.append(order.tolist())
            top_lp.append([float(lp[i]) for i in order])
        print(f"{model_dir}: {name} done", file=sys.stderr, flush=True)
        out[name] = {"prompt_ids": list(ids), "tokens": tokens, "text": text, "top_ids": top_ids,
                     "top_logprobs": top_lp}
    cli = subprocess.run([sys.executable, "-m", "mlx_lm", "generate", "--model", model_dir] + CLI_ARGS,
                         capture_output=True, text=True, check=True)
    out["cli_stdout"] = cli.stdout
    return out


def main():
    import mlx.core as mx
    import mlx_lm

    ours = shlex.split(os.environ["OURS"])
    with tempfile.TemporaryDirectory() as d:
        f16, q4 = os.path.join(d, "f16"), os.path.join(d, "q4")
        subprocess.run(ours + ["-m", "mlx.arm.convert", MODEL, f16, "--dtype", "float16"], check=True)
        # In a child: real MLX hung here (all threads waiting) generating after converting in
        # the same process.
        gold = {"mlx_version": mx.__version__, "mlx_lm_version": mlx_lm.__version__, "gguf_sha256": sha256(MODEL),
                "max_tokens": MAX_TOKENS, "cli_args": CLI_ARGS, "f16": record(f16)}
        if "--f16-only" not in sys.argv:
            subprocess.run([sys.executable, "-m", "mlx_lm", "convert", "--hf-path", f16, "--mlx-path", q4, "-q"],
                           check=True)
            gold["q4"] = record(q4)
    with open(os.path.join(HERE, "goldens.json"), "w") as f:
        json.dump(gold, f, indent=1)


if __name__ == "__main__":
    main()
