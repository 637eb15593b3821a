"""Generates tests/python/golden/einsum_path.json from REAL MLX: for each (subscripts,
operand shapes), mx.einsum_path's path and text, or the exception type it raises.
tests/python/test_einsum_path.py compares mlx-arm's pure-Python einsum_path with it.

Run: /opt/oracle/bin/python tests/python/golden/gen_einsum_path.py
"""
import json
import os

import mlx.core as mx
import numpy as np

CASES = [
    ("ii", [(5, 5)]), ("ij->i", [(5, 5)]), ("ij,jk", [(5, 8), (8, 3)]), ("ij,jk -> ijk", [(5, 8), (8, 3)]),
    ("ij,jk,kl", [(5, 8), (8, 3), (3, 7)]), ("ij,jk,kl", [(5, 8), (8, 10), (10, 7)]),
    ("eb,cb,fb->cef", [(3, 2), (5, 2), (4, 2)]), ("dd,fb,be,cdb->cef", [(6, 6), (4, 3), (3, 2), (5, 6, 3)]),
    ("bca,cdb,dbf,afc->", [(3, 4, 2), (4, 5, 3), (5, 3, 4), (2, 4, 4)]),
    ("dcc,fce,ea,dbf->ab", [(5, 4, 4), (3, 4, 2), (2, 2), (5, 3, 3)]),
    ("ab,cd,ef", [(2, 3), (4, 5), (6, 7)]), ("ab,bc,cd,de,ef", [(2, 30), (30, 4), (4, 50), (50, 3), (3, 9)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]), ("i...,i...->...", [(3, 2, 1), (3, 1, 4)]),
    ("ij,jk,kl->il", [(1, 8), (8, 1), (5, 7)]), ("abc,bcd,cde,def,efg", [(2, 3, 4), (3, 4, 5), (4, 5, 6), (5, 6, 7), (6, 7, 2)]),
    # errors
    ("ij,jk", [(5, 8)]), ("i1", [(3, 3)]), ("ij->ii", [(3, 3)]), ("ij", [(3,)]), ("ii", [(3, 4)]),
    ("ij,jk", [(5, 8), (7, 3)]), ("...i...", [(3, 3)]),
]


def run(sub, shapes):
    try:
        path, text = mx.einsum_path(sub, *[mx.zeros(s) for s in shapes])
        return {"path": [list(p) for p in path], "text": text}
    except Exception as e:
        return {"error": type(e).__name__, "message": str(e)}


out = [dict(subscripts=s, shapes=[list(x) for x in shp], **run(s, shp)) for s, shp in CASES]
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "einsum_path.json")
with open(path, "w") as f:
    json.dump({"mlx_version": mx.__version__, "cases": out}, f, indent=1)
print(f"wrote {len(out)} cases to {path}")
