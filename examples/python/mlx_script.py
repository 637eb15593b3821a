"""An ordinary MLX script (written against real MLX 0.32's `mlx.core`, nothing mlx-arm specific):
a small transformer block with quantized weights, run on random data, saved and loaded back.

    python examples/python/mlx_script.py [OUT_DIR]

It prints one line per step; tests/python/test_mlx_script.py runs it with mlx-arm and compares
the lines with those real MLX printed (tests/python/golden/mlx_script.out).
"""
import os
import sys
import tempfile

import mlx.core as mx


def show(name, a):
    a = a.astype(mx.float32)
    print(f"{name}: shape={tuple(a.shape)} sum={a.sum().item():.5g} absmax={mx.abs(a).max().item():.5g}")


def attention_block(x, p, n_heads):
    b, t, d = x.shape
    h = mx.fast.rms_norm(x, p["norm"], 1e-5)
    q = mx.quantized_matmul(h, *p["wq"], transpose=True, group_size=64, bits=4)
    k = mx.quantized_matmul(h, *p["wk"], transpose=True, group_size=64, bits=4)
    v = h @ p["wv"].T
    q, k, v = (y.reshape(b, t, n_heads, d // n_heads).transpose(0, 2, 1, 3) for y in (q, k, v))
    q = mx.fast.rope(q, d // n_heads, traditional=False, base=10000.0, scale=1.0, offset=0)
    k = mx.fast.rope(k, d // n_heads, traditional=False, base=10000.0, scale=1.0, offset=0)
    o = mx.fast.scaled_dot_product_attention(q, k, v, scale=(d // n_heads) ** -0.5, mask="causal")
    o = o.transpose(0, 2, 1, 3).reshape(b, t, d)
    x = x + o
    g = mx.fast.layer_norm(x, p["ln_w"], p["ln_b"], 1e-5)
    up = g @ p["w1"]
    return x + (up * mx.sigmoid(up)) @ p["w2"], o


def main(out_dir):
    mx.random.seed(42)
    d, n_heads, t = 128, 4, 16
    key = mx.random.key(7)
    k1, k2, k3, k4, k5 = mx.random.split(key, 5)
    params = {
        "norm": mx.ones((d,)),
        "wq": mx.quantize(mx.random.normal((d, d), key=k1) * 0.05, group_size=64, bits=4),
        "wk": mx.quantize(mx.random.normal((d, d), key=k2) * 0.05, group_size=64, bits=4),
        "wv": mx.random.normal((d, d), key=k3) * 0.05,
        "ln_w": mx.ones((d,)),
        "ln_b": mx.zeros((d,)),
        "w1": mx.random.uniform(-0.1, 0.1, (d, 2 * d), key=k4),
        "w2": mx.random.uniform(-0.1, 0.1, (2 * d, d), key=k5),
    }
    w_back = mx.dequantize(*params["wq"], group_size=64, bits=4)
    show("dequantized wq", w_back)
    x = mx.random.normal((2, t, d))
    show("input", x)
    y, attn = attention_block(x, params, n_heads)
    mx.eval(y)
    show("attention", attn)
    show("block output", y)
    probs = mx.softmax(y[:, -1, :16], axis=-1)
    show("softmax", probs)
    print("argmax:", mx.argmax(probs, axis=-1).tolist())
    top = mx.topk(y[0, -1], 3)
    print("top3 sorted:", [round(v, 3) for v in mx.sort(top).tolist()])
    print("cumsum:", [round(v, 3) for v in mx.cumsum(mx.arange(1, 6) / 2).tolist()])
    print("where:", mx.where(mx.arange(6) % 2 == 0, mx.arange(6), -1).tolist())
    print("einsum:", mx.einsum("ij,ij->i", mx.arange(6).reshape(2, 3), mx.ones((2, 3))).tolist())

    st = os.path.join(out_dir, "block.safetensors")
    mx.save_safetensors(st, {"y": y, "wv": params["wv"]}, metadata={"step": "1"})
    loaded, meta = mx.load(st, return_metadata=True)
    print("safetensors:", sorted(loaded), meta, mx.array_equal(loaded["y"], y).item())
    npz = os.path.join(out_dir, "arrays.npz")
    mx.savez(npz, probs=probs, idx=mx.arange(4, dtype=mx.int16))
    back = mx.load(npz)
    print("npz:", sorted(back), back["idx"].dtype, mx.allclose(back["probs"], probs).item())


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(tmp)
