"""The LoRA recipe shared by gen_lora.py (run under real MLX, the oracle) and
tests/python/test_lora.py (run under mlx-arm): mlx-lm's own training code, unchanged, on the
tiny Llama fixtures of golden/mlx_lm/ and the made-up set in tests/data/lora/.

``train(model_dir, extra_args)`` does what ``python -m mlx_lm lora --train`` does (argument
defaults, numpy seed, load, dataset, ``train_model``) but also hands a callback to mlx-lm's
trainer, so every iteration's training loss comes back (``run`` would replace the callback)."""
import os
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "lora")
MODELS = os.path.join(HERE, "..", "mlx_lm")
FIXTURES = {"fp32": "tiny_llama", "q4": "tiny_llama_q4"}

# A short run: every iteration reported, validation at the first and last one.
ITERS = 6
ARGS = ["--train", "--data", DATA, "--iters", str(ITERS), "--batch-size", "4", "--num-layers", "2",
        "--learning-rate", "1e-3", "--steps-per-report", "1", "--steps-per-eval", str(ITERS),
        "--val-batches", "2", "--seed", "3"]


def model_path(name):
    return os.path.normpath(os.path.join(MODELS, FIXTURES[name]))


def cli_args(name, adapter_path, extra=()):
    """The argument list of ``python -m mlx_lm lora`` for fixture ``name``."""
    return ["--model", model_path(name), "--adapter-path", adapter_path] + ARGS + list(extra)


def train(name, adapter_path, extra=()):
    """Trains fixture ``name`` with mlx-lm's code; returns (train losses per iteration, val
    losses, adapters dict as numpy)."""
    train_reports, val_reports, adapters = train_argv(cli_args(name, adapter_path, extra))
    return [r["train_loss"] for r in train_reports], [r["val_loss"] for r in val_reports], adapters


def train_argv(argv):
    """``python -m mlx_lm lora <argv>``'s training with the reports mlx-lm's trainer makes:
    (train reports, val reports, adapters dict as numpy)."""
    import mlx.core as mx
    import numpy as np
    from mlx.utils import tree_flatten
    from mlx_lm import lora
    from mlx_lm.tuner.datasets import load_dataset
    from mlx_lm.tuner.trainer import TrainingCallback
    from mlx_lm.utils import load

    ns = vars(lora.build_parser().parse_args(argv))
    for k, v in lora.CONFIG_DEFAULTS.items():
        if ns.get(k) is None:
            ns[k] = v
    args = types.SimpleNamespace(**ns)

    class Record(TrainingCallback):
        def __init__(self):
            self.train, self.val = [], []

        def on_train_loss_report(self, info):
            self.train.append(info)

        def on_val_loss_report(self, info):
            self.val.append(info)

    np.random.seed(args.seed)
    model, tokenizer = load(args.model)
    train_set, valid_set, _ = load_dataset(args, tokenizer)
    rec = Record()
    lora.train_model(args, model, train_set, valid_set, rec)
    adapters = {k: np.array(v) for k, v in tree_flatten(model.trainable_parameters())}
    mx.eval()
    return rec.train, rec.val, adapters
