"""mlx-arm's mx.linalg decompositions and mx.random.multivariate_normal against numpy.linalg
(the oracle: LAPACK in float64): unique results element-wise, non-unique factors (U, Vt,
eigenvectors) by their defining identities, Python signatures and return tuples as MLX's.
Tolerance: float32 input rtol = atol = 1e-4; float64 1e-10 (inputs well conditioned)."""
import numpy as np
import pytest

import mlx.core as mx

RNG = np.random.default_rng(3)
TOL = {np.float32: 1e-4, np.float64: 1e-10}
DT = {np.float32: mx.float32, np.float64: mx.float64}


def mat(shape, dt, diag=0.0, spd=False):
    a = RNG.standard_normal(shape)
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    elif diag:
        a = a + diag * np.eye(shape[-1])
    return a.astype(dt)


def arr(a):
    """An mx.array keeping a's float dtype (MLX turns float64 numpy input into float32)."""
    return mx.array(a, dtype=DT[a.dtype.type])


def close(got, want, dt):
    np.testing.assert_allclose(np.array(got), want, rtol=TOL[dt], atol=TOL[dt])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_inverse_family(dt):
    a = mat((2, 4, 4), dt, diag=4)
    x = mx.linalg.inv(arr(a))
    assert x.dtype == DT[dt]
    close(x, np.linalg.inv(a.astype(np.float64)), dt)
    for upper in (False, True):
        t = np.triu(a) if upper else np.tril(a)
        close(mx.linalg.tri_inv(arr(a), upper=upper), np.linalg.inv(t.astype(np.float64)), dt)
    spd = mat((3, 3), dt, spd=True)
    lo = mx.linalg.cholesky(arr(spd))
    close(lo, np.linalg.cholesky(spd.astype(np.float64)), dt)
    close(mx.linalg.cholesky(arr(spd), upper=True), np.linalg.cholesky(spd.astype(np.float64)).T, dt)
    close(mx.linalg.cholesky_inv(lo), np.linalg.inv(spd.astype(np.float64)), dt)
    b = mat((2, 4, 3), dt)
    close(mx.linalg.solve(arr(a), arr(b)), np.linalg.solve(a.astype(np.float64), b), dt)
    close(mx.linalg.solve_triangular(arr(np.tril(a)), arr(b), upper=False),
          np.linalg.solve(np.tril(a).astype(np.float64), b), dt)


def test_singular_inverse_raises_runtime_error():
    with pytest.raises(RuntimeError, match="LU factorization failed with error code 2"):
        mx.eval(mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]])))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_qr_lu_svd_pinv(shape):
    a = mat(shape, np.float32)
    q, r = mx.linalg.qr(arr(a))
    nq, nr = np.linalg.qr(a.astype(np.float64))
    close(q, nq, np.float32)  # LAPACK's sign convention makes Q, R unique
    close(r, nr, np.float32)
    p, l, u = mx.linalg.lu(arr(a))
    assert p.dtype == mx.uint32
    close(np.take_along_axis(np.array(l), np.array(p)[..., None].astype(np.int64), axis=-2) @ np.array(u), a, np.float32)
    U, S, Vt = mx.linalg.svd(arr(a))
    close(S, np.linalg.svd(a.astype(np.float64), compute_uv=False), np.float32)
    k = min(shape[-2:])
    close(np.array(U)[..., :k] * np.array(S)[..., None, :] @ np.array(Vt)[..., :k, :], a, np.float32)
    close(np.swapaxes(np.array(U), -1, -2) @ np.array(U), np.broadcast_to(np.eye(shape[-2]), U.shape), np.float32)
    close(mx.linalg.pinv(arr(a)), np.linalg.pinv(a.astype(np.float64)), np.float32)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo):
    a = mat((2, 5, 5), np.float64)
    w, v = mx.linalg.eigh(arr(a), UPLO=uplo)
    nw = np.linalg.eigvalsh(a, UPLO=uplo)
    close(w, nw, np.float64)
    close(mx.linalg.eigvalsh(arr(a), uplo), nw, np.float64)
    sym = np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2) if uplo == "U" else np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    close(sym @ np.array(v), np.array(v) * np.array(w)[..., None, :], np.float64)


def test_eig_general():
    a = mat((3, 6, 6), np.float32)
    w, v = mx.linalg.eig(arr(a))
    assert w.dtype == mx.complex64 and v.dtype == mx.complex64
    key = lambda z: np.sort_complex(np.round(z, 4))
    for i in range(3):
        np.testing.assert_allclose(key(np.array(w[i])), key(np.linalg.eigvals(a[i].astype(np.float64))), atol=1e-3)
        np.testing.assert_allclose(a[i] @ np.array(v[i]), np.array(v[i]) * np.array(w[i])[None, :], atol=1e-4)
        np.testing.assert_allclose(np.linalg.norm(np.array(v[i]), axis=0), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.array(mx.linalg.eigvals(arr(a))), np.array(w), atol=1e-5)


def test_det_slogdet():
    a = mat((3, 5, 5), np.float32)
    close(mx.linalg.det(arr(a)), np.linalg.det(a.astype(np.float64)), np.float32)
    s, l = mx.linalg.slogdet(arr(a))
    ns, nl = np.linalg.slogdet(a.astype(np.float64))
    close(s, ns, np.float32)
    close(l, nl, np.float32)


def test_errors_match_mlx():
    with pytest.raises(ValueError, match=r"\[linalg::qr\] Arrays must have type float32 or float64"):
        mx.linalg.qr(mx.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="Only defined for square matrices"):
        mx.linalg.eig(mx.ones((2, 3)))
    with pytest.raises(ValueError, match="must match second to last dimension"):
        mx.linalg.solve(mx.eye(3), mx.ones((2,)))
    with pytest.raises(ValueError, match="dtype must be float32"):
        mx.random.multivariate_normal(mx.zeros(2), mx.eye(2), dtype=mx.float64)
    with pytest.raises(ValueError, match="compatible shapes"):
        mx.random.multivariate_normal(mx.zeros(3), mx.eye(2))


def test_multivariate_normal_statistics():
    mean = np.array([1.0, -2.0, 0.5], np.float32)
    cov = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 0.5]], np.float32)
    x = mx.random.multivariate_normal(arr(mean), arr(cov), shape=(20000,), key=mx.random.key(5))
    assert x.shape == (20000, 3) and x.dtype == mx.float32
    x = np.array(x, dtype=np.float64)
    np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    # Batched mean and covariance broadcast with `shape`, as MLX.
    y = mx.random.multivariate_normal(mx.zeros((4, 1, 3)), mx.array(np.stack([cov] * 2)), shape=(4, 2))
    assert y.shape == (4, 2, 3)
