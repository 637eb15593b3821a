"""``mx.fft.stft`` / ``mx.fft.istft``: the short-time Fourier transform and its inverse, built
from ``pad``, ``take``, the one-dimensional FFTs and a scatter-add, as MLX 0.32 defines them:

- the window (rectangular by default, ``win_length`` long) is centred in ``n_fft`` samples;
- ``center`` pads ``n_fft // 2`` samples at both ends of the last axis with ``pad_mode``;
- frames start every ``hop_length`` (default ``n_fft // 4``) samples; the result is complex64
  with shape ``(..., n_freq, n_frames)``, one-sided (``n_fft // 2 + 1`` frequencies) by default
  for real input;
- the inverse overlap-adds the windowed inverse transforms and divides by the overlap-added
  squared window where that is non-zero, then undoes the centring and trims or zero-pads to
  ``length``.

Checked against real MLX 0.32.4's results (tests/python/golden/fft/stft.json)."""

_NORMS = ("backward", "ortho", "forward")


def _common(mx, op, n_fft, hop_length, win_length, window, norm):
    if not isinstance(norm, str) or norm not in _NORMS:
        raise ValueError(f"[{op}] Invalid norm. Expected one of {{'backward', 'ortho', 'forward'}}.")
    if n_fft <= 0:
        raise ValueError(f"[{op}] n_fft must be positive.")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise ValueError(f"[{op}] hop_length must be positive.")
    if window is None:
        window = mx.ones((n_fft if win_length is None else win_length,), dtype=mx.float32)
    elif window.ndim != 1:
        raise ValueError(f"[{op}] window must be a one-dimensional array.")
    w = window.shape[0]
    if w > n_fft:
        raise ValueError(f"[{op}] window length must not exceed n_fft.")
    left = (n_fft - w) // 2
    if w < n_fft:
        window = mx.pad(window, [(left, n_fft - w - left)])
    return hop, window


def _frame_index(mx, n_frames, n_fft, hop):
    """(n_frames, n_fft) sample positions of every frame."""
    return mx.add(mx.multiply(mx.arange(n_frames)[:, None], hop), mx.arange(n_fft)[None, :])


def _defs(mx):
    def stft(x, n_fft=2048, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
             norm="backward", onesided=None, stream=None):
        x = mx.asarray(x)
        if x.ndim < 1:
            raise ValueError("[stft] Input must have at least one dimension.")
        hop, win = _common(mx, "stft", n_fft, hop_length, win_length, window, norm)
        is_complex = x.dtype == mx.complex64
        if not is_complex and not mx.issubdtype(x.dtype, mx.floating):
            x = x.astype(mx.float32)
        if center:
            p = n_fft // 2
            x = mx.pad(x, [(0, 0)] * (x.ndim - 1) + [(p, p)], mode=pad_mode, stream=stream)
        if x.shape[-1] < n_fft:
            raise ValueError("[stft] Input is too short for the given n_fft.")
        n_frames = 1 + (x.shape[-1] - n_fft) // hop
        frames = mx.multiply(mx.take(x, _frame_index(mx, n_frames, n_fft, hop), axis=-1, stream=stream), win,
                             stream=stream)
        if onesided is None:
            onesided = not is_complex
        if onesided:
            # As MLX: a one-sided transform of complex frames takes their real part.
            real = mx.real(frames, stream=stream) if is_complex else frames
            spec = mx.fft.rfft(real, axis=-1, norm=norm, stream=stream)
        else:
            spec = mx.fft.fft(frames, axis=-1, norm=norm, stream=stream)
        return mx.swapaxes(spec.astype(mx.complex64), -1, -2, stream=stream)

    def istft(stft_matrix, n_fft=None, hop_length=None, win_length=None, window=None, center=True, norm="backward",
              onesided=None, length=None, stream=None):
        s = mx.asarray(stft_matrix)
        if s.ndim < 2:
            raise ValueError("[istft] Input must have at least two dimensions (freq, frames).")
        if onesided is None:
            onesided = True
        n_freq, n_frames = s.shape[-2], s.shape[-1]
        if n_fft is None:
            n_fft = 2 * (n_freq - 1) if onesided else n_freq
        hop, win = _common(mx, "istft", n_fft, hop_length, win_length, window, norm)
        if n_frames == 0:
            raise ValueError("[istft] Input has no frames.")
        spec = mx.swapaxes(s.astype(mx.complex64), -1, -2, stream=stream)
        if onesided:
            frames = mx.fft.irfft(spec, n=n_fft, axis=-1, norm=norm, stream=stream)
        else:
            frames = mx.real(mx.fft.ifft(spec, n=n_fft, axis=-1, norm=norm, stream=stream))
        win = win.astype(mx.float32)
        frames = mx.multiply(frames, win, stream=stream)
        total = n_fft + hop * (n_frames - 1)
        idx = mx.reshape(_frame_index(mx, n_frames, n_fft, hop), (-1,))
        lead = frames.shape[:-2]
        flat = mx.reshape(frames, (-1, n_frames * n_fft))
        out = mx.zeros((flat.shape[0], total), dtype=mx.float32).at[:, idx].add(flat)
        env = mx.zeros((total,), dtype=mx.float32).at[idx].add(mx.tile(mx.square(win), (n_frames,)))
        out = mx.divide(out, mx.where(env > 1e-11, env, 1.0), stream=stream)
        out = mx.reshape(out, lead + (total,))
        if center:
            p = n_fft // 2
            out = out[..., p:] if length is not None else out[..., p: total - p]
        if length is not None:
            have = out.shape[-1]
            if have >= length:
                out = out[..., :length]
            else:
                out = mx.pad(out, [(0, 0)] * (out.ndim - 1) + [(0, length - have)])
        return out

    return {"stft": stft, "istft": istft}


def install(fft_module, mx):
    """Adds stft/istft to ``mx.fft`` (they need only ops that are always there)."""
    for name, f in _defs(mx).items():
        f.__module__ = "mlx.core.fft"
        setattr(fft_module, name, f)
