"""The stft/istft cases: shared by gen_stft.py (run under real MLX) and test_stft.py (ours).
Each case is (name, function, input spec, keyword arguments); arrays are made from a seeded
numpy generator so both sides see the same values."""
import numpy as np


def signal(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if dtype == "complex64":
        x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    elif dtype == "int32":
        x = rng.integers(-5, 6, shape).astype(np.int32)
    elif dtype == "float16":
        x = x.astype(np.float16)
    return x


def hann(n):
    return np.hanning(n).astype(np.float32)


# name -> (function, (shape, dtype, seed), kwargs); a kwarg value ("hann", n) is a window array.
STFT = {
    "default_16": ((50,), "float32", 1, {"n_fft": 16}),
    "batched_hop5": ((2, 3, 50), "float32", 2, {"n_fft": 16, "hop_length": 5}),
    "hann_win10": ((2, 50), "float32", 3, {"n_fft": 16, "win_length": 10, "window": ("hann", 10)}),
    "odd_no_center": ((2, 50), "float32", 4, {"n_fft": 15, "center": False}),
    "constant_pad": ((40,), "float32", 5, {"n_fft": 16, "pad_mode": "constant"}),
    "edge_ortho": ((40,), "float32", 6, {"n_fft": 16, "pad_mode": "edge", "norm": "ortho"}),
    "twosided_forward": ((40,), "float32", 7, {"n_fft": 16, "onesided": False, "norm": "forward"}),
    "complex_twosided": ((2, 30), "complex64", 8, {"n_fft": 8}),
    "complex_onesided": ((30,), "complex64", 9, {"n_fft": 8, "onesided": True}),
    "int_input": ((30,), "int32", 10, {"n_fft": 8, "hop_length": 3}),
    "reflect_long_pad": ((10,), "float32", 11, {"n_fft": 32}),
    "short_window": ((20,), "float32", 12, {"n_fft": 4, "window": ("hann", 3)}),
}

# istft of the stft of a signal: (signal spec, stft kwargs, istft kwargs)
ISTFT = {
    "default": (((2, 50), "float32", 20), {"n_fft": 16}, {}),
    "hann_hop5": (((2, 50), "float32", 21), {"n_fft": 16, "hop_length": 5, "window": ("hann", 16)},
                  {"hop_length": 5, "window": ("hann", 16)}),
    "length_trim": (((50,), "float32", 22), {"n_fft": 16, "window": ("hann", 16)}, {"window": ("hann", 16), "length": 50}),
    "length_pad": (((50,), "float32", 23), {"n_fft": 16, "window": ("hann", 16)}, {"window": ("hann", 16), "length": 70}),
    "no_center": (((50,), "float32", 24), {"n_fft": 16, "window": ("hann", 16), "center": False},
                  {"window": ("hann", 16), "center": False}),
    "odd_nfft": (((50,), "float32", 25), {"n_fft": 15, "window": ("hann", 15)}, {"n_fft": 15, "window": ("hann", 15)}),
    "twosided_ortho": (((50,), "float32", 26), {"n_fft": 16, "norm": "ortho", "onesided": False},
                       {"norm": "ortho", "onesided": False}),
    "short_window": (((3, 40), "float32", 27), {"n_fft": 16, "win_length": 10, "window": ("hann", 10)},
                     {"win_length": 10, "window": ("hann", 10)}),
}

# (name, function, signal spec or None for a 0-d input, kwargs): MLX raises ValueError
ERRORS = {
    "scalar": ("stft", None, {"n_fft": 4}),
    "too_short": ("stft", ((10,), "float32", 30), {"n_fft": 16, "center": False}),
    "bad_norm": ("stft", ((10,), "float32", 31), {"n_fft": 4, "norm": "bad"}),
    "zero_hop": ("stft", ((10,), "float32", 32), {"n_fft": 4, "hop_length": 0}),
    "zero_nfft": ("stft", ((10,), "float32", 33), {"n_fft": 0}),
    "long_window": ("stft", ((10,), "float32", 34), {"n_fft": 4, "win_length": 8}),
    "bad_pad_mode": ("stft", ((10,), "float32", 35), {"n_fft": 4, "pad_mode": "wrap"}),
    "istft_1d": ("istft", ((10,), "complex64", 36), {}),
    "istft_zero_hop": ("istft", ((3, 5), "complex64", 37), {"n_fft": 4, "hop_length": 0}),
}


def window_kwargs(kw, to_array):
    return {k: (to_array(hann(v[1])) if isinstance(v, tuple) else v) for k, v in kw.items()}
