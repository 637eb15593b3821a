"""The compiled callers of bound ops (_callgen) against the generic binder path (``f._op``) and
numpy: same values, dtypes and error types for every call shape models use (arrays, weak Python
scalars, keywords, axis None / int / sequence / numpy int, defaults-only arguments, bad calls)."""
import inspect

import numpy as np
import pytest

import mlx.core as mx

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7 - 1
I8 = np.arange(6, dtype=np.int8).reshape(2, 3)


def _same(f, *args, **kwargs):
    """``f(*args, **kwargs)`` through the compiled function and the generic Op; both agree."""
    got = f(*args, **kwargs)
    want = f._op(*args, **kwargs)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        pairs = zip(got, want)
    else:
        pairs = [(got, want)]
    for g, w in pairs:
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(np.array(g), np.array(w), equal_nan=True)
    return got


CALLS = [
    (lambda: mx.add, (mx.array(X), mx.array(X)), {}),
    (lambda: mx.add, (mx.array(X), 1), {}),
    (lambda: mx.add, (2.5, mx.array(I8)), {}),
    (lambda: mx.multiply, (mx.array(I8), 3), {}),
    (lambda: mx.subtract, (mx.array(I8), 1.5), {}),
    (lambda: mx.maximum, (mx.array(X), np.float32(0.25)), {}),
    (lambda: mx.add, (mx.array(X),), {"b": mx.array(X[0]), "stream": mx.cpu}),
    (lambda: mx.exp, (mx.array(X),), {}),
    (lambda: mx.exp, (X,), {}),  # numpy operand converted
    (lambda: mx.reshape, (mx.array(X), (4, 6)), {}),
    (lambda: mx.reshape, (mx.array(X), [np.int64(6), -1]), {}),
    (lambda: mx.reshape, (mx.array(X),), {"shape": (24,)}),
    (lambda: mx.transpose, (mx.array(X),), {}),
    (lambda: mx.transpose, (mx.array(X), (2, 0, 1)), {}),
    (lambda: mx.transpose, (mx.array(X), [1, 2, 0]), {}),
    (lambda: mx.sum, (mx.array(X),), {}),
    (lambda: mx.sum, (mx.array(X), -1), {}),
    (lambda: mx.sum, (mx.array(X), (0, 2)), {"keepdims": True}),
    (lambda: mx.sum, (mx.array(X),), {"axis": np.int64(1)}),
    (lambda: mx.sum, (mx.array(X),), {"axis": [1]}),
    (lambda: mx.softmax, (mx.array(X),), {"axis": -1}),
    (lambda: mx.softmax, (mx.array(X), None), {}),
    (lambda: mx.argmax, (mx.array(X),), {"axis": -1, "keepdims": True}),
    (lambda: mx.argmax, (mx.array(X),), {}),
    (lambda: mx.logsumexp, (mx.array(X),), {"keepdims": True}),
    (lambda: mx.squeeze, (mx.array(X[:1]), 0), {}),
    (lambda: mx.concatenate, ([mx.array(X), mx.array(X)],), {"axis": 1}),
    (lambda: mx.concatenate, ([mx.array(X), mx.array(X)], None), {}),
    (lambda: mx.where, (mx.array(X) > 0, mx.array(X), 0.0), {}),
    (lambda: mx.zeros, ((2, 3), mx.int32), {}),
    (lambda: mx.astype, (mx.array(X), mx.float16), {}),
    (lambda: mx.matmul, (mx.array(X[0]), mx.array(X[0].T)), {}),
    (lambda: mx.fast.rms_norm, (mx.array(X), mx.ones((4,)), 1e-5), {}),
    (lambda: mx.take, (mx.array(X), mx.array([0, 2])), {"axis": 1}),
    (lambda: mx.take, (mx.array(X), mx.array([[1], [-1]])), {}),
]


@pytest.mark.parametrize("k", range(len(CALLS)))
def test_compiled_matches_generic(k):
    f, args, kwargs = CALLS[k]
    _same(f(), *args, **kwargs)


def test_compiled_matches_numpy():
    a = mx.array(X)
    assert np.allclose(np.array(mx.add(a, 1)), X + 1)
    assert mx.add(mx.array(I8), 1).dtype == mx.int8  # weak scalar keeps the array's dtype
    assert mx.add(mx.array(I8), 1.5).dtype == mx.float32
    assert np.allclose(np.array(mx.sum(a, axis=(0, 2))), X.sum(axis=(0, 2)))
    assert np.array_equal(np.array(mx.transpose(a, (2, 0, 1))), X.transpose(2, 0, 1))


def test_signature_is_mlx():
    params = inspect.signature(mx.quantized_matmul).parameters
    assert list(params)[:3] == ["x", "w", "scales"]
    assert params["x"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert params["stream"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["transpose"].default is True


@pytest.mark.parametrize("call", [
    lambda f: f(),  # missing argument
    lambda f: f(mx.array(X), mx.array(X), mx.array(X), mx.array(X)),  # too many
    lambda f: f(mx.array(X), mx.array(X), bogus=1),  # unknown keyword
    lambda f: f(mx.array(X), a=mx.array(X)),  # given twice
])
def test_binding_errors_are_type_errors(call):
    with pytest.raises(TypeError):
        call(mx.add)
    with pytest.raises(TypeError):
        call(mx.add._op)


def test_conversion_errors_match_generic():
    for f, args in [(mx.reshape, (mx.array(X), "ab")), (mx.reshape, (mx.array(X), (2.5, 3))),
                    (mx.astype, (mx.array(X), "float16")), (mx.sum, (mx.array(X), True)),
                    (mx.add, (mx.array(X), "x")), (mx.reshape, (mx.array(X), (5, 5)))]:
        errs = []
        for g in (f, f._op):
            with pytest.raises(Exception) as e:
                g(*args)
            errs.append(type(e.value))
        assert errs[0] is errs[1], (f, args, errs)


def test_int8_overflow_of_weak_scalar():
    for g in (mx.add, mx.add._op):
        with pytest.raises(ValueError):
            g(mx.array(I8), 300)


def test_every_compiled_signature_is_the_recorded_one():
    """Each compiled mx.<name> has _signatures.json's parameter names, kinds and defaults."""
    from mlx.core import _binder

    kinds = {"posonly": inspect.Parameter.POSITIONAL_ONLY, "pos": inspect.Parameter.POSITIONAL_OR_KEYWORD,
             "kwonly": inspect.Parameter.KEYWORD_ONLY}
    checked = 0
    for name, spec in _binder.SIGNATURES.items():
        f = mx
        try:
            for part in name.split("."):
                f = getattr(f, part, None)
        except NotImplementedError:  # a name mlx-arm does not provide yet
            continue
        if f is None or not hasattr(f, "_source"):
            continue
        params = list(inspect.signature(f).parameters.values())
        assert [p.name for p in params] == [p["name"] for p in spec["params"]], name
        for p, q in zip(params, spec["params"]):
            assert p.kind is kinds[q["kind"]], (name, p.name)
            d = _binder.eval_default(q.get("default"))
            assert (p.default is inspect.Parameter.empty) if d is _binder._MISSING else (p.default is d or p.default == d), (name, p.name)
        checked += 1
    assert checked > 100
