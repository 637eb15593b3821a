"""Builds ``mlx.core._mlx_carray``, the C array type (``_carray.c``; docs/PYTHON.md, "The C array
type"), beside the cffi API-mode module and under the same rules: compiled at install time
(``setup.py``) or for a source checkout by ``python-cffi/tools/build_api_module.py``; without a C
compiler (or with ``MLX_ARM_CFFI=abi``) it is not built and ``mlx.core.array`` stays the
pure-Python class. It carries the stamp of the declarations it was compiled against
(``MLX_ARM_CDEF_STAMP``, as the API-mode module) and its ``VERSION``; ``_array`` uses it only when
both match, so a stale build falls back to the Python class instead of misbehaving.

This module imports nothing from the package: ``setup.py`` loads it from its file.
"""
import glob
import os
import shutil
import tempfile

MODULE = "_mlx_carray"  # the extension's name inside mlx.core
VERSION = 9  # CARRAY_VERSION in _carray.c
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_carray.c")


def built(out_dir):
    """The extension files already in ``out_dir``/mlx/core (any interpreter's)."""
    return glob.glob(os.path.join(out_dir, "mlx", "core", MODULE + ".*.so"))


def build(stamp, include_dir, out_dir, verbose=False):
    """Compiles the extension against ``include_dir``'s headers into ``out_dir``/mlx/core;
    returns its path. ``stamp``: ``_api_module.stamp`` of the cdef made from those headers.
    Raises when there is no working C compiler (setuptools' error)."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    ext = Extension("mlx.core." + MODULE, [SOURCE], include_dirs=[include_dir],
                    define_macros=[("MLX_ARM_CDEF_STAMP", "%du" % stamp)],
                    extra_compile_args=["-O2", "-Wall", "-Wno-missing-field-initializers"])
    tmp = tempfile.mkdtemp(prefix="mlx_carray_build")
    try:
        cmd = build_ext(Distribution({"name": "mlx-carray", "ext_modules": [ext]}))
        cmd.build_temp = os.path.join(tmp, "temp")
        cmd.build_lib = os.path.join(tmp, "lib")
        cmd.verbose = verbose
        cmd.ensure_finalized()
        cmd.run()
        path = cmd.get_ext_fullpath(ext.name)
        dest = os.path.join(out_dir, "mlx", "core", os.path.basename(path))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.replace(path, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
