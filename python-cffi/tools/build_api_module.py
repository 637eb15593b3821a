"""Compiles cffi's API-mode module (``mlx/core/_mlx_api*.so``) and the C array type
(``mlx/core/_mlx_carray*.so``) into this source tree, from the
headers under ``<repo>/include``: what ``pip install ./python-cffi`` does at install time, for
running the package from source (``PYTHONPATH=python-cffi``). Rerun it after a header change
(a stale module is ignored: the package falls back to ABI mode). Needs a C compiler.

    .venv/bin/python python-cffi/tools/build_api_module.py
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
REPO = os.path.dirname(PKG)


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(PKG, "mlx", "core", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    include = os.path.join(REPO, "include")
    api = _load("_cdef").cdef_from_headers(include)
    api_module = _load("_api_module")
    print(api_module.build(api, include, PKG))
    # The C array type (mlx/core/_carray.c), under the same stamp.
    print(_load("_carray_build").build(api_module.stamp(api), include, PKG))


if __name__ == "__main__":
    sys.exit(main())
