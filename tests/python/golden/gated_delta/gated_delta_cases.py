"""The mx.fast.gated_delta_update cases, shared by gen_gated_delta.py (run under real MLX) and
test_gated_delta.py (ours). Inputs come from a seeded numpy generator so both sides see the
same values."""
import numpy as np

# name: (B, T, Hk, Hv, Dk, Dv, dtypes of (q, k, v, g, beta), vector gate, initial state dtype
#        or None, mask or None)
CASES = {
    "gqa_f32": (2, 5, 1, 2, 4, 3, ("float32",) * 5, False, None, None),
    "vector_gate_state": (1, 4, 2, 2, 8, 5, ("float32",) * 5, True, "float32", None),
    "mask_bf16": (2, 4, 2, 4, 4, 4, ("bfloat16", "bfloat16", "bfloat16", "float32", "float32"), False, None,
                  [[1.0, 0.0, 0.5, 1.0], [0.0, 1.0, 1.0, 0.0]]),
    "f16_qk_state_f16": (1, 3, 1, 3, 6, 2, ("float16", "float16", "float32", "float32", "float32"), False,
                         "float16", None),
    "decode_step": (3, 1, 2, 4, 16, 8, ("float32",) * 5, False, "float32", None),
}

# Gradient of sum(y) + sum(state) with respect to q, k, v, g, beta (case name).
GRAD_CASES = ["gqa_f32", "vector_gate_state"]


def gradients(case, mx):
    """The gradient case's five gradients, computed with the given ``mlx.core``."""
    xs, st, m = mx_inputs(case, mx)

    def loss(q, k, v, g, beta):
        y, s = mx.fast.gated_delta_update(q, k, v, g, beta, st, m)
        return y.sum() + s.sum()

    return mx.grad(loss, argnums=(0, 1, 2, 3, 4))(*xs)


def inputs(case):
    """numpy arrays (q, k, v, g, beta, state or None, mask or None) of a case."""
    b, t, hk, hv, dk, dv, dtypes, vector_gate, state_dtype, mask = case
    rng = np.random.default_rng(b * 1000 + t * 100 + hv * 10 + dk)
    q = rng.standard_normal((b, t, hk, dk)) / np.sqrt(dk)
    k = rng.standard_normal((b, t, hk, dk)) / np.sqrt(dk)
    v = rng.standard_normal((b, t, hv, dv))
    g = rng.uniform(0.5, 1.0, (b, t, hv, dk) if vector_gate else (b, t, hv))
    beta = rng.uniform(0.0, 1.0, (b, t, hv))
    arrays = [a.astype(np.float32) for a in (q, k, v, g, beta)]
    state = None if state_dtype is None else rng.standard_normal((b, hv, dv, dk)).astype(np.float32)
    m = None if mask is None else np.array(mask, np.float32)
    return arrays, dtypes, state, state_dtype, m


def mx_inputs(case, mx):
    """The case's inputs as arrays of the given ``mlx.core`` (real MLX's in the generator, ours
    in the test): ``[q, k, v, g, beta]``, the initial state or None, the mask or None."""
    arrays, dtypes, state, state_dtype, mask = inputs(case)
    xs = [mx.array(a).astype(getattr(mx, d)) for a, d in zip(arrays, dtypes)]
    st = None if state is None else mx.array(state).astype(getattr(mx, state_dtype))
    m = None if mask is None else mx.array(mask)
    return xs, st, m
