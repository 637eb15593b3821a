"""Golden results for tests/python/test_conv_family.py from REAL MLX 0.32: each case is a Python
expression over ``mx`` (inputs built from exact small fractions, so both sides start from the
same bits) and what real MLX returns for it — dtype, shape, values — or the exception type and
message it raises. Covers mx.conv3d, mx.conv_transpose1d/2d/3d and mx.convolve through the
Python signatures (ints or tuples, keywords, defaults).
Run: /opt/oracle/bin/python tests/python/golden/conv_family/gen_conv_family.py"""
import json
import os

import mlx.core as mx
import numpy as np


def inp(*shape, k=7, dt="float32"):
    """An exact input: (arange % k - k//2) / 4 reshaped (same expression runs on both sides)."""
    n = int(np.prod(shape))
    return f"((mx.arange({n}.0) % {k} - {k // 2}) / 4).reshape{shape}.astype(mx.{dt})"


X1, W1 = inp(2, 7, 4), inp(6, 3, 2, k=5)
X2, W2 = inp(1, 5, 6, 4), inp(3, 3, 2, 4, k=5)
X3, W3 = inp(1, 4, 5, 3, 2), inp(3, 2, 3, 2, 2, k=5)
CASES = [
    # conv3d: ints, tuples, keywords
    f"mx.conv3d({X3}, {W3})",
    f"mx.conv3d({X3}, {W3}, stride=(2, 1, 1), padding=1)",
    f"mx.conv3d({X3}, {W3}, 1, (1, 0, 2), (1, 2, 1))",
    f"mx.conv3d({X3}, {W3}, padding=-1)",
    f"mx.conv3d({inp(1, 3, 3, 3, 2, dt='float16')}, {inp(2, 2, 2, 2, 2, k=5, dt='float16')})",
    f"mx.conv3d({X3}, {W3}, groups=2)",
    f"mx.conv3d({X3}, {W3}, padding=(1, 1))",
    f"mx.conv3d({X3}, {W3}, stride=0)",
    f"mx.conv3d({inp(1, 4, 5, 3)}, {W3})",
    f"mx.conv3d(mx.ones((1, 3, 3, 3, 2), mx.int32), {W3})",
    # conv_transpose1d: ints only, as in MLX
    f"mx.conv_transpose1d({inp(2, 7, 2)}, {inp(3, 3, 2, k=5)})",
    f"mx.conv_transpose1d({inp(2, 7, 2)}, {inp(3, 3, 2, k=5)}, stride=2, padding=1, output_padding=1)",
    f"mx.conv_transpose1d({inp(2, 7, 2)}, {inp(3, 3, 2, k=5)}, 3, 0, 2, 2)",
    f"mx.conv_transpose1d({X1}, {W1}, groups=2)",
    f"mx.conv_transpose1d({X1}, {W1}, stride=2, padding=4, dilation=2, groups=2)",
    f"mx.conv_transpose1d({X1}, {W1}, padding=-1, groups=2)",
    f"mx.conv_transpose1d({X1}, {W1}, stride=(1,))",
    f"mx.conv_transpose1d({X1}, {W1}, groups=3)",
    f"mx.conv_transpose1d({X1}, {W1}, stride=0, groups=2)",
    f"mx.conv_transpose1d({X1}, {inp(6, 3)})",
    f"mx.conv_transpose1d({X1}, {inp(6,)})",
    # conv_transpose2d
    f"mx.conv_transpose2d({X2}, {W2})",
    f"mx.conv_transpose2d({X2}, {W2}, stride=(2, 3), padding=(1, 0), dilation=(1, 2), output_padding=(1, 2))",
    f"mx.conv_transpose2d({X2}, {W2}, 2, 1, 1, 1)",
    f"mx.conv_transpose2d({X2}, {inp(4, 3, 2, 1, k=5)}, groups=4)",
    f"mx.conv_transpose2d({X2}, {W2}, stride=(1, 1, 1))",
    f"mx.conv_transpose2d({X2}, {inp(4, 3, 2, 3)})",
    f"mx.conv_transpose2d({inp(1, 3, 3, 2, dt='bfloat16')}, {inp(2, 2, 2, 2, k=5, dt='bfloat16')}, stride=2)",
    # conv_transpose3d
    f"mx.conv_transpose3d({X3}, {W3})",
    f"mx.conv_transpose3d({X3}, {W3}, stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0))",
    f"mx.conv_transpose3d({X3}, {W3}, 1, 0, (2, 1, 1))",
    f"mx.conv_transpose3d({X3}, {W3}, groups=2)",
    # convolve
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, 0, -1, 2]))",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, 0, -1, 2]), 'same')",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, 0, -1, 2]), mode='valid')",
    "mx.convolve(mx.array([1.0, 0.5]), mx.array([1.0, 2, 3, 4, 5]), mode='same')",
    "mx.convolve(mx.array([1.0, 0.5, 2]), mx.array([3.0, 2, 1]), mode='same')",
    "mx.convolve(mx.array([2.0]), mx.array([3.0]))",
    "mx.convolve(mx.array([1.0, 2, 3], mx.float16), mx.array([1.0, 2], mx.float16))",
    "mx.convolve(mx.array([1, 2, 3]), mx.array([1, 2]))",
    "mx.convolve(mx.ones((2, 2)), mx.ones(2))",
    "mx.convolve(mx.zeros((0,)), mx.ones(2))",
    "mx.convolve(mx.ones(3), mx.ones(2), mode='bad')",
]


def run(expr):
    try:
        out = eval(expr)
        mx.eval(out)
        vals = np.array(out.astype(mx.float32)).reshape(-1)
        return {"dtype": str(out.dtype).replace("mlx.core.", ""), "shape": list(out.shape), "values": vals.tolist()}
    except Exception as e:  # the oracle's failure is the expected behaviour
        return {"error": type(e).__name__, "message": str(e).splitlines()[0]}


if __name__ == "__main__":
    out = [{"expr": e, **run(e)} for e in CASES]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_family.json")
    with open(path, "w") as f:
        json.dump({"mlx_version": mx.__version__, "cases": out}, f, indent=0)
    print(f"wrote {len(out)} cases to {os.path.relpath(path)}")
