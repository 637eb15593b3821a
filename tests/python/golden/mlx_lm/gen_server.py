"""Records what ``python -m mlx_lm server`` (real MLX 0.32.4 + mlx-lm 0.32.2) answers to the
scripted session of server_session.py on tiny_llama/; test_mlx_lm_server.py replays the session
on mlx-arm and compares.

Run with the oracle venv (see gen_mlx_lm.py), from this directory:

    /tmp/mlxlm-oracle/bin/python gen_server.py

It writes server_goldens.json (committed).
"""
import json
import os
import sys

import mlx.core as mx
import mlx_lm

import server_session

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the server must import this venv's real MLX
    results = server_session.run_session(os.path.join(HERE, "tiny_llama"), python=sys.executable, env=env)
    out = {"mlx_version": mx.__version__, "mlx_lm_version": mlx_lm.__version__, "results": results}
    with open(os.path.join(HERE, "server_goldens.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
