"""docs/OPS.md stays true for names the Python layer provides.

OPS.md is generated from core/src/registry.rs; names that only the Python layer provides
(array methods and protocols, dtypes, devices, constants …) are listed in
python-cffi/provided_names.txt (`PYTHON_API` here).
This test keeps that list honest in both directions:
- every name in PYTHON_API exists in mlx-arm's mlx.core (and is a real MLX name);
- every name OPS.md still calls "not yet" is not provided by the Python layer itself
  (AttributeError, NotImplementedError, or bound from a C function) — so providing a new name
  in Python without listing it fails here.
"""
import os
import re

import pytest

import mlx.core as mx

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def _python_api():
    with open(os.path.join(ROOT, "python-cffi", "provided_names.txt"), encoding="utf-8") as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def _ops_md_rows():
    rows = {}
    with open(os.path.join(ROOT, "docs", "OPS.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\| `([^`]+)` \| ([^|]+) \|", line)
            if m:
                rows[m.group(1)] = m.group(2).strip()
    return rows


def _mlx_names():
    with open(os.path.join(ROOT, "docs", "mlx_api_names.txt"), encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip()}


def _samples():
    """Instances for names that are instance attributes in Python (``mx.Device.type``)."""
    return {"mx.Device": mx.Device(mx.cpu), "mx.Stream": mx.default_stream(mx.cpu), "mx.finfo": mx.finfo(mx.float32),
            "mx.iinfo": mx.iinfo(mx.int32), "mx.array": mx.array([1.0]), "mx.PrintOptions": mx.get_printoptions(),
            "mx.ArrayAt": mx.array([1]).at, "mx.StreamContext": mx.stream(mx.cpu)}


def resolve(name):
    """The object ``name`` ("mx.a.b") denotes in mlx.core (raises AttributeError /
    NotImplementedError when absent)."""
    parts = name.split(".")[1:]
    obj, path = mx, "mx"
    samples = _samples()
    for p in parts:
        inst = samples.get(path)
        try:
            obj = getattr(obj, p)
        except AttributeError:
            if inst is None:
                raise
            obj = getattr(inst, p)
        path += "." + p
    return obj


def provided(name):
    """Whether the *Python layer* provides ``name``. Functions bound from C (``_op``) are the C
    API's and the core's to report (docs/C-API.md, the registry), not this list's."""
    try:
        obj = resolve(name)
    except (AttributeError, NotImplementedError):
        return False
    return not hasattr(obj, "_op")


PYTHON_API = _python_api() if __name__ != "__gen__" else []


@pytest.mark.parametrize("name", PYTHON_API)
def test_listed_name_exists(name):
    assert name in _mlx_names(), f"{name} is not a name of real MLX (docs/mlx_api_names.txt)"
    resolve(name)


def test_not_yet_names_are_absent():
    rows = _ops_md_rows()
    wrongly = sorted(n for n, s in rows.items() if s == "not yet" and provided(n))
    assert not wrongly, ("mlx.core provides these, but docs/OPS.md says 'not yet': add them to "
                         f"python-cffi/provided_names.txt and regenerate OPS.md: {wrongly}")


def test_listed_names_are_done_in_ops_md():
    rows = _ops_md_rows()
    stale = [n for n in PYTHON_API if rows.get(n) != "done"]
    assert not stale, f"docs/OPS.md is stale for {stale}: MLX_ARM_UPDATE_DOCS=1 cargo test -p mlx-arm-core --test ops_md"
