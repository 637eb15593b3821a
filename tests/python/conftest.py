"""Test set-up: `mlx.core` is mlx-arm's package (python-cffi/), installed into the venv by
scripts/test.sh. MLX_ARM_PY_SOURCE=1 tests the source tree instead (with MLX_ARM_LIBRARY
pointing at a built libmlx_arm.so, or a cargo target dir holding one)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if os.environ.get("MLX_ARM_PY_SOURCE") == "1":
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python-cffi"))
