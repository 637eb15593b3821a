"""One scripted session against ``python -m mlx_lm server``: the same requests, sent the same
way, under real MLX (gen_server.py records the goldens) and under mlx-arm (test_mlx_lm_server.py
compares). Standard library only, so it runs in either venv.

The session covers what the server does differently from ``mlx_lm.generate``: text and chat
completions through the batch generator, two requests at once (left-padded into one batch),
streaming (server-sent events), a repeated chat (the prompt cache hands back a trimmed KV cache),
log-probabilities with top-k alternatives, a logit bias, and a seeded sampled request (served
alone, not batched).
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

MAX_TOKENS = 24
TEXT_PROMPT = "The quick brown fox"
SHORT_PROMPT = "A"
CHAT = [{"role": "user", "content": "Tell me about arrays."}]

# name -> (path, request body). Sent one after the other, in this order, except "pair_*"
# (sent together, see run_session).
REQUESTS = {
    "text": ("/v1/completions", {"prompt": TEXT_PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0.0,
                                 "logprobs": True, "top_logprobs": 3}),
    "chat": ("/v1/chat/completions", {"messages": CHAT, "max_tokens": MAX_TOKENS, "temperature": 0.0,
                                      "logprobs": True, "top_logprobs": 2}),
    "chat_stream": ("/v1/chat/completions", {"messages": CHAT, "max_tokens": MAX_TOKENS, "temperature": 0.0,
                                             "stream": True}),
    "text_stream": ("/v1/completions", {"prompt": TEXT_PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0.0,
                                        "stream": True}),
    "logit_bias": ("/v1/completions", {"prompt": TEXT_PROMPT, "max_tokens": 8, "temperature": 0.0,
                                       "logit_bias": {"310": 1.0}}),
    "seeded": ("/v1/completions", {"prompt": TEXT_PROMPT, "max_tokens": 12, "temperature": 0.8,
                                   "top_p": 0.9, "seed": 7}),
    "pair_long": ("/v1/completions", {"prompt": TEXT_PROMPT + " jumps over", "max_tokens": 12,
                                      "temperature": 0.0}),
    "pair_short": ("/v1/completions", {"prompt": SHORT_PROMPT, "max_tokens": 12, "temperature": 0.0}),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(port, path, body):
    data = json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as resp:
        raw = resp.read().decode()
    if not body.get("stream"):
        return json.loads(raw)
    # Server-sent events: "data: {json}" lines up to "data: [DONE]" (plus keep-alive comments).
    chunks = []
    for line in raw.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            chunks.append(json.loads(line[len("data: "):]))
    return {"chunks": chunks}


def summarize(name, resp):
    """What is compared: the text, finish reason, token counts and log-probabilities (ids, times
    and the machine's fingerprint differ from run to run)."""
    if "chunks" in resp:
        text, finish = "", None
        for c in resp["chunks"]:
            ch = c["choices"][0]
            text += ch.get("text") or (ch.get("delta") or {}).get("content") or ""
            finish = ch.get("finish_reason") or finish
        return {"text": text, "finish_reason": finish}
    ch = resp["choices"][0]
    out = {"text": ch["text"] if "text" in ch else ch["message"]["content"],
           "finish_reason": ch["finish_reason"],
           "usage": {k: resp["usage"][k] for k in ("prompt_tokens", "completion_tokens")},
           "cached_tokens": resp["usage"].get("prompt_tokens_details", {}).get("cached_tokens")}
    lp = ch.get("logprobs")
    if lp:
        content = lp["content"] if "content" in lp else lp
        if isinstance(content, dict):  # text completions: {"tokens", "token_logprobs", "top_logprobs"}
            out["logprobs"] = content
        else:
            out["logprobs"] = [{"id": t["id"], "logprob": t["logprob"],
                                "top": [[a["id"], a["logprob"]] for a in t["top_logprobs"]]} for t in content]
    return out


def start_server(model_dir, python=sys.executable, env=None):
    """Starts the server on a free port; returns (process, port) once /health answers."""
    port = free_port()
    proc = subprocess.Popen([python, "-m", "mlx_lm", "server", "--model", model_dir, "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.time() + 180
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("mlx_lm server exited:\n" + proc.stdout.read()[-4000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                if json.loads(r.read().decode()).get("status") == "ok":
                    return proc, port
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.3)
    stop_server(proc)
    raise RuntimeError("mlx_lm server did not answer /health in 180 s")


def stop_server(proc):
    proc.terminate()
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


def run_session(model_dir, python=sys.executable, env=None):
    """Starts a server, sends REQUESTS, stops it; returns {name: summarize(...)}."""
    proc, port = start_server(model_dir, python, env)
    results = {}
    try:
        for name, (path, body) in REQUESTS.items():
            if name.startswith("pair_"):
                continue
            results[name] = summarize(name, _post(port, path, body))
        # A second identical chat: the prompt cache supplies its prefix.
        results["chat_again"] = summarize("chat_again", _post(port, *REQUESTS["chat"]))
        pair = [n for n in REQUESTS if n.startswith("pair_")]
        got, errors = {}, []

        def send(n):
            try:
                got[n] = summarize(n, _post(port, *REQUESTS[n]))
            except Exception as e:  # reported below, in the main thread
                errors.append(f"{n}: {e!r}")

        threads = [threading.Thread(target=send, args=(n,)) for n in pair]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise RuntimeError("; ".join(errors))
        results.update(got)
    finally:
        log = stop_server(proc)
    if os.environ.get("MLX_LM_SERVER_LOG"):
        print(log)
    return results
