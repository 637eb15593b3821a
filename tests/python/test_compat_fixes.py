"""Python-level behaviours fixed to match real MLX 0.32 (docs/COMPAT.md, branch `fixes`):
numpy is the oracle for values; the dtypes and exception types are the ones real MLX gives
(checked against the oracle venv when the fix was made; core/tests/data/compat/gen_compat.py
holds the value goldens for the core side)."""
import numpy as np
import pytest

import mlx.core as mx


def test_clip_weak_scalar_bounds():
    a = mx.array([1, 2, 3], mx.int16)
    assert mx.clip(a, 0, 5).dtype == mx.int16
    assert mx.clip(a, 0.0, 5).dtype == mx.float32
    assert mx.clip(a.astype(mx.float16), 0.0, 5).dtype == mx.float16
    x = np.array([2, 3, 4, 5], np.int32)
    mins = np.array([3, 1, 5, 5])
    assert np.array_equal(mx.clip(mx.array(x), mx.array(mins), 4), np.clip(x, mins, 4))
    with pytest.raises(ValueError):
        mx.clip(a, None, None)


def test_trace_dtype_none_keeps_input_dtype():
    a = np.arange(9, dtype=np.int64).reshape(3, 3)
    r = mx.trace(mx.array(a), dtype=None)
    assert r.dtype == mx.int64 and r.item() == np.trace(a)
    assert mx.trace(mx.array(a), offset=1, dtype=mx.float32).item() == np.trace(a, offset=1)


@pytest.mark.parametrize("shift,axis", [((1, 1, 1), None), ((1, 2), 0), (3, (0, 1)), ((-1, 2), (1, 0)), (2, None)])
def test_roll_matches_numpy(shift, axis):
    x = np.arange(10).reshape(2, 5)
    got = mx.roll(mx.array(x), shift, axis) if axis is not None else mx.roll(mx.array(x), shift)
    assert np.array_equal(np.array(got), np.roll(x, shift, axis))


def test_dynamic_slice_and_update():
    x = np.arange(64).reshape(4, 4, 4)
    out = mx.slice(mx.array(x), mx.array([1, 2, 3]), (0, 1, 2), (3, 2, 1))
    assert np.array_equal(np.array(out), x[1:, 2:, 3:])
    up = np.arange(6).reshape(3, 2, 1)
    out = mx.slice_update(mx.zeros((4, 4, 4), mx.int32), mx.array(up, mx.int32), mx.array([1, 2, 3]), (0, 1, 2))
    want = np.zeros((4, 4, 4), np.int32)
    want[1:, 2:, 3:] = up
    assert np.array_equal(np.array(out), want)


def test_too_many_indices_in_assignment_is_value_error():
    a = mx.zeros((2, 2))
    with pytest.raises(ValueError):
        a[0, 0, 0] = 1


def test_numpy_view_keeps_broadcast_strides():
    b = mx.broadcast_to(mx.arange(4, dtype=mx.float32).reshape(2, 2), (5, 2, 2))
    v = np.array(b, copy=False)
    assert v.strides == (0, 8, 4)  # MLX's strides for this view
    assert v.flags.writeable  # writable, as real MLX gives it
    assert np.array_equal(v, np.broadcast_to(np.arange(4, dtype=np.float32).reshape(2, 2), (5, 2, 2)))
    t = mx.arange(6, dtype=mx.float32).reshape(2, 3).T
    assert np.array_equal(np.asarray(t), np.arange(6, dtype=np.float32).reshape(2, 3).T)
    assert np.array(t).flags.owndata


def test_complex_normal_and_array_bounds():
    z = mx.random.normal((2, 3), dtype=mx.complex64, loc=3.0 + 1j, scale=2.0, key=mx.random.key(0))
    assert z.dtype == mx.complex64 and z.shape == (2, 3)
    lo = mx.reshape(mx.array([0] * 3), [3, 1])
    hi = mx.reshape(mx.array([12, 13, 14, 15]), [1, 4])
    r = np.array(mx.random.randint(lo, hi, (3, 4), key=mx.random.key(1)))
    assert r.shape == (3, 4) and (r >= 0).all() and (r < np.array([[12, 13, 14, 15]])).all()
    t = mx.random.truncated_normal(mx.array([]), mx.array([]))
    assert t.size == 0 and t.dtype == mx.float32


