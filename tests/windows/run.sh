#!/usr/bin/env bash
# Windows / Proton check: builds mlx_arm.dll (+ import library and static library) for
# x86_64-pc-windows-gnu, compiles the portable C tests (tests/c/*.c, tests/c/mlxc_compat/*.c)
# and tests/windows/*.c with x86_64-w64-mingw32-gcc against the DLL, one of them also against
# the static library, and runs every program under wine (CPU path), failing on any non-zero
# exit or missing result line. Called by scripts/test.sh (section "windows"); runs standalone.
#
# Environment: MLX_ARM_TARGET_DIR / CARGO_TARGET_DIR, MLX_ARM_WINEPREFIX (default
# /tmp/mlx-arm-wine-$UID; created on first use, which takes a few seconds), WINE (default
# /usr/lib/wine/wine64: plain `wine` nags about the missing 32-bit half).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TARGET_DIR="${MLX_ARM_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}}"
TRIPLE=x86_64-pc-windows-gnu
REL="$TARGET_DIR/$TRIPLE/release"
OUT="$TARGET_DIR/windows-tests"
CC=x86_64-w64-mingw32-gcc
WINE="${WINE:-/usr/lib/wine/wine64}"
export WINEPREFIX="${MLX_ARM_WINEPREFIX:-/tmp/mlx-arm-wine-$(id -u)}"
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="  # no Mono/Gecko install prompts
# Wine does not pass $HOME on, so test_model is told where setup.sh put the default model,
# as a Windows path on wine's Z: drive (the Unix root).
export MLX_ARM_MODEL_DIR="Z:${MLX_ARM_MODEL_DIR:-$HOME/.cache/mlx-arm/models}"

fail() { echo "windows: FAIL: $1" >&2; exit 1; }

echo "== cargo build -p mlx-arm-capi --target $TRIPLE --release"
cargo build -p mlx-arm-capi --target "$TRIPLE" --release --manifest-path "$ROOT/Cargo.toml"
for f in mlx_arm.dll libmlx_arm.dll.a libmlx_arm.a; do
  [ -f "$REL/$f" ] || fail "missing $REL/$f"
  echo "   $f: $(stat -c %s "$REL/$f") bytes"
done

rm -rf "$OUT"
mkdir -p "$OUT"
cp "$REL/mlx_arm.dll" "$OUT/"
# wine 8.0 lacks bcryptprimitives.dll, which Rust's std imports; see bcryptprimitives.c.
"$CC" -shared -O2 -Wall -Wextra -Werror -o "$OUT/bcryptprimitives.dll" "$HERE/bcryptprimitives.c" -lbcrypt

CFLAGS=(-std=c11 -O1 -Wall -Wextra -Werror -D__USE_MINGW_ANSI_STDIO=1 -I "$ROOT/include" -I "$ROOT/tests/c" "-DMLX_ARM_TEST_DATA=\"Z:$ROOT/tests/c/data\"")
SRCS=("$ROOT"/tests/c/*.c "$ROOT"/tests/c/mlxc_compat/*.c "$HERE"/test_*.c)
for src in "${SRCS[@]}"; do
  name="$(basename "$src" .c)"
  # test_threads uses pthreads: mingw's winpthreads, linked statically (no extra DLL to ship).
  "$CC" "${CFLAGS[@]}" "$src" -L "$REL" -lmlx_arm.dll -Wl,-Bstatic -lpthread -Wl,-Bdynamic -o "$OUT/$name.exe"
done
# The static library links too (Rust std's Windows imports come from these system libraries).
"$CC" "${CFLAGS[@]}" "$ROOT/tests/c/test_ops.c" "$REL/libmlx_arm.a" \
  -lkernel32 -ladvapi32 -lntdll -luserenv -lws2_32 -ldbghelp -lbcrypt -o "$OUT/test_ops_static.exe"
echo "== built $(ls "$OUT"/*.exe | wc -l) programs with $CC"

[ -d "$WINEPREFIX" ] || echo "== creating WINEPREFIX $WINEPREFIX (first run only)"
FAILED=0
for exe in "$OUT"/*.exe; do
  name="$(basename "$exe" .exe)"
  start=$(date +%s.%N)
  set +e
  (cd "$OUT" && "$WINE" "./$name.exe") >"$OUT/$name.out" 2>"$OUT/$name.err"
  rc=$?
  set -e
  secs="$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')"
  last="$(tr -d '\r' <"$OUT/$name.out" | tail -n1)"
  echo "== $name: exit $rc in ${secs}s: $last"
  if [ "$rc" -ne 0 ]; then
    echo "FAILED $name (exit $rc)"; tr -d '\r' <"$OUT/$name.err" | tail -n 20; FAILED=1; continue
  fi
  # Every program ends with a summary line; the test_* ones report zero failures.
  case "$name" in
    test_*) grep -q ': [0-9]* checks, 0 failures' <<<"$last" || { echo "FAILED $name: '$last'"; FAILED=1; } ;;
    compat_vectors) [ "$last" = "failures: 0" ] || { echo "FAILED $name: '$last'"; FAILED=1; } ;;
  esac
done
[ "$FAILED" = 0 ] || fail "see above"
echo "windows: PASS"
