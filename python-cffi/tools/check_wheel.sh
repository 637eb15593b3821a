#!/usr/bin/env bash
# Builds the mlx-arm wheel (`pip wheel ./python-cffi`), installs it into a FRESH venv (with
# only its declared dependency, cffi, fetched by pip) and imports it from a neutral directory:
# the wheel must carry libmlx_arm.so and the cffi declarations (and, where a C compiler
# worked, the API-mode module _mlx_api), and need nothing from the source tree.
#
# Usage: python-cffi/tools/check_wheel.sh [PYTHON]   (default python3)
# Env: as python-cffi/setup.py (CARGO_TARGET_DIR, MLX_ARM_CARGO_PROFILE, MLX_ARM_LIBRARY …).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${1:-python3}"
WORK="$(mktemp -d /tmp/mlx-arm-wheel.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$PY" -m venv "$WORK/build-venv"
"$WORK/build-venv/bin/pip" install -q setuptools wheel cffi
"$WORK/build-venv/bin/pip" wheel -q --no-build-isolation --no-deps -w "$WORK/dist" "$REPO/python-cffi"
WHL="$(ls "$WORK"/dist/*.whl)"
echo "wheel: $(basename "$WHL") ($(du -k "$WHL" | cut -f1) KiB)"
"$PY" -m zipfile -l "$WHL" | grep -E 'libmlx_arm.so|_api.h|_mlx_api_names.txt|_mlx_api[.].*so' | awk '{print "  contains " $1}'
"$PY" -m venv "$WORK/fresh"
"$WORK/fresh/bin/pip" install -q "$WHL"
cd "$WORK"
"$WORK/fresh/bin/python" - <<'PY'
import mlx.core as mx
import mlx.arm

a = mx.array([[1.0, 2.0], [3.0, 4.0]])
b = (a + 1)[:, ::-1]
b[0, 0] = 9.0
assert b.tolist() == [[9.0, 2.0], [5.0, 4.0]], b.tolist()
from mlx.core import _ffi
print("import ok:", mx.__file__, "| cffi mode:", _ffi.MODE)
print("mlx-arm", mx.__version__, "|", repr(b).replace("\n", " "))
print("platform:", {k: mlx.arm.platform_info()[k] for k in ("arch", "os", "backends")})
PY
echo "wheel check: OK"
