"""Writes mlx/core/_signatures.json: the Python signatures (parameter names, kinds, defaults)
of real MLX's ``mlx.core`` functions, read from their nanobind docstrings.

The cffi package binds C ops to Python functions by these signatures, so that ``mx.<name>``
takes the same arguments with the same defaults as real MLX. Run with the oracle:

    /opt/oracle/bin/python python-cffi/tools/gen_signatures.py
"""
import json
import os
import re
import sys

import mlx.core as mx

MODULES = {"": mx, "random.": mx.random, "linalg.": mx.linalg, "fast.": mx.fast, "fft.": mx.fft}


def split_top(s):
    """Splits on commas that are not inside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def parse(name, doc):
    first = (doc or "").strip().splitlines()[0] if doc and doc.strip() else ""
    m = re.match(r"^\s*(\w+)\((.*)\)\s*->\s*(.*)$", first)
    if not m or m.group(1) != name.split(".")[-1]:
        return None
    params, kind = [], "pos"
    for p in split_top(m.group(2)):
        if p == "/":
            for q in params:
                q["kind"] = "posonly"
            continue
        if p == "*":
            kind = "kwonly"
            continue
        if p.startswith("**"):
            params.append({"name": p[2:].split(":")[0].strip(), "kind": "varkw"})
            continue
        if p.startswith("*"):
            params.append({"name": p[1:].split(":")[0].strip(), "kind": "varpos"})
            kind = "kwonly"
            continue
        default = None
        if "=" in p:
            p, default = p.rsplit("=", 1)
            default = default.strip()
        pname = p.split(":")[0].strip()
        typ = p.split(":", 1)[1].strip() if ":" in p else ""
        params.append({"name": pname, "kind": kind, "type": typ, "default": default})
    return {"params": params, "returns": m.group(3).strip()}


def main():
    out = {}
    for prefix, mod in MODULES.items():
        for n in sorted(dir(mod)):
            if n.startswith("_"):
                continue
            f = getattr(mod, n)
            if not callable(f) or isinstance(f, type):
                continue
            sig = parse(n, getattr(f, "__doc__", None))
            if sig:
                out[prefix + n] = sig
    dst = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mlx", "core", "_signatures.json")
    with open(dst, "w") as fh:
        json.dump({"mlx_version": mx.__version__, "functions": out}, fh, indent=0, sort_keys=True)
        fh.write("\n")
    print(f"{len(out)} signatures -> {os.path.normpath(dst)}", file=sys.stderr)


if __name__ == "__main__":
    main()
