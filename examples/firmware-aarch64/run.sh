#!/usr/bin/env bash
# Builds libmlx_arm.a for aarch64-unknown-none (bare-metal feature), links it into a C firmware
# image with aarch64-linux-gnu-gcc, runs it under qemu-system-aarch64 -M virt with semihosting,
# and checks its output and exit status. Called by scripts/test.sh (section "firmware"); runs
# standalone too. See README.md here and docs/C-API.md, "Bare metal".
#
# Environment: MLX_ARM_TARGET_DIR / CARGO_TARGET_DIR (cargo target dir), QEMU_CPU_MODEL (default
# max), MLX_ARM_ORACLE_PYTHON (python with numpy + gguf; when present golden.h is checked fresh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TARGET_DIR="${MLX_ARM_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}}"
TRIPLE=aarch64-unknown-none
LIB="$TARGET_DIR/$TRIPLE/release/libmlx_arm.a"
OUT="$TARGET_DIR/firmware-aarch64"
CPU="${QEMU_CPU_MODEL:-max}"
ORACLE="${MLX_ARM_ORACLE_PYTHON:-/opt/oracle/bin/python}"

# Release always: a debug build of the kernels is needlessly slow under full-system emulation.
cargo build -p mlx-arm-capi --no-default-features --features bare-metal --target "$TRIPLE" --release \
  --manifest-path "$ROOT/Cargo.toml"

if [ -x "$ORACLE" ] && "$ORACLE" -c 'import numpy, gguf' 2>/dev/null; then
  "$ORACLE" "$HERE/gen_golden.py" --check
else
  echo "note: no python with numpy+gguf at $ORACLE; golden.h freshness not checked"
fi

mkdir -p "$OUT"
aarch64-linux-gnu-gcc -std=c11 -O2 -Wall -Wextra -Werror \
  -ffreestanding -nostdlib -static -fno-pie -no-pie -ffunction-sections -fdata-sections \
  -I"$ROOT/include" -I"$HERE" -T "$HERE/link.ld" \
  -Wl,--gc-sections -Wl,--build-id=none -Wl,--no-warn-rwx-segments \
  "$HERE/start.S" "$HERE/semihost.c" "$HERE/print.c" "$HERE/arena.c" "$HERE/layer.c" "$HERE/main.c" \
  "$LIB" -lgcc -o "$OUT/fw.elf"
size_line="$(aarch64-linux-gnu-size "$OUT/fw.elf" | tail -n1)"
echo "fw.elf: text data bss = $(awk '{print $1, $2, $3}' <<<"$size_line") bytes"

start=$(date +%s.%N)
set +e
timeout 300 qemu-system-aarch64 -M virt -cpu "$CPU" -m 128M -nographic -nic none -semihosting \
  -kernel "$OUT/fw.elf" >"$OUT/output.txt" 2>&1
rc=$?
set -e
end=$(date +%s.%N)
cat "$OUT/output.txt"
echo "qemu-system-aarch64 -cpu $CPU: exit status $rc in $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}') s"

bash "$HERE/check_output.sh" "$OUT/output.txt" "$rc" aarch64
echo "firmware-aarch64: PASS"