def test_gather_mm_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 2, 4)).astype(np.float32)
    b = rng.standard_normal((4, 4, 5)).astype(np.float32)
    li, ri = np.array([2, 0], np.uint32), np.array([1, 3], np.uint32)
    got = mx.gather_mm(mx.array(a), mx.array(b), mx.array(li), mx.array(ri))
    assert np.allclose(np.array(got), a[li] @ b[ri], atol=1e-5)


def test_qqmm_cpu_cases():
    rng = np.random.default_rng(1)
    x = mx.array(rng.standard_normal((1, 64)).astype(np.float32))
    w = mx.array(rng.standard_normal((16, 64)).astype(np.float32))
    for mode in ("nvfp4", "mxfp8"):
        wq, s = mx.quantize(w, mode=mode)
        x_hat = np.array(mx.dequantize(*mx.quantize(x, mode=mode), mode=mode, dtype=mx.float32))
        w_hat = np.array(mx.dequantize(wq, s, mode=mode, dtype=mx.float32))
        y = mx.qqmm(x, wq, s, mode=mode)
        assert np.abs(np.array(y) - x_hat @ w_hat.T).max() < 1e-3


def test_put_along_axis_none_keeps_shape():
    a = np.arange(16).reshape(2, 2, 4).astype(np.int32)
    idx = np.random.default_rng(2).permutation(16)
    vals = np.arange(100, 116)
    out = mx.put_along_axis(mx.array(a), mx.array(idx), mx.array(vals), axis=None)
    np.put_along_axis(a, idx, vals, axis=None)
    assert out.shape == (2, 2, 4) and np.array_equal(np.array(out), a)
    e = mx.array([], mx.float32)
    assert mx.put_along_axis(e, e, e, axis=None).shape == (0,)


@pytest.mark.parametrize("dims", [31, 32, 33, 256, 4099])
def test_fast_norms_round_as_their_definitions(dims):
    """Real MLX's CPU computes fast.rms_norm/layer_norm as their composite definitions (MLX's
    test_fast ones): the difference is exactly 0 there, and must be here too."""
    mx.random.seed(dims)
    x, w, b = (mx.random.uniform(shape=s) for s in ((3, dims), (dims,), (dims,)))
    rms = x * mx.rsqrt(x.square().mean(-1, keepdims=True) + 1e-5)
    assert mx.array_equal(mx.fast.rms_norm(x, w, 1e-5), w * rms)
    assert mx.array_equal(mx.fast.rms_norm(x, None, 1e-5), rms)
    ln = (x - x.mean(-1, keepdims=True)) * mx.rsqrt(x.var(-1, keepdims=True) + 1e-5)
    assert mx.array_equal(mx.fast.layer_norm(x, w, b, 1e-5), w * ln + b)
    assert mx.array_equal(mx.fast.layer_norm(x, None, None, 1e-5), ln)


def test_float64_keeps_python_float_precision():
    # Real MLX 0.32.4 (its test_double): every digit of a Python float survives in float64.
    import math

    for v in (0.37, 0.1, math.pi):
        assert mx.full((3,), v, dtype=mx.float64).tolist() == [v] * 3
        assert mx.full_like(mx.zeros((2,), mx.float64), v).tolist() == [v] * 2
    assert mx.linspace(0, math.pi, 5, dtype=mx.float64).tolist() == [
        0.0, 0.7853981633974483, 1.5707963267948966, 2.356194490192345, 3.141592653589793]
    x = mx.array([1.5, 2.5])
    assert x.astype(mx.float64, mx.cpu).dtype == mx.float64  # the method takes the stream positionally


def test_async_eval_error_surfaces_at_synchronize():
    a = mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]]), stream=mx.cpu)
    mx.async_eval(a)  # MLX raises nothing here ...
    with pytest.raises(RuntimeError):
        mx.synchronize(mx.cpu)  # ... but here
    mx.synchronize(mx.cpu)  # once


def test_reset_peak_memory_is_zero_and_gpu_stream_is_value_error():
    mx.clear_cache()
    mx.reset_peak_memory()
    assert mx.get_peak_memory() == 0  # as real MLX 0.32.4 reports
    with pytest.raises(ValueError):
        mx.default_stream(mx.gpu)
    with pytest.raises(ValueError):
        mx.set_default_device(mx.gpu)


