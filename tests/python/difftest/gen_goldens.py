"""Writes the differential tester's goldens: run under real MLX 0.32.4 (the oracle venv), never in CI.

    /work/oracle-venv/bin/python tests/python/difftest/gen_goldens.py            # the committed set
    /work/oracle-venv/bin/python tests/python/difftest/gen_goldens.py --count 20000 --out /tmp/long.json

Each record is one program's result under MLX (programs.run) plus its description, which the test
checks so that a changed generator cannot silently compare different programs.
"""
import argparse
import json
import os
import select
import signal
import sys

import mlx.core as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import programs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def run_isolated(prog, timeout=10.0):
    """programs.run in a forked child: real MLX kills the process on some calls (SIGFPE on integer
    division by zero) and hangs on others (trace of an array with a size-0 axis). Those become
    {"ub": "oracle_crash"} / {"ub": "oracle_hang"} records, under which ours must only survive."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            data = json.dumps(programs.run(mx, prog)).encode()
        except BaseException as e:  # noqa: BLE001 - the child must always report
            data = json.dumps({"build": repr(e)}).encode()
        with os.fdopen(wfd, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(wfd)
    chunks = []
    with os.fdopen(rfd, "rb") as f:
        while True:
            ready, _, _ = select.select([f], [], [], timeout)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"ub": "oracle_hang"}
            b = f.read1(1 << 20)
            if not b:
                break
            chunks.append(b)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"ub": "oracle_crash"}
    return json.loads(b"".join(chunks))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=1500)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--out", default=os.path.join(HERE, "goldens.json"))
    a = p.parse_args()
    mx.set_default_device(mx.cpu)
    recs = []
    for seed in range(a.start, a.start + a.count):
        prog = programs.program(seed)
        rec = run_isolated(prog)
        rec["d"] = programs.describe(prog)
        recs.append(rec)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"mlx": mx.__version__, "start": a.start, "programs": recs}, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(recs)} programs, {sum('e' in r for r in recs)} raise, {os.path.getsize(a.out)} bytes -> {a.out}")


if __name__ == "__main__":
    main()
