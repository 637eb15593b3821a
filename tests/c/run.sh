#!/usr/bin/env bash
# C API tests: builds libmlx_arm.a (release), compiles every tests/c/*.c and
# tests/c/mlxc_compat/*.c with gcc -std=c11 -Wall -Wextra -Werror against include/, runs each
# (under valgrind --leak-check=full when available) and fails on any failure, leak or warning.
# Also checks that the generated op wrappers/header are fresh and every header declaration links.
#
# Environment (set by scripts/test.sh, all optional): MLX_ARM_ROOT, MLX_ARM_TARGET_DIR.
# NO_VALGRIND=1 skips valgrind; MLX_ARM_SKIP_BUILD=1 uses the library already built. CC overrides gcc.
# MLX_ARM_C_AARCH64=1 (or the argument --aarch64) also cross-builds libmlx_arm.a for
# aarch64-unknown-linux-gnu, compiles the same programs with aarch64-linux-gnu-gcc and runs
# them under qemu-aarch64 (no valgrind there); MLX_ARM_C_AARCH64=only runs just that part.
set -euo pipefail
[ "${1:-}" = "--aarch64" ] && MLX_ARM_C_AARCH64=1

ROOT="${MLX_ARM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
TARGET_DIR="${MLX_ARM_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}}"
CC="${CC:-gcc}"
cd "$ROOT"

if [ -z "${MLX_ARM_SKIP_BUILD:-}" ]; then
  echo "== cargo build -p mlx-arm-capi --release"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build -p mlx-arm-capi --release
fi
LIB="$TARGET_DIR/release/libmlx_arm.a"
[ -f "$LIB" ] || { echo "missing $LIB" >&2; exit 1; }

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
CFLAGS=(-std=c11 -Wall -Wextra -Werror -O1 -g -I "$ROOT/include" "-DMLX_ARM_TEST_DATA=\"$ROOT/tests/c/data\"")
LIBS=("$LIB" -lpthread -ldl -lm)

# Every function the headers declare must link: take the address of each (declared here as
# plain symbols, so ones behind #ifdef HAS_FLOAT16 are checked on every host too).
echo "== header declarations link"
NAMES="$(cat "$ROOT"/include/mlx/c/*.h |
  grep -E '^[A-Za-z_][A-Za-z0-9_ ]*[ *](_?mlx_[A-Za-z0-9_]+)\(' |
  grep -v -E 'typedef|static inline' |
  sed -E 's/^.*[ *](_?mlx_[A-Za-z0-9_]+)\(.*/\1/' | sort -u)"
{
  for n in $NAMES; do echo "extern char $n[];"; done
  echo 'void* volatile all_functions[] = {'
  for n in $NAMES; do echo "  (void*)$n,"; done
  echo '};'
  echo 'int main(void) { return all_functions[0] == 0; }'
} >"$OUT/all_functions.c"
"$CC" "${CFLAGS[@]}" -Wno-pedantic "$OUT/all_functions.c" "${LIBS[@]}" -o "$OUT/all_functions"
echo "   $(grep -c '(void\*)' "$OUT/all_functions.c") declarations link"

# The headers are valid C++ too.
if command -v g++ >/dev/null; then
  echo '#include "mlx/c/mlx.h"' >"$OUT/cxx.cpp"
  g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I "$ROOT/include" "$OUT/cxx.cpp"
  echo "== headers compile as C++17"
fi

VALGRIND=()
if [ -z "${NO_VALGRIND:-}" ] && command -v valgrind >/dev/null; then
  VALGRIND=(valgrind -q --leak-check=full --show-possibly-lost=no --errors-for-leak-kinds=definite,indirect --error-exitcode=9)
else
  echo "   (valgrind not used)"
fi

