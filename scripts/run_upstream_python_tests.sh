#!/usr/bin/env bash
# Runs MLX's own Python tests (python/tests/test_*.py of ml-explore/mlx) against mlx-arm's
# `mlx.core` (python-cffi/, installed into the venv) and prints pass/fail/skip per file.
#
# Nothing is fetched from the network: the tests come from an existing git clone or mirror of
# ml-explore/mlx (MLX_MIRROR, or -m), exported with `git archive` into a scratch dir. (PyPI
# has no sdist of mlx — only wheels, which do not contain python/tests — so a git copy is needed.)
#
# Usage: scripts/run_upstream_python_tests.sh [-m MLX_GIT_DIR] [-c REV] [-p PYTHON] [-s] [-r] [files...]
#   files: test_array test_ops ... (default: the eight files issue 6 names — test_array test_ops
#          test_reduce test_random test_fast test_quantized test_load test_einsum — then every other
#          file that needs no distributed, autograd-only or compile-only machinery, the mlx.nn /
#          mlx.optimizers / mlx.utils files last: see docs/COMPAT.md)
#   -s: test the source tree (python-cffi/ on PYTHONPATH; MLX_ARM_LIBRARY or a cargo target dir
#       must hold libmlx_arm.so) instead of the package installed in PYTHON's venv
#   -r: after each file, print its failures grouped by reason (python-cffi/tools/upstream_report.py)
#   -j DIR: keep each file's JUnit XML in DIR (upstream_report.py --markdown DIR/*.xml makes
#       the tables of docs/COMPAT.md)
set -uo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MIRROR="${MLX_MIRROR:-}"
# The commit the upstream ceiling in the project notes was measured at (mlx 0.32.2 tests).
REV="${MLX_TEST_COMMIT:-846d176227a0ac13d2667e58d2bb68b322109ab0}"
PY="${MLX_ARM_PYTHON:-$REPO_ROOT/.venv/bin/python}"
SOURCE=0 REASONS=0 JDIR=""
while getopts "m:c:p:srj:" o; do
  case "$o" in
    m) MIRROR="$OPTARG" ;; c) REV="$OPTARG" ;; p) PY="$OPTARG" ;; s) SOURCE=1 ;; r) REASONS=1 ;;
    j) JDIR="$(mkdir -p "$OPTARG" && cd "$OPTARG" && pwd)" ;;
    *) echo "usage: $0 [-m MLX_GIT_DIR] [-c REV] [-p PYTHON] [-s] [-r] [files...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
FILES=("$@")
[ "${#FILES[@]}" -gt 0 ] || FILES=(test_array test_ops test_reduce test_random test_fast test_quantized test_load test_einsum
  test_linalg test_fft test_conv test_conv_transpose test_blas test_bf16 test_double test_constants test_device
  test_eval test_fast_sdpa test_graph test_memory test_threads test_zero_copy test_export_import
  test_nn test_losses test_init test_optimizers test_upsample test_tree)
[ "$SOURCE" = 1 ] && export PYTHONPATH="$REPO_ROOT/python-cffi${PYTHONPATH:+:$PYTHONPATH}"

if [ -z "$MIRROR" ] || ! git --git-dir="$MIRROR" rev-parse --verify -q "$REV^{commit}" >/dev/null; then
  echo "SKIP: no ml-explore/mlx git dir with commit $REV (set MLX_MIRROR=<git dir>); the upstream" >&2
  echo "      tests are not vendored here and this script never downloads them." >&2
  exit 0
fi
WORK="$(mktemp -d /tmp/mlx-arm-upstream.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
git --git-dir="$MIRROR" archive "$REV" python/tests | tar -x -C "$WORK"
cd "$WORK/python/tests"
export DEVICE=cpu TMPDIR="$WORK"
printf '%-16s %6s %6s %7s  %s\n' file passed failed skipped "(test methods; pytest's own summary line)"
tp=0 tf=0 ts=0
for f in "${FILES[@]}"; do
  f="${f%.py}"
  [ -f "$f.py" ] || { printf '%-16s (not in this revision)\n' "$f"; continue; }
  xml="${JDIR:-$WORK}/$f.xml"
  full="$(timeout -k 10 900 "$PY" -m pytest -q -p no:cacheprovider --junitxml="$xml" "$f.py" 2>&1)"
  line="$(tail -n 3 <<<"$full" | grep -E '(passed|failed|error|skipped)' | tail -n 1)"
  [ -n "$line" ] || line="$(tail -n 1 <<<"$full")"
  if [ -f "$xml" ]; then
    read -r p fl s < <("$PY" "$REPO_ROOT/python-cffi/tools/upstream_report.py" --counts "$xml")
  else
    p=0 fl=0 s=0
  fi
  printf '%-16s %6s %6s %7s  %s\n' "$f" "$p" "$fl" "$s" "$line"
  if [ "$REASONS" = 1 ] && [ -f "$xml" ]; then
    "$PY" "$REPO_ROOT/python-cffi/tools/upstream_report.py" "$xml" | tail -n +2 | head -n 15
  fi
  tp=$((tp + p)) tf=$((tf + fl)) ts=$((ts + s))
done
printf '%-16s %6s %6s %7s\n' TOTAL "$tp" "$tf" "$ts"
