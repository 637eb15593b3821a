"""``mx.fast.cuda_kernel`` / ``precompiled_cuda_kernel`` against real MLX 0.32.4's CPU wheel
(golden/cuda_kernel/, made by gen_cuda_kernel.py there): no CUDA back-end, so every valid call
is MLX's RuntimeError "[cuda_kernel] No CUDA back-end." (in compile, grad, vmap and export too),
and every invalid one MLX's own error — the exception class and its whole message."""
import json
import os
import sys
import tempfile

import mlx.core as mx
import numpy as np
import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "cuda_kernel")
sys.path.insert(0, HERE)

from cuda_cases import CASES  # noqa: E402
from gen_cuda_kernel import outcome  # noqa: E402

with open(os.path.join(HERE, "cuda_kernel.json"), encoding="utf-8") as _f:
    GOLD = json.load(_f)["cases"]


def test_goldens_cover_the_cases():
    assert sorted(GOLD) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_as_mlx(name):
    assert outcome(CASES[name]) == GOLD[name]


def test_failed_export_leaves_no_file():
    """A deliberate difference (docs/EXPORT.md): MLX's export writes its header first, so a
    function that fails while traced leaves a 27-byte file with no function in it; here the
    file is not created."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.mlxfn")
        with pytest.raises(RuntimeError, match="No CUDA back-end"):
            mx.export_function(path, lambda x: mx.fast.cuda_kernel("k", ["a"], ["o"], "s"), mx.ones(2))
        assert not os.path.exists(path)


def test_c_function_checks_pointers():
    """The C function reads its arguments before the error: a NULL array with a length is its
    own error, not a crash."""
    from mlx.core._ffi import check, ffi, lib

    with pytest.raises(ValueError, match="input_names is NULL"):
        check(lib.mlx_arm_fast_cuda_kernel(b"k", ffi.NULL, 2, ffi.NULL, 0, b"s", b"", True, 0))
    with pytest.raises(RuntimeError, match=r"^\[cuda_kernel\] No CUDA back-end\.$"):
        check(lib.mlx_arm_fast_cuda_kernel(b"k", ffi.NULL, 0, ffi.NULL, 0, b"s", b"", True, 0))