# run_all NAME... : runs the compiled programs $OUT/NAME (each under the command prefix in
# RUNNER) two at a time — valgrind and qemu-user each keep about one core busy — each into its
# own log, then prints the logs in order with each program's time; sets FAILED on any failure.
run_one() { # name: runs $OUT/name, writes $OUT/name.log and "exit-status seconds" to name.status
  local name="$1" start rc=0 args=()
  # example_generate runs a short raw greedy generation with the default model.
  [ "$name" = example_generate ] && args=(-m "$MODEL" -n 4 --raw "The capital of France is")
  start=$(date +%s)
  if [ "$name" = test_model ] && [ "${#RUNNER[@]}" -gt 0 ]; then
    # Its model checks generate a few hundred tokens: minutes under valgrind. They run
    # natively; valgrind checks the rest (error paths, handles), and example_generate a
    # model's load, generation and free.
    (cd "$OUT" && ./test_model && MLX_ARM_TEST_NO_MODEL=1 "${RUNNER[@]}" ./test_model) >"$OUT/$name.log" 2>&1 || rc=$?
  else
    (cd "$OUT" && "${RUNNER[@]}" "./$name" "${args[@]}") >"$OUT/$name.log" 2>&1 || rc=$?
  fi
  echo "$rc $(( $(date +%s) - start ))" >"$OUT/$name.status"
}
run_all() {
  local name rc secs running=0
  for name in "$@"; do
    run_one "$name" &
    running=$((running + 1))
    if [ "$running" -ge 2 ]; then wait -n || true; running=$((running - 1)); fi
  done
  wait || true
  for name in "$@"; do
    rc=missing secs=?
    [ -f "$OUT/$name.status" ] && read -r rc secs <"$OUT/$name.status"
    echo "== $name (${secs}s)"
    cat "$OUT/$name.log" 2>/dev/null || true
    [ "$rc" = 0 ] || { echo "FAILED $name (exit $rc)"; FAILED=1; }
  done
}

FAILED=0
if [ "${MLX_ARM_C_AARCH64:-}" = only ]; then
  SRCS=()
else
  SRCS=("$ROOT"/tests/c/*.c "$ROOT"/tests/c/mlxc_compat/*.c)
fi
PROGS=()
for src in "${SRCS[@]}"; do
  name="$(basename "$src" .c)"
  if ! "$CC" "${CFLAGS[@]}" "$src" "${LIBS[@]}" -o "$OUT/$name"; then
    echo "FAILED to compile $name"; FAILED=1; continue
  fi
  PROGS+=("$name")
done
# The examples: compiled like the tests; examples/c/generate.c runs a short raw greedy
# generation with the default model when it is installed (tests/c/test_model.c checks the
# same generation's ids against llama.cpp's, and reports a missing model).
if [ "${MLX_ARM_C_AARCH64:-}" != only ]; then
  for src in "$ROOT"/examples/c/*.c; do
    name="example_$(basename "$src" .c)"
    if ! "$CC" "${CFLAGS[@]}" "$src" "${LIBS[@]}" -o "$OUT/$name"; then
      echo "FAILED to compile $name"; FAILED=1
    fi
  done
  MODEL="${MLX_ARM_MODEL_DIR:-$HOME/.cache/mlx-arm/models}/SmolLM2-135M-Instruct.Q4_1.gguf"
  if [ -x "$OUT/example_generate" ] && [ -f "$MODEL" ]; then
    PROGS+=(example_generate)
  elif [ -x "$OUT/example_generate" ]; then
    echo "SKIPPED: example_generate run ($MODEL is not installed)"
  fi
fi
echo "== running ${#PROGS[@]} programs${VALGRIND[0]:+ under valgrind}"
RUNNER=("${VALGRIND[@]}")
run_all "${PROGS[@]}"
if [ -n "${MLX_ARM_C_AARCH64:-}" ]; then
  # Cross: the same programs for aarch64 under qemu-user (cross linker and qemu runner as in
  # .cargo/config.toml; LD_LIBRARY_PATH pins the cross glibc).
  XT=aarch64-unknown-linux-gnu
  if [ -z "${MLX_ARM_SKIP_BUILD:-}" ]; then
    echo "== cargo build -p mlx-arm-capi --release --target $XT"
    CARGO_TARGET_DIR="$TARGET_DIR" cargo build -p mlx-arm-capi --release --target "$XT"
  fi
  XLIB="$TARGET_DIR/$XT/release/libmlx_arm.a"
  [ -f "$XLIB" ] || { echo "missing $XLIB" >&2; exit 1; }
  XCC="${XCC:-aarch64-linux-gnu-gcc}"
  XPROGS=()
  for src in "$ROOT"/tests/c/*.c "$ROOT"/tests/c/mlxc_compat/*.c; do
    name="$(basename "$src" .c)-aarch64"
    if ! "$XCC" "${CFLAGS[@]}" "$src" "$XLIB" -lpthread -ldl -lm -o "$OUT/$name"; then
      echo "FAILED to compile $name"; FAILED=1; continue
    fi
    XPROGS+=("$name")
  done
  echo "== running ${#XPROGS[@]} programs under qemu-aarch64"
  RUNNER=(qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
  run_all "${XPROGS[@]}"
fi

[ "$FAILED" = 0 ] && echo "C API tests passed" || { echo "C API tests FAILED"; exit 1; }
