"""Turns the C API headers (include/mlx/c/*.h) into a cffi ``cdef`` string.

cffi's parser understands plain C declarations only: no ``#`` lines, no ``extern "C"``
guards, no function bodies. Rather than retyping the header (which would drift as ops are
added), this module runs a tiny preprocessor over the real headers:

- ``#include "mlx/c/x.h"`` is inlined once (system ``<...>`` includes are dropped);
- ``#if/#ifdef/#ifndef/#elif/#else/#endif`` are evaluated with no compiler macros defined,
  so C++ guards, MSVC and half-precision (aarch64-only) branches fall away;
- ``#define`` lines are remembered (for ``#ifdef``) but not emitted;
- ``static`` definitions (the header-only ``_mlx_error`` helper, ``mlx_array_empty``) are cut.

It is used at build time (setup.py writes the out-of-line cffi module) and, when the package
runs from a source checkout without a build, at import time.
"""

import os
import re

_INCLUDE_RE = re.compile(r'#\s*include\s+"([^"]+)"')
_DEFINED_RE = re.compile(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)")


def _eval_condition(expr, defined):
    """Evaluates a ``#if`` expression built from ``defined(X)``, ``||``, ``&&``, ``!``, 0/1."""
    expr = _DEFINED_RE.sub(lambda m: "1" if (m.group(1) or m.group(2)) in defined else "0", expr)
    expr = re.sub(r"/\*.*?\*/|//.*", "", expr)
    expr = expr.replace("||", " or ").replace("&&", " and ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    # Any remaining identifier is an undefined macro, which C treats as 0.
    expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: m.group(0) if m.group(0) in ("or", "and", "not") else "0", expr)
    try:
        return bool(eval(expr, {"__builtins__": {}}, {}))  # only digits and boolean operators remain
    except SyntaxError as e:
        raise ValueError(f"cannot evaluate #if {expr!r}") from e


def _preprocess(path, include_dir, defined, seen, out):
    """Appends the active, non-preprocessor lines of ``path`` (and its local includes) to ``out``."""
    real = os.path.realpath(path)
    if real in seen:
        return
    seen.add(real)
    with open(path, encoding="utf-8") as f:
        lines = f.read().replace("\\\n", " ").splitlines()
    stack = []  # per open #if: (this branch active, some branch already taken)
    for line in lines:
        s = line.strip()
        active = all(a for a, _ in stack)
        if s.startswith("#"):
            d = s[1:].strip()
            word = d.split(None, 1)[0] if d else ""
            rest = d[len(word):].strip()
            if word in ("if", "ifdef", "ifndef"):
                if word == "ifdef":
                    cond = rest.split()[0] in defined
                elif word == "ifndef":
                    cond = rest.split()[0] not in defined
                else:
                    cond = _eval_condition(rest, defined)
                stack.append((cond, cond))
            elif word == "elif":
                _, taken = stack.pop()
                cond = (not taken) and _eval_condition(rest, defined)
                stack.append((cond, taken or cond))
            elif word == "else":
                _, taken = stack.pop()
                stack.append((not taken, True))
            elif word == "endif":
                stack.pop()
            elif active and word == "define":
                defined.add(rest.split()[0].split("(")[0])
            elif active and word == "include":
                m = _INCLUDE_RE.match(s)
                if m:
                    _preprocess(os.path.join(include_dir, m.group(1)), include_dir, defined, seen, out)
            continue
        if active:
            out.append(line)


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def _drop_static(text):
    """Removes ``static ...;`` declarations and ``static ... { body }`` definitions."""
    out, i = [], 0
    while True:
        m = re.search(r"\bstatic\b", text[i:])
        if not m:
            out.append(text[i:])
            return "".join(out)
        start = i + m.start()
        out.append(text[i:start])
        j = start
        while j < len(text) and text[j] not in ";{":
            j += 1
        if j < len(text) and text[j] == "{":
            depth = 0
            while j < len(text):
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
        i = j + 1


def cdef_from_headers(include_dir, umbrella="mlx/c/mlx.h"):
    """The cffi declarations of everything ``umbrella`` includes, in include order."""
    out = []
    _preprocess(os.path.join(include_dir, umbrella), include_dir, set(), set(), out)
    text = _drop_static(_strip_comments("\n".join(out)))
    return "\n".join(l.rstrip() for l in text.splitlines() if l.strip()) + "\n"


_FN_RE = re.compile(r"([A-Za-z_][\w \*]*?[\s\*])(\w+)\s*\(([^)]*)\)\s*;", re.S)


def functions(cdef):
    """``{name: (return type, [(param type, param name), ...])}`` for every declared function.

    The op binder reads parameter *names* from here (cffi's type objects do not keep them).
    """
    res = {}
    for m in _FN_RE.finditer(cdef):
        ret, name, params = " ".join(m.group(1).split()), m.group(2), m.group(3).strip()
        if "typedef" in ret:
            continue
        plist = []
        if params and params != "void":
            for p in params.split(","):
                p = " ".join(p.split())
                pm = re.match(r"(.*?)(\w+)$", p)
                if not pm or "(" in p:
                    plist = None
                    break
                plist.append((pm.group(1).strip(), pm.group(2)))
        if plist is not None:
            res[name] = (ret, plist)
    return res
