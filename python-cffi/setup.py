"""Build step of the mlx-arm Python package.

`pip install ./python-cffi` (or `pip wheel`) runs `cargo build -p mlx-arm-capi --release`
in the repository, then puts into the package:
- libmlx_arm.so (the C API cdylib);
- _api.h, the cffi declarations derived from include/mlx/c/*.h by mlx/core/_cdef.py;
- _mlx_api.<abi>.so, those declarations compiled by cffi in API mode (mlx/core/_api_module.py:
  much cheaper C calls); only when a C compiler works: without it the package uses cffi's ABI
  mode (no compiler needed) and the wheel stays py3-none-<platform>;
- _mlx_carray.<abi>.so, the C array type (mlx/core/_carray.c, built by _carray_build.py), only
  with the API-mode module: without it mlx.core.array is the pure-Python class;
- _mlx_api_names.txt, a copy of docs/mlx_api_names.txt (real MLX's names, see mlx/core/_names.py).

Environment: CARGO (cargo binary), CARGO_TARGET_DIR (as cargo), MLX_ARM_CARGO_PROFILE
(release by default; `dev` reuses a debug build), MLX_ARM_LIBRARY (use this prebuilt
library instead of running cargo), MLX_ARM_CFFI=abi (do not build the API-mode module).
"""
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _load_helper(name):
    """mlx/core/<name>.py, loaded from its file (the package itself needs the library)."""
    spec = importlib.util.spec_from_file_location("_mlx_" + name, os.path.join(HERE, "mlx", "core", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _build_library():
    prebuilt = os.environ.get("MLX_ARM_LIBRARY")
    if prebuilt:
        return prebuilt
    profile = os.environ.get("MLX_ARM_CARGO_PROFILE", "release")
    cargo = os.environ.get("CARGO", "cargo")
    cmd = [cargo, "build", "-p", "mlx-arm-capi", "--lib"] + (["--release"] if profile == "release" else [])
    subprocess.run(cmd, cwd=REPO, check=True)
    tdir = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    return os.path.join(tdir, "release" if profile == "release" else "debug", "libmlx_arm.so")


class BuildWithCargo(build_py):
    """build_py that first builds the Rust library and the cffi declarations."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "mlx", "core")
        os.makedirs(out, exist_ok=True)
        shutil.copyfile(_build_library(), os.path.join(out, "libmlx_arm.so"))
        include = os.path.join(REPO, "include")
        cdef = _load_helper("_cdef").cdef_from_headers(include)
        with open(os.path.join(out, "_api.h"), "w", encoding="utf-8") as f:
            f.write(cdef)
        shutil.copyfile(os.path.join(REPO, "docs", "mlx_api_names.txt"), os.path.join(out, "_mlx_api_names.txt"))
        _build_api_module(cdef, include, self.build_lib)


def _build_api_module(cdef, include, build_lib):
    """The API-mode module, or a note that the package will use ABI mode."""
    for stale in _api_modules(build_lib) + _load_helper("_carray_build").built(build_lib):
        os.remove(stale)  # (a copy from a source-tree build must not ship)
    api = _load_helper("_api_module")
    if os.environ.get(api.ENV_MODE, "").lower() == "abi":
        print("mlx-arm: MLX_ARM_CFFI=abi: the cffi API-mode module is not built", file=sys.stderr)
        return
    try:
        print("mlx-arm: built " + api.build(cdef, include, build_lib))
    except Exception as e:  # no (working) C compiler: ABI mode needs none
        print(f"mlx-arm: the cffi API-mode module was not built ({e}); the package uses ABI mode", file=sys.stderr)
        return
    carray = _load_helper("_carray_build")
    try:
        print("mlx-arm: built " + carray.build(api.stamp(cdef), include, build_lib))
    except Exception as e:  # the pure-Python array class needs no compiler
        print(f"mlx-arm: the C array type was not built ({e}); mlx.core.array is the Python class", file=sys.stderr)


def _api_modules(build_lib):
    return glob.glob(os.path.join(build_lib, "mlx", "core", "_mlx_api.*.so"))


class BinaryDistribution(Distribution):
    """The wheel carries a native library, so it is platform-specific."""

    def has_ext_modules(self):
        return True


try:
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel

    class PlatformWheel(_bdist_wheel):
        """Tags the wheel py3-none-<platform> when it carries only the native library, or with
        this interpreter's tags when it carries the API-mode module (a CPython extension)."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            tag = super().get_tag()
            if _api_modules(self.get_finalized_command("build_py").build_lib):
                return tag
            return "py3", "none", tag[2]

    CMDS = {"build_py": BuildWithCargo, "bdist_wheel": PlatformWheel}
except ImportError:
    CMDS = {"build_py": BuildWithCargo}

setup(cmdclass=CMDS, distclass=BinaryDistribution)
