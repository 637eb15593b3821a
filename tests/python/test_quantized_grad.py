"""The vjp of ``mx.quantized_matmul`` (what QLoRA differentiates through): to ``x`` it is the
product with the same quantized weight the other way round, to the affine scales and biases
the per-group sums of ``dW = cotᵀ x`` (times the integer codes for the scales), as MLX 0.32
defines it; the packed weight has none. Oracle: numpy on the dequantized weight."""
import numpy as np
import pytest

import mlx.core as mx


def _case(transpose, bits=4, group_size=32, batch=(3, 5)):
    rng = np.random.default_rng(bits * 10 + transpose)
    n, k = 96, 64
    w = rng.standard_normal((n, k) if transpose else (k, n)).astype(np.float32)
    wq, scales, biases = mx.quantize(mx.array(w), group_size=group_size, bits=bits)
    x = mx.array(rng.standard_normal(batch + (k,)).astype(np.float32))
    cot = rng.standard_normal(batch + (n,)).astype(np.float32)
    return x, wq, scales, biases, cot


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("bits", [4, 8])
def test_vjp_matches_numpy(transpose, bits):
    gs = 32
    x, wq, scales, biases, cot = _case(transpose, bits, gs)

    def f(x, s, b):
        return mx.quantized_matmul(x, wq, s, b, transpose=transpose, group_size=gs, bits=bits)

    out, (dx, ds, db) = mx.vjp(f, [x, scales, biases], [mx.array(cot)])
    wd = np.array(mx.dequantize(wq, scales, biases, group_size=gs, bits=bits))
    codes = np.array(mx.dequantize(wq, mx.ones_like(scales), mx.zeros_like(biases), group_size=gs, bits=bits))
    wmat = wd.T if transpose else wd  # (k, n): y = x @ wmat
    xn = np.array(x).reshape(-1, wmat.shape[0]).astype(np.float64)
    cn = cot.reshape(-1, wmat.shape[1]).astype(np.float64)
    np.testing.assert_allclose(np.array(out[0]), (xn @ wmat).reshape(cot.shape), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.array(dx), (cn @ wmat.T).reshape(np.array(x).shape), rtol=1e-4, atol=1e-4)
    # dL/dW in the stored layout, grouped along the stored last axis.
    dw = cn.T @ xn if transpose else xn.T @ cn
    groups = dw.reshape(dw.shape[0], -1, gs)
    np.testing.assert_allclose(np.array(db), groups.sum(-1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(np.array(ds), (groups * codes.reshape(groups.shape)).sum(-1), rtol=1e-4, atol=1e-3)


def test_grad_through_a_quantized_linear_layer():
    import mlx.nn as nn
    lin = nn.QuantizedLinear(64, 16, bias=True, group_size=32, bits=4)
    x = mx.array(np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32))
    g = mx.grad(lambda x: lin(x).sum())(x)
    w = np.array(mx.dequantize(lin.weight, lin.scales, lin.biases, group_size=32, bits=4))
    np.testing.assert_allclose(np.array(g), np.ones((2, 16)) @ w, rtol=1e-4, atol=1e-4)


def test_no_gradient_to_the_packed_weight():
    x, wq, scales, biases, cot = _case(True)
    with pytest.raises(Exception, match="no gradient wrt the quantized weights"):
        mx.grad(lambda w: mx.quantized_matmul(x, w, scales, biases, group_size=32, bits=4).sum())(wq)