def test_sdpa_attention_sinks_match_real_mlx():
    # Real MLX 0.32.4, first 12 outputs (gqa: 4 query heads over 2 kv heads), causal and unmasked.
    ks = mx.random.split(mx.random.key(11), 4)
    q = mx.random.normal((1, 4, 3, 8), key=ks[0])
    k = mx.random.normal((1, 2, 5, 8), key=ks[1])
    v = mx.random.normal((1, 2, 5, 8), key=ks[2])
    sinks = mx.array([0.5, -1.0, 2.0, 0.0])
    want_causal = [-0.875233, 0.004279, -0.561288, 0.781077, 0.413886, 0.622694, -1.421343, 1.554814,
                   -0.29962, 0.886845, 0.037035, 0.713763]
    want_none = [-0.775529, 0.183522, -0.505636, 0.764698, 0.398607, 0.446058, -1.250559, 1.249198,
                 -0.309713, 0.741535, -0.035065, 0.759926]
    for mask, want in (("causal", want_causal), (None, want_none)):
        o = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.35, mask=mask, sinks=sinks)
        assert o.shape == (1, 4, 3, 8)
        assert np.allclose(np.array(o).reshape(-1)[:12], want, atol=2e-6)
    with pytest.raises(ValueError, match="Received invalid shape for sinks"):
        mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0, sinks=mx.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="Type of sinks must promote to output type float16"):
        h = q.astype(mx.float16)
        mx.fast.scaled_dot_product_attention(h, k.astype(mx.float16), v.astype(mx.float16), scale=1.0, sinks=sinks)


# --- issue 20 (branch difftest): values and classes checked against real MLX 0.32.4 ------------------


def test_64bit_arrays_take_negative_python_ints_as_int64_bits():
    u = mx.array([4], mx.uint64)
    assert (u | -1).item() == 2**64 - 1 and (u | -1).dtype == mx.uint64
    assert (u / -1).dtype == mx.float32 and np.isclose((u / -1).item(), 4 / (2**64 - 1), rtol=1e-6)
    assert (mx.array([3], mx.int64) + -(2**63)).item() == -(2**63) + 3
    with pytest.raises(ValueError):  # narrower types still check the range
        mx.array([4], mx.uint32) + -1
    with pytest.raises(RuntimeError):  # beyond int64 (MLX: std::bad_cast)
        u + 2**63


def test_roll_keyword_axis_unstack_tuple_cumsum_dtype():
    x = np.arange(6).reshape(3, 2)
    assert np.array_equal(mx.roll(mx.array(x), 2, axis=0), np.roll(x, 2, axis=0))
    parts = mx.unstack(mx.array(x))
    assert isinstance(parts, tuple) and [p.tolist() for p in parts] == x.tolist()
    c = mx.cumsum(mx.array([100, 100], mx.int8), dtype=mx.int32)
    assert c.dtype == mx.int32 and c.tolist() == [100, 200]  # cast first, then summed
    assert mx.cumprod(mx.array([1.5, 2.5]), dtype=mx.int32).tolist() == [1, 2]


def test_bitwise_error_classes():
    f, i = mx.array([1.0]), mx.array([1, 2])
    with pytest.raises(RuntimeError):
        mx.bitwise_and(f, f)
    with pytest.raises(RuntimeError):
        mx.left_shift(i, 1.5)
    with pytest.raises(RuntimeError):  # int16 with uint64 promotes to float32
        mx.array([1], mx.int16) | mx.array([1], mx.uint64)
    for op in (lambda: i & 1.5, lambda: f | i, lambda: i << f, lambda: i ^ 1j):
        with pytest.raises(ValueError, match="Floating point types not allowed"):
            op()
    with pytest.raises(TypeError):  # MLX's array has no reflected bitwise operators
        9 & i
    assert (i & 3).tolist() == [1, 2]


