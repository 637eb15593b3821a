"""Builds ``mlx.core._mlx_api``: the C API's declarations compiled by cffi in *API mode*.

In cffi's ABI mode (``ffi.dlopen``) every C call goes through libffi, which marshals each
argument at run time: about 0.3-0.6 µs per call on a small VM, and an op makes several calls.
In API mode cffi writes a C extension with one direct-call wrapper per function; the calls
cost a fraction of that. The extension is compiled once, at install time (``setup.py``), or
for a source checkout by ``python-cffi/tools/build_api_module.py``; without a C compiler the
package keeps ABI mode (``_ffi``), which stays the fallback.

The extension is not linked against ``libmlx_arm.so``: ``_ffi`` loads the library first with
``RTLD_GLOBAL`` (the one ``MLX_ARM_LIBRARY`` or the package names) and the extension's symbols
resolve against it when it is imported. It carries a stamp of the declarations it was built
from (``MLX_ARM_CDEF_STAMP``); ``_ffi`` uses it only when that matches the declarations in use,
so a stale build after a header change falls back to ABI mode instead of missing functions.

This module imports nothing from the package: ``setup.py`` loads it from its file.
"""
import os
import shutil
import zlib

MODULE = "_mlx_api"  # the extension's name inside mlx.core
ENV_MODE = "MLX_ARM_CFFI"  # "abi" forces ABI mode (tests use it for the fallback)


def stamp(api_text):
    """The stamp of a cdef text (CRC-32 of its bytes)."""
    return zlib.crc32(api_text.encode("utf-8"))


def build(api_text, include_dir, out_dir, verbose=False):
    """Compiles the extension for ``api_text`` (the cdef made from ``include_dir``'s headers)
    into ``out_dir``/mlx/core; returns the extension's path. Raises when there is no working
    C compiler (cffi's error)."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(api_text + "#define MLX_ARM_CDEF_STAMP ...\n")
    ffi.set_source(
        "mlx.core." + MODULE,
        '#include "mlx/c/mlx.h"\n#define MLX_ARM_CDEF_STAMP %du\n' % stamp(api_text),
        include_dirs=[include_dir],
        extra_compile_args=["-O1"],  # the wrappers are trivial; -O2 only makes the build slower
    )
    tmp = os.path.join(out_dir, "_mlx_api_build")
    try:
        path = ffi.compile(tmpdir=tmp, verbose=verbose)
        dest = os.path.join(out_dir, "mlx", "core", os.path.basename(path))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.replace(path, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
