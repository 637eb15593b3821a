"""LoRA training speed: ``mlx_lm.lora``'s training loop (mlx-lm 0.32.2, unchanged) on a model
directory and tests/data/lora/, with mlx-arm's package and with real MLX, one after the other
in one run; prints training tokens/s of each and the ratio, plus each run's first and last
training loss.

    python benchmarks/lora_train.py --model DIR --oracle /work/oracle-venv/bin/python \
        [--iters 20] [--batch-size 2] [--num-layers 8] [--report 5] [--extra "--grad-checkpoint"]

The current Python must import mlx-arm's ``mlx`` (e.g. PYTHONPATH=python-cffi
MLX_ARM_LIBRARY=target/release/libmlx_arm.so); ``--oracle`` is a Python with real MLX and
mlx-lm. The first report (its steps include compiling the step) is left out of tokens/s.
``--one`` runs only the current Python and prints its JSON (what the comparison calls)."""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python", "golden", "lora"))


def one(a):
    import lora_recipe
    import mlx.core as mx

    with tempfile.TemporaryDirectory() as tmp:
        argv = ["--model", a.model, "--train", "--data", lora_recipe.DATA, "--adapter-path", tmp,
                "--iters", str(a.iters), "--batch-size", str(a.batch_size), "--num-layers", str(a.num_layers),
                "--learning-rate", "1e-4", "--steps-per-report", str(a.report), "--steps-per-eval",
                str(10 ** 6), "--val-batches", "1", "--seed", "0"] + shlex.split(a.extra)
        train, _, _ = lora_recipe.train_argv(argv)
    timed = train[1:]
    tokens = sum(r["tokens_per_second"] * a.report / r["iterations_per_second"] for r in timed)
    seconds = sum(a.report / r["iterations_per_second"] for r in timed)
    return {"package": mx.__file__, "tokens_per_s": tokens / seconds, "first_loss": train[0]["train_loss"],
            "last_loss": train[-1]["train_loss"], "losses": [r["train_loss"] for r in train]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--oracle")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--num-layers", type=int, default=8)
    p.add_argument("--report", type=int, default=5)
    p.add_argument("--extra", default="")
    p.add_argument("--one", action="store_true")
    a = p.parse_args()
    if a.one:
        print(json.dumps(one(a)))
        return
    if not a.oracle:
        p.error("--oracle PYTHON is needed for the comparison (or --one)")
    common = ["--model", a.model, "--iters", str(a.iters), "--batch-size", str(a.batch_size), "--num-layers",
              str(a.num_layers), "--report", str(a.report), "--extra=" + a.extra, "--one"]
    res = {}
    oracle_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLX_ARM_LIBRARY")}
    for who, py, env in (("mlx-arm", sys.executable, dict(os.environ)), ("real MLX", a.oracle, oracle_env)):
        out = subprocess.run([py, os.path.abspath(__file__)] + common, capture_output=True, text=True, env=env)
        if out.returncode != 0:
            sys.exit(f"{who} run failed:\n{out.stderr[-3000:]}")
        res[who] = json.loads(out.stdout.strip().splitlines()[-1])
    ours, ref = res["mlx-arm"], res["real MLX"]
    print(f"model {a.model}, {a.iters} iters, batch {a.batch_size}, {a.num_layers} LoRA layers {a.extra}")
    for who, r in res.items():
        print(f"{who:9s} {r['tokens_per_s']:9.1f} tok/s  loss {r['first_loss']:.3f} -> {r['last_loss']:.3f}")
    print(f"ratio (mlx-arm / real MLX): {ours['tokens_per_s'] / ref['tokens_per_s']:.2f}x")


if __name__ == "__main__":
    main()
