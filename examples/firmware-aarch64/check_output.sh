#!/usr/bin/env bash
# Checks a firmware run's console output (shared by examples/firmware-*/run.sh):
#   check_output.sh OUTPUT_FILE EXIT_STATUS ARCH
# The firmware (main.c here) prints one line per check; all of them must say ok, in both runs
# of the layer, and the run must exit 0 without a panic.
set -euo pipefail
out="$1" rc="$2" arch="$3"
fail() { echo "firmware ($arch): FAIL: $1" >&2; exit 1; }
[ "$rc" -eq 0 ] || fail "exit status $rc (expected 0)"
grep -q '^fw: OK' "$out" || fail "no 'fw: OK' line"
for stage in 'h = x @ W1(q8_0).T' 'y = h @ W2(q4_0).T' 'rms_norm(y)' 'softmax'; do
  [ "$(grep -cF "fw: $stage: ok" "$out")" -eq 2 ] || fail "stage '$stage' not ok in both runs"
done
grep -q '^fw: out-of-memory: ok' "$out" || fail "out-of-memory check"
grep -q '^fw: no leak: ok' "$out" || fail "leak check"
grep -q "^arch=$arch" "$out" || fail "platform info should say arch=$arch"
! grep -q 'PANIC\|FAULT' "$out" || fail "panic or fault"
