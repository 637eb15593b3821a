"""Records real MLX's mx.fft.stft / istft on stft_cases.py's cases into stft.npz (results)
and stft.json (error classes and messages). Run with real MLX (the oracle venv), from this
directory:

    /work/oracle-venv/bin/python gen_stft.py
"""
import json
import os

import mlx.core as mx
import numpy as np

import stft_cases as C

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    arrays, errors = {}, {}
    for name, (shape, dtype, seed, kw) in C.STFT.items():
        x = mx.array(C.signal(shape, dtype, seed))
        arrays[f"stft_{name}"] = np.array(mx.fft.stft(x, **C.window_kwargs(kw, mx.array)))
    for name, ((shape, dtype, seed), skw, ikw) in C.ISTFT.items():
        s = mx.fft.stft(mx.array(C.signal(shape, dtype, seed)), **C.window_kwargs(skw, mx.array))
        arrays[f"istft_in_{name}"] = np.array(s)
        arrays[f"istft_{name}"] = np.array(mx.fft.istft(s, **C.window_kwargs(ikw, mx.array)))
    for name, (fn, spec, kw) in C.ERRORS.items():
        x = mx.array(1.0) if spec is None else mx.array(C.signal(*spec))
        try:
            getattr(mx.fft, fn)(x, **kw)
            errors[name] = None
        except Exception as e:  # recorded: the class and message are the golden
            errors[name] = [type(e).__name__, str(e)]
    np.savez_compressed(os.path.join(HERE, "stft.npz"), **arrays)
    with open(os.path.join(HERE, "stft.json"), "w", encoding="utf-8") as f:
        json.dump({"mlx": mx.__version__, "errors": errors}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