def test_pad_width_forms_as_mlx_takes_them():
    # Quoted from real MLX 0.32.4 (nanobind takes lists and tuples alike for each overload:
    # int, one or two ints, pairs; bools and numpy integers count as ints).
    x = mx.zeros((2, 3))
    for w in ("x", (1.5, 1), [1, 2, 3], [(1,), (2,)], ((1, 2, 3),)):
        with pytest.raises(TypeError):
            mx.pad(x, w)
    for w in ([(1, 2), (3, 4), (0, 0)], (), []):
        with pytest.raises(ValueError, match="Invalid number of padding sizes passed to pad with axes of size 2"):
            mx.pad(x, w)
    assert mx.pad(x, (1, 2)).shape == (5, 6) and mx.pad(x, [1, 2]).shape == (5, 6)
    assert mx.pad(x, [1]).shape == (4, 5) and mx.pad(x, [True]).shape == (4, 5)
    assert mx.pad(x, [[1, 2], [3, 4]]).shape == (5, 10) and mx.pad(x, ([1, 2],)).shape == (5, 6)
    assert mx.pad(x, (np.int64(1),)).shape == (4, 5)


def test_where_condition_takes_no_part_in_promotion():
    r = mx.where(mx.array([1.0, 0.0]), 0, mx.array([1, 2], mx.int64))
    assert r.dtype == mx.int64 and r.tolist() == [0, 2]
    r = mx.where(mx.array([[1, 0]], mx.int32), mx.array([[5, 6]], mx.uint8), 2)
    assert r.dtype == mx.uint8 and r.tolist() == [[5, 2]]


def test_full_dtype_is_a_hint_for_scalars_only():
    assert mx.full([5], mx.array(1.5, mx.bfloat16), dtype=mx.float32).dtype == mx.bfloat16
    assert mx.full([2], 1.5, dtype=mx.int32).dtype == mx.float32
    assert mx.full([1], 3, dtype=mx.bool_).dtype == mx.int32
    assert mx.full([1], 3.5, dtype=mx.complex64).dtype == mx.float32
    assert mx.full([1], True, dtype=mx.uint8).tolist() == [1]
    assert mx.full([1], 3, dtype=mx.float16).dtype == mx.float16
    with pytest.raises(ValueError):
        mx.full([1], 2**40, dtype=mx.int16)


def test_index_into_array_with_size0_axis():
    x = mx.zeros((4, 5, 3, 0), mx.int16)
    r = x[-3, ::-2, mx.array([0, 2]), 0:0:2]
    assert r.shape == (2, 3, 0) and r.dtype == mx.int16
    assert x[1, 1:4, mx.array([0, 2, 1])].shape == (3, 3, 0)
    y = np.arange(24).reshape(2, 3, 4)
    assert mx.array(y)[-1, ::-2, mx.array([0, 3])].tolist() == y[-1, ::-2, [0, 3]].tolist()


def test_complex_sqrt_keeps_small_imaginary_part():
    z = np.array([30005.373 + 0.0638j, -30005.373 + 0.0638j, complex(-4, -0.0), 3 + 4j, 1e-3 - 7j], np.complex64)
    got = np.array(mx.sqrt(mx.array(z)))
    want = np.sqrt(z.astype(np.complex128))
    assert np.allclose(got.real, want.real, rtol=1e-6) and np.allclose(got.imag, want.imag, rtol=1e-5, atol=0)
    assert abs(got[0].imag - 1.8415824e-4) < 1e-9  # real MLX: 0.00018415824160911143
    assert np.signbit(got[2].imag)  # -4-0j lies under the branch cut: -2j


def test_safetensors_null_metadata_and_trailing_bytes(tmp_path):
    # Exactly what real MLX 0.32.4's save_safetensors writes for {"x": arange(3)}, plus 13 bytes.
    header = b'{"__metadata__":null,"x":{"data_offsets":[0,12],"dtype":"I32","shape":[3]}}'
    data = np.arange(3, dtype=np.int32).tobytes()
    p = tmp_path / "t.safetensors"
    p.write_bytes(len(header).to_bytes(8, "little") + header + data + b"\0" * 13)
    got = mx.load(str(p))
    assert list(got) == ["x"] and got["x"].tolist() == [0, 1, 2]


