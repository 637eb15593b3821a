"""mx.fft against numpy.fft (the oracle, computed here in complex128 on the same float32
input): every function with MLX 0.32's signatures and defaults, n/s cropping and padding, axes,
norm, dtypes, and the exception types and messages real MLX raises."""
import numpy as np
import pytest

import mlx.core as mx

rng = np.random.default_rng(3)


def cplx(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def real(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(got, want, dtype=None):
    got_np = np.array(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape
    if dtype is not None:
        assert got.dtype == dtype
    scale = max(np.abs(want).max(initial=0.0), 1.0)
    assert np.abs(got_np - want).max(initial=0.0) <= 2e-6 * scale, (got_np, want)


@pytest.mark.parametrize("op", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("n", [None, 1, 7, 16, 31])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_1d(op, n, norm):
    x = real(3, 10) if op == "rfft" else cplx(3, 10)
    want = getattr(np.fft, op)(x.astype(np.complex128 if x.dtype == np.complex64 else np.float64), n=n, norm=norm)
    got = getattr(mx.fft, op)(mx.array(x), n=n, norm=norm)
    check(got, want, mx.float32 if op == "irfft" else mx.complex64)


@pytest.mark.parametrize("op", ["fft", "ifft", "rfft", "irfft"])
def test_1d_axis_positional(op):
    x = real(6, 5) if op == "rfft" else cplx(6, 5)
    want = getattr(np.fft, op)(x.astype(np.complex128 if x.dtype == np.complex64 else np.float64), 9, 0)
    check(getattr(mx.fft, op)(mx.array(x), 9, 0), want)


@pytest.mark.parametrize("op", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"])
def test_nd(op):
    x = real(4, 6, 5) if op.startswith("rfft") else cplx(4, 6, 5)
    x64 = x.astype(np.float64 if x.dtype == np.float32 else np.complex128)
    f, g = getattr(mx.fft, op), getattr(np.fft, op)
    check(f(mx.array(x)), g(x64))
    check(f(mx.array(x), s=[3, 8], axes=[0, 2]), g(x64, s=[3, 8], axes=[0, 2]))
    check(f(mx.array(x), axes=[2, 1], norm="ortho"), g(x64, axes=[2, 1], norm="ortho"))
    check(f(mx.array(x), None, [1, 0], "forward"), g(x64, None, [1, 0], "forward"))


def test_long_and_prime_lengths():
    for n in [1, 1009, 65536, 65537]:
        x = cplx(n)
        want = np.fft.fft(x.astype(np.complex128))
        got = np.array(mx.fft.fft(mx.array(x)))
        assert np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30) < 1e-6, n


def test_dtypes():
    check(mx.fft.fft(mx.array(np.arange(6, dtype=np.int32))), np.fft.fft(np.arange(6)), mx.complex64)
    check(mx.fft.fft(mx.array(np.arange(5.0))), np.fft.fft(np.arange(5.0)), mx.complex64)
    z = cplx(6)
    check(mx.fft.rfft(mx.array(z)), np.fft.rfft(z.real.astype(np.float64)), mx.complex64)


def test_shift_and_freq():
    x = real(5, 6)
    check(mx.fft.fftshift(mx.array(x)), np.fft.fftshift(x))
    check(mx.fft.ifftshift(mx.array(x)), np.fft.ifftshift(x))
    check(mx.fft.fftshift(mx.array(x), axes=1), np.fft.fftshift(x, axes=1))
    check(mx.fft.ifftshift(mx.array(x), [0]), np.fft.ifftshift(x, [0]))
    for n, d in [(1, 1.0), (8, 0.5), (9, -2.0)]:
        check(mx.fft.fftfreq(n, d), np.fft.fftfreq(n, d), mx.float32)
        check(mx.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), mx.float32)


def test_errors():
    x = mx.array(cplx(4, 6))
    with pytest.raises(ValueError, match=r"\[fftn\] Invalid FFT output size requested \(0\)"):
        mx.fft.fft(x, 0)
    with pytest.raises(ValueError, match=r"\[ifft\] Invalid norm"):
        mx.fft.ifft(x, norm="none")
    with pytest.raises(ValueError, match=r"\[fftn\] Duplicated axis received \(0,0\)"):
        mx.fft.fftn(x, axes=[0, 0])
    with pytest.raises(ValueError, match=r"\[fft2\] `axes` should not be `None`"):
        mx.fft.fft2(x, s=[2, 2], axes=None)
    with pytest.raises(ValueError, match=r"Shape and axes have different sizes"):
        mx.fft.fftn(x, s=[2, 2, 2], axes=[0, 1])
    with pytest.raises(IndexError):
        mx.fft.fft(x, axis=2)
    with pytest.raises(IndexError):
        mx.fft.fftn(x, s=[2, 2], axes=[0, 3])
    with pytest.raises(IndexError, match=r"\[fftshift\] Invalid axis 3"):
        mx.fft.fftshift(x, axes=[3])
    with pytest.raises(ValueError, match=r"\[fftfreq\] `n` must be greater than 0"):
        mx.fft.fftfreq(0)
    with pytest.raises(ValueError, match=r"\[rfftfreq\] `d` must be non-zero"):
        mx.fft.rfftfreq(4, 0.0)
    with pytest.raises(ValueError, match=r"\[fftn\] Invalid FFT output size requested \(0\)"):
        mx.fft.irfft(mx.array(cplx(3, 1)))
