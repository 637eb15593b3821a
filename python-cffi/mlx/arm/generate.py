"""``python -m mlx.arm.generate``: generate text with a language model, streamed as it is
produced, then the speed figures — the counterpart of ``python -m mlx_lm generate``.

    python -m mlx.arm.generate --prompt "Tell me a joke" --max-tokens 64
    python -m mlx.arm.generate --model model.gguf --prompt "The sky is" --ignore-chat-template --temp 0.7 --seed 1
"""
import argparse
import sys

from . import Model


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m mlx.arm.generate", description="Generate text with mlx-arm.")
    p.add_argument("--model", "-m", default=None, help="a .gguf file or model directory (default: the default model)")
    p.add_argument("--prompt", "-p", default="hello", help='the prompt ("-" reads it from standard input)')
    p.add_argument("--max-tokens", "-n", type=int, default=100, help="most tokens to generate")
    p.add_argument("--temp", type=float, default=0.0, help="sampling temperature (0: greedy)")
    p.add_argument("--top-k", type=int, default=0, help="keep the k most likely tokens (0: all)")
    p.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling threshold")
    p.add_argument("--min-p", type=float, default=0.0, help="drop tokens below min-p times the most likely one")
    p.add_argument("--repetition-penalty", type=float, default=1.0, help="penalty for recent tokens (1: off)")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--ignore-chat-template", action="store_true", help="continue the prompt as plain text")
    p.add_argument("--verbose", type=lambda s: s.lower() not in ("0", "false", "no"), default=True,
                   help="print the figures at the end (default True)")
    a = p.parse_args(argv)
    prompt = sys.stdin.read() if a.prompt == "-" else a.prompt
    try:
        model = Model.load(a.model)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"mlx.arm.generate: {e}", file=sys.stderr)
        return 1
    with model:
        print("=" * 10)
        if a.ignore_chat_template:
            sys.stdout.write(prompt)

        def show(piece):
            sys.stdout.write(piece)
            sys.stdout.flush()

        try:
            model.generate(prompt, max_tokens=a.max_tokens, temp=a.temp, top_k=a.top_k, top_p=a.top_p, min_p=a.min_p,
                           repetition_penalty=a.repetition_penalty, seed=a.seed,
                           chat=not a.ignore_chat_template, stream=show)
        except (ValueError, RuntimeError) as e:
            print(f"\nmlx.arm.generate: {e}", file=sys.stderr)
            return 1
        print()
        print("=" * 10)
        if a.verbose:
            st = model.stats
            print(f"Prompt: {st['prompt_tokens']} tokens, {st['prompt_tps']:.3f} tokens-per-sec")
            print(f"Generation: {st['generation_tokens']} tokens, {st['generation_tps']:.3f} tokens-per-sec")
            from ..core._ffi import ffi, lib

            ms = ffi.new("mlx_arm_memory_stats*")
            if lib.mlx_arm_get_memory_stats(ms) == 0:
                print(f"Peak memory: {ms.peak / 1e9:.3f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