def test_new_stream_belongs_to_its_thread():
    import threading

    s = mx.new_stream(mx.cpu)
    u = mx.new_thread_unsafe_stream(mx.cpu)
    out = {}

    def worker():
        try:
            mx.add(mx.array(1), 2, stream=s)
            out["s"] = "ran"
        except RuntimeError as e:
            out["s"] = str(e)
        out["u"] = mx.add(mx.array(1), 2, stream=u).item()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert "in current thread" in out["s"] and out["u"] == 3
    assert mx.add(mx.array(1), 2, stream=s).item() == 3


def test_evaluating_another_threads_stream_raises_as_mlx():
    """Real MLX 0.32.4 (checked with the oracle venv): a lazy array recorded on a stream of
    ``mx.new_stream`` cannot be evaluated on another thread — ``item``, ``mx.eval`` and a
    dependent array all raise RuntimeError naming the stream; an evaluated one reads fine, and
    the owning thread still evaluates it afterwards."""
    import threading

    s = mx.new_stream(mx.cpu)
    lazy = mx.add(mx.array(1), 2, stream=s)
    done = mx.add(mx.array(5), 2, stream=s)
    mx.eval(done)
    u = mx.new_thread_unsafe_stream(mx.cpu)
    free = mx.add(mx.array(1), 4, stream=u)
    out = {}

    def attempt(name, fn):
        try:
            out[name] = fn()
        except RuntimeError as e:
            out[name] = str(e)

    def worker():
        attempt("item", lambda: lazy.item())
        attempt("eval", lambda: mx.eval(lazy))
        attempt("dependent", lambda: (lazy + 1).item())
        attempt("numpy", lambda: int(np.array(lazy)))
        attempt("evaluated", lambda: (done + 1).item())
        attempt("unsafe_stream", lambda: free.item())

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    want = f"There is no Stream(cpu, {s.index}) in current thread."
    assert out == {"item": want, "eval": want, "dependent": want, "numpy": want, "evaluated": 8,
                   "unsafe_stream": 5}
    assert lazy.item() == 3


def test_default_stream_is_per_thread_as_mlx():
    """Real MLX 0.32.4 (oracle venv): each thread has a default stream of its own, bound to it —
    ``set_default_stream`` and ``mx.stream`` in a worker leave the main thread's untouched, and
    work a worker left lazy on its default stream cannot be evaluated by the main thread."""
    import threading

    main_default = mx.default_stream(mx.cpu)
    out = {}

    def worker():
        out["default"] = mx.default_stream(mx.cpu)
        mine = mx.new_stream(mx.cpu)
        mx.set_default_stream(mine)
        out["after_set"] = mx.default_stream(mx.cpu) == mine
        out["lazy"] = mx.array([1, 2]) + 1

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert out["default"] != main_default and out["after_set"]
    assert mx.default_stream(mx.cpu) == main_default
    with pytest.raises(RuntimeError, match=r"There is no Stream\(cpu, \d+\) in current thread"):
        out["lazy"].tolist()


def test_concurrent_stream_blocks_stay_in_their_thread():
    """``with mx.stream(s)`` on several threads at once: each thread's ops record on its own
    stream and give its own results (a shared 'current stream' lost them under load)."""
    import threading

    results, errors = {}, []

    def work(k):
        try:
            s = mx.new_stream(mx.cpu)
            for i in range(40):
                with mx.stream(s):
                    results[(k, i)] = (mx.array(k) * 100 + i).item()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == {(k, i): k * 100 + i for k in range(4) for i in range(40)}
    assert mx.default_stream(mx.cpu) == mx.Stream(mx.Device(mx.cpu), 0)


def test_flatten_clamps_axes_as_mlx():
    """MLX normalizes negative axes, clamps the range to the array's axes and refuses only an
    empty range (ValueError), never an IndexError (real MLX 0.32.4's results, oracle venv)."""
    x = mx.zeros((2, 3, 4))
    for start, end, shape in [(0, 5, (24,)), (1, 10, (2, 12)), (-5, 1, (6, 4)), (0, 3, (24,))]:
        assert mx.flatten(x, start, end).shape == shape
    for start, end in [(0, -5), (2, 1), (3, 3), (-10, -10), (5, 6), (0, -4)]:
        with pytest.raises(ValueError, match="start_axis must be less than or equal to end_axis") as e:
            mx.flatten(x, start, end)
        assert not isinstance(e.value, IndexError)
    assert mx.flatten(mx.array(3.0), 1, 2).shape == (1,)


