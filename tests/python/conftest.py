"""Test set-up: `mlx.core` is mlx-arm's package (python-cffi/), installed into the venv by
scripts/test.sh. MLX_ARM_PY_SOURCE=1 tests the source tree instead (with MLX_ARM_LIBRARY
pointing at a built libmlx_arm.so, or a cargo target dir holding one)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if os.environ.get("MLX_ARM_PY_SOURCE") == "1":
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python-cffi"))


import pytest


@pytest.fixture(scope="session")
def default_model_path():
    """The default model's GGUF path; a loud skip without it (a failure under CI=true, where
    scripts/setup.sh installs it)."""
    import mlx.arm as arm
    path = arm.default_model_path()
    if not os.path.exists(path):
        msg = f"SKIPPED: {path} is not installed (run scripts/setup.sh)"
        print(msg, file=sys.stderr)
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " — required under CI=true")
        pytest.skip(msg)
    return path


@pytest.fixture(scope="session")
def smol_f16_dir(tmp_path_factory, default_model_path):
    """The default model written by ``python -m mlx.arm.convert ... --dtype float16`` (once per
    session: test_convert.py and test_mlx_lm_default_model.py share it)."""
    import subprocess

    import mlx.core as mx
    out = tmp_path_factory.mktemp("smol") / "f16"
    env = dict(os.environ)
    # The subprocess imports the same mlx as this process (source tree or installed package).
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "mlx.arm.convert", default_model_path, str(out), "--dtype", "float16"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return out
