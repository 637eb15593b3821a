"""more-ops area through Python: complex64 mx.linalg.svd against numpy.linalg.svd (complex128;
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


# --- unique: against numpy.unique, with MLX 0.32's static size / fill_value / padding -----
@pytest.mark.parametrize("size", [0, 2, 5, 9])
def test_unique_matches_numpy(size):
    a = RNG.integers(-3, 3, (3, 4)).astype(np.int32)
    v, i, inv, c = mx.unique(mx.array(a), size, True, True, True)
    nv, ni, ninv, nc = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    g = len(nv)
    k = min(size, g)
    assert v.shape == (size,) and v.dtype == mx.int32 and i.dtype == mx.uint32 and c.dtype == mx.int32
    assert inv.shape == a.shape and inv.dtype == mx.uint32
    np.testing.assert_array_equal(np.array(v)[:k], nv[:k])
    np.testing.assert_array_equal(np.array(i)[:k], ni[:k])
    np.testing.assert_array_equal(np.array(c)[:k], nc[:k])
    # Padding: the first unique value, its index, count 0; inverse clamped to size - 1.
    np.testing.assert_array_equal(np.array(v)[k:], nv[0])
    np.testing.assert_array_equal(np.array(i)[k:], ni[0])
    np.testing.assert_array_equal(np.array(c)[k:], 0)
    np.testing.assert_array_equal(np.array(inv), np.clip(ninv.reshape(a.shape), 0, max(size - 1, 0)))


def test_unique_fill_value_and_errors():
    a = mx.array([2, 1, 2, 3, 1])
    assert mx.unique(a, 3).tolist() == [1, 2, 3]
    assert mx.unique(a, 5).tolist() == [1, 2, 3, 1, 1]
    v, i, inv, c = mx.unique(a, 4, True, True, True, fill_value=0)  # MLX's docstring example
    assert (v.tolist(), i.tolist(), inv.tolist(), c.tolist()) == ([1, 2, 3, 0], [1, 0, 3, 1], [1, 0, 1, 2, 0], [2, 2, 1, 0])
    assert mx.unique(a, 5, fill_value=mx.array(9.5)).tolist() == [1, 2, 3, 9, 9]
    with pytest.raises(ValueError, match="negative size"):
        mx.unique(a, -1)
    with pytest.raises(ValueError, match="one element"):
        mx.unique(a, 4, fill_value=mx.array([1, 2]))
    with pytest.raises(ValueError, match="fill value is required"):
        mx.unique(mx.array([], dtype=mx.int32), 2)


# --- fast.cross_entropy: against numpy (logsumexp - picked logit), float32 result -----------
def test_cross_entropy_matches_numpy():
    logits = RNG.standard_normal((2, 3, 11)).astype(np.float32) * 4
    t = RNG.integers(0, 11, (2, 3))
    want = np.log(np.exp(logits.astype(np.float64)).sum(-1)) - np.take_along_axis(logits, t[..., None], -1)[..., 0]
    for dt, tol in [(mx.float32, 1e-5), (mx.float16, 1e-2)]:
        got = mx.fast.cross_entropy(mx.array(logits).astype(dt), mx.array(t.astype(np.int32)))
        assert got.dtype == mx.float32 and got.shape == (2, 3)
        np.testing.assert_allclose(np.array(got), want, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="integer class indices"):
        mx.fast.cross_entropy(mx.array(logits), mx.array(t.astype(np.float32)))
    with pytest.raises(ValueError, match="does not match logits shape"):
        mx.fast.cross_entropy(mx.array(logits), mx.array([1]))


# --- segmented_mm / block_masked_mm: against numpy ------------------------------------------
def test_segmented_mm_matches_numpy():
    a = RNG.standard_normal((4, 9)).astype(np.float32)
    b = RNG.standard_normal((9, 3)).astype(np.float32)
    segs = np.array([[0, 4], [4, 9], [3, 3], [7, 2]], np.int32)
    got = mx.segmented_mm(mx.array(a), mx.array(b), mx.array(segs))
    want = np.stack([a[:, s:e] @ b[s:e] if e > s else np.zeros((4, 3)) for s, e in segs])
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Segments must be integral"):
        mx.segmented_mm(mx.array(a), mx.array(b), mx.array(segs.astype(np.float32)))


def test_block_masked_mm_matches_numpy():
    bs = 32
    a = RNG.standard_normal((2, 40, 50)).astype(np.float32)
    b = RNG.standard_normal((50, 70)).astype(np.float32)
    mo = RNG.random((2, 2, 3)) > 0.5
    ml = RNG.random((2, 2, 2)) > 0.5
    mr = RNG.random((2, 3)).astype(np.float32)
    got = mx.block_masked_mm(mx.array(a), mx.array(b), bs, mx.array(mo), mx.array(ml), mx.array(mr))
    up = lambda m, r, c: np.repeat(np.repeat(m, bs, -2), bs, -1)[..., :r, :c]
    am = a * up(ml, 40, 50)
    bm = b * up(mr, 50, 70)
    want = (am @ bm) * up(mo, 40, 70)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="block_sizes 32, 64"):
        mx.block_masked_mm(mx.array(a), mx.array(b), 16, mx.array(mo))


# --- get_array_buffer_size / device_info -----------------------------------------------------
def test_get_array_buffer_size():
    a = mx.arange(10)
    c = mx.arange(1000).astype(mx.float16)  # dense (mx.ones here is a broadcast view of one element)
    mx.eval(a, c)
    view = a[2:]
    mx.eval(view)
    assert mx.get_array_buffer_size(a) == 40
    assert mx.get_array_buffer_size(a, view) == 40  # one buffer, counted once
    assert mx.get_array_buffer_size(a, {"x": [view, c]}, 3, "s") == 2040  # non-array leaves ignored
    assert mx.get_array_buffer_size() == 0
    with pytest.raises(ValueError, match="must be evaluated"):
        mx.get_array_buffer_size(mx.zeros((3,)) + 1)


def test_device_info_cpu_keys():
    import platform

    info = mx.device_info(mx.cpu)
    assert set(info) == {"architecture", "device_name"}
    assert info["architecture"] == platform.machine()
    assert mx.device_info(mx.Device(mx.cpu)) == info
    with pytest.raises(TypeError):
        mx.device_info("cpu")


def test_buffer_size_of_full_is_dense_as_mlx():
    # Real MLX 0.32.4: 32 bytes (ones(4) float32 = 16, zeros((2, 2)) = 16).
    a = [mx.ones(4), {"a": mx.zeros((2, 2))}, "not an array"]
    mx.eval(a)
    assert mx.get_array_buffer_size(a) == 32
