"""mlx-lm's own speed figures for a model directory: ``mlx_lm.generate(..., verbose=True)`` over a
prompt of exactly N token ids (drawn from a seeded generator, so any vocabulary works, also
random-weight models whose text means nothing), generating exactly M tokens (the EOS ids are
masked so a random model cannot stop early). Runs under whichever ``mlx`` is importable: real
MLX or this package, so the two print the same lines for the same work.

    python bench_mlx_lm.py MODEL_DIR [--prompt-tokens 128] [--gen-tokens 64] [--seed 0]

Prints mlx-lm's "Prompt: … tokens-per-sec", "Generation: … tokens-per-sec" and "Peak memory"
lines after a short warm-up call (first-call costs are not the steady figures).
"""
import argparse
import random
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--gen-tokens", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    import mlx.core as mx
    import mlx_lm

    t0 = time.perf_counter()
    model, tok = mlx_lm.load(a.model)
    print(f"mlx {mx.__version__} from {mx.__file__}; loaded in {time.perf_counter() - t0:.1f} s")
    vocab = model.args.vocab_size
    eos = sorted(tok.eos_token_ids)
    mask = mx.zeros((vocab,))
    if eos:
        mask[mx.array(eos)] = -float("inf")

    def no_eos(tokens, logits):
        return logits + mask

    rng = random.Random(a.seed)
    # Ids above 258 skip the control and byte tokens of SentencePiece vocabularies.
    lo = min(259, vocab - 1)
    ids = [rng.randrange(lo, vocab) for _ in range(a.prompt_tokens)]
    mlx_lm.generate(model, tok, prompt=ids[:8], max_tokens=2, logits_processors=[no_eos])
    mlx_lm.generate(model, tok, prompt=ids, max_tokens=a.gen_tokens, verbose=True, logits_processors=[no_eos])


if __name__ == "__main__":
    main()
