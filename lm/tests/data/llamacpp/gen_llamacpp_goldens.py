"""Writes llamacpp_goldens.json (see gen_llamacpp_goldens.sh): for each prompt, llama.cpp's
token ids (llama-tokenize, special tokens parsed), its 32-token greedy continuation, the top 64
logits of the last prompt position, and — from one run over prompt + continuation — for every
generated position llama.cpp's two most likely tokens and the margin between them, so a test
can tell a real disagreement from a near-tie."""
import json, os, subprocess, sys, tempfile
import numpy as np

model, tokenize, anchor, completion, out = sys.argv[1:6]
N_GREEDY = 32
PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "<|im_start|>user\nWhat is the largest planet in the solar system?<|im_end|>\n<|im_start|>assistant\n",
    "Once upon a time, in a small village by the sea,",
]

def ids_of(text):
    r = subprocess.run([tokenize, "-m", model, "-p", text, "--ids", "--log-disable"],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout.strip().splitlines()[-1])

cases = []
for p in PROMPTS:
    ids = ids_of(p)
    with tempfile.TemporaryDirectory() as d:
        npy = os.path.join(d, "logits.npy")
        r = subprocess.run([anchor, model, str(N_GREEDY), npy] + [str(i) for i in ids],
                           check=True, capture_output=True, text=True)
        greedy = [int(t) for t in r.stdout.split("greedy:")[1].split()]
        last = np.load(npy)[-1].astype(np.float64)
        full = ids + greedy[:-1]
        subprocess.run([anchor, model, "0", npy] + [str(i) for i in full], check=True, capture_output=True, text=True)
        steps = np.load(npy)[len(ids) - 1:].astype(np.float64)
    # The text llama.cpp's own CLI prints for the same greedy run (f32 KV, flash attention off
    # like anchor_eval): the oracle of the `mlx-arm generate` text test.
    text = subprocess.run([completion, "-m", model, "-p", p, "-n", str(N_GREEDY), "--temp", "0", "-ctk", "f32", "-ctv", "f32",
                           "-fa", "off", "-no-cnv", "--simple-io", "--no-display-prompt", "-t", "2", "--no-warmup"],
                          check=True, capture_output=True).stdout.decode("utf-8", "replace")
    top = np.argsort(-last, kind="stable")[:64]
    step_top2 = [np.argsort(-row, kind="stable")[:2] for row in steps]
    cases.append({
        "prompt": p,
        "ids": ids,
        "greedy": greedy,
        "last_top_ids": [int(i) for i in top],
        "last_top_logits": [float(last[i]) for i in top],
        "last_mean": float(last.mean()),
        "last_std": float(last.std()),
        "completion_text": text,
        "step_top1": [int(t[0]) for t in step_top2],
        "step_top2": [int(t[1]) for t in step_top2],
        "step_margin": [float(row[t[0]] - row[t[1]]) for row, t in zip(steps, step_top2)],
    })
json.dump({"model": os.path.basename(model), "kv_cache": "f32", "cases": cases}, open(out, "w"), indent=1)
print(f"wrote {out}: {len(cases)} prompts")
