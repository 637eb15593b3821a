"""The one rule for test modules that need the real mlx-lm package: a loud module-level skip
when it is not installed, a failure under CI=true (scripts/setup.sh installs it there)."""
import importlib.util
import os

import pytest


def require_mlx_lm(what):
    """Skips the calling test module (``what``: which tests did not run) without mlx-lm."""
    if importlib.util.find_spec("mlx_lm") is not None:
        return
    why = (f"mlx-lm IS NOT INSTALLED in this Python: {what} did not run "
           "(scripts/setup.sh installs it: pip install --no-deps mlx-lm==0.32.2 plus transformers)")
    if os.environ.get("CI") == "true":
        raise RuntimeError(why)
    pytest.skip(why, allow_module_level=True)