def test_axis_errors_and_complex_nan_to_num():
    with pytest.raises(IndexError):
        mx.swapaxes(mx.zeros((3, 1)), 1, 2)
    with pytest.raises(IndexError):
        mx.roll(mx.zeros((3,)), 1, axis=-2)
    with pytest.raises(IndexError):  # a 0-d array has no axis 0 (axis=None flattens first)
        mx.repeat(mx.array(1), 1, axis=0)
    assert mx.repeat(mx.array(1), 2).tolist() == [1, 1]
    with pytest.raises(ValueError):
        mx.nan_to_num(mx.array([1j]))


def test_half_cummin_propagates_nan_like_float32():
    # Real MLX 0.32.4 gives 0 where the NaN goes for float16/bfloat16 (its float32 propagates NaN);
    # ours propagates NaN at every width (docs/COMPAT.md, rule half_scan_nan).
    v = np.array([3.0, np.nan, 1.0, 2.0], np.float32)
    for dt in (mx.float16, mx.bfloat16, mx.float32):
        got = np.array(mx.cummin(mx.array(v).astype(dt)).astype(mx.float32))
        assert np.array_equal(got, np.minimum.accumulate(v), equal_nan=True), dt


def test_python_floats_beyond_a_half_types_range_become_inf():
    # Real MLX 0.32.4 stores ±inf (a C cast); numpy's float16 cast is the oracle for f16 rounding
    # (65519 rounds down to 65504, the largest half; 65520 and beyond overflow).
    a = mx.zeros((3,), mx.float16)
    a[0], a[1] = 1e6, -1e6
    assert a.tolist() == [np.inf, -np.inf, 0.0]
    for v in (1e6, -1e6, 65519.0, 65520.0):
        with np.errstate(over="ignore"):
            want = float(np.float16(v))
        assert mx.array(v, mx.float16).item() == want
        assert mx.full((2,), v, mx.float16).tolist() == [want, want]
    assert (mx.zeros((2,), mx.float16) + 1e6).tolist() == [np.inf, np.inf]
    assert mx.array(1e39, mx.bfloat16).item() == np.inf
    assert mx.array(-1e39, mx.bfloat16).item() == -np.inf
    b = mx.zeros((2,), mx.bfloat16)
    b[0] = 1e39
    assert b.tolist() == [np.inf, 0.0]


def test_floor_divide_rounds_the_half_quotient_first():
    """py29 (differential tester, `divmod` of float16/bfloat16): MLX's floor_divide is
    floor(divide(a, b)), the quotient rounded to the dtype first. 1004 / 40.25 = 24.944 in
    float32, which bfloat16 (8 significant bits: 24.875, 25.0 around it) rounds to 25.0, so the
    floor is 25, not 24; the remainder is fmod's and stays 38 (checked against real MLX 0.32.4)."""
    a = mx.array([1004.0, -1004.0, 7.0], mx.bfloat16)
    b = mx.array([40.25, 40.25, 2.0], mx.bfloat16)
    for q in (mx.floor_divide(a, b), a // b, mx.divmod(a, b)[0]):
        assert q.dtype == mx.bfloat16 and q.tolist() == [25.0, -25.0, 3.0]
    assert mx.remainder(a, b).tolist() == [38.0, 2.25, 1.0]
    f32 = mx.floor_divide(a.astype(mx.float32), b.astype(mx.float32))
    assert f32.tolist() == [24.0, -25.0, 3.0]  # float32 keeps 24.944


def test_pad_width_type_error_is_nanobinds():
    """py29: `mx.pad(x, "x")` is MLX's TypeError with nanobind's whole message (text recorded
    from real MLX 0.32.4)."""
    with pytest.raises(TypeError) as info:
        mx.pad(mx.zeros((3, 2)), "x")
    assert str(info.value) == (
        "pad(): incompatible function arguments. The following argument types are supported:\n"
        "    1. pad(a: array, pad_width: int | tuple[int] | tuple[int, int] | list[tuple[int, int]], mode: "
        "Literal['constant', 'edge', 'reflect', 'symmetric'] = 'constant', constant_values: scalar | array = 0, *, "
        "stream: StreamOrDevice = None) -> array\n\nInvoked with types: mlx.core.array, str")
