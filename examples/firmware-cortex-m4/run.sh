#!/usr/bin/env bash
# The firmware-aarch64 example on a Cortex-M4F (Armv7E-M, 32-bit, single-precision FPU):
# builds libmlx_arm.a for thumbv7em-none-eabihf (bare-metal feature), links it with the same
# main.c / layer.c / arena.c / golden.h plus this board's startup, linker script and
# semihosting, runs it under qemu-system-arm -M mps2-an386, and applies the same output
# checks. Called by scripts/test.sh (section "firmware"); runs standalone too.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SHARED="$ROOT/examples/firmware-aarch64"
TARGET_DIR="${MLX_ARM_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}}"
TRIPLE=thumbv7em-none-eabihf
LIB="$TARGET_DIR/$TRIPLE/release/libmlx_arm.a"
OUT="$TARGET_DIR/firmware-cortex-m4"

cargo build -p mlx-arm-capi --no-default-features --features bare-metal --target "$TRIPLE" --release \
  --manifest-path "$ROOT/Cargo.toml"

mkdir -p "$OUT"
# 1 MiB arena: the board has 4 MiB of RAM; the layer peaks below 100 KiB.
arm-none-eabi-gcc -std=c11 -O2 -Wall -Wextra -Werror -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 \
  -ffreestanding -nostdlib -ffunction-sections -fdata-sections -DFW_ARENA_BYTES='(1u << 20)' \
  -I"$ROOT/include" -I"$SHARED" -T "$HERE/link.ld" \
  -Wl,--gc-sections -Wl,--no-warn-rwx-segments -Wl,--no-warn-execstack \
  "$HERE/startup.c" "$SHARED/semihost.c" "$SHARED/print.c" "$SHARED/arena.c" "$SHARED/layer.c" "$SHARED/main.c" \
  -Wl,--start-group "$LIB" -lgcc -Wl,--end-group -o "$OUT/fw.elf"
size_line="$(arm-none-eabi-size "$OUT/fw.elf" | tail -n1)"
echo "fw.elf: text data bss = $(awk '{print $1, $2, $3}' <<<"$size_line") bytes"

start=$(date +%s.%N)
set +e
timeout 300 qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel "$OUT/fw.elf" >"$OUT/output.txt" 2>&1
rc=$?
set -e
end=$(date +%s.%N)
cat "$OUT/output.txt"
echo "qemu-system-arm -M mps2-an386: exit status $rc in $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}') s"

bash "$SHARED/check_output.sh" "$OUT/output.txt" "$rc" arm
echo "firmware-cortex-m4: PASS"
