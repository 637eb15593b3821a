"""Golden outputs of real MLX 0.32 (CPU, LAPACK) for mx.linalg's decompositions and the ops
built on them: inv, tri_inv, cholesky, cholesky_inv, qr, svd, eigh, eigvalsh, eig, eigvals,
lu, lu_factor, solve, solve_triangular, pinv, det, slogdet.
Run: /opt/oracle/bin/python gen_decomp.py  (writes decomp.json)

A case: {"name", "op", "inputs": [array], "args": {...}, "check": "values"|"recon",
"outputs"|"output"|"error"}. "values": every output is unique (given LAPACK's sign
conventions) and compared element-wise. "recon": outputs not unique (singular / eigen
vectors): the test checks the defining identities and compares only the unique parts
(singular values, symmetric eigenvalues, sorted general eigenvalues)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlx.core as mx
import numpy as np
from golden import encode, run, write

mx.set_default_device(mx.cpu)
rng = np.random.default_rng(11)
L = mx.linalg
cases = []


def mat(shape, dt=np.float32, spd=False, diag=0.0):
    a = rng.standard_normal(shape)
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    elif diag:
        a = a + diag * np.eye(shape[-1])
    return a.astype(dt)


def case(name, op, inputs, fn, args=None, check="values"):
    xs = [mx.array(a) for a in inputs]
    c = {"name": name, "op": op, "inputs": [encode(x) for x in xs], "args": args or {}, "check": check}
    c.update(run(lambda: fn(*xs)))
    cases.append(c)


for tag, dt in [("f32", np.float32), ("f64", np.float64)]:
    case(f"inv_{tag}", "inv", [mat((4, 4), dt, diag=4)], L.inv)
    case(f"inv_batch_{tag}", "inv", [mat((2, 3, 3, 3), dt, diag=3)], L.inv)
    for up in (False, True):
        case(f"tri_inv_{up}_{tag}", "tri_inv", [mat((2, 4, 4), dt, diag=4)], lambda a, up=up: L.tri_inv(a, upper=up), {"upper": up})
        case(f"cholesky_{up}_{tag}", "cholesky", [mat((2, 4, 4), dt, spd=True)], lambda a, up=up: L.cholesky(a, upper=up), {"upper": up})
        case(f"cholesky_inv_{up}_{tag}", "cholesky_inv", [np.array(L.cholesky(mx.array(mat((3, 3), dt, spd=True)), upper=up))],
             lambda a, up=up: L.cholesky_inv(a, upper=up), {"upper": up})
        case(f"solve_triangular_{up}_{tag}", "solve_triangular", [np.triu(mat((3, 3), dt, diag=4)) if up else np.tril(mat((3, 3), dt, diag=4)), mat((3, 2), dt)],
             lambda a, b, up=up: L.solve_triangular(a, b, upper=up), {"upper": up})
    for shape in [(4, 4), (5, 3), (3, 5), (2, 4, 3)]:
        s = "x".join(map(str, shape))
        case(f"qr_{s}_{tag}", "qr", [mat(shape, dt)], L.qr)
        case(f"lu_{s}_{tag}", "lu", [mat(shape, dt)], L.lu)
        case(f"lu_factor_{s}_{tag}", "lu_factor", [mat(shape, dt)], L.lu_factor)
        case(f"svd_{s}_{tag}", "svd", [mat(shape, dt)], L.svd, check="recon")
        case(f"svd_values_{s}_{tag}", "svd_values", [mat(shape, dt)], lambda a: L.svd(a, compute_uv=False))
        case(f"pinv_{s}_{tag}", "pinv", [mat(shape, dt)], L.pinv)
    for uplo in ("L", "U"):
        case(f"eigh_{uplo}_{tag}", "eigh", [mat((2, 5, 5), dt)], lambda a, u=uplo: L.eigh(a, UPLO=u), {"UPLO": uplo}, check="recon")
        case(f"eigvalsh_{uplo}_{tag}", "eigvalsh", [mat((5, 5), dt)], lambda a, u=uplo: L.eigvalsh(a, UPLO=u), {"UPLO": uplo})
    case(f"eig_{tag}", "eig", [mat((2, 5, 5), dt)], L.eig, check="recon")
    case(f"eigvals_{tag}", "eigvals", [mat((4, 4), dt)], L.eigvals, check="recon")
    case(f"solve_vec_{tag}", "solve", [mat((4, 4), dt, diag=4), mat((4,), dt)], L.solve)
    case(f"solve_batch_{tag}", "solve", [mat((2, 3, 3), dt, diag=3), mat((1, 3, 2), dt)], L.solve)
    for n in (2, 3, 5):
        case(f"det_{n}_{tag}", "det", [mat((2, n, n), dt)], L.det)
        case(f"slogdet_{n}_{tag}", "slogdet", [mat((2, n, n), dt)], L.slogdet)

# Known matrices: singular, rank-deficient, complex eigenvalues, upstream's examples.
sing = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
case("inv_singular", "inv", [sing], L.inv)
case("lu_singular", "lu", [np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 1, 0], [1, 0, 0, 1]], np.float32)], L.lu)
case("det_singular_4", "det", [np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 1, 0], [1, 0, 0, 1]], np.float32)], L.det)
case("slogdet_singular_4", "slogdet", [np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 1, 0], [1, 0, 0, 1]], np.float32)], L.slogdet)
case("svd_rank2", "svd", [np.arange(1, 13, dtype=np.float32).reshape(4, 3)], L.svd, check="recon")
case("pinv_singular", "pinv", [np.array([[4.0, 1.0], [4.0, 1.0]], np.float32)], L.pinv)
case("eig_rotation", "eig", [np.array([[1.0, -1.0], [1.0, 1.0]], np.float32)], L.eig, check="recon")
case("eig_upstream_2x2", "eig", [np.array([[1.0, 1.0], [3.0, 4.0]], np.float32)], L.eig, check="recon")
cz = (rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))).astype(np.complex64)
case("eig_complex", "eig", [cz], L.eig, check="recon")
hz = (cz + np.conj(np.swapaxes(cz, -1, -2))).astype(np.complex64)
case("eigh_complex", "eigh", [hz], L.eigh, check="recon")
case("eigvalsh_complex_U", "eigvalsh", [cz[0]], lambda a: L.eigvalsh(a, UPLO="U"), {"UPLO": "U"})
case("eigvals_complex", "eigvals", [cz[0]], L.eigvals, check="recon")
case("eigh_uplo_disagree", "eigvalsh", [np.array([[1.0, 999.0], [2.0, 3.0]], np.float32)], lambda a: L.eigvalsh(a, UPLO="U"), {"UPLO": "U"})
case("det_int", "det", [np.array([[2, 1], [1, 3]], np.int32)], L.det)
for shape in [(0, 0), (3, 0, 0), (2, 5, 0), (2, 0, 5)]:
    s = "x".join(map(str, shape))
    case(f"svd_empty_{s}", "svd", [np.zeros(shape, np.float32)], L.svd, check="values")
    case(f"pinv_empty_{s}", "pinv", [np.zeros(shape, np.float32)], L.pinv)
    case(f"qr_empty_{s}", "qr", [np.zeros(shape, np.float32)], L.qr)

# Errors (MLX's exception types).
i2 = np.array([[0, 1], [1, 0]], np.int32)
v = np.array([1.0, 2.0], np.float32)
rect = np.ones((2, 3), np.float32)
for op, fn in [("inv", L.inv), ("cholesky", L.cholesky), ("qr", L.qr), ("lu", L.lu), ("lu_factor", L.lu_factor),
               ("pinv", L.pinv), ("eigh", L.eigh), ("eigvalsh", L.eigvalsh), ("eig", L.eig), ("eigvals", L.eigvals),
               ("tri_inv", L.tri_inv), ("cholesky_inv", L.cholesky_inv), ("svd", L.svd), ("det", L.det), ("slogdet", L.slogdet)]:
    for tag, x in [("int", i2), ("1d", v), ("rect", rect)]:
        case(f"err_{op}_{tag}", op, [x], fn, check="recon" if op == "svd" else "values")
case("err_eigh_uplo", "eigh", [np.eye(2, dtype=np.float32)], lambda a: L.eigh(a, UPLO="X"), {"UPLO": "X"})
case("err_solve_int", "solve", [i2, i2], L.solve)
case("err_solve_shape", "solve", [np.eye(3, dtype=np.float32), v], L.solve)
case("err_solve_rect", "solve", [rect, v], L.solve)
case("err_solve_0d", "solve", [np.eye(2, dtype=np.float32), np.array(1.0, np.float32)], L.solve)
case("err_solve_int_a", "solve", [i2, np.ones((2,), np.float32)], L.solve)

write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "decomp.json"), cases)
