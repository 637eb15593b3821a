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
import re
import shutil
import zlib

MODULE = "_mlx_api"  # the extension's name inside mlx.core
ENV_MODE = "MLX_ARM_CFFI"  # "abi" forces ABI mode (tests use it for the fallback)


def stamp(api_text):
    """The stamp of a cdef text (CRC-32 of its bytes)."""
    return zlib.crc32(api_text.encode("utf-8"))


# The GIL. cffi's wrappers release it around every C call; MLX's binding keeps it for what only
# builds the graph and releases it for what may run long (eval, item, I/O). Releasing and taking
# it back costs ~0.05-0.1 µs a call on a small VM, a tenth of an op's whole call, so the graph
# builders keep it as in MLX: every function declared in these headers, plus the array metadata,
# scalar constructors and the one-call basic index below. Holding it is safe for them: they do
# not wait on other threads, and a callback into Python (none of these makes one) would take
# the GIL reentrantly anyway.
HOLD_GIL_HEADERS = ("ops.h", "fft.h", "linalg.h", "random.h", "fast.h")
HOLD_GIL_NAMES = re.compile(
    r"mlx_array_(new|free|set|itemsize|size|nbytes|ndim|dim|dtype|shape|strides)\w*$"
    r"|mlx_arm_index_basic\w*$")
_DECL = re.compile(r"^\s*(?:const\s+)?([A-Za-z_][\w ]*?[\s\*]+)(\w+)\s*\(", re.M)


def _declared(text):
    """``{name: returns void}`` for the functions declared in a header or cdef text."""
    return {m.group(2): m.group(1).split() == ["void"] for m in _DECL.finditer(text)
            if "typedef" not in m.group(1) and "return" not in m.group(1)}


def gil_preamble(api_text, include_dir):
    """C text for the extension's source, after the headers: the functions that still release
    the GIL call through a macro that releases it, then cffi's own release around every call is
    made a plain block."""
    hold = set()
    for h in HOLD_GIL_HEADERS:
        path = os.path.join(include_dir, "mlx", "c", h)
        if os.path.exists(path):
            with open(path) as f:
                hold.update(_declared(f.read()))
    out = []
    for name, void in sorted(_declared(api_text).items()):
        if name in hold or HOLD_GIL_NAMES.match(name):
            continue
        if void:
            body = f"PyThreadState *_mlxarm_ts = PyEval_SaveThread(); ({name})(__VA_ARGS__); PyEval_RestoreThread(_mlxarm_ts);"
        else:
            body = (f"PyThreadState *_mlxarm_ts = PyEval_SaveThread(); __typeof__(({name})(__VA_ARGS__)) _mlxarm_r = "
                    f"({name})(__VA_ARGS__); PyEval_RestoreThread(_mlxarm_ts); _mlxarm_r;")
        out.append(f"#define {name}(...) ({{ {body} }})")
    out += ["#undef Py_BEGIN_ALLOW_THREADS", "#undef Py_END_ALLOW_THREADS",
            "#define Py_BEGIN_ALLOW_THREADS {", "#define Py_END_ALLOW_THREADS }"]
    return "\n".join(out) + "\n"


def build(api_text, include_dir, out_dir, verbose=False):
    """Compiles the extension for ``api_text`` (the cdef made from ``include_dir``'s headers)
    into ``out_dir``/mlx/core; returns the extension's path. Raises when there is no working
    C compiler (cffi's error)."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(api_text + "#define MLX_ARM_CDEF_STAMP ...\n")
    ffi.set_source(
        "mlx.core." + MODULE,
        '#include "mlx/c/mlx.h"\n#define MLX_ARM_CDEF_STAMP %du\n' % stamp(api_text) + gil_preamble(api_text, include_dir),
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
