"""Loads libmlx_arm through cffi and turns C failures into Python exceptions.

The calls go through the compiled API-mode module ``_mlx_api`` when it was built (see
``_api_module``) and matches the declarations; otherwise through ABI mode (``ffi.dlopen``).
``MLX_ARM_CFFI=abi`` forces ABI mode. ``MODE`` says which one is in use.

The declarations come from the C headers (see ``_cdef``): an installed package carries the
preprocessed text as ``_api.h`` next to ``libmlx_arm.so``; a source checkout falls back to
``<repo>/include`` and ``<repo>/target/{release,debug}``. ``MLX_ARM_LIBRARY`` overrides the
library path.
"""
import importlib
import importlib.util
import os

import cffi

from . import _api_module, _cdef

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))


def _api_text():
    path = os.path.join(_HERE, "_api.h")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    inc = os.environ.get("MLX_ARM_INCLUDE", os.path.join(_REPO, "include"))
    if not os.path.exists(os.path.join(inc, "mlx", "c", "mlx.h")):
        raise ImportError("mlx.core: neither the packaged _api.h nor the C headers (MLX_ARM_INCLUDE) were found")
    return _cdef.cdef_from_headers(inc)


def _library_path():
    env = os.environ.get("MLX_ARM_LIBRARY")
    if env:
        return env
    candidates = [os.path.join(_HERE, "libmlx_arm.so")]
    tdir = os.environ.get("CARGO_TARGET_DIR", os.path.join(_REPO, "target"))
    candidates += [os.path.join(tdir, p, "libmlx_arm.so") for p in ("release", "debug")]
    for c in candidates:
        if os.path.exists(c):
            return c
    raise ImportError("mlx.core: libmlx_arm.so not found (tried %s); set MLX_ARM_LIBRARY" % ", ".join(candidates))


_GLOBAL_LOAD = None


def _api_mode(api, path):
    """(ffi, lib) of the compiled module, or None when it is absent, stale or unloadable."""
    name = f"{__package__}.{_api_module.MODULE}"
    if os.environ.get(_api_module.ENV_MODE, "").lower() == "abi" or importlib.util.find_spec(name) is None:
        return None
    try:
        # The extension is not linked against the library: its symbols resolve against this
        # global load when it is imported (and the import fails if one is missing).
        global _GLOBAL_LOAD
        _GLOBAL_LOAD = cffi.FFI().dlopen(path, os.RTLD_NOW | os.RTLD_GLOBAL)  # (kept: no dlclose)
        mod = importlib.import_module(name)
    except (ImportError, OSError):  # (the ABI load below then reports an unloadable library)
        return None
    if mod.lib.MLX_ARM_CDEF_STAMP != _api_module.stamp(api):
        return None
    return mod.ffi, mod.lib


def _load(api):
    path = _library_path()
    compiled = _api_mode(api, path)
    if compiled is not None:
        return compiled + ("api",)
    f = cffi.FFI()
    f.cdef(api)
    return f, f.dlopen(path), "abi"


API = _api_text()
ffi, lib, MODE = _load(API)
FUNCTIONS = _cdef.functions(API)


def exported(cname):
    """True when the header declares ``cname`` and this library build exports it."""
    if cname not in FUNCTIONS:
        return False
    try:
        getattr(lib, cname)
        return True
    except AttributeError:  # declared in the header, missing from this library build
        return False


@ffi.callback("void(*)(const char*, void*)")
def _quiet_handler(msg, data):
    """Errors become exceptions (below), so the library's stderr print is switched off."""


lib.mlx_set_error_handler(_quiet_handler, ffi.NULL, ffi.NULL)


class _AxisError(IndexError, ValueError):
    """An out-of-range axis. Real MLX 0.32.4 raises IndexError; its own older tests expect
    ValueError; deriving from both (like numpy's AxisError) satisfies both."""


_KINDS = {
    1: ValueError,
    2: IndexError,
    3: TypeError,
    4: NotImplementedError,
    5: MemoryError,
    6: RuntimeError,
    7: ValueError,
    9: OverflowError,
}


def error():
    """The exception for this thread's last C error (and clears it)."""
    msg = ffi.string(lib.mlx_arm_last_error()).decode("utf-8", "replace")
    kind = lib.mlx_arm_last_error_kind()
    lib.mlx_arm_clear_last_error()
    exc = _KINDS.get(kind, RuntimeError)
    if exc is IndexError and "xis" in msg:
        exc = _AxisError
    return exc(msg)


def check(rc):
    """Raises the C library's error when ``rc`` is non-zero."""
    if rc:
        raise error()
