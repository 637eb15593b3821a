"""misc4 area through Python: complex64 mx.linalg.svd against numpy.linalg.svd (complex128;
U / Vt only by their identities: unique up to a phase per singular vector), and MLX's dtype
rules for svd / norm / pinv on complex64 input. Tolerance rtol = atol = 1e-4."""
import numpy as np
import pytest

import mlx.core as mx

RNG = np.random.default_rng(44)
TOL = 1e-4


def cmat(shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


@pytest.mark.parametrize("shape", [(2, 2), (4, 3), (3, 5), (2, 3, 3), (1, 6, 2)])
def test_complex_svd_identities(shape):
    a = cmat(shape)
    u, s, vt = mx.linalg.svd(mx.array(a), stream=mx.cpu)
    assert (u.dtype, s.dtype, vt.dtype) == (mx.complex64, mx.float32, mx.complex64)
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape == shape[:-2] + (m, m) and vt.shape == shape[:-2] + (n, n) and s.shape == shape[:-2] + (k,)
    U, S, Vt = np.array(u).astype(np.complex128), np.array(s), np.array(vt).astype(np.complex128)
    np.testing.assert_allclose(S, np.linalg.svd(a.astype(np.complex128), compute_uv=False), rtol=TOL, atol=TOL)
    rec = (U[..., :, :k] * S[..., None, :]) @ Vt[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=TOL, atol=TOL)
    eye = lambda d: np.broadcast_to(np.eye(d), shape[:-2] + (d, d))
    np.testing.assert_allclose(np.conj(np.swapaxes(U, -1, -2)) @ U, eye(m), atol=TOL)
    np.testing.assert_allclose(Vt @ np.conj(np.swapaxes(Vt, -1, -2)), eye(n), atol=TOL)


def test_complex_svd_rank_deficient():
    l, r = cmat((5, 2)), cmat((2, 4))
    a = (l @ r).astype(np.complex64)
    u, s, vt = mx.linalg.svd(mx.array(a), stream=mx.cpu)
    want = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    np.testing.assert_allclose(np.array(s), want, rtol=TOL, atol=TOL * want[0])
    U = np.array(u).astype(np.complex128)
    np.testing.assert_allclose(np.conj(U.T) @ U, np.eye(5), atol=TOL)


def test_complex_singular_values_and_norms():
    a = cmat((3, 4))
    s = mx.linalg.svd(mx.array(a), compute_uv=False, stream=mx.cpu)
    assert s.dtype == mx.float32
    want = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    np.testing.assert_allclose(np.array(s), want, rtol=TOL, atol=TOL)
    n2 = mx.linalg.norm(mx.array(a), ord=2, stream=mx.cpu)
    nuc = mx.linalg.norm(mx.array(a), ord="nuc", stream=mx.cpu)
    # MLX casts the ±2 norms back to the input type (complex64); 'nuc' stays float32.
    assert n2.dtype == mx.complex64 and nuc.dtype == mx.float32
    np.testing.assert_allclose(complex(n2.item()), np.linalg.norm(a.astype(np.complex128), 2), rtol=TOL)
    np.testing.assert_allclose(nuc.item(), np.linalg.norm(a.astype(np.complex128), "nuc"), rtol=TOL)


def test_complex_pinv_is_rejected_like_mlx():
    with pytest.raises(ValueError, match="float32 or float64"):
        mx.linalg.pinv(mx.array(cmat((3, 3))), stream=mx.cpu)
