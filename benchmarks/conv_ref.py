"""Times the conv family (median of 5 after a warm-up) with whichever mlx.core is importable:
real MLX (`/opt/oracle/bin/python benchmarks/conv_ref.py`) or mlx-arm
(`MLX_ARM_LIBRARY=…/libmlx_arm.so PYTHONPATH=python-cffi .venv/bin/python benchmarks/conv_ref.py`)."""
import time
import numpy as np
import mlx.core as mx

def t(f):
    mx.eval(f())
    ts = []
    for _ in range(5):
        s = time.perf_counter(); mx.eval(f()); ts.append(time.perf_counter() - s)
    return sorted(ts)[2] * 1e3

r = np.random.default_rng(0)
A = lambda *s: mx.array(r.standard_normal(s).astype(np.float32))
x2, w2 = A(4, 32, 32, 64), A(64, 3, 3, 64)
xt, wt = A(4, 16, 16, 64), A(64, 3, 3, 64)
x3, w3 = A(1, 16, 16, 16, 16), A(16, 3, 3, 3, 16)
a, v = A(100000), A(63)
print("conv2d 4x32x32x64 * 64x3x3x64        %.1f ms" % t(lambda: mx.conv2d(x2, w2, padding=1)))
print("conv_transpose2d s2 4x16x16x64 -> 33 %.1f ms" % t(lambda: mx.conv_transpose2d(xt, wt, stride=2)))
print("conv3d 1x16^3x16 * 16x3^3x16         %.1f ms" % t(lambda: mx.conv3d(x3, w3, padding=1)))
print("conv_transpose3d s1 same shapes      %.1f ms" % t(lambda: mx.conv_transpose3d(x3, w3, padding=1)))
print("convolve 100000 * 63 (same)          %.1f ms" % t(lambda: mx.convolve(a, v, 'same')))
