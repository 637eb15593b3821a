"""Golden data for the FFT family (mx.fft). Run: /opt/oracle/bin/python gen_fft.py (writes fft.json)

Two kinds of case:
- "cases": semantics against real MLX 0.32 — every mx.fft function with n/s cropping and
  padding, axes, norm, dtypes (float64/int/complex inputs), non-contiguous views and MLX's
  errors. {"name", "op", "input", "view", "args", "output"|"error"}.
- "accuracy": long and awkward lengths (1, primes such as 1009 and 65537, 2^16, 3^a·5^b)
  against numpy.fft in complex128 on the exactly-representable float32 input that the
  test rebuilds from `gen` (too large to store): 256 sampled output bins plus the rms of the
  whole spectrum. `numpy_c64_err` records numpy's own complex64 relative error, for reference.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx
import numpy as np
from golden import encode, run, view, write

mx.set_default_device(mx.cpu)
rng = np.random.default_rng(7)


def cplx(shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def real(shape):
    return rng.standard_normal(shape).astype(np.float32)


cases = []


def case(name, op, x, args, v=None):
    a = mx.array(x)
    fn = getattr(mx.fft, op)
    cases.append({"name": name, "op": op, "input": encode(a), "view": v, "args": args,
                  **run(lambda: fn(view(a, v), **args))})


# 1-D complex and real transforms: default n, cropping, padding, axes, norms.
for op, mk in [("fft", cplx), ("ifft", cplx), ("rfft", real), ("irfft", cplx)]:
    for n in [None, 1, 5, 8, 12, 17]:
        case(f"{op}_n{n}", op, mk((3, 9)), {"n": n})
    case(f"{op}_axis0", op, mk((6, 4)), {"axis": 0})
    case(f"{op}_axis0_n7", op, mk((6, 4)), {"n": 7, "axis": 0})
    for norm in ["backward", "ortho", "forward"]:
        case(f"{op}_{norm}", op, mk((2, 10)), {"norm": norm})
    case(f"{op}_transpose", op, mk((5, 6)), {}, "transpose")
    case(f"{op}_step2", op, mk((3, 10)), {}, "slice_step2")
    case(f"{op}_len1", op, mk((4, 1)), {})
    case(f"{op}_3d_mid", op, mk((2, 5, 3)), {"axis": 1})
    case(f"{op}_bad_n", op, mk((4,)), {"n": 0})
    case(f"{op}_bad_norm", op, mk((4,)), {"norm": "none"})
case("fft_float64", "fft", rng.standard_normal(6), {})
case("fft_int32", "fft", np.arange(7, dtype=np.int32), {})
case("rfft_complex_input", "rfft", cplx((6,)), {})
case("fft_empty_batch", "fft", np.zeros((0, 4), np.complex64), {})
case("irfft_len1", "irfft", cplx((3, 1)), {})

# n-D transforms.
for op, mk in [("fft2", cplx), ("ifft2", cplx), ("rfft2", real), ("irfft2", cplx),
               ("fftn", cplx), ("ifftn", cplx), ("rfftn", real), ("irfftn", cplx)]:
    case(f"{op}_default", op, mk((3, 4, 6)), {})
    case(f"{op}_s", op, mk((4, 6)), {"s": [3, 8], "axes": [0, 1]})
    case(f"{op}_axes_rev", op, mk((4, 5, 6)), {"axes": [2, 0]})
    case(f"{op}_ortho", op, mk((4, 6)), {"axes": [-2, -1], "norm": "ortho"})
    case(f"{op}_forward", op, mk((5, 6)), {"axes": [-2, -1], "norm": "forward"})
    case(f"{op}_transpose", op, mk((5, 6)), {"axes": [0, 1]}, "transpose")
    case(f"{op}_dup", op, mk((4, 6)), {"axes": [0, 0]})
    case(f"{op}_s_no_axes", op, mk((4, 6)), {"s": [2, 2], "axes": None})
    case(f"{op}_bad_s", op, mk((4, 6)), {"s": [0, 2], "axes": [0, 1]})
    case(f"{op}_s_len", op, mk((4, 6)), {"s": [2, 2, 2], "axes": [0, 1]})
    case(f"{op}_bad_axis_s", op, mk((4, 6)), {"s": [2, 2], "axes": [0, 3]})
    case(f"{op}_single_axis", op, mk((4, 6)), {"axes": [0]})
case("fftn_empty_axes", "fftn", cplx((3, 4)), {"axes": []})
case("fftn_3axes", "fftn", cplx((3, 5, 4)), {"axes": [0, 1, 2], "s": [4, 5, 2]})
case("rfftn_3axes", "rfftn", real((3, 5, 4)), {"axes": [1, 0, 2], "s": [4, 5, 9]})
case("irfftn_3axes", "irfftn", cplx((3, 5, 4)), {"axes": [2, 1, 0], "s": [4, 5, 9]})

# Shifts and frequencies.
for op in ["fftshift", "ifftshift"]:
    case(f"{op}_all", op, real((5, 6)), {})
    case(f"{op}_axis", op, real((5, 6)), {"axes": [0]})
    case(f"{op}_neg", op, real((3, 5, 7)), {"axes": [-1, 1]})
    case(f"{op}_bad", op, real((3, 4)), {"axes": [3]})
    case(f"{op}_scalar", op, np.float32(3.0), {})
for op in ["fftfreq", "rfftfreq"]:
    for n, d in [(1, 1.0), (8, 1.0), (9, 0.1), (10, -2.5)]:
        cases.append({"name": f"{op}_{n}_{d}", "op": op, "input": None, "view": None, "args": {"n": n, "d": d},
                      **run(lambda: getattr(mx.fft, op)(n, d))})
    for n, d in [(0, 1.0), (4, 0.0)]:
        cases.append({"name": f"{op}_bad_{n}_{d}", "op": op, "input": None, "view": None, "args": {"n": n, "d": d},
                      **run(lambda: getattr(mx.fft, op)(n, d))})


def gen_input(n, cplx):
    """The rule the test rebuilds: exact float32 values from integer hashes."""
    j = np.arange(n, dtype=np.int64)
    re = (((j * 7919) % 10007) / 10007.0 - 0.5).astype(np.float32)
    if not cplx:
        return re
    im = (((j * 104729) % 10009) / 10009.0 - 0.5).astype(np.float32)
    return re + 1j * im.astype(np.complex64)


accuracy = []
for op, sizes in [("fft", [1, 2, 3, 5, 7, 13, 64, 97, 360, 1000, 1009, 1024, 4096, 9375, 30030, 65536, 65537]),
                  ("ifft", [1009, 65536]),
                  ("rfft", [1, 9, 1009, 65536]),
                  ("irfft", [2, 9, 1009, 65536])]:
    for n in sizes:
        c = op in ("fft", "ifft") or op == "irfft"
        m = n // 2 + 1 if op == "irfft" else n
        x = gen_input(m, c)
        x128 = x.astype(np.complex128 if c else np.float64)
        ref = getattr(np.fft, op)(x128, n=n) if op == "irfft" else getattr(np.fft, op)(x128)
        ref32 = getattr(np.fft, op)(x, n=n) if op == "irfft" else getattr(np.fft, op)(x)
        err32 = float(np.linalg.norm(ref32 - ref) / np.linalg.norm(ref))
        idx = np.unique(np.linspace(0, len(ref) - 1, min(256, len(ref))).astype(np.int64))
        accuracy.append({"op": op, "n": n, "input_len": m, "complex_input": c, "idx": idx.tolist(),
                         "ref": [[float(np.real(v)), float(np.imag(v))] for v in ref[idx]],
                         "rms": float(np.sqrt(np.mean(np.abs(ref) ** 2))), "numpy_c64_err": err32})

path = os.path.join(os.path.dirname(__file__), "fft.json")
write(path, cases)
import json
with open(path) as f:
    doc = json.load(f)
doc["accuracy"] = accuracy
with open(path, "w") as f:
    json.dump(doc, f, separators=(",", ":"))
print(f"{len(accuracy)} accuracy cases; size {os.path.getsize(path)} bytes")
