"""Classifies the failures of MLX's own Python tests run against mlx-arm (JUnit XML files
written by scripts/run_upstream_python_tests.sh) into reasons, for docs/COMPAT.md:

- "autograd/compile": the test calls grad / vjp / jvp / vmap / compile … (not in mlx-arm yet);
- "C API lacks mx.X": mlx.core raised NotImplementedError for X (bound once the C API has it);
- "buffer protocol": a failure that mentions memoryview (mlx/core/_buffer.py);
- "differs: …": anything else, with the first line of the error.

Skipped tests are listed too, grouped by MLX's own skip message ("skipped: PyTorch MPS is
required", "skipped: Metal is not available" …).

Counts are per test method (a unittest subTest failing fails its method once), unlike
pytest's summary line, which also counts subtests.

Usage: python upstream_report.py [--markdown] FILE.xml... | --counts FILE.xml
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

_AUTOGRAD = {"grad", "value_and_grad", "vjp", "jvp", "vmap", "compile", "checkpoint", "custom_function",
             "disable_compile", "enable_compile", "export_function", "import_function"}


def reason(msg):
    m = re.search(r"mlx\.core\.([A-Za-z0-9_.]+)(\([^)]*\))? is not implemented yet", msg)
    if m:
        name = m.group(1)
        if name in _AUTOGRAD:
            return "autograd/compile"
        if name.startswith("set_printoptions"):
            return "printoptions precision"
        return f"C API lacks mx.{name}"
    m = re.search(r"mx\.(\w+): argument '(\w+)' is not supported by the C API", msg)
    if m:
        return f"C API lacks mx.{m.group(1)}({m.group(2)}=)"
    if "memoryview" in msg:
        return "buffer protocol (memoryview)"
    first = msg.strip().splitlines()[0] if msg.strip() else "?"
    first = re.sub(r" at 0x[0-9a-f]+", "", first)
    return "differs: " + first[:100]


def classify(path):
    """{reason: [test names]} (failures, then "skipped: <message>") and (passed, failed, skipped)
    for one JUnit file."""
    root = ET.parse(path).getroot()
    by = collections.defaultdict(list)
    passed = failed = skipped = 0
    for tc in root.iter("testcase"):
        name = tc.get("name")
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        if bad is not None:
            failed += 1
            by[reason((bad.get("message") or "") + "\n" + (bad.text or ""))].append(name)
        elif tc.find("skipped") is not None:
            skipped += 1
            msg = (tc.find("skipped").get("message") or "").strip().splitlines()
            by["skipped: " + (msg[0][:100] if msg else "?")].append(name)
        else:
            passed += 1
    return by, (passed, failed, skipped)


def _order(item):
    """Failures first, then skips; each by count, then name."""
    r, names = item
    return (r.startswith("skipped: "), -len(names), r)


def main(argv):
    if argv and argv[0] == "--counts":  # "passed failed skipped" (test methods) of one file
        _, (p, f, s) = classify(argv[1])
        print(p, f, s)
        return
    md = "--markdown" in argv
    files = [a for a in argv if a != "--markdown"]
    for path in files:
        by, (p, f, s) = classify(path)
        title = re.sub(r".*/|\.xml$", "", path)
        if md:
            print(f"\n### {title}: {p} passed, {f} failed, {s} skipped\n")
            if by:
                print("| reason | tests |\n|---|---|")
            for r, names in sorted(by.items(), key=_order):
                print(f"| {r} ({len(names)}) | {', '.join(sorted(set(names)))} |")
        else:
            print(f"{title}: {p} passed, {f} failed, {s} skipped")
            for r, names in sorted(by.items(), key=_order):
                print(f"  {len(names):4d}  {r}")


if __name__ == "__main__":
    main(sys.argv[1:])
